"""fuse-image-normalize by numbers: per-(image, channel) normalization written out in ``nn``
ops, in the usual spellings, becomes one ``fused.image_normalize`` (one launch), and the fused,
unfused and reference runs agree with numpy written here on random and adversarial planes
(planes of 1, 17, 1000 and 10,000 elements, constant planes, NaN, infinities, a large offset)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.passes.fuse_image_normalize import FuseImageNormalizePass


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>" if shape else "tensor<f32>"


def const(name: str, value: float) -> str:
    return f"  %{name} = nn.constant {{value = dense<{value:.9e}> : tensor<f32>}} : tensor<f32>\n"


def canonical_ir(shape: tuple[int, ...]) -> str:
    """reduce_mean, the mean of squares of the centred planes, + eps, rsqrt, a product; gain
    and bias [C, 1, 1]; clamp to [-1, 1.5] (max then min)."""
    n, c, h, w = shape
    t, s, p = tensor(shape), tensor((n, c, 1, 1)), tensor((c, 1, 1))
    return f"""
func.func @canonical(%x: {t}, %g: {p}, %b: {p}) -> {t} {{
{const("eps", 1e-5)}{const("lo", -1.0)}{const("hi", 1.5)}  %mu = nn.reduce_mean %x {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %d = nn.sub %x, %mu : {t}, {s} -> {t}
  %sq = nn.mul %d, %d : {t}, {t} -> {t}
  %var = nn.reduce_mean %sq {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %ve = nn.add %var, %eps : {s}, tensor<f32> -> {s}
  %rs = nn.rsqrt %ve : {s} -> {s}
  %nrm = nn.mul %d, %rs : {t}, {s} -> {t}
  %gn = nn.mul %nrm, %g : {t}, {p} -> {t}
  %y = nn.add %gn, %b : {t}, {p} -> {t}
  %c0 = nn.max %y, %lo : {t}, tensor<f32> -> {t}
  %c1 = nn.min %c0, %hi : {t}, tensor<f32> -> {t}
  func.return %c1 : {t}
}}"""


def canonical_np(x, g, b):
    x = x.astype(np.float64)
    d = x - x.mean(axis=(2, 3), keepdims=True)
    y = d / np.sqrt((d * d).mean(axis=(2, 3), keepdims=True) + 1e-5) * g + b
    return np.minimum(np.maximum(y, -1.0), 1.5)


def seed_order_ir(shape: tuple[int, ...]) -> str:
    """The seed's image normalization: the mean as sum / n, the variance as mean(x^2) - mean^2,
    division by sqrt(var + eps), gain and bias [1, C, 1, 1] (bias first in the add), then
    max(y, 0) and y ^ gamma."""
    n, c, h, w = shape
    t, s, p = tensor(shape), tensor((n, c, 1, 1)), tensor((1, c, 1, 1))
    return f"""
func.func @seed_order(%x: {t}, %g: {p}, %b: {p}) -> {t} {{
{const("count", float(h * w))}{const("eps", 1e-6)}{const("zero", 0.0)}{const("gamma", 1.8)}  %sum = nn.reduce_sum %x {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %mu = nn.div %sum, %count : {s}, tensor<f32> -> {s}
  %x2 = nn.mul %x, %x : {t}, {t} -> {t}
  %s2 = nn.reduce_sum %x2 {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %m2 = nn.div %s2, %count : {s}, tensor<f32> -> {s}
  %mm = nn.mul %mu, %mu : {s}, {s} -> {s}
  %var = nn.sub %m2, %mm : {s}, {s} -> {s}
  %ve = nn.add %eps, %var : tensor<f32>, {s} -> {s}
  %sd = nn.sqrt %ve : {s} -> {s}
  %d = nn.sub %x, %mu : {t}, {s} -> {t}
  %nrm = nn.div %d, %sd : {t}, {s} -> {t}
  %gn = nn.mul %g, %nrm : {p}, {t} -> {t}
  %y = nn.add %b, %gn : {p}, {t} -> {t}
  %cl = nn.max %y, %zero : {t}, tensor<f32> -> {t}
  %out = nn.pow %cl, %gamma : {t}, tensor<f32> -> {t}
  func.return %out : {t}
}}"""


def seed_order_np(x, g, b):
    x = x.astype(np.float64)
    mu = x.mean(axis=(2, 3), keepdims=True)
    var = (x * x).mean(axis=(2, 3), keepdims=True) - mu * mu
    y = (x - mu) / np.sqrt(var + 1e-6) * g + b
    return np.power(np.maximum(y, 0.0), 1.8)


def reciprocal_ir(shape: tuple[int, ...]) -> str:
    """The mean as sum * (1/n), the variance as mean(pow(x - mean, 2)) with its own
    subtraction, 1 / sqrt as a division, a scalar-constant gain, no bias; gamma 2 before a
    clamp written min first."""
    n, c, h, w = shape
    t, s = tensor(shape), tensor((n, c, 1, 1))
    return f"""
func.func @reciprocal(%x: {t}) -> {t} {{
{const("inv", 1.0 / (h * w))}{const("eps", 1e-3)}{const("two", 2.0)}{const("one", 1.0)}{const("gain", 0.5)}{const("hi", 4.0)}{const("lo", 0.25)}  %sum = nn.reduce_sum %x {{axes = array<i64: 3, 2>, keepdims = true}} : {t} -> {s}
  %mu = nn.mul %inv, %sum : tensor<f32>, {s} -> {s}
  %d1 = nn.sub %x, %mu : {t}, {s} -> {t}
  %sq = nn.pow %d1, %two : {t}, tensor<f32> -> {t}
  %var = nn.reduce_mean %sq {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %ve = nn.add %var, %eps : {s}, tensor<f32> -> {s}
  %sd = nn.sqrt %ve : {s} -> {s}
  %inv_sd = nn.div %one, %sd : tensor<f32>, {s} -> {s}
  %d = nn.sub %x, %mu : {t}, {s} -> {t}
  %nrm = nn.mul %inv_sd, %d : {s}, {t} -> {t}
  %gn = nn.mul %nrm, %gain : {t}, tensor<f32> -> {t}
  %gm = nn.pow %gn, %two : {t}, tensor<f32> -> {t}
  %c0 = nn.min %gm, %hi : {t}, tensor<f32> -> {t}
  %c1 = nn.max %c0, %lo : {t}, tensor<f32> -> {t}
  func.return %c1 : {t}
}}"""


def reciprocal_np(x):
    x = x.astype(np.float64)
    d = x - x.mean(axis=(2, 3), keepdims=True)
    y = d / np.sqrt((d * d).mean(axis=(2, 3), keepdims=True) + 1e-3) * 0.5
    return np.maximum(np.minimum(y**2, 4.0), 0.25)


def nested_ir(shape: tuple[int, ...]) -> str:
    """MATLAB's mean(mean(x, 2), 3) as two one-axis means, of an image [C, H, W]; no eps; the
    variance's mean nested the other way round; per-image-and-channel gain [C, 1, 1]."""
    c, h, w = shape
    t, s, p, r = tensor(shape), tensor((c, 1, 1)), tensor((c, 1, 1)), tensor((c, h, 1))
    r2 = tensor((c, 1, w))
    return f"""
func.func @nested(%x: {t}, %g: {p}) -> {t} {{
  %m1 = nn.reduce_mean %x {{axes = array<i64: 2>, keepdims = true}} : {t} -> {r}
  %mu = nn.reduce_mean %m1 {{axes = array<i64: 1>, keepdims = true}} : {r} -> {s}
  %d = nn.sub %x, %mu : {t}, {s} -> {t}
  %sq = nn.mul %d, %d : {t}, {t} -> {t}
  %v1 = nn.reduce_mean %sq {{axes = array<i64: 1>, keepdims = true}} : {t} -> {r2}
  %var = nn.reduce_mean %v1 {{axes = array<i64: 2>, keepdims = true}} : {r2} -> {s}
  %rs = nn.rsqrt %var : {s} -> {s}
  %nrm = nn.mul %d, %rs : {t}, {s} -> {t}
  %y = nn.mul %nrm, %g : {t}, {p} -> {t}
  func.return %y : {t}
}}"""


def nested_np(x, g):
    x = x.astype(np.float64)
    d = x - x.mean(axis=(1, 2), keepdims=True)
    return d / np.sqrt((d * d).mean(axis=(1, 2), keepdims=True)) * g


def relu_gamma_ir(shape: tuple[int, ...]) -> str:
    """No gain or bias; nn.relu as the clamp, then gamma 0.5 (a fractional power of values
    that the relu keeps >= 0)."""
    n, c, h, w = shape
    t, s = tensor(shape), tensor((n, c, 1, 1))
    return f"""
func.func @relu_gamma(%x: {t}) -> {t} {{
{const("eps", 1e-5)}{const("half", 0.5)}  %mu = nn.reduce_mean %x {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %d = nn.sub %x, %mu : {t}, {s} -> {t}
  %sq = nn.mul %d, %d : {t}, {t} -> {t}
  %var = nn.reduce_mean %sq {{axes = array<i64: 2, 3>, keepdims = true}} : {t} -> {s}
  %ve = nn.add %var, %eps : {s}, tensor<f32> -> {s}
  %rs = nn.rsqrt %ve : {s} -> {s}
  %nrm = nn.mul %d, %rs : {t}, {s} -> {t}
  %r = nn.relu %nrm : {t} -> {t}
  %y = nn.pow %r, %half : {t}, tensor<f32> -> {t}
  func.return %y : {t}
}}"""


def relu_gamma_np(x):
    x = x.astype(np.float64)
    d = x - x.mean(axis=(2, 3), keepdims=True)
    return np.sqrt(np.maximum(d / np.sqrt((d * d).mean(axis=(2, 3), keepdims=True) + 1e-5), 0))


def random(shape: tuple[int, ...], seed: int = 0, scale: float = 1.0, offset: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale + offset).astype(np.float32)


PLANES = [(1, 1), (1, 17), (25, 40), (100, 100)]
"""Planes of 1, 17, 1000 and 10,000 elements."""


@pytest.mark.parametrize("spelling", ["canonical", "seed_order", "reciprocal", "nested", "relu_gamma"])
def test_one_launch(numeric, spelling: str) -> None:
    text = {"canonical": canonical_ir((2, 3, 4, 5)), "seed_order": seed_order_ir((2, 3, 4, 5)),
            "reciprocal": reciprocal_ir((2, 3, 4, 5)), "nested": nested_ir((3, 4, 5)),
            "relu_gamma": relu_gamma_ir((2, 3, 4, 5))}[spelling]
    ops = [name for name in numeric.top_ops(text) if name != "nn.constant"]
    assert ops == ["fused.image_normalize"]
    assert numeric.launches(text) == 1
    assert numeric.launches(text, "none") >= 4


@pytest.mark.parametrize("plane", PLANES)
def test_canonical(numeric, plane) -> None:
    shape = (2, 3, *plane)
    x, g, b = random(shape, 1), random((3, 1, 1), 2), random((3, 1, 1), 3)
    numeric.check(canonical_ir(shape), [x, g, b], [canonical_np(x, g, b)], tol=(1e-5, 1e-4))


@pytest.mark.parametrize("plane", PLANES)
def test_seed_order(numeric, plane) -> None:
    shape = (2, 3, *plane)
    x, g, b = random(shape, 4, offset=0.5), random((1, 3, 1, 1), 5), random((1, 3, 1, 1), 6)
    numeric.check(seed_order_ir(shape), [x, g, b], [seed_order_np(x, g, b)], tol=(1e-4, 1e-4))


@pytest.mark.parametrize("plane", [(1, 17), (25, 40)])
def test_reciprocal_nested_relu(numeric, plane) -> None:
    shape = (2, 3, *plane)
    x = random(shape, 7, scale=3.0)
    numeric.check(reciprocal_ir(shape), [x], [reciprocal_np(x)], tol=(1e-5, 1e-4))
    numeric.check(relu_gamma_ir(shape), [x], [relu_gamma_np(x)], tol=(1e-5, 1e-4))
    image = random((3, *plane), 8)
    g = random((3, 1, 1), 9)
    numeric.check(nested_ir((3, *plane)), [image, g], [nested_np(image, g)], tol=(1e-5, 1e-4))


@pytest.mark.parametrize("plane", [(32, 32), (25, 40)])
def test_constant_planes(numeric, plane) -> None:
    """Planes whose variance is 0 normalise to 0, so to the bias (clamped). The kernel's mean
    is the sum times 1/n: exact for a plane of 1024 (1/n is a power of 2) and values whose
    float32 sums are exact, so to 1e-5; for 1000, or a value like 0.1, the mean may be an ulp
    off, and that ulp divided by sqrt(eps) is at most 4e-5 * |value| (7: 3e-4)."""
    shape = (2, 3, *plane)
    x = np.stack([np.stack([np.full(plane, v, np.float32) for v in row])
                  for row in ((3.0, -2.5, 0.0), (7.0, 1.0, -4.0))])
    g, b = random((3, 1, 1), 10), random((3, 1, 1), 11)
    exact = plane == (32, 32)
    tol = (1e-5, 1e-5) if exact else (3e-4, 1e-5)
    numeric.check(canonical_ir(shape), [x, g, b], [canonical_np(x, g, b)], tol=tol)
    x[1, 2] = 0.1
    numeric.check(canonical_ir(shape), [x, g, b], [canonical_np(x, g, b)], tol=(3e-4, 1e-5))


def test_special_values(numeric) -> None:
    """A NaN or an infinity makes its plane NaN (the mean is NaN or inf, inf - inf is NaN),
    through the clamp (numpy's maximum keeps NaN) and the gamma; other planes are untouched."""
    shape = (2, 3, 4, 17)
    x, g, b = random(shape, 12), random((1, 3, 1, 1), 13), random((1, 3, 1, 1), 14)
    x[0, 0, 1, 3] = np.nan
    x[0, 2, 3, 16] = np.inf  # in the scalar remainder after the float8 vectors
    x[1, 1, :, :] = -np.inf
    with np.errstate(all="ignore"):
        expected = canonical_np(x, g[0], b[0])
        assert np.isnan(expected[0, 0]).all() and np.isfinite(expected[0, 1]).all()
        numeric.check(canonical_ir(shape), [x, g[0], b[0]], [expected], tol=(1e-5, 1e-4))
        numeric.check(seed_order_ir(shape), [x, g, b], [seed_order_np(x, g, b)], tol=(1e-4, 1e-4))


def test_large_offset(numeric) -> None:
    """Planes of mean 1000 and deviation 1, in the centred spelling: the mean's rounding
    (an ulp of 1000, 6e-5) is all that is lost."""
    shape = (2, 3, 8, 16)
    x, g, b = random(shape, 15, offset=1000.0), random((3, 1, 1), 16), random((3, 1, 1), 17)
    numeric.check(canonical_ir(shape), [x, g, b], [canonical_np(x, g, b)], tol=(1e-3, 1e-3))


def test_plane_beyond_max_plane_is_not_fused(numeric) -> None:
    """A plane over max-plane keeps its separate kernels, with the same numbers."""
    shape = (1, 2, 4, 16)
    text = canonical_ir(shape)
    spec = f"fuse-image-normalize{{max-plane={4 * 16 - 1}}}"
    assert "fused.image_normalize" not in numeric.top_ops(text, spec)
    assert "fused.image_normalize" in numeric.top_ops(text, "fuse-image-normalize{max-plane=64}")
    assert FuseImageNormalizePass().max_plane >= 8192
