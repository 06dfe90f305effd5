"""A small builder of ``nn`` programs for the spelling tests: each op is one line, its result
type worked out here (numpy broadcasting, reductions, views), so that one computation can be
written many ways without writing each type by hand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


def tensor(shape: Sequence[int], element: str = "f32") -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{element}>"


def f32_literal(value: float) -> str:
    if np.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    return repr(float(np.float32(value)))


def nested(value: np.ndarray) -> str:
    """A dense literal's nested brackets."""
    if value.ndim == 0:
        return f32_literal(float(value))
    return "[" + ", ".join(nested(v) for v in value) + "]"


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    element: str = "f32"

    @property
    def type(self) -> str:
        return tensor(self.shape, self.element)


@dataclass
class Program:
    """``Program(x=(4, 8))``: arguments named and shaped; ops append lines; ``text(outputs)``."""

    args: dict[str, tuple[int, ...]]
    lines: list[str] = field(default_factory=list)
    count: int = 0

    def __init__(self, **args: tuple[int, ...]) -> None:
        self.args = {name: tuple(shape) for name, shape in args.items()}
        self.lines = []
        self.count = 0

    def arg(self, name: str) -> Value:
        return Value(f"%{name}", self.args[name])

    def emit(self, text: str, shape: Sequence[int], element: str = "f32") -> Value:
        self.count += 1
        value = Value(f"%v{self.count}", tuple(shape), element)
        self.lines.append(f"  {value.name} = {text.replace('{result}', value.type)}")
        return value

    # elementwise
    def unary(self, op: str, x: Value, attrs: str = "") -> Value:
        return self.emit(f"nn.{op} {x.name}{attrs} : {x.type} -> {{result}}", x.shape, x.element)

    def binary(self, op: str, a: Value | float, b: Value | float) -> Value:
        a, b = self.lift(a), self.lift(b)
        shape = np.broadcast_shapes(a.shape, b.shape)
        return self.emit(f"nn.{op} {a.name}, {b.name} : {a.type}, {b.type} -> {{result}}", shape)

    def lift(self, x: Value | float) -> Value:
        return x if isinstance(x, Value) else self.const(x)

    def const(self, value: float | np.ndarray, shape: Sequence[int] = ()) -> Value:
        """A splat ``value`` of ``shape``, or a dense array."""
        if isinstance(value, np.ndarray):
            body = nested(value)
            ty = tensor(value.shape)
            return self.emit(f"nn.constant {{value = dense<{body}> : {ty}}} : {ty}",
                             value.shape)
        ty = tensor(shape)
        return self.emit(f"nn.constant {{value = dense<{f32_literal(value)}> : {ty}}} : {ty}",
                         shape)

    def add(self, a, b):  # noqa: ANN001, ANN201 - the binary ops, short
        return self.binary("add", a, b)

    def sub(self, a, b):  # noqa: ANN001, ANN201
        return self.binary("sub", a, b)

    def mul(self, a, b):  # noqa: ANN001, ANN201
        return self.binary("mul", a, b)

    def div(self, a, b):  # noqa: ANN001, ANN201
        return self.binary("div", a, b)

    def expand(self, x: Value, shape: Sequence[int]) -> Value:
        """``x`` broadcast to ``shape`` as the importers write Expand: ``where(true, x, x)``."""
        true = self.emit(f"nn.constant {{value = dense<true> : {tensor(shape, 'i1')}}} : "
                         "{result}", shape, "i1")
        ty = tensor(shape)
        return self.emit(f"nn.where {true.name}, {x.name}, {x.name} : {true.type}, {x.type}, "
                         f"{x.type} -> {ty}", shape)

    # reductions
    def reduce(self, op: str, x: Value, axes: Sequence[int], keepdims: bool = False) -> Value:
        rank = len(x.shape)
        norm = {a % rank for a in axes}
        shape = [1 if i in norm else d for i, d in enumerate(x.shape) if keepdims or i not in norm]
        keep = ", keepdims = true" if keepdims else ""
        listed = ", ".join(map(str, axes))
        return self.emit(f"nn.reduce_{op} {x.name} {{axes = array<i64: {listed}>{keep}}} : "
                         f"{x.type} -> {{result}}", shape)

    def softmax(self, x: Value, axis: int) -> Value:
        return self.emit(f"nn.softmax {x.name} {{axis = {axis} : i64}} : {x.type} -> {{result}}",
                         x.shape)

    # views
    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        return self.emit(f"nn.reshape {x.name} : {x.type} -> {{result}}", shape)

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        shape = [x.shape[p] for p in perm]
        listed = ", ".join(map(str, perm))
        return self.emit(f"nn.transpose {x.name} {{perm = array<i64: {listed}>}} : {x.type} -> "
                         "{result}", shape)

    def narrow(self, x: Value, axis: int, start: int, length: int) -> Value:
        shape = list(x.shape)
        shape[axis] = length
        return self.emit(f"nn.narrow {x.name} {{axis = {axis} : i64, start = {start} : i64, "
                         f"length = {length} : i64}} : {x.type} -> {{result}}", shape)

    def concat(self, xs: Sequence[Value], axis: int) -> Value:
        shape = list(xs[0].shape)
        axis %= len(shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        names = ", ".join(x.name for x in xs)
        types = ", ".join(x.type for x in xs)
        return self.emit(f"nn.concat {names} {{axis = {axis} : i64}} : ({types}) -> {{result}}",
                         shape)

    def take(self, x: Value, axis: int, indices: Sequence[int]) -> Value:
        """``x`` at constant ``indices`` along ``axis`` (a slice with a step, as importers write
        it): one ``nn.gather``."""
        listed = ", ".join(map(str, indices))
        ity = tensor([len(indices)], "i32")
        table = self.emit(f"nn.constant {{value = dense<[{listed}]> : {ity}}} : {ity}",
                          [len(indices)], "i32")
        shape = list(x.shape)
        shape[axis] = len(indices)
        return self.emit(f"nn.gather {x.name}, {table.name} {{axis = {axis} : i64}} : "
                         f"{x.type}, {table.type} -> {{result}}", shape)

    def matmul(self, a: Value, b: Value) -> Value:
        shape = (*a.shape[:-1], b.shape[-1])
        return self.emit(f"nn.matmul {a.name}, {b.name} : {a.type}, {b.type} -> {{result}}", shape)

    def text(self, *outputs: Value) -> str:
        params = ", ".join(f"%{name}: {tensor(shape)}" for name, shape in self.args.items())
        results = ", ".join(o.type for o in outputs)
        names = ", ".join(o.name for o in outputs)
        return (f"func.func @main({params}) -> ({results}) {{\n" + "\n".join(self.lines)
                + f"\n  func.return {names} : {results}\n}}\n")
