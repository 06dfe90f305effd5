"""Held-out spellings of issue 28's computations: each computation has a hand-spelled form (the
one op, or the keepdims spelling a fusion was written for) and several other ways people write
it (views, keepdims-less reductions, negative axes, reciprocals, explicit expands, ``pow``,
``exp(x - logsumexp)``, ...), each with its inputs and an independent numpy result.

``SPELLINGS[computation]`` maps the spelling's name to a function returning ``Case``; the name
``hand`` is the hand-spelled form whose launch count every other spelling must equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tests.passes.numeric.spelled import Program, Value

EPS = 1e-5


@dataclass(frozen=True)
class Case:
    text: str
    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    tol: tuple[float, float] = (1e-5, 1e-4)


def rnd(shape: tuple[int, ...], seed: int, scale: float = 1.0, mean: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale + mean).astype(np.float32)


# ---------------------------------------------------------------- numpy, written independently

def softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def log_softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return (x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).astype(np.float32)


def rotary_np(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return (x * cos + rot * sin).astype(np.float32)


def rotary_pairs_np(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """GPT-J's rotary: pairs (x[2i], x[2i+1]) rotated by the angle of column i."""
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def standardize_np(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    d = x - x.mean(axis=axis, keepdims=True)
    return (d / np.sqrt((d * d).mean(axis=axis, keepdims=True) + EPS)).astype(np.float32)


def zscore_np(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return ((x - x.mean(axis=0)) / x.std(axis=0, ddof=1)).astype(np.float32)


def power_step_np(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    y = a.astype(np.float64) @ q.astype(np.float64)
    return (y / np.sqrt((y * y).sum(axis=0) + EPS)).astype(np.float32)


def gelu_np(x: np.ndarray, tanh: bool) -> np.ndarray:
    x = x.astype(np.float64)
    if tanh:
        return (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
                ).astype(np.float32)
    erf = np.vectorize(math.erf)
    return (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(np.float32)


def rms_norm_np(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return (x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * w).astype(np.float32)


# ---------------------------------------------------------------- helpers over Program

def keep(p: Program, op: str, x: Value, axis: int) -> Value:
    """A reduction over ``axis`` without keepdims, then reshaped back (an unsqueeze)."""
    r = p.reduce(op, x, [axis], keepdims=False)
    shape = list(x.shape)
    shape[axis % len(shape)] = 1
    return p.reshape(r, shape)


def recip(p: Program, x: Value) -> Value:
    return p.div(1.0, x)


# ---------------------------------------------------------------- softmax

def softmax_cases(shape: tuple[int, ...], axis: int) -> dict[str, Callable[[], Case]]:
    x_np = rnd(shape, 1, scale=30.0)
    x_np.flat[0] = -np.inf  # weighs nothing
    expected = [softmax_np(x_np, axis)]
    neg_axis = axis - len(shape)
    full = shape

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=shape)
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected, (1e-6, 1e-4))
        return make

    def lse(p: Program, x: Value) -> Value:
        m = p.reduce("max", x, [axis], keepdims=True)
        s = p.reduce("sum", p.unary("exp", p.sub(x, m)), [axis], keepdims=True)
        return p.unary("exp", p.sub(x, p.add(m, p.unary("log", s))))

    def unsqueezed_reciprocal(p: Program, x: Value) -> Value:
        m = keep(p, "max", x, neg_axis)
        e = p.unary("exp", p.add(x, p.unary("neg", m)))
        return p.mul(e, recip(p, keep(p, "sum", e, neg_axis)))

    def expanded(p: Program, x: Value) -> Value:
        m = p.expand(p.reduce("max", x, [axis], keepdims=True), full)
        e = p.unary("exp", p.sub(x, m))
        return p.div(e, p.expand(p.reduce("sum", e, [neg_axis], keepdims=True), full))

    return {
        "hand": case(lambda p, x: p.softmax(x, axis)),
        "exp(x - logsumexp)": case(lse),
        "no keepdims, unsqueeze, negative axis, add of neg, reciprocal": case(
            unsqueezed_reciprocal),
        "explicit expand (where true)": case(expanded),
    }


def log_softmax_cases() -> dict[str, Callable[[], Case]]:
    shape = (4, 17)
    x_np = rnd(shape, 2, scale=10.0)
    expected = [log_softmax_np(x_np, 1)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=shape)
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected, (1e-5, 1e-4))
        return make

    def written(p: Program, x: Value) -> Value:
        m = p.reduce("max", x, [1], keepdims=True)
        d = p.sub(x, m)
        return p.sub(d, p.unary("log", p.reduce("sum", p.unary("exp", d), [1], keepdims=True)))

    def keepless(p: Program, x: Value) -> Value:
        m = keep(p, "max", x, -1)
        s = keep(p, "sum", p.unary("exp", p.sub(x, m)), -1)
        return p.sub(p.sub(x, m), p.unary("log", s))

    return {
        "hand": case(lambda p, x: p.unary("log", p.softmax(x, -1))),
        "x - max - log(sum(exp))": case(written),
        "no keepdims, unsqueezed": case(keepless),
    }


# ---------------------------------------------------------------- rotary

def rotary_cases() -> dict[str, Callable[[], Case]]:
    b, s, d = 2, 6, 8
    h = d // 2
    x_np, cos_np, sin_np = rnd((b, s, d), 3), rnd((s, d), 4), rnd((s, d), 5)
    expected = [rotary_np(x_np, cos_np, sin_np)]

    def case(body: Callable[[Program, Value, Value, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(b, s, d), cos=(s, d), sin=(s, d))
            out = body(p, p.arg("x"), p.arg("cos"), p.arg("sin"))
            return Case(p.text(out), [x_np, cos_np, sin_np], expected)
        return make

    def hand(p: Program, x: Value, cos: Value, sin: Value) -> Value:
        x1, x2 = p.narrow(x, 2, 0, h), p.narrow(x, 2, h, h)
        rot = p.concat([p.unary("neg", x2), x1], 2)
        return p.add(p.mul(x, cos), p.mul(rot, sin))

    def other_order(p: Program, x: Value, cos: Value, sin: Value) -> Value:
        x1, x2 = p.narrow(x, 2, 0, h), p.narrow(x, 2, h, h)
        sign = p.const(np.array([-1.0] * h + [1.0] * h, np.float32))
        rot = p.mul(p.concat([x2, x1], -1), sign)
        return p.add(p.mul(cos, x), p.mul(sin, rot))

    def gathered_minus(p: Program, x: Value, cos: Value, sin: Value) -> Value:
        x1, x2 = p.take(x, 2, range(h)), p.take(x, 2, range(h, d))
        minus_rot = p.concat([x2, p.unary("neg", x1)], 2)  # -rot
        return p.sub(p.mul(x, cos), p.mul(minus_rot, sin))

    def reshaped_halves(p: Program, x: Value, cos: Value, sin: Value) -> Value:
        xr = p.reshape(x, (b, s, 2, h))
        x1, x2 = p.narrow(xr, 2, 0, 1), p.narrow(xr, 2, 1, 1)
        rot = p.reshape(p.concat([p.unary("neg", x2), x1], 2), (b, s, d))
        return p.add(p.mul(x, cos), p.mul(rot, sin))

    def sub_of_neg_rotated_in_4d(p: Program, x: Value, cos: Value, sin: Value) -> Value:
        x4 = p.reshape(x, (b, 1, s, d))
        x1, x2 = p.narrow(x4, 3, 0, h), p.narrow(x4, 3, h, h)
        rot = p.concat([p.sub(0.0, x2), x1], 3)
        c4, s4 = p.reshape(cos, (1, 1, s, d)), p.reshape(sin, (1, 1, s, d))
        return p.reshape(p.add(p.mul(x4, c4), p.mul(rot, s4)), (b, s, d))

    return {
        "hand": case(hand),
        "halves concatenated the other way, times a sign": case(other_order),
        "halves by gather (stepped slice), x*cos - (-rot)*sin": case(gathered_minus),
        "halves by reshape to (.., 2, h) and narrow": case(reshaped_halves),
        "4-d, 0 - x2, cos/sin unsqueezed": case(sub_of_neg_rotated_in_4d),
    }


def rotary_pairs_cases() -> dict[str, Callable[[], Case]]:
    """GPT-J's interleaved rotary: slices with step 2, then the pairs stacked back."""
    b, s, d = 2, 6, 8
    h = d // 2
    x_np, cos_np, sin_np = rnd((b, s, d), 6), rnd((s, h), 7), rnd((s, h), 8)
    expected = [rotary_pairs_np(x_np, cos_np, sin_np)]

    def make_case(stack: bool) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(b, s, d), cos=(s, h), sin=(s, h))
            x, cos, sin = p.arg("x"), p.arg("cos"), p.arg("sin")
            if stack:
                even, odd = p.take(x, 2, range(0, d, 2)), p.take(x, 2, range(1, d, 2))
            else:
                pairs = p.reshape(x, (b, s, h, 2))
                even = p.reshape(p.narrow(pairs, 3, 0, 1), (b, s, h))
                odd = p.reshape(p.narrow(pairs, 3, 1, 1), (b, s, h))
            out_even = p.sub(p.mul(even, cos), p.mul(odd, sin))
            out_odd = p.add(p.mul(even, sin), p.mul(odd, cos))
            stacked = p.concat([p.reshape(out_even, (b, s, h, 1)),
                                p.reshape(out_odd, (b, s, h, 1))], 3)
            out = p.reshape(stacked, (b, s, d))
            return Case(p.text(out), [x_np, cos_np, sin_np], expected)
        return make

    return {"hand": make_case(False), "pairs by stepped slices (gather)": make_case(True)}


# ---------------------------------------------------------------- transpose around elementwise

def transpose_cases() -> dict[str, Callable[[], Case]]:
    x_np, b_np = rnd((2, 3, 4), 9), rnd((3,), 10)
    expected = [np.maximum(x_np * 2.0 + b_np[:, None], 0.0)]

    def case(body: Callable[[Program, Value, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(2, 3, 4), b=(3,))
            return Case(p.text(body(p, p.arg("x"), p.arg("b"))), [x_np, b_np], expected)
        return make

    def hand(p: Program, x: Value, b: Value) -> Value:
        return p.unary("relu", p.add(p.mul(x, 2.0), p.reshape(b, (3, 1))))

    def swapped(p: Program, x: Value, b: Value) -> Value:
        t = p.transpose(x, (0, 2, 1))
        y = p.unary("relu", p.add(p.mul(t, 2.0), b))
        return p.transpose(y, (0, 2, 1))

    def cycled(p: Program, x: Value, b: Value) -> Value:
        t = p.transpose(x, (1, 2, 0))  # (3, 4, 2)
        y = p.binary("max", p.add(p.mul(2.0, t), p.reshape(b, (3, 1, 1))), 0.0)
        return p.transpose(y, (2, 0, 1))

    def flattened(p: Program, x: Value, b: Value) -> Value:
        t = p.reshape(p.transpose(x, (0, 2, 1)), (8, 3))
        y = p.unary("relu", p.add(p.add(t, t), b))
        return p.transpose(p.reshape(y, (2, 4, 3)), (0, 2, 1))

    return {
        "hand": case(hand),
        "permute (0, 2, 1), bias on the last axis, permute back": case(swapped),
        "permute cycle, max(., 0), inverse cycle": case(cycled),
        "permute then flatten, x + x, unflatten, permute back": case(flattened),
    }


# ---------------------------------------------------------------- concat of elementwise results

def concat_cases() -> dict[str, Callable[[], Case]]:
    a_np, b_np = rnd((4, 5), 11), rnd((4, 5), 12)
    expected = [np.concatenate([np.maximum(a_np * b_np, 0), np.exp(a_np - b_np)], axis=1)]

    def case(body: Callable[[Program, Value, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(a=(4, 5), b=(4, 5))
            return Case(p.text(body(p, p.arg("a"), p.arg("b"))), [a_np, b_np], expected)
        return make

    def hand(p: Program, a: Value, b: Value) -> Value:
        return p.concat([p.unary("relu", p.mul(a, b)), p.unary("exp", p.sub(a, b))], 1)

    def negative_axis(p: Program, a: Value, b: Value) -> Value:
        return p.concat([p.binary("max", p.mul(b, a), 0.0),
                         p.unary("exp", p.add(a, p.unary("neg", b)))], -1)

    def via_transposes(p: Program, a: Value, b: Value) -> Value:
        at, bt = p.transpose(a, (1, 0)), p.transpose(b, (1, 0))
        c = p.concat([p.unary("relu", p.mul(at, bt)), p.unary("exp", p.sub(at, bt))], 0)
        return p.transpose(c, (1, 0))

    def arithmetic_after(p: Program, a: Value, b: Value) -> Value:
        """concat first, then one arithmetic over the pieces (a select by a constant mask)."""
        ab = p.concat([p.mul(a, b), p.sub(a, b)], 1)
        mask_np = np.array([[1.0] * 5 + [0.0] * 5], np.float32)
        flags, half = p.const(mask_np), p.const(0.5)
        mask = p.emit(f'nn.cmp {flags.name}, {half.name} {{predicate = "gt"}} : {flags.type}, '
                      f"{half.type} -> {{result}}", (1, 10), "i1")
        relu, exp = p.unary("relu", ab), p.unary("exp", ab)
        return p.emit(f"nn.where {mask.name}, {relu.name}, {exp.name} : {mask.type}, "
                      f"{relu.type}, {exp.type} -> {{result}}", (4, 10))

    return {
        "hand": case(hand),
        "axis -1, max(., 0), add of neg": case(negative_axis),
        "transposed, concat on axis 0, transposed back": case(via_transposes),
        "concat first, then where over the pieces": case(arithmetic_after),
    }


# ---------------------------------------------------------------- centering over a middle axis

def center_cases() -> dict[str, Callable[[], Case]]:
    shape = (2, 5, 3)
    x_np = rnd(shape, 13, scale=2.0, mean=1e3)
    expected = [(x_np.astype(np.float64) - x_np.astype(np.float64).mean(axis=1, keepdims=True)
                 ).astype(np.float32)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=shape)
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected, (1e-3, 1e-4))
        return make

    return {
        "hand": case(lambda p, x: p.sub(x, p.reduce("mean", x, [1], keepdims=True))),
        "sum * (1/n), axis -2, unsqueezed": case(
            lambda p, x: p.sub(x, p.mul(keep(p, "sum", x, -2), 1.0 / 5))),
        "sum / n, explicit expand, add of neg": case(
            lambda p, x: p.add(x, p.unary("neg", p.expand(
                p.div(p.reduce("sum", x, [1], keepdims=True), 5.0), shape)))),
        "mean without keepdims, reshaped": case(
            lambda p, x: p.sub(x, p.reshape(p.reduce("mean", x, [1]), (2, 1, 3)))),
    }


# ---------------------------------------------------------------- sibling reductions

def siblings_cases() -> dict[str, Callable[[], Case]]:
    x_np = rnd((4, 9), 14, scale=3.0)
    expected = [x_np.sum(axis=1), x_np.max(axis=1)]

    def case(body: Callable[[Program, Value], tuple[Value, Value]]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(4, 9))
            return Case(p.text(*body(p, p.arg("x"))), [x_np], expected, (1e-4, 1e-5))
        return make

    return {
        "hand": case(lambda p, x: (p.reduce("sum", x, [1]), p.reduce("max", x, [1]))),
        "axis -1": case(lambda p, x: (p.reduce("sum", x, [-1]), p.reduce("max", x, [-1]))),
        "sum as mean * n": case(
            lambda p, x: (p.mul(p.reduce("mean", x, [1]), 9.0), p.reduce("max", x, [1]))),
        "max as -min(-x)": case(
            lambda p, x: (p.reduce("sum", x, [1]),
                          p.unary("neg", p.reduce("min", p.unary("neg", x), [1])))),
    }


# ---------------------------------------------------------------- column standardisation

def standardize_cases() -> dict[str, Callable[[], Case]]:
    shape = (7, 5)
    x_np = rnd(shape, 15, scale=2.0, mean=0.5)
    expected = [standardize_np(x_np, 0)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=shape)
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected, (1e-4, 1e-4))
        return make

    def hand(p: Program, x: Value) -> Value:
        d = p.sub(x, p.reduce("mean", x, [0], keepdims=True))
        v = p.reduce("mean", p.mul(d, d), [0], keepdims=True)
        return p.mul(d, p.unary("rsqrt", p.add(v, EPS)))

    def moments(p: Program, x: Value) -> Value:
        m = p.reduce("mean", x, [0], keepdims=True)
        v = p.sub(p.reduce("mean", p.mul(x, x), [0], keepdims=True), p.mul(m, m))
        return p.div(p.sub(x, m), p.unary("sqrt", p.add(v, EPS)))

    def keepless_pow(p: Program, x: Value) -> Value:
        d = p.sub(x, p.reduce("mean", x, [0]))
        v = p.reduce("mean", p.binary("pow", d, 2.0), [-2])
        return p.div(d, p.binary("pow", p.add(v, EPS), 0.5))

    def transposed_rows(p: Program, x: Value) -> Value:
        t = p.transpose(x, (1, 0))
        d = p.sub(t, p.reduce("mean", t, [1], keepdims=True))
        v = p.reduce("mean", p.mul(d, d), [1], keepdims=True)
        return p.transpose(p.mul(d, p.unary("rsqrt", p.add(v, EPS))), (1, 0))

    return {
        "hand": case(hand),
        "var as mean(x*x) - mean^2, divide by sqrt": case(moments),
        "no keepdims, pow 2, axis -2, divide by pow 0.5": case(keepless_pow),
        "transposed, standardised by rows, transposed back": case(transposed_rows),
    }


# ---------------------------------------------------------------- zscore over columns

def zscore_cases() -> dict[str, Callable[[], Case]]:
    n, c = 9, 4
    x_np = rnd((n, c), 16, scale=3.0, mean=-1.0)
    expected = [zscore_np(x_np)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(n, c))
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected, (1e-4, 1e-4))
        return make

    def hand(p: Program, x: Value) -> Value:
        d = p.sub(x, p.reduce("mean", x, [0], keepdims=True))
        s = p.unary("sqrt", p.div(p.reduce("sum", p.mul(d, d), [0], keepdims=True), n - 1.0))
        return p.div(d, s)

    def reciprocal(p: Program, x: Value) -> Value:
        d = p.sub(x, p.mul(p.reduce("sum", x, [0]), 1.0 / n))
        v = p.mul(p.reduce("sum", p.mul(d, d), [0]), 1.0 / (n - 1))
        return p.mul(d, recip(p, p.binary("pow", v, 0.5)))

    def rsqrt_neg_axis(p: Program, x: Value) -> Value:
        m = keep(p, "mean", x, -2)
        d = p.add(x, p.unary("neg", m))
        v = p.div(keep(p, "sum", p.binary("pow", d, 2.0), -2), float(n - 1))
        return p.mul(d, p.unary("rsqrt", v))

    return {
        "hand": case(hand),
        "sum * (1/n), reciprocal of pow 0.5": case(reciprocal),
        "axis -2 unsqueezed, add of neg, pow 2, rsqrt": case(rsqrt_neg_axis),
    }


# ---------------------------------------------------------------- power step, eps in the root

def power_step_cases() -> dict[str, Callable[[], Case]]:
    m, k, c = 8, 6, 4
    a_np, q_np = rnd((m, k), 17), rnd((k, c), 18)
    expected = [power_step_np(a_np, q_np)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(a=(m, k), q=(k, c))
            y = p.matmul(p.arg("a"), p.arg("q"))
            return Case(p.text(body(p, y)), [a_np, q_np], expected, (1e-5, 1e-4))
        return make

    def hand(p: Program, y: Value) -> Value:
        s = p.reduce("sum", p.mul(y, y), [0], keepdims=True)
        return p.mul(y, p.unary("rsqrt", p.add(s, EPS)))

    def pow_keepless_div(p: Program, y: Value) -> Value:
        s = p.reduce("sum", p.binary("pow", y, 2.0), [0])
        return p.div(y, p.unary("sqrt", p.add(s, EPS)))

    def mean_times_m(p: Program, y: Value) -> Value:
        s = p.mul(p.reduce("mean", p.mul(y, y), [-2], keepdims=True), float(m))
        return p.mul(y, recip(p, p.binary("pow", p.add(EPS, s), 0.5)))

    return {
        "hand": case(hand),
        "pow 2, no keepdims, divide by sqrt": case(pow_keepless_div),
        "mean * m, eps first, reciprocal of pow 0.5": case(mean_times_m),
    }


# ---------------------------------------------------------------- GELU after a matmul

def gelu_cases(tanh: bool) -> dict[str, Callable[[], Case]]:
    x_np, w_np, b_np = rnd((4, 8), 19), rnd((8, 16), 20), rnd((16,), 21)
    h = x_np.astype(np.float64) @ w_np + b_np
    expected = [gelu_np(h.astype(np.float32), tanh)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(4, 8), w=(8, 16), b=(16,))
            h = p.add(p.matmul(p.arg("x"), p.arg("w")), p.arg("b"))
            return Case(p.text(body(p, h)), [x_np, w_np, b_np], expected, (1e-5, 1e-4))
        return make

    k = math.sqrt(2 / math.pi)
    if tanh:
        return {
            "hand": case(lambda p, h: p.unary("gelu", h, ' {approximate = "tanh"}')),
            "0.5 x (1 + tanh(k (x + 0.044715 x^3))), pow 3": case(
                lambda p, h: p.mul(p.mul(h, 0.5), p.add(p.unary("tanh", p.mul(
                    p.add(h, p.mul(p.binary("pow", h, 3.0), 0.044715)), k)), 1.0))),
            "x * sigmoid(2k (x + 0.044715 x*x*x))": case(
                lambda p, h: p.mul(h, p.unary("sigmoid", p.mul(2 * k, p.add(
                    h, p.mul(0.044715, p.mul(p.mul(h, h), h))))))),
        }
    return {
        "hand": case(lambda p, h: p.unary("gelu", h)),
        "0.5 x (1 + erf(x * 0.7071))": case(
            lambda p, h: p.mul(p.mul(0.5, h), p.add(1.0, p.unary("erf", p.mul(
                h, 1 / math.sqrt(2)))))),
        "x * (erf(x / sqrt 2) + 1) / 2": case(
            lambda p, h: p.div(p.mul(h, p.add(p.unary("erf", p.div(h, math.sqrt(2))), 1.0)),
                               2.0)),
    }


# ---------------------------------------------------------------- RMSNorm

def rms_norm_cases() -> dict[str, Callable[[], Case]]:
    x_np, w_np = rnd((3, 16), 22, scale=4.0), rnd((16,), 23)
    expected = [rms_norm_np(x_np, w_np)]

    def case(body: Callable[[Program, Value, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(3, 16), w=(16,))
            return Case(p.text(body(p, p.arg("x"), p.arg("w"))), [x_np, w_np], expected)
        return make

    def pow_half_divide(p: Program, x: Value, w: Value) -> Value:
        ms = p.reduce("mean", p.binary("pow", x, 2.0), [-1], keepdims=True)
        return p.mul(p.div(x, p.binary("pow", p.add(ms, EPS), 0.5)), w)

    def sum_over_n_keepless(p: Program, x: Value, w: Value) -> Value:
        ms = p.div(keep(p, "sum", p.mul(x, x), 1), 16.0)
        return p.mul(w, p.mul(x, p.unary("rsqrt", p.add(ms, EPS))))

    return {
        "hand": case(lambda p, x, w: p.emit(
            f"nn.rms_norm {x.name}, {w.name} {{eps = {EPS:e} : f32}} : {x.type}, {w.type} -> "
            "{result}", x.shape)),
        "pow 2, mean, pow 0.5, divide, times w": case(pow_half_divide),
        "sum / n unsqueezed, rsqrt, w first": case(sum_over_n_keepless),
    }


# ---------------------------------------------------------------- seed 000/001 programs

def centered_gram_cases() -> dict[str, Callable[[], Case]]:
    """Seed 000's covariance: (x - mean)^T (x - mean) / (n - 1)."""
    n, c = 10, 4
    x_np = rnd((n, c), 24, scale=2.0, mean=3.0)
    d64 = x_np.astype(np.float64) - x_np.astype(np.float64).mean(axis=0)
    expected = [(d64.T @ d64 / (n - 1)).astype(np.float32)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(n, c))
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected, (1e-4, 1e-4))
        return make

    def hand(p: Program, x: Value) -> Value:
        d = p.sub(x, p.reduce("mean", x, [0], keepdims=True))
        return p.div(p.matmul(p.transpose(d, (1, 0)), d), float(n - 1))

    def written(p: Program, x: Value) -> Value:
        d = p.add(x, p.unary("neg", p.mul(p.reduce("sum", x, [0]), 1.0 / n)))
        return p.mul(p.matmul(p.transpose(d, (1, 0)), d), 1.0 / (n - 1))

    def keepless_neg_axis(p: Program, x: Value) -> Value:
        d = p.sub(x, keep(p, "mean", x, -2))
        return p.div(p.matmul(p.transpose(d, (1, 0)), d), float(n - 1))

    return {
        "hand": case(hand),
        "sum * (1/n), add of neg, * 1/(n-1)": case(written),
        "mean axis -2 unsqueezed": case(keepless_neg_axis),
    }


def elementwise_chain_cases() -> dict[str, Callable[[], Case]]:
    """Seed 001's fusable chains: unary/binary pointwise ops then a row reduction."""
    a_np, b_np, c_np = rnd((4, 12), 25), rnd((4, 12), 26), rnd((12,), 27)
    z = a_np.astype(np.float64) * b_np + c_np
    expected = [(1 / (1 + np.exp(-np.maximum(z, 0)))).sum(axis=1).astype(np.float32)]

    def case(body: Callable[[Program, Value, Value, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(a=(4, 12), b=(4, 12), c=(12,))
            out = body(p, p.arg("a"), p.arg("b"), p.arg("c"))
            return Case(p.text(out), [a_np, b_np, c_np], expected)
        return make

    def hand(p: Program, a: Value, b: Value, c: Value) -> Value:
        return p.reduce("sum", p.unary("sigmoid", p.unary("relu", p.add(p.mul(a, b), c))), [1])

    def written(p: Program, a: Value, b: Value, c: Value) -> Value:
        r = p.binary("max", p.add(c, p.mul(b, a)), 0.0)
        s = recip(p, p.add(p.unary("exp", p.unary("neg", r)), 1.0))
        return p.reduce("sum", s, [-1])

    def mean_times(p: Program, a: Value, b: Value, c: Value) -> Value:
        r = p.unary("relu", p.add(p.mul(a, b), c))
        s = p.mul(p.add(p.unary("tanh", p.mul(r, 0.5)), 1.0), 0.5)  # sigmoid via tanh
        return p.mul(p.reduce("mean", s, [1]), 12.0)

    return {
        "hand": case(hand),
        "max(., 0), 1 / (1 + exp(-x)), axis -1": case(written),
        "sigmoid via tanh, mean * n": case(mean_times),
    }


# ---------------------------------------------------------------- a reduction through a transpose

def transposed_reduction_cases() -> dict[str, Callable[[], Case]]:
    """A column statistic written as a transpose, then arithmetic and a row reduction (the
    reduced value needs no transpose back: its kept axes stay in order)."""
    x_np = rnd((6, 5, 7), 40)
    expected = [np.exp(x_np.astype(np.float64) * 0.5).sum(axis=0).astype(np.float32)]

    def case(body: Callable[[Program, Value], Value]) -> Callable[[], Case]:
        def make() -> Case:
            p = Program(x=(6, 5, 7))
            return Case(p.text(body(p, p.arg("x"))), [x_np], expected)
        return make

    def hand(p: Program, x: Value) -> Value:
        return p.reduce("sum", p.unary("exp", p.mul(x, 0.5)), [0])

    def moved_last(p: Program, x: Value) -> Value:
        return p.reduce("sum", p.unary("exp", p.mul(p.transpose(x, (1, 2, 0)), 0.5)), [-1])

    def keepdims_reshaped(p: Program, x: Value) -> Value:
        t = p.transpose(x, (1, 2, 0))
        s = p.reduce("sum", p.unary("exp", p.mul(0.5, t)), [2], keepdims=True)
        return p.reshape(s, (5, 7))

    def transposed_then_scaled(p: Program, x: Value) -> Value:
        t = p.transpose(x, (1, 0, 2))  # (5, 6, 7), the reduced axis in the middle
        return p.reduce("sum", p.unary("exp", p.div(t, 2.0)), [1])

    return {
        "hand": case(hand),
        "permute (1, 2, 0), exp, sum over the last axis": case(moved_last),
        "permute, exp, keepdims sum, reshape": case(keepdims_reshaped),
        "permute (1, 0, 2), divide, exp, sum over the middle": case(transposed_then_scaled),
    }


SPELLINGS: dict[str, dict[str, Callable[[], Case]]] = {
    "softmax, last axis": softmax_cases((4, 17), 1),
    "softmax, middle axis": softmax_cases((2, 9, 3), 1),
    "softmax, first axis": softmax_cases((7, 5), 0),
    "log-softmax": log_softmax_cases(),
    "rotary (halves)": rotary_cases(),
    "rotary (pairs)": rotary_pairs_cases(),
    "transpose, elementwise, transpose back": transpose_cases(),
    "concat of elementwise results": concat_cases(),
    "x - mean over a middle axis": center_cases(),
    "row sum and row max, returned": siblings_cases(),
    "column standardisation": standardize_cases(),
    "zscore over columns": zscore_cases(),
    "power step, eps in the root": power_step_cases(),
    "GELU (erf) after a matmul": gelu_cases(tanh=False),
    "GELU (tanh) after a matmul": gelu_cases(tanh=True),
    "RMSNorm": rms_norm_cases(),
    "centered Gram (seed 000)": centered_gram_cases(),
    "elementwise chain, row sum (seed 001)": elementwise_chain_cases(),
    "column sum through a transpose": transposed_reduction_cases(),
}
