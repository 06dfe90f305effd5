"""Random well-typed `nn` programs: `generate(seed)`.

A program grows one op at a time from a pool of values (function arguments made on demand and
earlier results). The ops cover what the fusion passes and the lowering handle: unary and binary
elementwise ops with numpy broadcasting (f32, f16, i32), comparisons, ``where``, casts, splat
constants, the four reductions over random axes (``keepdims`` either way), matmuls (plain and
batched), ``layer_norm``, ``rms_norm``, ``softmax`` over any axis, transposes, reshapes,
narrows and concats. Shapes are small, often odd, often with size-1 dimensions, sometimes of
rank 0. The same seed gives the same program.
"""

from __future__ import annotations

import numpy as np

from .program import Op, Program, Value

DIMS = (1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33)
"""Dimension sizes drawn from: odd sizes, size 1 (broadcast) and a few past vector widths."""

UNARY = {
    "f32": ("relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "exp", "log", "sqrt",
            "rsqrt", "neg", "abs"),
    "f16": ("relu", "neg", "abs", "exp", "tanh", "sigmoid"),
    "i32": ("relu", "neg", "abs"),
}
BINARY = {
    "f32": ("add", "sub", "mul", "div", "max", "min", "pow"),
    "f16": ("add", "sub", "mul", "max", "min"),
    "i32": ("add", "sub", "mul", "div", "max", "min"),
}
CASTS = {"f32": ("f16", "i1", "i32"), "f16": ("f32",), "i32": ("i1",), "i1": ("f32", "i32")}
"""Result type -> the source types it is cast from (never float -> int: NaN has no value)."""
PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
CONSTANTS = ("0.0", "1.0", "-2.5", "0.001", "1.0e+30", "-1.0e-30")

KINDS = (
    ("unary", 5), ("binary", 6), ("cmp_where", 2), ("cast", 2), ("constant", 1),
    ("reduce", 3), ("matmul", 2), ("norm", 2), ("softmax", 2), ("transpose", 1),
    ("reshape", 1), ("narrow", 1), ("concat", 1),
)


class Generator:
    def __init__(self, seed: int, max_ops: int = 10, half: bool = False):
        self.half = half
        """Whether f16 values appear (the OpenCL backend rejects them: a one-line error)."""
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.values: list[Value] = []
        self.args: list[Value] = []
        self.ops: list[Op] = []
        self.count = 0
        self.max_ops = max_ops

    # --- values -----------------------------------------------------------------------------

    def fresh(self, elem: str, shape: tuple[int, ...]) -> Value:
        self.count += 1
        return Value(f"v{self.count}", elem, tuple(shape))

    def arg(self, elem: str, shape: tuple[int, ...]) -> Value:
        self.count += 1
        a = Value(f"a{self.count}", elem, tuple(shape))
        self.args.append(a)
        self.values.append(a)
        return a

    def random_shape(self, rank: int | None = None) -> tuple[int, ...]:
        if rank is None:
            rank = int(self.rng.choice([0, 1, 2, 2, 3, 3]))
        return tuple(int(self.rng.choice(DIMS)) for _ in range(rank))

    def pick(self, elems: tuple[str, ...], min_rank: int = 0) -> Value:
        """A value of one of ``elems``: usually a recent one, else a new argument."""
        elems = tuple(e for e in elems if self.half or e != "f16")
        pool = [v for v in self.values if v.elem in elems and len(v.shape) >= min_rank]
        if pool and self.rng.random() < 0.85:
            recent = pool[-3:] if self.rng.random() < 0.7 else pool
            return recent[int(self.rng.integers(len(recent)))]
        rank = max(min_rank, int(self.rng.choice([0, 1, 2, 2, 3, 3])))
        return self.arg(str(self.rng.choice(elems)), self.random_shape(rank))

    def partner(self, x: Value, elem: str | None = None) -> Value:
        """A value of ``elem`` (default ``x``'s) whose shape broadcasts with ``x``'s."""
        elem = elem or x.elem
        fits = [v for v in self.values if v.elem == elem and _broadcasts(v.shape, x.shape)]
        if fits and self.rng.random() < 0.5:
            return fits[int(self.rng.integers(len(fits)))]
        shape = list(x.shape)
        drop = int(self.rng.integers(0, len(shape) + 1)) if self.rng.random() < 0.3 else 0
        shape = shape[drop:]
        for i in range(len(shape)):
            if self.rng.random() < 0.3:
                shape[i] = 1
        if self.rng.random() < 0.15 and x.shape:  # a larger partner: x is the one broadcast
            shape = [int(self.rng.choice(DIMS[1:]))] + list(x.shape) if len(x.shape) < 3 \
                else list(shape)
        return self.arg(elem, tuple(shape))

    def emit(self, name: str, elem: str, shape: tuple[int, ...], operands: list[Value],
             attrs: str = "", form: str = "plain") -> Value:
        result = self.fresh(elem, shape)
        self.ops.append(Op(name, result, tuple(operands), attrs, form))
        self.values.append(result)
        return result

    # --- ops --------------------------------------------------------------------------------

    def unary(self) -> None:
        x = self.pick(("f32", "f32", "f16", "i32"))
        op = str(self.rng.choice(UNARY[x.elem]))
        attrs = ""
        if op.startswith("gelu"):
            attrs = 'approximate = "tanh"' if op == "gelu_tanh" else 'approximate = "none"'
            op = "gelu"
        self.emit(f"nn.{op}", x.elem, x.shape, [x], attrs)

    def binary(self) -> None:
        x = self.pick(("f32", "f32", "f16", "i32"))
        y = self.partner(x)
        op = str(self.rng.choice(BINARY[x.elem]))
        lhs, rhs = (x, y) if self.rng.random() < 0.5 else (y, x)
        self.emit(f"nn.{op}", x.elem, _broadcast(lhs.shape, rhs.shape), [lhs, rhs])

    def cmp_where(self) -> None:
        x = self.pick(("f32", "i32"))
        y = self.partner(x)
        predicate = str(self.rng.choice(PREDICATES))
        cond = self.emit("nn.cmp", "i1", _broadcast(x.shape, y.shape), [x, y],
                         f'predicate = "{predicate}"')
        if self.rng.random() < 0.8:
            a = self.partner(cond, "f32")
            b = self.partner(cond, "f32")
            if not _broadcasts(_broadcast(cond.shape, a.shape), b.shape):
                b = self.arg("f32", _broadcast(cond.shape, a.shape))
            shape = _broadcast(cond.shape, a.shape, b.shape)
            self.emit("nn.where", "f32", shape, [cond, a, b])

    def cast(self) -> None:
        targets = [t for t in CASTS if self.half or t != "f16"]
        target = str(self.rng.choice(targets))
        sources = tuple(e for e in CASTS[target] if self.half or e != "f16")
        x = self.pick(sources)
        self.emit("nn.cast", target, x.shape, [x])

    def constant(self) -> None:
        shape = self.random_shape()
        value = str(self.rng.choice(CONSTANTS))
        ty = Value("_", "f32", shape).type
        self.emit("nn.constant", "f32", shape, [], f"value = dense<{value}> : {ty}", "constant")

    def reduce(self) -> None:
        x = self.pick(("f32", "f32", "f16", "i32"), min_rank=1)
        kinds = ("sum", "mean", "max", "min") if x.elem != "i32" else ("sum", "max", "min")
        kind = str(self.rng.choice(kinds))
        rank = len(x.shape)
        count = int(self.rng.integers(1, rank + 1))
        axes = sorted(int(a) for a in self.rng.choice(rank, count, replace=False))
        keep = bool(self.rng.random() < 0.4)
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes)
        spelled = [a - rank if self.rng.random() < 0.3 else a for a in axes]
        attrs = f"axes = array<i64: {', '.join(map(str, spelled))}>"
        if keep:
            attrs += ", keepdims = true"
        self.emit(f"nn.reduce_{kind}", x.elem, shape, [x], attrs)

    def matmul(self) -> None:
        x = self.pick(("f32",), min_rank=2)
        k = x.shape[-1]
        n = int(self.rng.choice(DIMS))
        if len(x.shape) == 3 and self.rng.random() < 0.4:
            w = self.arg("f32", (x.shape[0], k, n))
        else:
            w = self.arg("f32", (k, n))
        self.emit("nn.matmul", "f32", (*x.shape[:-1], n), [x, w])

    def norm(self) -> None:
        x = self.pick(("f32",), min_rank=1)
        last = x.shape[-1]
        g = self.arg("f32", (last,))
        if self.rng.random() < 0.5:
            b = self.arg("f32", (last,))
            self.emit("nn.layer_norm", "f32", x.shape, [x, g, b])
        else:
            self.emit("nn.rms_norm", "f32", x.shape, [x, g])

    def softmax(self) -> None:
        x = self.pick(("f32", "f32", "f16"), min_rank=1)
        axis = int(self.rng.integers(-len(x.shape), len(x.shape)))
        attrs = f"axis = {axis} : i64" if axis != -1 else ""
        self.emit("nn.softmax", x.elem, x.shape, [x], attrs)

    def transpose(self) -> None:
        x = self.pick(("f32", "i32"), min_rank=2)
        perm = [int(p) for p in self.rng.permutation(len(x.shape))]
        shape = tuple(x.shape[p] for p in perm)
        spelled = ", ".join(map(str, perm))
        self.emit("nn.transpose", x.elem, shape, [x], f"perm = array<i64: {spelled}>")

    def reshape(self) -> None:
        x = self.pick(("f32", "i32"), min_rank=1)
        size = int(np.prod(x.shape))
        choice = self.rng.random()
        if choice < 0.4:
            shape: tuple[int, ...] = (size,)
        elif choice < 0.7:
            shape = (1, size)
        else:
            shape = (size, 1) if size > 1 else ()
        self.emit("nn.reshape", x.elem, shape, [x])

    def narrow(self) -> None:
        x = self.pick(("f32", "i32"), min_rank=1)
        axis = int(self.rng.integers(len(x.shape)))
        dim = x.shape[axis]
        start = int(self.rng.integers(dim))
        length = int(self.rng.integers(1, dim - start + 1))
        shape = tuple(length if i == axis else d for i, d in enumerate(x.shape))
        self.emit("nn.narrow", x.elem, shape, [x],
                  f"axis = {axis} : i64, start = {start} : i64, length = {length} : i64")

    def concat(self) -> None:
        x = self.pick(("f32", "i32"), min_rank=1)
        axis = int(self.rng.integers(len(x.shape)))
        extra = int(self.rng.choice(DIMS))
        y_shape = tuple(extra if i == axis else d for i, d in enumerate(x.shape))
        y = self.arg(x.elem, y_shape) if self.rng.random() < 0.7 else x
        shape = tuple(x.shape[i] + y.shape[i] if i == axis else d for i, d in enumerate(x.shape))
        self.emit("nn.concat", x.elem, shape, [x, y], f"axis = {axis} : i64", "variadic")

    # --- whole program ----------------------------------------------------------------------

    def program(self) -> Program:
        names = [k for k, _ in KINDS]
        weights = np.array([w for _, w in KINDS], dtype=float)
        size = int(self.rng.integers(1, self.max_ops + 1))
        while len(self.ops) < size:
            getattr(self, str(self.rng.choice(names, p=weights / weights.sum())))()
        results = [op.result for op in self.ops]
        outputs = [results[-1]]
        for v in results[:-1]:
            if self.rng.random() < 0.25:
                outputs.append(v)
        return Program(self.args, self.ops, outputs, seed=self.seed).prune()


def generate(seed: int, max_ops: int = 10, half: bool = False) -> Program:
    """The random program of ``seed``, of 1 to ``max_ops`` ops (f16 values with ``half``)."""
    return Generator(seed, max_ops, half).program()


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(d) for d in np.broadcast_shapes(*shapes))


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True
