"""fuse-row-reduce by numbers: softmax, log-softmax, centering, LayerNorm, RMSNorm, L2 and
min-max normalization written out in ``nn`` ops become one ``fused.row_reduce`` (one launch),
and the fused, unfused and reference runs agree with numpy on random and adversarial rows
(large magnitudes, -inf, NaN, constant rows, rows of length 1, 17, 1000 and 10,000)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

SHAPES = [(5, 1), (4, 17), (3, 1000), (2, 10000), (2, 3, 17)]


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def row(shape: tuple[int, ...]) -> str:
    return tensor((*shape[:-1], 1))


def softmax_ir(shape: tuple[int, ...]) -> str:
    t, r, a = tensor(shape), row(shape), len(shape) - 1
    return f"""
func.func @softmax(%x: {t}) -> {t} {{
  %m = nn.reduce_max %x {{axes = array<i64: {a}>, keepdims = true}} : {t} -> {r}
  %d = nn.sub %x, %m : {t}, {r} -> {t}
  %e = nn.exp %d : {t} -> {t}
  %s = nn.reduce_sum %e {{axes = array<i64: {a}>, keepdims = true}} : {t} -> {r}
  %y = nn.div %e, %s : {t}, {r} -> {t}
  func.return %y : {t}
}}"""


def log_softmax_ir(shape: tuple[int, ...]) -> str:
    t, r = tensor(shape), row(shape)
    return f"""
func.func @log_softmax(%x: {t}) -> {t} {{
  %m = nn.reduce_max %x {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %d = nn.sub %x, %m : {t}, {r} -> {t}
  %e = nn.exp %d : {t} -> {t}
  %s = nn.reduce_sum %e {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %l = nn.log %s : {r} -> {r}
  %y = nn.sub %d, %l : {t}, {r} -> {t}
  func.return %y : {t}
}}"""


def center_ir(shape: tuple[int, ...]) -> str:
    t, r = tensor(shape), row(shape)
    return f"""
func.func @center(%x: {t}) -> {t} {{
  %m = nn.reduce_mean %x {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %y = nn.sub %x, %m : {t}, {r} -> {t}
  func.return %y : {t}
}}"""


def layer_norm_ir(shape: tuple[int, ...]) -> str:
    """Mean as sum / n, variance as the mean of squares of the centred row, 1/sqrt(v + eps)."""
    t, r, v, n = tensor(shape), row(shape), tensor(shape[-1:]), shape[-1]
    return f"""
func.func @layer_norm(%x: {t}, %g: {v}, %b: {v}) -> {t} {{
  %n = nn.constant {{value = dense<{float(n)}> : tensor<f32>}} : tensor<f32>
  %eps = nn.constant {{value = dense<1.0e-5> : tensor<f32>}} : tensor<f32>
  %s = nn.reduce_sum %x {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %mu = nn.div %s, %n : {r}, tensor<f32> -> {r}
  %d = nn.sub %x, %mu : {t}, {r} -> {t}
  %sq = nn.mul %d, %d : {t}, {t} -> {t}
  %var = nn.reduce_mean %sq {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %ve = nn.add %var, %eps : {r}, tensor<f32> -> {r}
  %sd = nn.sqrt %ve : {r} -> {r}
  %nd = nn.div %d, %sd : {t}, {r} -> {t}
  %gn = nn.mul %nd, %g : {t}, {v} -> {t}
  %y = nn.add %gn, %b : {t}, {v} -> {t}
  func.return %y : {t}
}}"""


def rms_norm_ir(shape: tuple[int, ...]) -> str:
    t, r, v = tensor(shape), row(shape), tensor(shape[-1:])
    return f"""
func.func @rms_norm(%x: {t}, %g: {v}) -> {t} {{
  %eps = nn.constant {{value = dense<1.0e-6> : tensor<f32>}} : tensor<f32>
  %sq = nn.mul %x, %x : {t}, {t} -> {t}
  %ms = nn.reduce_mean %sq {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %me = nn.add %ms, %eps : {r}, tensor<f32> -> {r}
  %rs = nn.rsqrt %me : {r} -> {r}
  %xn = nn.mul %x, %rs : {t}, {r} -> {t}
  %y = nn.mul %xn, %g : {t}, {v} -> {t}
  func.return %y : {t}
}}"""


def minmax_ir(shape: tuple[int, ...]) -> str:
    """Two reductions of one row side by side: (x - min) / (max - min + 1)."""
    t, r = tensor(shape), row(shape)
    return f"""
func.func @minmax(%x: {t}) -> {t} {{
  %one = nn.constant {{value = dense<1.0> : tensor<f32>}} : tensor<f32>
  %lo = nn.reduce_min %x {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %hi = nn.reduce_max %x {{axes = array<i64: -1>, keepdims = true}} : {t} -> {r}
  %w = nn.sub %hi, %lo : {r}, {r} -> {r}
  %w1 = nn.add %w, %one : {r}, tensor<f32> -> {r}
  %d = nn.sub %x, %lo : {t}, {r} -> {t}
  %y = nn.div %d, %w1 : {t}, {r} -> {t}
  func.return %y : {t}
}}"""


def softmax_np(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax_np(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    d = x - x.max(axis=-1, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=-1, keepdims=True))


def layer_norm_np(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    d = x - x.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * g + b


def rms_norm_np(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * g


def random(shape: tuple[int, ...], seed: int = 0, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


PATTERNS = {
    "softmax": softmax_ir,
    "log_softmax": log_softmax_ir,
    "center": center_ir,
    "layer_norm": layer_norm_ir,
    "rms_norm": rms_norm_ir,
    "minmax": minmax_ir,
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_one_launch(numeric, name: str) -> None:
    text = PATTERNS[name]((4, 17))
    assert numeric.top_ops(text) == ["fused.row_reduce"]
    assert numeric.launches(text) == 1
    assert numeric.launches(text, "none") > 1


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax(numeric, shape) -> None:
    x = random(shape)
    numeric.check(softmax_ir(shape), [x], [softmax_np(x)], tol=(1e-6, 1e-4))


@pytest.mark.parametrize("shape", SHAPES)
def test_log_softmax(numeric, shape) -> None:
    x = random(shape, 1)
    numeric.check(log_softmax_ir(shape), [x], [log_softmax_np(x)], tol=(1e-5, 1e-5))


@pytest.mark.parametrize("shape", SHAPES)
def test_layer_norm(numeric, shape) -> None:
    x, g, b = random(shape, 2), random(shape[-1:], 3), random(shape[-1:], 4)
    numeric.check(layer_norm_ir(shape), [x, g, b], [layer_norm_np(x, g, b)], tol=(1e-4, 1e-4))


@pytest.mark.parametrize("shape", [(4, 17), (3, 1000), (2, 3, 17)])
def test_rms_norm_center_minmax(numeric, shape) -> None:
    x, g = random(shape, 5), random(shape[-1:], 6)
    numeric.check(rms_norm_ir(shape), [x, g], [rms_norm_np(x, g)], tol=(1e-5, 1e-4))
    centred = x.astype(np.float64) - x.astype(np.float64).mean(axis=-1, keepdims=True)
    numeric.check(center_ir(shape), [x], [centred], tol=(1e-5, 1e-4))
    lo, hi = x.min(axis=-1, keepdims=True), x.max(axis=-1, keepdims=True)
    numeric.check(minmax_ir(shape), [x], [(x - lo) / (hi - lo + 1)], tol=(1e-6, 1e-5))


def test_softmax_large_magnitudes(numeric) -> None:
    """Rows of +-1e4 (and for softmax one of +-3e38): exp(x) alone would overflow; x - max
    stays <= 0 (log-softmax of the +-3e38 row leaves float32's range, so it gets only the
    first rows)."""
    x = random((6, 33), 7, scale=1e4)
    numeric.check(log_softmax_ir((6, 33)), [x], [log_softmax_np(x)], tol=(1e-5, 1e-5))
    x[5] = np.linspace(-3e38, 3e38, 33, dtype=np.float32)
    numeric.check(softmax_ir((6, 33)), [x], [softmax_np(x)], tol=(1e-6, 1e-4))


def test_special_values(numeric) -> None:
    """-inf elements weigh 0; a row of -inf is NaN (-inf - -inf); a NaN makes its row NaN, as
    numpy's max and sum propagate it, and so do fusec's max/min (IEEE 754-2019 maximum and
    minimum), fused and unfused."""
    x = random((6, 19), 8)
    x[0, 3] = -np.inf
    x[1, :] = -np.inf
    x[2, 5] = np.nan
    x[3, 18] = np.nan  # in the scalar remainder after the float8 vectors
    x[4, :] = np.inf
    with np.errstate(all="ignore"):
        numeric.check(softmax_ir((6, 19)), [x], [softmax_np(x)], tol=(1e-6, 1e-4))
        centred = x.astype(np.float64) - x.astype(np.float64).mean(axis=-1, keepdims=True)
        numeric.check(center_ir((6, 19)), [x], [centred], tol=(1e-5, 1e-4))
        lo, hi = x.min(axis=-1, keepdims=True), x.max(axis=-1, keepdims=True)
        numeric.check(minmax_ir((6, 19)), [x], [(x - lo) / (hi - lo + 1)], tol=(1e-6, 1e-5))


def test_constant_rows(numeric) -> None:
    """Rows whose variance is 0 normalise to beta (values whose float32 sums are exact, so the
    mean is the value itself, as in float64)."""
    shape = (3, 1000)
    x = np.stack([np.full(1000, v, np.float32) for v in (3.0, -2.5, 0.0)])
    g, b = random((1000,), 9), random((1000,), 10)
    numeric.check(layer_norm_ir(shape), [x, g, b], [layer_norm_np(x, g, b)], tol=(1e-5, 1e-5))
    numeric.check(softmax_ir(shape), [x], [softmax_np(x)], tol=(1e-9, 1e-5))


def test_broadcast_inputs(numeric) -> None:
    """Per-batch, per-row and per-column inputs read inside the row kernel."""
    t, r = "tensor<2x3x17xf32>", "tensor<2x3x1xf32>"
    text = f"""
func.func @f(%x: {t}, %pb: tensor<2x1x17xf32>, %pr: {r}, %pc: tensor<17xf32>) -> {t} {{
  %a = nn.mul %x, %pb : {t}, tensor<2x1x17xf32> -> {t}
  %m = nn.reduce_max %a {{axes = array<i64: 2>, keepdims = true}} : {t} -> {r}
  %d = nn.sub %a, %m : {t}, {r} -> {t}
  %e = nn.exp %d : {t} -> {t}
  %s = nn.reduce_sum %e {{axes = array<i64: 2>, keepdims = true}} : {t} -> {r}
  %q = nn.div %e, %s : {t}, {r} -> {t}
  %u = nn.mul %q, %pr : {t}, {r} -> {t}
  %y = nn.add %u, %pc : {t}, tensor<17xf32> -> {t}
  func.return %y : {t}
}}"""
    x, pb, pr, pc = random((2, 3, 17), 11), random((2, 1, 17), 12), random((2, 3, 1), 13), random((17,), 14)
    expected = softmax_np(x * pb) * pr + pc
    assert numeric.top_ops(text) == ["fused.row_reduce"]
    assert numeric.launches(text) == 1
    numeric.check(text, [x, pb, pr, pc], [expected], tol=(1e-6, 1e-4))


def test_sum_of_constant_counts_every_element(numeric) -> None:
    """A per-row value summed over the row counts once per element (the decomposition
    broadcasts it first): mean(x) - sum(1) / n == mean(x) - 1."""
    t, r = "tensor<4x9xf32>", "tensor<4x1xf32>"
    text = f"""
func.func @f(%x: {t}, %c: {r}) -> {t} {{
  %s = nn.reduce_sum %c {{axes = array<i64: 1>, keepdims = true}} : {r} -> {r}
  %y = nn.sub %x, %s : {t}, {r} -> {t}
  func.return %y : {t}
}}"""
    # %c is [4, 1]: its last dimension is not the row, so it is not a row reduction.
    assert "nn.reduce_sum" in numeric.top_ops(text)
    x, c = random((4, 9), 15), random((4, 1), 16)
    numeric.check(text, [x, c], [x - c])
