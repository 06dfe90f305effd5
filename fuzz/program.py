"""A random program as data: values, ops and outputs, printed as `nn` IR text.

Ops refer to values by name, so the minimizer can turn an op into a function argument of the
same name and type (`Program.cut`), drop outputs and remove what no output needs (`prune`)
without renaming anything.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Value:
    name: str
    elem: str
    """``f32``, ``f16``, ``i32`` or ``i1``."""
    shape: tuple[int, ...]

    @property
    def type(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.elem + ">"

    @property
    def ref(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True)
class Op:
    """``%result = <name> <operands> <attrs> : <types>``; ``form`` picks the printed shape."""

    name: str
    result: Value
    operands: tuple[Value, ...]
    attrs: str = ""
    form: str = "plain"
    """``plain`` (``: t1, t2 -> r``), ``variadic`` (``: (t1, t2) -> r``), ``constant``."""

    def text(self) -> str:
        attrs = f" {{{self.attrs}}}" if self.attrs else ""
        r = self.result
        if self.form == "constant":
            return f"  {r.ref} = {self.name}{attrs} : {r.type}"
        refs = ", ".join(v.ref for v in self.operands)
        types = ", ".join(v.type for v in self.operands)
        if self.form == "variadic":
            return f"  {r.ref} = {self.name} {refs}{attrs} : ({types}) -> {r.type}"
        return f"  {r.ref} = {self.name} {refs}{attrs} : {types} -> {r.type}"


@dataclass
class Program:
    args: list[Value]
    ops: list[Op]
    outputs: list[Value]
    seed: int = 0
    """The seed the inputs are drawn with (`fuzz.inputs.make_inputs`)."""
    note: list[str] = field(default_factory=list)
    """Comment lines printed above the function (what failed, how it was found)."""

    def text(self) -> str:
        params = ", ".join(f"{a.ref}: {a.type}" for a in self.args)
        results = ", ".join(v.type for v in self.outputs)
        lines = [f"// {line}" for line in self.note]
        lines.append(f"func.func @fuzz({params}) -> ({results}) {{")
        lines += [op.text() for op in self.ops]
        lines.append(f"  func.return {', '.join(v.ref for v in self.outputs)} : {results}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def copy(self) -> Program:
        return dataclasses.replace(self, args=list(self.args), ops=list(self.ops),
                                   outputs=list(self.outputs), note=list(self.note))

    def cut(self, index: int) -> Program:
        """The program with op ``index`` replaced by an argument of its result's name."""
        p = self.copy()
        op = p.ops.pop(index)
        p.args.append(op.result)
        return p.prune()

    def with_outputs(self, outputs: list[Value]) -> Program:
        p = self.copy()
        p.outputs = list(outputs)
        return p.prune()

    def prune(self) -> Program:
        """Removes ops and arguments that no output needs."""
        needed = {v.name for v in self.outputs}
        kept: list[Op] = []
        for op in reversed(self.ops):
            if op.result.name in needed:
                kept.append(op)
                needed |= {v.name for v in op.operands}
        p = self.copy()
        p.ops = kept[::-1]
        p.args = [a for a in self.args if a.name in needed]
        return p
