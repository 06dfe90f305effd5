"""The column-statistics fusions by numbers (fuse-centered-gram, fuse-power-step-normalize,
fuse-explained-variance): each pattern, written the ways people write it, becomes its fused op,
lowers to the launches its kernels imply, and the fused, unfused and reference runs agree with
numpy written independently, on random and adversarial inputs (one row, constant columns, zero
columns, large offsets)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest


def random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- centered Gram -----------------------------------------------------------------------------


def gram_ir(n: int, d: int, mean: str = "reduce_mean", scale: str = "div") -> str:
    """(x - mean(x, 0))^T (x - mean(x, 0)) / (n - 1), the mean and the scaling spelled as
    asked: ``reduce_mean`` or ``sum_div`` (sum / n) or ``sum_mul`` (sum * 1/n, no keepdims);
    ``div`` by n - 1, ``mul`` by 1/(n - 1) or ``none``."""
    x, xt, g = f"tensor<{n}x{d}xf32>", f"tensor<{d}x{n}xf32>", f"tensor<{d}x{d}xf32>"
    if mean == "reduce_mean":
        m = f"  %m = nn.reduce_mean %x {{axes = array<i64: 0>, keepdims = true}} : {x} -> tensor<1x{d}xf32>\n"
        mt = f"tensor<1x{d}xf32>"
    elif mean == "sum_div":
        m = (f"  %s = nn.reduce_sum %x {{axes = array<i64: 0>, keepdims = true}} : {x} -> tensor<1x{d}xf32>\n"
             f"  %n = nn.constant {{value = dense<{float(n)}> : tensor<f32>}} : tensor<f32>\n"
             f"  %m = nn.div %s, %n : tensor<1x{d}xf32>, tensor<f32> -> tensor<1x{d}xf32>\n")
        mt = f"tensor<1x{d}xf32>"
    else:
        m = (f"  %s = nn.reduce_sum %x {{axes = array<i64: 0>}} : {x} -> tensor<{d}xf32>\n"
             f"  %n = nn.constant {{value = dense<{1.0 / n!r}> : tensor<f32>}} : tensor<f32>\n"
             f"  %m = nn.mul %n, %s : tensor<f32>, tensor<{d}xf32> -> tensor<{d}xf32>\n")
        mt = f"tensor<{d}xf32>"
    body = (m + f"  %c = nn.sub %x, %m : {x}, {mt} -> {x}\n"
            f"  %t = nn.transpose %c {{perm = array<i64: 1, 0>}} : {x} -> {xt}\n"
            f"  %g = nn.matmul %t, %c : {xt}, {x} -> {g}\n")
    out = "%g"
    if scale == "div":
        body += (f"  %k = nn.constant {{value = dense<{float(n - 1)}> : tensor<f32>}} : tensor<f32>\n"
                 f"  %v = nn.div %g, %k : {g}, tensor<f32> -> {g}\n")
        out = "%v"
    elif scale == "mul":
        body += (f"  %k = nn.constant {{value = dense<{1.0 / (n - 1)!r}> : tensor<f32>}} : tensor<f32>\n"
                 f"  %v = nn.mul %g, %k : {g}, tensor<f32> -> {g}\n")
        out = "%v"
    return f"func.func @gram(%x: {x}) -> {g} {{\n{body}  func.return {out} : {g}\n}}"


def covariance(x: np.ndarray, divisor: float) -> np.ndarray:
    x = x.astype(np.float64)
    xc = x - x.mean(axis=0)
    with np.errstate(all="ignore"):
        return xc.T @ xc / divisor


@pytest.mark.parametrize("n,d", [(17, 5), (1000, 12), (33, 40)])
@pytest.mark.parametrize("mean", ["reduce_mean", "sum_div", "sum_mul"])
def test_centered_gram(numeric, n: int, d: int, mean: str) -> None:
    text = gram_ir(n, d, mean)
    assert numeric.top_ops(text) == ["fused.centered_gram"]
    assert numeric.launches(text) == 2
    # What the nn ops take (the figure, 5; one more for a mean written sum / n).
    assert numeric.launches(text, "unfuse") == (5 if mean == "reduce_mean" else 6)
    x = random((n, d), n + d) * 3 + 10  # an offset the centering must remove
    numeric.check(text, [x], [covariance(x, n - 1)], tol=(1e-4, 1e-4))


def test_centered_gram_scale_spellings(numeric) -> None:
    x = random((9, 4), 1)
    for scale, divisor in (("mul", 8.0), ("none", 1.0)):
        text = gram_ir(9, 4, "reduce_mean", scale)
        assert numeric.top_ops(text) == ["fused.centered_gram"]
        numeric.check(text, [x], [covariance(x, divisor)], tol=(1e-5, 1e-5))


def test_centered_gram_one_row(numeric) -> None:
    """n = 1: n - 1 = 0, the program computes 0 / 0: NaN everywhere, fused or not."""
    text = gram_ir(1, 6)
    assert numeric.top_ops(text) == ["fused.centered_gram"]
    x = random((1, 6), 2)
    expected = covariance(x, 0.0)
    assert np.isnan(expected).all()
    numeric.check(text, [x], [expected])


def test_centered_gram_constant_columns(numeric) -> None:
    """Constant columns have zero variance and zero covariance with every other column
    (exactly: the column mean of equal values is the value, and x - mean is 0)."""
    x = random((17, 6), 3)
    x[:, 0] = 2.5
    x[:, 3] = -1e4
    text = gram_ir(17, 6)
    (fused,) = numeric.run_all(text, [x])["fused on the device"]
    assert (fused[0, :] == 0).all() and (fused[:, 3] == 0).all()
    numeric.check(text, [x], [covariance(x, 16)], tol=(1e-4, 1e-4))
