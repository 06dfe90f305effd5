"""canonicalize-nn's view rules proved by numbers: 'views that cancel around a region' (a
transpose or reshape and its inverse around arithmetic, reductions, narrows and concats) and
'strided gather' (a gather of constant indices with a step). Each program is fused as the rule
intends (one launch, no view left) and fused, unfused, both references and numpy agree on random
and adversarial inputs (infinities, NaN, large magnitudes).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from xdsl.dialects import func

from fusec.dialects import nn
from tests.passes.numeric.conftest import parse
from tests.passes.numeric.spelled import Program


def rnd(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def softmax_cycled() -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """A softmax over the middle axis of x's cycled transpose, transposed back: over x's last
    axis (``t`` axis 1 is x axis 2)."""
    p = Program(x=(2, 3, 4))
    t = p.transpose(p.arg("x"), (1, 2, 0))  # (3, 4, 2)
    m = p.reduce("max", t, [1], keepdims=True)
    e = p.unary("exp", p.sub(t, m))
    s = p.div(e, p.reduce("sum", e, [1], keepdims=True))
    x = rnd((2, 3, 4), 1)
    return p.text(p.transpose(s, (2, 0, 1))), [x], [softmax_np(x, 2)]


def halves_by_reshape() -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """rotate_half by a reshape to (.., 2, h), plus a bias per position broadcast over both
    halves (a size-1 axis in every group but the position's)."""
    b, s, d = 2, 6, 8
    h = d // 2
    p = Program(x=(b, s, d), bias=(s, 1, 1))
    r = p.reshape(p.arg("x"), (b, s, 2, h))
    lo, hi = p.narrow(r, 2, 0, 1), p.narrow(r, 2, 1, 1)
    rot = p.add(p.concat([p.unary("neg", hi), lo], 2), p.arg("bias"))
    out = p.mul(p.reshape(rot, (b, s, d)), 2.0)
    x, bias = rnd((b, s, d), 2), rnd((s, 1, 1), 3)
    want = (np.concatenate([-x[..., h:], x[..., :h]], -1) + bias.reshape(1, s, 1)) * 2.0
    return p.text(out), [x, bias], [want.astype(np.float32)]


def strided_pairs() -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """Elements 1, 4, 7 (step 3, offset 1) of a middle axis of 9 and 0, 2, 4 (step 2) of one
    of 8, combined."""
    p = Program(x=(2, 9, 3), y=(2, 8, 3))
    a = p.take(p.arg("x"), 1, [1, 4, 7])
    c = p.take(p.arg("y"), 1, [0, 2, 4])
    out = p.add(p.mul(a, 2.0), c)
    xv, yv = rnd((2, 9, 3), 4), rnd((2, 8, 3), 5)
    return p.text(out), [xv, yv], [(xv[:, 1::3] * 2.0 + yv[:, 0:5:2]).astype(np.float32)]


def square_operand() -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """Rows of ``x.T * w`` centred, transposed back: ``w`` is read transposed in x's layout, which
    no reshape of it gives (its axes are equally long), so the transposes stay."""
    p = Program(x=(4, 4), w=(4, 4))
    m = p.mul(p.transpose(p.arg("x"), (1, 0)), p.arg("w"))
    d = p.sub(m, p.reduce("mean", m, [1], keepdims=True))
    x, w = rnd((4, 4), 6), rnd((4, 4), 7)
    want = x.T * w
    return p.text(p.transpose(d, (1, 0))), [x, w], [(want - want.mean(1, keepdims=True)).T]


PROGRAMS: dict[str, Callable[[], tuple[str, list[np.ndarray], list[np.ndarray]]]] = {
    "softmax over a cycled transpose, transposed back": softmax_cycled,
    "halves by reshape, a bias per position": halves_by_reshape,
    "gathers with steps 3 and 2 of a middle axis": strided_pairs,
}


def with_specials(x: np.ndarray) -> None:
    x.flat[1] = np.inf
    x.flat[-1] = -np.inf
    x.flat[4] = np.nan
    x.flat[5] = np.float32(3e4)


@pytest.mark.parametrize("name", PROGRAMS)
def test_rewritten_and_fused(numeric, name: str) -> None:  # noqa: ANN001
    text, _, _ = PROGRAMS[name]()
    canonical = numeric.top_ops(text, "canonicalize-nn")
    assert not {"nn.transpose", "nn.gather"} & set(canonical), canonical
    assert numeric.launches(text) == 1


@pytest.mark.parametrize("name", PROGRAMS)
def test_numerics(numeric, name: str) -> None:  # noqa: ANN001
    text, inputs, expected = PROGRAMS[name]()
    numeric.check(text, inputs, expected)


@pytest.mark.parametrize("name", PROGRAMS)
def test_numerics_adversarial(numeric, name: str) -> None:  # noqa: ANN001
    text, inputs, _ = PROGRAMS[name]()
    inputs = [x.copy() for x in inputs]
    with_specials(inputs[0])
    numeric.check(text, inputs)


def test_a_square_operand_keeps_the_transposes(numeric) -> None:  # noqa: ANN001
    text, inputs, expected = square_operand()
    assert numeric.top_ops(text, "canonicalize-nn").count("nn.transpose") == 2
    numeric.check(text, inputs, expected)
    inputs[0].flat[3] = np.inf
    numeric.check(text, inputs)


# --- random regions between a view and its inverse -----------------------------------------

def random_transposed(seed: int) -> tuple[str, list[np.ndarray]]:
    """A 3-d ``x`` transposed by a random permutation, a few random steps (a unary op, an
    operand of a random broadcast shape, a keepdims reduction subtracted), transposed back."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 5, 3))
    perm = [int(p) for p in rng.permutation(3)]
    inner = tuple(shape[p] for p in perm)
    kinds = [str(rng.choice(["unary", "operand", "reduce"])) for _ in range(4)]
    operands = {f"b{k}": tuple(n if rng.random() < 0.5 else 1 for n in inner)[
        int(rng.integers(0, 3)):] for k, kind in enumerate(kinds) if kind == "operand"}
    p = Program(x=shape, **operands)
    v = p.transpose(p.arg("x"), perm)
    for k, kind in enumerate(kinds):
        if kind == "unary":
            v = p.unary(str(rng.choice(["tanh", "neg", "abs"])), v)
        elif kind == "operand":
            v = p.binary(str(rng.choice(["add", "mul", "sub", "max"])), v, p.arg(f"b{k}"))
        else:
            r = p.reduce(str(rng.choice(["sum", "max", "mean"])), v, [int(rng.integers(0, 3))],
                         keepdims=True)
            v = p.sub(v, r)
    out = p.transpose(v, [int(a) for a in np.argsort(perm)])
    inputs = [rnd(shape, seed)] + [rnd(s, seed + 1 + i) for i, s in enumerate(operands.values())]
    return p.text(out), inputs


def random_reshaped(seed: int) -> tuple[str, list[np.ndarray]]:
    """``(b, s, d)`` reshaped to halves ``(b, s, 2, d/2)``, random elementwise steps with operands
    broadcast along whole groups of axes or along the inner half only (which blocks the rule:
    it would repeat along the merged axis), maybe the halves swapped (narrows and a concat),
    reshaped back."""
    rng = np.random.default_rng(seed)
    b, s, h = (int(n) for n in rng.integers(1, 4, 3))
    inner = (b, s, 2, h)
    kinds = [str(rng.choice(["unary", "operand", "swap"])) for _ in range(4)]
    operands = {}
    for k, kind in enumerate(kinds):
        if kind == "operand":
            halves = [(2, h), (1, 1), (1, h)][int(rng.integers(0, 3))]  # (1, h): blocks
            lead = tuple(n if rng.random() < 0.5 else 1 for n in inner[:2])
            operands[f"b{k}"] = (*lead, *halves)[int(rng.integers(0, 3)):]
    p = Program(x=(b, s, 2 * h), **operands)
    v = p.reshape(p.arg("x"), inner)
    for k, kind in enumerate(kinds):
        if kind == "unary":
            v = p.unary(str(rng.choice(["tanh", "neg", "abs"])), v)
        elif kind == "operand":
            v = p.binary(str(rng.choice(["add", "mul", "sub", "max"])), v, p.arg(f"b{k}"))
        else:
            lo, hi = p.narrow(v, 2, 0, 1), p.narrow(v, 2, 1, 1)
            v = p.concat([p.unary("neg", hi), lo], 2)
    out = p.reshape(v, (b, s, 2 * h))
    inputs = [rnd((b, s, 2 * h), seed)] + [
        rnd(shape, seed + 1 + i) for i, shape in enumerate(operands.values())]
    return p.text(out), inputs


RANDOM = [pytest.param(make, seed, id=f"{make.__name__}-{seed}")
          for make in (random_transposed, random_reshaped) for seed in range(8)]


@pytest.mark.parametrize("make,seed", RANDOM)
def test_random_regions(numeric, make, seed: int) -> None:  # noqa: ANN001
    text, inputs = make(seed)
    numeric.check(text, inputs)


def views_of_x(text: str) -> int:
    """The ops that read the argument ``x`` through a view, after canonicalize-nn."""
    fn = next(op for op in parse(text, "canonicalize-nn").ops if isinstance(op, func.FuncOp))
    x = fn.body.block.args[0]
    return sum(isinstance(use.operation, nn.TransposeOp | nn.ReshapeOp) for use in x.uses)


@pytest.mark.parametrize("make", [random_transposed, random_reshaped])
def test_random_regions_mostly_rewritten(make) -> None:  # noqa: ANN001
    """The random regions exercise the rule: most lose their views of x."""
    rewritten = sum(views_of_x(make(seed)[0]) == 0 for seed in range(8))
    assert rewritten >= 4, rewritten
