"""Fusion by structure, not spelling (issue 28): each program below is written in two or more
ways people write it (reductions with and without keepdims, reshaped back, ``/ sqrt`` or
``* rsqrt``, ``pow(., 2)`` or ``x * x``, ``sum / n`` or ``mean``), and every spelling gets the
same launch count after ``canonicalize-nn`` and the fusions, over any axis (last, middle,
first). The fused, unfused and reference runs agree with numpy on random and adversarial
inputs (large means, zero variance, NaN and infinities where they mean something).

Launches (the lowered plan, launch fusion on, as ``fusec-run`` runs it) before this change ->
now: softmax with dropped axes 4 -> 1, centering over a middle axis 2 -> 1, column
standardisation 4 -> 1, zscore over columns 4 -> 1, the power step with eps inside the square
root 3 -> 2, sibling reductions of ``exp(x)`` 2 -> 1.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.driver import load, lower

CPU = DeviceInfo(name="test cpu", is_cpu=True)


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def kept(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return tuple(1 if d == axis else n for d, n in enumerate(shape))


def dropped(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return tuple(n for d, n in enumerate(shape) if d != axis)


def reduce_to_kept(op: str, name: str, x: str, shape: tuple[int, ...], axis: int,
                   spelling: str) -> str:
    """``%name = op(x)`` over ``axis`` as a keepdims value: with keepdims, or dropped and
    reshaped back."""
    t, k = tensor(shape), tensor(kept(shape, axis))
    if spelling == "keepdims":
        return f"  %{name} = nn.{op} %{x} {{axes = array<i64: {axis}>, keepdims = true}} : {t} -> {k}\n"
    d = tensor(dropped(shape, axis))
    return (f"  %{name}_d = nn.{op} %{x} {{axes = array<i64: {axis}>}} : {t} -> {d}\n"
            f"  %{name} = nn.reshape %{name}_d : {d} -> {k}\n")


def softmax_ir(shape: tuple[int, ...], axis: int, spelling: str) -> str:
    t, k = tensor(shape), tensor(kept(shape, axis))
    return (f"func.func @softmax(%x: {t}) -> {t} {{\n"
            + reduce_to_kept("reduce_max", "m", "x", shape, axis, spelling)
            + f"  %d = nn.sub %x, %m : {t}, {k} -> {t}\n"
            f"  %e = nn.exp %d : {t} -> {t}\n"
            + reduce_to_kept("reduce_sum", "s", "e", shape, axis, spelling)
            + f"  %y = nn.div %e, %s : {t}, {k} -> {t}\n"
            f"  func.return %y : {t}\n}}")


def center_ir(shape: tuple[int, ...], axis: int, spelling: str) -> str:
    t, k = tensor(shape), tensor(kept(shape, axis))
    return (f"func.func @center(%x: {t}) -> {t} {{\n"
            + reduce_to_kept("reduce_mean", "m", "x", shape, axis, spelling)
            + f"  %y = nn.sub %x, %m : {t}, {k} -> {t}\n"
            f"  func.return %y : {t}\n}}")


def standardize_ir(rows: int, cols: int, spelling: str) -> str:
    """Column standardisation ``(x - mean) * rsqrt(var + eps)`` over axis 0."""
    t, c, v = tensor((rows, cols)), tensor((1, cols)), tensor((cols,))
    eps = "  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>\n"
    if spelling == "rsqrt":
        return (f"func.func @standardize(%x: {t}) -> {t} {{\n{eps}"
                f"  %m = nn.reduce_mean %x {{axes = array<i64: 0>, keepdims = true}} : {t} -> {c}\n"
                f"  %d = nn.sub %x, %m : {t}, {c} -> {t}\n"
                f"  %q = nn.mul %d, %d : {t}, {t} -> {t}\n"
                f"  %v = nn.reduce_mean %q {{axes = array<i64: 0>, keepdims = true}} : {t} -> {c}\n"
                f"  %ve = nn.add %v, %eps : {c}, tensor<f32> -> {c}\n"
                f"  %r = nn.rsqrt %ve : {c} -> {c}\n"
                f"  %y = nn.mul %d, %r : {t}, {c} -> {t}\n"
                f"  func.return %y : {t}\n}}")
    # no keepdims (numpy broadcasting restores the axis), pow, eps on the left, / sqrt
    return (f"func.func @standardize(%x: {t}) -> {t} {{\n{eps}"
            "  %two = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>\n"
            f"  %m = nn.reduce_mean %x {{axes = array<i64: 0>}} : {t} -> {v}\n"
            f"  %d = nn.sub %x, %m : {t}, {v} -> {t}\n"
            f"  %q = nn.pow %d, %two : {t}, tensor<f32> -> {t}\n"
            f"  %v = nn.reduce_mean %q {{axes = array<i64: 0>}} : {t} -> {v}\n"
            f"  %ve = nn.add %eps, %v : tensor<f32>, {v} -> {v}\n"
            f"  %s = nn.sqrt %ve : {v} -> {v}\n"
            f"  %y = nn.div %d, %s : {t}, {v} -> {t}\n"
            f"  func.return %y : {t}\n}}")


def zscore_ir(rows: int, cols: int, spelling: str) -> str:
    """``zscore`` over columns: ``(x - mean) / std`` with the sample deviation (n - 1)."""
    t, c, v = tensor((rows, cols)), tensor((1, cols)), tensor((cols,))
    if spelling == "sums":
        return (f"func.func @zscore(%x: {t}) -> {t} {{\n"
                f"  %s = nn.reduce_sum %x {{axes = array<i64: 0>}} : {t} -> {v}\n"
                f"  %n = nn.constant {{value = dense<{float(rows)}> : tensor<f32>}} : tensor<f32>\n"
                f"  %m = nn.div %s, %n : {v}, tensor<f32> -> {v}\n"
                f"  %d = nn.sub %x, %m : {t}, {v} -> {t}\n"
                "  %two = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>\n"
                f"  %q = nn.pow %d, %two : {t}, tensor<f32> -> {t}\n"
                f"  %ss = nn.reduce_sum %q {{axes = array<i64: 0>}} : {t} -> {v}\n"
                "  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>\n"
                f"  %n1 = nn.sub %n, %one : tensor<f32>, tensor<f32> -> tensor<f32>\n"
                f"  %var = nn.div %ss, %n1 : {v}, tensor<f32> -> {v}\n"
                f"  %sd = nn.sqrt %var : {v} -> {v}\n"
                f"  %y = nn.div %d, %sd : {t}, {v} -> {t}\n"
                f"  func.return %y : {t}\n}}")
    scale = float(rows) / float(rows - 1)
    return (f"func.func @zscore(%x: {t}) -> {t} {{\n"
            f"  %m = nn.reduce_mean %x {{axes = array<i64: 0>, keepdims = true}} : {t} -> {c}\n"
            f"  %d = nn.sub %x, %m : {t}, {c} -> {t}\n"
            f"  %q = nn.mul %d, %d : {t}, {t} -> {t}\n"
            f"  %ms = nn.reduce_mean %q {{axes = array<i64: 0>, keepdims = true}} : {t} -> {c}\n"
            f"  %k = nn.constant {{value = dense<{scale!r}> : tensor<f32>}} : tensor<f32>\n"
            f"  %var = nn.mul %k, %ms : tensor<f32>, {c} -> {c}\n"
            f"  %r = nn.rsqrt %var : {c} -> {c}\n"
            f"  %y = nn.mul %d, %r : {t}, {c} -> {t}\n"
            f"  func.return %y : {t}\n}}")


def power_step_ir(m: int, k: int, n: int, spelling: str) -> str:
    """A power-iteration step with eps inside the square root: ``y / sqrt(sum(y^2, 0) + eps)``."""
    a, q, t, c, v = (tensor((m, k)), tensor((k, n)), tensor((m, n)), tensor((1, n)),
                     tensor((n,)))
    head = (f"func.func @power_step(%a: {a}, %q: {q}) -> {t} {{\n"
            f"  %y = nn.matmul %a, %q : {a}, {q} -> {t}\n"
            "  %eps = nn.constant {value = dense<1.0e-6> : tensor<f32>} : tensor<f32>\n")
    if spelling == "div_sqrt":
        return (head + f"  %s = nn.mul %y, %y : {t}, {t} -> {t}\n"
                f"  %n = nn.reduce_sum %s {{axes = array<i64: 0>, keepdims = true}} : {t} -> {c}\n"
                f"  %ne = nn.add %n, %eps : {c}, tensor<f32> -> {c}\n"
                f"  %r = nn.sqrt %ne : {c} -> {c}\n"
                f"  %z = nn.div %y, %r : {t}, {c} -> {t}\n"
                f"  func.return %z : {t}\n}}")
    return (head + "  %two = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>\n"
            f"  %s = nn.pow %y, %two : {t}, tensor<f32> -> {t}\n"
            f"  %n = nn.reduce_sum %s {{axes = array<i64: 0>}} : {t} -> {v}\n"
            f"  %ne = nn.add %n, %eps : {v}, tensor<f32> -> {v}\n"
            f"  %r = nn.rsqrt %ne : {v} -> {v}\n"
            f"  %z = nn.mul %r, %y : {v}, {t} -> {t}\n"
            f"  func.return %z : {t}\n}}")


def siblings_ir(rows: int, cols: int, spelling: str) -> str:
    """A row sum and a row max of one value, both returned: of ``x``, or of ``exp(x)``."""
    t, r = tensor((rows, cols)), tensor((rows, 1))
    source = "x" if spelling == "plain" else "e"
    body = "" if spelling == "plain" else f"  %e = nn.exp %x : {t} -> {t}\n"
    return (f"func.func @siblings(%x: {t}) -> ({r}, {r}) {{\n{body}"
            f"  %s = nn.reduce_sum %{source} {{axes = array<i64: 1>, keepdims = true}} : {t} -> {r}\n"
            f"  %m = nn.reduce_max %{source} {{axes = array<i64: 1>, keepdims = true}} : {t} -> {r}\n"
            f"  func.return %s, %m : {r}, {r}\n}}")


def launches(text: str, pipeline: str = "default", launch_fusion: bool = True) -> int:
    """Kernel launches of the lowered program, by default with launch fusion (what ``fusec-run``
    runs)."""
    return len(lower(load(text), None, pipeline, CPU, launch_fusion=launch_fusion).plan.launches)


def random(shape: tuple[int, ...], seed: int, scale: float = 1.0, mean: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale + mean).astype(np.float32)


def softmax_np(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def standardize_np(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    d = x.astype(np.float64) - x.astype(np.float64).mean(axis=0)
    return d / np.sqrt((d * d).mean(axis=0) + eps)


def zscore_np(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return (x64 - x64.mean(axis=0)) / x64.std(axis=0, ddof=1)


def power_step_np(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    y = a.astype(np.float64) @ q.astype(np.float64)
    return y / np.sqrt((y * y).sum(axis=0) + 1e-6)


SPELLINGS = {
    "softmax": (lambda s: softmax_ir((4, 17), 1, s), ("keepdims", "reshaped"), 1),
    "softmax_middle_axis": (lambda s: softmax_ir((2, 9, 3), 1, s), ("keepdims", "reshaped"), 1),
    "center_middle_axis": (lambda s: center_ir((2, 5, 3), 1, s), ("keepdims", "reshaped"), 1),
    "center_first_axis": (lambda s: center_ir((6, 4), 0, s), ("keepdims", "reshaped"), 1),
    "standardize_columns": (lambda s: standardize_ir(16, 4, s), ("rsqrt", "pow_div_sqrt"), 1),
    "zscore_columns": (lambda s: zscore_ir(16, 4, s), ("sums", "means"), 1),
    "power_step_eps_inside": (lambda s: power_step_ir(8, 8, 2, s), ("div_sqrt", "pow_rsqrt"), 2),
    "sibling_reductions": (lambda s: siblings_ir(4, 8, s), ("plain", "exp"), 1),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_every_spelling_has_the_same_launches(name: str) -> None:
    make, spellings, expected = SPELLINGS[name]
    for spelling in spellings:
        text = make(spelling)
        assert launches(text) == expected, (name, spelling)
        assert launches(text, "none", launch_fusion=False) > expected, (name, spelling)


@pytest.mark.parametrize("spelling", ["keepdims", "reshaped"])
@pytest.mark.parametrize("shape,axis", [((4, 17), 1), ((2, 9, 3), 1), ((7, 5), 0), ((3, 2, 4), 0)])
def test_softmax_any_axis(numeric, spelling: str, shape, axis: int) -> None:
    x = random(shape, 1, scale=1e3)  # large logits: x - max keeps exp in range
    x.flat[0] = -np.inf  # weighs nothing
    numeric.check(softmax_ir(shape, axis, spelling), [x], [softmax_np(x, axis)],
                  tol=(1e-6, 1e-4))


@pytest.mark.parametrize("spelling", ["keepdims", "reshaped"])
@pytest.mark.parametrize("shape,axis", [((2, 5, 3), 1), ((3, 33, 4), 1), ((6, 4), 0)])
def test_center_any_axis(numeric, spelling: str, shape, axis: int) -> None:
    x = random(shape, 2, mean=1e3)
    x64 = x.astype(np.float64)
    numeric.check(center_ir(shape, axis, spelling), [x], [x64 - x64.mean(axis=axis, keepdims=True)],
                  tol=(1e-3, 1e-4))


@pytest.mark.parametrize("spelling", ["rsqrt", "pow_div_sqrt"])
def test_standardize_columns(numeric, spelling: str) -> None:
    """Random columns, a mean of 1e4 (cancellation), a constant column (variance 0: eps
    keeps it finite, the result 0), and a NaN that makes its own column NaN."""
    x = random((33, 5), 3)
    x[:, 1] = random((33,), 4, mean=1e4)
    x[:, 2] = 7.0
    x[5, 3] = np.nan
    numeric.check(standardize_ir(33, 5, spelling), [x], [standardize_np(x)], tol=(2e-3, 1e-3))


@pytest.mark.parametrize("spelling", ["sums", "means"])
def test_zscore_columns(numeric, spelling: str) -> None:
    """Random columns, a large mean, an infinity (its column NaN), and a constant column: a
    sample deviation of 0 gives 0 / 0 = NaN there, fused as written."""
    x = random((17, 6), 5)
    x[:, 1] = random((17,), 6, scale=10.0, mean=1e4)
    x[:, 2] = -3.0
    x[4, 4] = np.inf
    numeric.check(zscore_ir(17, 6, spelling), [x], [zscore_np(x)], tol=(2e-3, 1e-3))


@pytest.mark.parametrize("spelling", ["div_sqrt", "pow_rsqrt"])
def test_power_step_eps_inside(numeric, spelling: str) -> None:
    """Random, and a zero column of q: its column of y is 0, normalised to 0 (eps inside the
    square root keeps it finite)."""
    a, q = random((24, 16), 7), random((16, 3), 8)
    q[:, 1] = 0.0
    numeric.check(power_step_ir(24, 16, 3, spelling), [a, q], [power_step_np(a, q)],
                  tol=(1e-5, 1e-4))


@pytest.mark.parametrize("spelling", ["plain", "exp"])
def test_sibling_reductions(numeric, spelling: str) -> None:
    x = random((5, 40), 9)
    x[2, 3] = np.nan
    source = x.astype(np.float64) if spelling == "plain" else np.exp(x.astype(np.float64))
    expected = [source.sum(axis=1, keepdims=True), source.max(axis=1, keepdims=True)]
    numeric.check(siblings_ir(5, 40, spelling), [x], expected, tol=(1e-5, 1e-5))
