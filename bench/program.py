"""A small writer of fusec IR text, so that a workload is a Python function of its sizes.

    p = ProgramWriter("elementwise")
    a, b = p.arg("a", [16]), p.arg("b", [16])
    p.ret(p.relu(p.add(a, b)))
    text = p.text()

prints::

    func.func @elementwise(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
      %0 = nn.add %a, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
      %1 = nn.relu %0 : tensor<16xf32> -> tensor<16xf32>
      func.return %1 : tensor<16xf32>
    }

The writer only spells ops; the fusec verifier is what checks them (`bench.workloads` parses
every program it builds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fusec.dialects.common import broadcast_shapes


@dataclass(frozen=True)
class Value:
    """An SSA value of the program being written: its name (without ``%``), shape and type."""

    name: str
    shape: tuple[int, ...]
    element: str = "f32"

    @property
    def type(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.element}>"


class ProgramWriter:
    """Builds the text of one ``func.func`` op by op."""

    def __init__(self, name: str):
        self.name = name
        self.args: list[Value] = []
        self.lines: list[str] = []
        self.results: list[Value] = []

    # --- plumbing ------------------------------------------------------------------------

    def arg(self, name: str, shape: Sequence[int], element: str = "f32") -> Value:
        value = Value(name, tuple(shape), element)
        self.args.append(value)
        return value

    def op(
        self,
        name: str,
        operands: Sequence[Value],
        shape: Sequence[int],
        attrs: str = "",
        element: str = "f32",
        mask: Value | None = None,
    ) -> Value:
        """Appends ``%N = <name> operands [mask %m] {attrs} : types -> type`` and returns %N."""
        result = Value(str(len(self.lines)), tuple(shape), element)
        spelled = ", ".join(f"%{v.name}" for v in operands)
        types = [v.type for v in operands]
        if mask is not None:
            spelled += f" mask %{mask.name}"
            types.append(mask.type)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(
            f"  %{result.name} = {name} {spelled}{attr_text} : {', '.join(types)} -> {result.type}"
        )
        return result

    def ret(self, *values: Value) -> None:
        self.results = list(values)

    def text(self) -> str:
        params = ", ".join(f"%{a.name}: {a.type}" for a in self.args)
        result_types = ", ".join(v.type for v in self.results)
        if len(self.results) > 1:
            result_types = f"({result_types})"
        names = ", ".join(f"%{v.name}" for v in self.results)
        types = ", ".join(v.type for v in self.results)
        body = "\n".join(self.lines)
        return (
            f"func.func @{self.name}({params}) -> {result_types} {{\n{body}\n"
            f"  func.return {names} : {types}\n}}\n"
        )

    # --- elementwise ---------------------------------------------------------------------

    def binary(self, kind: str, lhs: Value, rhs: Value) -> Value:
        shape = broadcast_shapes(lhs.shape, rhs.shape)
        assert shape is not None, f"{lhs.shape} and {rhs.shape} do not broadcast"
        return self.op(f"nn.{kind}", [lhs, rhs], shape, element=lhs.element)

    def add(self, lhs: Value, rhs: Value) -> Value:
        return self.binary("add", lhs, rhs)

    def sub(self, lhs: Value, rhs: Value) -> Value:
        return self.binary("sub", lhs, rhs)

    def mul(self, lhs: Value, rhs: Value) -> Value:
        return self.binary("mul", lhs, rhs)

    def unary(self, kind: str, x: Value, attrs: str = "") -> Value:
        return self.op(f"nn.{kind}", [x], x.shape, attrs, element=x.element)

    def relu(self, x: Value) -> Value:
        return self.unary("relu", x)

    def sigmoid(self, x: Value) -> Value:
        return self.unary("sigmoid", x)

    def silu(self, x: Value) -> Value:
        return self.unary("silu", x)

    def gelu(self, x: Value, approximate: str = "none") -> Value:
        attrs = f'approximate = "{approximate}"' if approximate != "none" else ""
        return self.unary("gelu", x, attrs)

    def cmp(self, predicate: str, lhs: Value, rhs: Value) -> Value:
        shape = broadcast_shapes(lhs.shape, rhs.shape)
        assert shape is not None
        return self.op(
            "nn.cmp", [lhs, rhs], shape, f'predicate = "{predicate}"', element="i1"
        )

    def where(self, cond: Value, lhs: Value, rhs: Value) -> Value:
        shape = broadcast_shapes(cond.shape, lhs.shape, rhs.shape)
        assert shape is not None
        return self.op("nn.where", [cond, lhs, rhs], shape, element=lhs.element)

    # --- structured ----------------------------------------------------------------------

    def matmul(self, lhs: Value, rhs: Value) -> Value:
        assert lhs.shape[-1] == rhs.shape[-2], (lhs.shape, rhs.shape)
        return self.op("nn.matmul", [lhs, rhs], (*lhs.shape[:-1], rhs.shape[-1]),
                       element=lhs.element)

    def linear(self, x: Value, weight: Value, bias: Value | None = None) -> Value:
        """``x @ weight (+ bias)``: the shape the matmul-epilogue fusions look for."""
        y = self.matmul(x, weight)
        return y if bias is None else self.add(y, bias)

    def narrow(self, x: Value, axis: int, start: int, length: int) -> Value:
        shape = list(x.shape)
        shape[axis] = length
        attrs = f"axis = {axis} : i64, start = {start} : i64, length = {length} : i64"
        return self.op("nn.narrow", [x], shape, attrs, element=x.element)

    def layer_norm(self, x: Value, gamma: Value, beta: Value, eps: float = 1e-5) -> Value:
        return self.op("nn.layer_norm", [x, gamma, beta], x.shape, f"eps = {eps:e} : f32",
                       element=x.element)

    def rms_norm(self, x: Value, gamma: Value, eps: float = 1e-6) -> Value:
        return self.op("nn.rms_norm", [x, gamma], x.shape, f"eps = {eps:e} : f32",
                       element=x.element)

    def softmax(self, x: Value) -> Value:
        return self.op("nn.softmax", [x], x.shape, element=x.element)

    def reduce_sum(self, x: Value, axes: Sequence[int]) -> Value:
        rank = len(x.shape)
        kept = [d for i, d in enumerate(x.shape) if i not in {a % rank for a in axes}]
        listed = ", ".join(map(str, axes))
        return self.op("nn.reduce_sum", [x], kept, f"axes = array<i64: {listed}>",
                       element=x.element)

    def attention(
        self,
        q: Value,
        k: Value,
        v: Value,
        num_heads: int,
        mask: Value | None = None,
        causal: bool = False,
    ) -> Value:
        head_dim = q.shape[-1] // num_heads
        attrs = f"num_heads = {num_heads} : i64, head_dim = {head_dim} : i64"
        if causal:
            attrs += ", causal = true"
        return self.op("nn.attention", [q, k, v], q.shape, attrs, element=q.element, mask=mask)
