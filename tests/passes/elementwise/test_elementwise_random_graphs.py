"""Seeded random programs: long, branching chains of elementwise ops over f32, f16, i32 and i1,
with broadcast operands, splat constants, values read twice and values returned.

For each program: the fused program gives bit-identical results (every op of these programs
rounds once to its type whether it runs as an nn op or as a scalar body op); regions respect the
limits; with unbounded limits the regions are maximal (no fusible op is left whose only user is
fusible); the output is deterministic; and fusion time grows linearly with program size.
"""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.dialects import fused
from fusec.dialects.scalar_ops import is_elementwise
from fusec.passes.fuse_elementwise import FuseElementwisePass
from fusec.reference.executor import find_function, random_inputs

M, N = 3, 4
SEEDS = range(4)
UNBOUNDED = "fuse-elementwise{max-steps=1000000 max-inputs=1000000}"

ARGS: dict[str, tuple[str, tuple[int, ...]]] = {
    "x0": ("f32", (M, N)),
    "x1": ("f32", (M, N)),
    "b": ("f32", (N,)),
    "s": ("f32", ()),
    "k": ("i32", (M, N)),
    "j": ("i32", (N,)),
    "h": ("f16", (M, N)),
    "c": ("i1", (M, N)),
}

UNARY = {
    "f32": ["nn.neg", "nn.abs", "nn.exp", "nn.log", "nn.sqrt", "nn.tanh", "nn.relu"],
    "f16": ["nn.neg", "nn.abs", "nn.tanh"],
    "i32": ["nn.neg", "nn.abs", "nn.relu"],
}
BINARY = {
    "f32": ["nn.add", "nn.sub", "nn.mul", "nn.div", "nn.max", "nn.min"],
    "f16": ["nn.add", "nn.sub", "nn.mul"],
    "i32": ["nn.add", "nn.sub", "nn.mul", "nn.max", "nn.min", "nn.div"],
}
# result type -> source types of the casts that produce it (no float -> int: NaN has no value)
CASTS = {"f32": ["f16", "i32", "i1"], "f16": ["f32"], "i32": ["i1"], "i1": ["f32", "i32"]}
PREDICATES = ["eq", "ne", "lt", "le", "gt", "ge"]


def ty(elem: str, shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


class RandomProgram:
    """Builds the text of ``func.func @f`` with ``size`` random elementwise ops."""

    def __init__(self, seed: int, size: int):
        self.rng = np.random.default_rng(seed)
        self.lines: list[str] = []
        self.pools: dict[str, list[tuple[str, tuple[int, ...]]]] = {e: [] for e in CASTS}
        for name, (elem, shape) in ARGS.items():
            self.pools[elem].append((f"%{name}", shape))
        for _ in range(size):
            self.step()

    def pick(self, elem: str) -> tuple[str, tuple[int, ...]]:
        """A value of type ``elem``, usually a recent one (long chains), sometimes any (forks)."""
        pool = self.pools[elem]
        if self.rng.random() < 0.15:
            return pool[int(self.rng.integers(len(pool)))]
        back = min(int(self.rng.geometric(0.45)) - 1, len(pool) - 1)
        return pool[len(pool) - 1 - back]

    def emit(self, elem: str, shape: tuple[int, ...], text: str) -> None:
        name = f"%v{len(self.lines)}"
        self.lines.append(f"  {name} = {text} -> {ty(elem, shape)}")
        self.pools[elem].append((name, shape))

    def constant(self, elem: str) -> tuple[str, tuple[int, ...]]:
        name = f"%k{len(self.lines)}"
        value = {"f32": "1.500000e+00", "f16": "5.000000e-01", "i32": "3"}[elem]
        self.lines.append(
            f"  {name} = nn.constant {{value = dense<{value}> : {ty(elem, ())}}} : {ty(elem, ())}"
        )
        return name, ()

    def step(self) -> None:
        elem = str(self.rng.choice(["f32", "f16", "i32", "i1"], p=[0.55, 0.1, 0.15, 0.2]))
        kind = self.rng.random()
        if elem == "i1":
            if kind < 0.7:
                src = str(self.rng.choice(["f32", "i32"]))
                (a, sa), (b, sb) = self.pick(src), self.pick(src)
                pred = self.rng.choice(PREDICATES)
                shape = broadcast(sa, sb)
                self.emit(
                    "i1",
                    shape,
                    f'nn.cmp {a}, {b} {{predicate = "{pred}"}} : {ty(src, sa)}, {ty(src, sb)}',
                )
            else:
                self.cast("i1")
        elif kind < 0.35:
            a, sa = self.pick(elem)
            op = self.rng.choice(UNARY[elem])
            self.emit(elem, sa, f"{op} {a} : {ty(elem, sa)}")
        elif kind < 0.8:
            a, sa = self.pick(elem)
            b, sb = self.constant(elem) if self.rng.random() < 0.15 else self.pick(elem)
            op = self.rng.choice(BINARY[elem])
            self.emit(elem, broadcast(sa, sb), f"{op} {a}, {b} : {ty(elem, sa)}, {ty(elem, sb)}")
        elif kind < 0.9:
            (c, sc), (a, sa), (b, sb) = self.pick("i1"), self.pick(elem), self.pick(elem)
            types = f"{ty('i1', sc)}, {ty(elem, sa)}, {ty(elem, sb)}"
            self.emit(elem, broadcast(sc, sa, sb), f"nn.where {c}, {a}, {b} : {types}")
        else:
            self.cast(elem)

    def cast(self, elem: str) -> None:
        src = str(self.rng.choice(CASTS[elem]))
        a, sa = self.pick(src)
        self.emit(elem, sa, f"nn.cast {a} : {ty(src, sa)}")

    def text(self) -> str:
        """The function: every pool's last value is returned, and two random values."""
        results = [pool[-1] for pool in self.pools.values()]
        results += [self.pick("f32") for _ in range(2)]
        types = {name: ty(elem, shape) for elem, pool in self.pools.items() for name, shape in pool}
        params = ", ".join(f"%{n}: {ty(e, s)}" for n, (e, s) in ARGS.items())
        ret_types = ", ".join(types[n] for n, _ in results)
        return (
            f"func.func @f({params}) -> ({ret_types}) {{\n"
            + "\n".join(self.lines)
            + f"\n  func.return {', '.join(n for n, _ in results)} : {ret_types}\n}}\n"
        )


def body_steps(op: fused.ElementwiseOp) -> int:
    return sum(1 for o in op.body.block.ops if not isinstance(o, arith.ConstantOp | fused.YieldOp))


def regions(module: ModuleOp) -> list[fused.ElementwiseOp]:
    return [op for op in module.walk() if isinstance(op, fused.ElementwiseOp)]


@pytest.mark.parametrize("seed", SEEDS)
def test_fused_random_program_is_bit_identical(seed, compile_ir, run_ref, names):
    text = RandomProgram(seed, 80).text()
    original = compile_ir(text, "")
    args = random_inputs(find_function(original), seed)
    expected = run_ref(original, args)
    for spec in (
        "fuse-elementwise",
        "fuse-elementwise{max-steps=5 max-inputs=3}",
        UNBOUNDED,
        "fuse-elementwise,unfuse-elementwise",
        f"{UNBOUNDED},clip-elementwise{{max-steps=4 max-inputs=2}}",
    ):
        module = compile_ir(text, spec)
        if "unfuse" not in spec:
            assert "fused.elementwise" in names(module), spec
        for i, (e, a) in enumerate(zip(expected, run_ref(module, args), strict=True)):
            np.testing.assert_array_equal(a, e, err_msg=f"seed {seed}, {spec}, result #{i}")


@pytest.mark.parametrize(
    "spec, steps, inputs",
    [
        ("fuse-elementwise", 32, 16),
        ("fuse-elementwise{max-steps=5 max-inputs=3}", 5, 3),
        ("fuse-elementwise{max-steps=1 max-inputs=1}", 1, 1),
        (f"{UNBOUNDED},clip-elementwise{{max-steps=4 max-inputs=2}}", 4, 2),
    ],
)
@pytest.mark.parametrize("seed", SEEDS)
def test_regions_respect_limits(seed, spec, steps, inputs, compile_ir):
    module = compile_ir(RandomProgram(seed, 120).text(), spec)
    for op in regions(module):
        assert body_steps(op) <= steps, f"seed {seed}: {body_steps(op)} steps > {steps}"
        assert len(set(op.inputs)) <= inputs, f"seed {seed}: {len(set(op.inputs))} inputs"


def fusible(op) -> bool:
    return is_elementwise(op) or isinstance(op, fused.ElementwiseOp)


@pytest.mark.parametrize("seed", SEEDS)
def test_unbounded_regions_are_maximal(seed, compile_ir):
    """Without limits, no fusible op is left whose one user is a fusible op."""
    module = compile_ir(RandomProgram(seed, 120).text(), UNBOUNDED)
    for op in module.walk():
        if fusible(op):
            users = {id(u.operation): u.operation for u in op.results[0].uses}
            assert not (len(users) == 1 and fusible(next(iter(users.values())))), str(op)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_fusion_is_deterministic(seed, compile_ir):
    text = RandomProgram(seed, 120).text()
    spec = "fuse-elementwise{max-steps=6 max-inputs=4}"
    assert str(compile_ir(text, spec)) == str(compile_ir(text, spec))


def chain_module(text: str) -> ModuleOp:
    return parse_module(make_context(), Source(text, "random.mlir"))


def fuse_seconds(text: str, repeats: int = 3) -> float:
    """Best-of time of fuse-elementwise, unbounded limits (parsing and cloning not counted)."""
    best = float("inf")
    pass_ = FuseElementwisePass(max_steps=10**6, max_inputs=10**6)
    parsed = chain_module(text)
    for _ in range(repeats):
        module = parsed.clone()
        gc.disable()  # as timeit does: collections scale with the heap, not with the pass
        start = time.perf_counter()
        pass_.apply(make_context(), module)
        best = min(best, time.perf_counter() - start)
        gc.enable()
    return best


def test_fusion_time_is_linear():
    """Growth of fusion time from N to 4N ops: ~4x if linear, ~16x if quadratic. The bound is
    generous because the machine is shared; the figures are printed (pytest -s)."""
    small, large = 300, 1200
    t_small = fuse_seconds(RandomProgram(7, small).text())
    t_large = fuse_seconds(RandomProgram(7, large).text())
    ratio = t_large / t_small
    print(
        f"fuse-elementwise: {small} ops {t_small * 1e3:.1f} ms, {large} ops "
        f"{t_large * 1e3:.1f} ms, ratio {ratio:.2f}"
    )
    assert ratio < 9.0


def test_long_chain_time_is_linear():
    """One region of N and 4N ops (a single chain): moving, not cloning, keeps it linear."""

    def chain(size: int) -> str:
        lines = [
            f"  %v{i + 1} = nn.{'exp' if i % 2 else 'neg'} %v{i} : {ty('f32', (N,))} -> "
            f"{ty('f32', (N,))}"
            for i in range(size)
        ]
        return (
            f"func.func @f(%v0: {ty('f32', (N,))}) -> {ty('f32', (N,))} {{\n"
            + "\n".join(lines)
            + f"\n  func.return %v{size} : {ty('f32', (N,))}\n}}\n"
        )

    t_small, t_large = fuse_seconds(chain(400)), fuse_seconds(chain(1600))
    ratio = t_large / t_small
    print(
        f"chain: 400 ops {t_small * 1e3:.1f} ms, 1600 ops {t_large * 1e3:.1f} ms, ratio {ratio:.2f}"
    )
    assert ratio < 9.0
