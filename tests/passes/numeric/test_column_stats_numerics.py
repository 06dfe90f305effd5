"""The column-statistics fusions by numbers (fuse-centered-gram, fuse-power-step-normalize,
fuse-explained-variance): each pattern, written the ways people write it, becomes its fused op,
lowers to the launches its kernels imply, and the fused, unfused and reference runs agree with
numpy written independently, on random and adversarial inputs (one row, constant columns, zero
columns, large offsets)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec import knobs
from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import compile as fusec_compile
from fusec.compiler.driver import load, lower
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable


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
             f"  %n = nn.constant {{value = dense<{1.0 / n:.9e}> : tensor<f32>}} : tensor<f32>\n"
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
        body += (f"  %k = nn.constant {{value = dense<{1.0 / (n - 1):.9e}> : tensor<f32>}} : tensor<f32>\n"
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


@pytest.mark.parametrize("n,d", [(1000, 40), (2048, 64)])
def test_centered_gram_large_mean(numeric, n: int, d: int) -> None:
    """A mean of 1e4 and a spread of 1 (X^T X - n mu mu^T would keep no digit): the fused Gram
    on the device within 2e-5 of max |G| of numpy and the reference (its column means sum the
    differences from the first row; summing the raw values it was 1e-4 to 9e-4 off). The
    un-fused program's f32 column sums are its own larger error, hence its looser bound."""
    text = gram_ir(n, d)
    x = random((n, d), n) + np.float32(1e4)
    runs = numeric.run_all(text, [x])
    expected = covariance(x, n - 1)
    for how, rtol in (("fused on the device", 2e-5), ("reference of the fused IR", 2e-6),
                      ("unfused on the device", 3e-3)):
        for result in compare(runs[how], [expected], 1e-6, rtol, normwise=True):
            assert result.ok, f"{how} vs numpy: {result.describe(1e-6, rtol)}"
    for result in compare(runs["fused on the device"], runs["unfused on the device"], 1e-6, 3e-3,
                          normwise=True):
        assert result.ok, f"fused vs unfused: {result.describe(1e-6, 3e-3)}"


# --- power-step normalize ----------------------------------------------------------------------


def power_ir(m: int, k: int, c: int, eps: float | None = 1e-6, norm: str = "sum") -> str:
    """y = a @ q, then y / (sqrt(sum(y * y, 0)) + eps); ``norm = "mean"`` writes the norm as
    sqrt(mean(y * y, 0) * m) and the division as a multiplication by the reciprocal."""
    a, q, y, r = (f"tensor<{m}x{k}xf32>", f"tensor<{k}x{c}xf32>", f"tensor<{m}x{c}xf32>",
                  f"tensor<1x{c}xf32>")
    body = (f"  %y = nn.matmul %a, %q : {a}, {q} -> {y}\n"
            f"  %s = nn.mul %y, %y : {y}, {y} -> {y}\n")
    if norm == "sum":
        body += f"  %t = nn.reduce_sum %s {{axes = array<i64: 0>, keepdims = true}} : {y} -> {r}\n"
    else:
        body += (f"  %t0 = nn.reduce_mean %s {{axes = array<i64: 0>, keepdims = true}} : {y} -> {r}\n"
                 f"  %rows = nn.constant {{value = dense<{float(m)}> : tensor<f32>}} : tensor<f32>\n"
                 f"  %t = nn.mul %rows, %t0 : tensor<f32>, {r} -> {r}\n")
    body += f"  %n = nn.sqrt %t : {r} -> {r}\n"
    d = "%n"
    if eps is not None:
        body += (f"  %e = nn.constant {{value = dense<{eps:.9e}> : tensor<f32>}} : tensor<f32>\n"
                 f"  %d = nn.add %n, %e : {r}, tensor<f32> -> {r}\n")
        d = "%d"
    if norm == "sum":
        body += f"  %z = nn.div %y, {d} : {y}, {r} -> {y}\n"
    else:
        body += (f"  %one = nn.constant {{value = dense<1.0> : tensor<f32>}} : tensor<f32>\n"
                 f"  %inv = nn.div %one, {d} : tensor<f32>, {r} -> {r}\n"
                 f"  %z = nn.mul %y, %inv : {y}, {r} -> {y}\n")
    return (f"func.func @power(%a: {a}, %q: {q}) -> {y} {{\n{body}"
            f"  func.return %z : {y}\n}}")


def power_step(a: np.ndarray, q: np.ndarray, eps: float) -> np.ndarray:
    y = a.astype(np.float64) @ q.astype(np.float64)
    with np.errstate(all="ignore"):
        return y / (np.sqrt((y * y).sum(axis=0, keepdims=True)) + eps)


@pytest.mark.parametrize("m,k,c", [(1, 4, 3), (17, 17, 5), (1000, 64, 8), (40, 300, 33)])
@pytest.mark.parametrize("norm", ["sum", "mean"])
def test_power_step(numeric, m: int, k: int, c: int, norm: str) -> None:
    text = power_ir(m, k, c, norm=norm)
    assert numeric.top_ops(text) == ["fused.power_step_normalize"]
    assert numeric.launches(text) == 2
    assert numeric.launches(text, "unfuse") >= 4  # what the nn ops take
    a, q = random((m, k), m), random((k, c), c)
    numeric.check(text, [a, q], [power_step(a, q, 1e-6)], tol=(1e-5, 1e-4))


def test_power_step_zero_columns(numeric) -> None:
    """A zero column of q gives a zero column of y: 0 / (0 + eps) = 0 with eps, 0 / 0 = NaN
    without; the other columns are unaffected."""
    a, q = random((17, 9), 4), random((9, 4), 5)
    q[:, 1] = 0.0
    with_eps = power_ir(17, 9, 4, eps=1e-6)
    numeric.check(with_eps, [a, q], [power_step(a, q, 1e-6)], tol=(1e-5, 1e-4))
    (fused,) = numeric.run_all(with_eps, [a, q])["fused on the device"]
    assert (fused[:, 1] == 0).all()
    without = power_ir(17, 9, 4, eps=None)
    assert numeric.top_ops(without) == ["fused.power_step_normalize"]
    expected = power_step(a, q, 0.0)
    assert np.isnan(expected[:, 1]).all()
    numeric.check(without, [a, q], [expected], tol=(1e-5, 1e-4))


def test_power_step_large_eps_and_tiny_columns(numeric) -> None:
    """eps comparable to the norm (tiny columns) changes the result: it must be added after
    the square root, not inside it."""
    a, q = random((33, 8), 6), random((8, 3), 7) * 1e-3
    text = power_ir(33, 8, 3, eps=0.01)
    numeric.check(text, [a, q], [power_step(a, q, 0.01)], tol=(1e-6, 1e-4))


# --- explained variance ------------------------------------------------------------------------


def variance_ir(d: int, k: int, form: str = "columns") -> str:
    """diag(q^T g q): ``columns`` as sum(q * (g @ q), 0); ``masked`` as the k x k matrix
    times an identity constant, summed over axis 1."""
    g, q, r = f"tensor<{d}x{d}xf32>", f"tensor<{d}x{k}xf32>", f"tensor<{k}xf32>"
    body = f"  %gq = nn.matmul %g, %q : {g}, {q} -> {q}\n"
    if form == "columns":
        body += (f"  %p = nn.mul %gq, %q : {q}, {q} -> {q}\n"
                 f"  %v = nn.reduce_sum %p {{axes = array<i64: 0>}} : {q} -> {r}\n")
    else:
        kk = f"tensor<{k}x{k}xf32>"
        eye = ", ".join("[" + ", ".join("1.0" if i == j else "0.0" for j in range(k)) + "]"
                        for i in range(k))
        body += (f"  %qt = nn.transpose %q {{perm = array<i64: 1, 0>}} : {q} -> tensor<{k}x{d}xf32>\n"
                 f"  %m = nn.matmul %qt, %gq : tensor<{k}x{d}xf32>, {q} -> {kk}\n"
                 f"  %i = nn.constant {{value = dense<[{eye}]> : {kk}}} : {kk}\n"
                 f"  %md = nn.mul %i, %m : {kk}, {kk} -> {kk}\n"
                 f"  %v = nn.reduce_sum %md {{axes = array<i64: 1>}} : {kk} -> {r}\n")
    return f"func.func @variance(%g: {g}, %q: {q}) -> {r} {{\n{body}  func.return %v : {r}\n}}"


def explained(g: np.ndarray, q: np.ndarray) -> np.ndarray:
    g, q = g.astype(np.float64), q.astype(np.float64)
    return np.diag(q.T @ g @ q)


@pytest.mark.parametrize("d,k", [(1, 1), (17, 4), (300, 8), (40, 33)])
@pytest.mark.parametrize("form", ["columns", "masked"])
def test_explained_variance(numeric, d: int, k: int, form: str) -> None:
    text = variance_ir(d, k, form)
    assert numeric.top_ops(text) == ["fused.explained_variance"]
    assert numeric.launches(text) == 2
    x = random((d + 3, d), d)
    g = (x.T @ x / (d + 2)).astype(np.float32)  # a covariance: symmetric, >= 0
    q = random((d, k), k)
    numeric.check(text, [g, q], [explained(g, q)], tol=(1e-4, 1e-4))


def test_explained_variance_adversarial(numeric) -> None:
    """A zero column of q explains 0; a non-symmetric, indefinite g gives negative values."""
    g, q = random((17, 17), 8), random((17, 3), 9)
    q[:, 2] = 0.0
    text = variance_ir(17, 3)
    (fused,) = numeric.run_all(text, [g, q])["fused on the device"]
    assert fused[2] == 0.0
    numeric.check(text, [g, q], [explained(g, q)], tol=(1e-4, 1e-4))


# --- the three together: PCA by power iteration ------------------------------------------------

PCA = """
func.func @pca(%x: tensor<200x12xf32>, %q0: tensor<12x3xf32>) -> (tensor<12x3xf32>, tensor<3xf32>) {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<200x12xf32> -> tensor<1x12xf32>
  %c = nn.sub %x, %m : tensor<200x12xf32>, tensor<1x12xf32> -> tensor<200x12xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<200x12xf32> -> tensor<12x200xf32>
  %g0 = nn.matmul %t, %c : tensor<12x200xf32>, tensor<200x12xf32> -> tensor<12x12xf32>
  %n1 = nn.constant {value = dense<199.0> : tensor<f32>} : tensor<f32>
  %g = nn.div %g0, %n1 : tensor<12x12xf32>, tensor<f32> -> tensor<12x12xf32>
  %y = nn.matmul %g, %q0 : tensor<12x12xf32>, tensor<12x3xf32> -> tensor<12x3xf32>
  %s = nn.mul %y, %y : tensor<12x3xf32>, tensor<12x3xf32> -> tensor<12x3xf32>
  %ss = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<12x3xf32> -> tensor<1x3xf32>
  %nrm = nn.sqrt %ss : tensor<1x3xf32> -> tensor<1x3xf32>
  %eps = nn.constant {value = dense<1.0e-06> : tensor<f32>} : tensor<f32>
  %den = nn.add %nrm, %eps : tensor<1x3xf32>, tensor<f32> -> tensor<1x3xf32>
  %q = nn.div %y, %den : tensor<12x3xf32>, tensor<1x3xf32> -> tensor<12x3xf32>
  %gq = nn.matmul %g, %q : tensor<12x12xf32>, tensor<12x3xf32> -> tensor<12x3xf32>
  %p = nn.mul %q, %gq : tensor<12x3xf32>, tensor<12x3xf32> -> tensor<12x3xf32>
  %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<12x3xf32> -> tensor<3xf32>
  func.return %q, %v : tensor<12x3xf32>, tensor<3xf32>
}"""


def test_pca_step(numeric) -> None:
    assert numeric.top_ops(PCA) == ["fused.centered_gram", "fused.power_step_normalize",
                                    "fused.explained_variance"]
    assert numeric.launches(PCA) == 6
    x, q0 = random((200, 12), 10) + 5, random((12, 3), 11)
    cov = covariance(x, 199)
    q = power_step(cov, q0, 1e-6)
    numeric.check(PCA, [x, q0], [q, explained(cov, q)], tol=(1e-4, 1e-4))


# --- both kernel shapes: the CPU register tiles and the GPU local-memory tiles -----------------

LAYOUTS = {
    "cpu": DeviceInfo(name="CPU layout", is_cpu=True),
    "cpu16": DeviceInfo(name="CPU layout, AVX-512", is_cpu=True, float_vector_width=16),
    "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256),
}


def fused_op_ir(kind: str, a: int, b: int, c: int) -> str:
    if kind == "gram":
        return f"""func.func @f(%x: tensor<{a}x{b}xf32>) -> tensor<{b}x{b}xf32> {{
  %g = fused.centered_gram %x {{scale = 0.5 : f32}} : tensor<{a}x{b}xf32> -> tensor<{b}x{b}xf32>
  func.return %g : tensor<{b}x{b}xf32>
}}"""
    if kind == "power":
        return f"""func.func @f(%a: tensor<{a}x{b}xf32>, %q: tensor<{b}x{c}xf32>) -> tensor<{a}x{c}xf32> {{
  %z = fused.power_step_normalize %a, %q {{eps = 1.0e-3 : f32}} : tensor<{a}x{b}xf32>, tensor<{b}x{c}xf32> -> tensor<{a}x{c}xf32>
  func.return %z : tensor<{a}x{c}xf32>
}}"""
    return f"""func.func @f(%g: tensor<{a}x{a}xf32>, %q: tensor<{a}x{c}xf32>) -> tensor<1x{c}xf32> {{
  %v = fused.explained_variance %g, %q : tensor<{a}x{a}xf32>, tensor<{a}x{c}xf32> -> tensor<1x{c}xf32>
  func.return %v : tensor<1x{c}xf32>
}}"""


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind,a,b,c", [
    ("gram", 1, 1, 0), ("gram", 3, 5, 0), ("gram", 70, 9, 0), ("gram", 33, 19, 0),
    ("gram", 9, 8, 0), ("gram", 40, 32, 0),  # CPU: square aligned tiles, the symmetric kernel
    ("gram", 40, 64, 0), ("gram", 33, 48, 0), ("gram", 6, 3, 0),  # two vectors a row; shifted
    ("power", 20, 9, 40), ("power", 17, 5, 33), ("variance", 40, 0, 40), ("variance", 19, 0, 35),
    ("power", 1, 1, 1), ("power", 9, 3, 7), ("power", 70, 20, 17), ("power", 16, 16, 8),
    ("variance", 1, 0, 1), ("variance", 9, 0, 3), ("variance", 70, 0, 17), ("variance", 33, 0, 9),
])
def test_kernel_shapes(layout: str, kind: str, a: int, b: int, c: int) -> None:
    """Each op lowered for a CPU and for a GPU (both run on the test device), at sizes around
    the tiles' edges: one element, fewer columns than a vector, not a multiple of a tile."""
    text = fused_op_ir(kind, a, b, c)
    module = load(text)
    args = random_inputs(find_function(module), seed=a + b + c)
    expected = run_function(module, args)
    compiled = lower(load(text), pipeline="none", device_info=LAYOUTS[layout],
                     launch_fusion=False)
    assert len(compiled.plan.launches) == 2
    outputs = Executable(compiled.plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-5, 1e-4):
        assert result.ok, result.describe(1e-5, 1e-4)


# --- the slice-split GPU Gram (gram_slices + gram_combine), run on the CPU device -------------


def split_gram(text: str):
    """``text`` lowered for a GPU with the slice-split Gram turned on."""
    with knobs.overridden(gram_split_on_gpu=True):
        return lower(load(text), pipeline="none", device_info=LAYOUTS["gpu"],
                     launch_fusion=False)


@pytest.mark.parametrize("n,d", [
    (1, 1), (3, 5), (16, 64), (17, 5), (70, 9), (33, 130), (200, 64), (1000, 70), (129, 256),
    (4096, 256),  # the fusec-bench shape: 37 slices of 112 rows, 10 upper tiles
])
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_gram_split(n: int, d: int, offset: float) -> None:
    """The split Gram against numpy in float64, the reference of the fused op and the un-fused
    program on the device, at shapes around its 64-wide tiles and 16-row slices (a last slice
    of 1 to 15 rows, one slice, 63 slices), on random data and on data with a mean of 1e4 and a
    spread of 1, where X^T X - n mu mu^T would lose every digit."""
    from fusec.lowering.column_stats_ops import gram_slice_rows

    text = fused_op_ir("gram", n, d, 0)
    compiled = split_gram(text)
    names = [launch.kernel for launch in compiled.plan.launches]
    assert len(names) == 2 and "gram_slices" in names[0] and "gram_combine" in names[1], names
    if (n, d) == (4096, 256):
        assert gram_slice_rows(n, d) == 112
    x = random((n, d), n * d) + np.float32(offset)
    (got,) = Executable(compiled.plan, select_device("cpu"))(x)  # type: ignore[arg-type]
    expected = covariance(x, 2.0)  # scale 0.5
    module = load(text)
    unfused = fusec_compile(text, pipeline="unfuse", device="cpu")(x)[0]
    # Normwise: an off-diagonal covariance near 0 carries the rounding of its n terms. The
    # un-fused program's f32 column sums of values near 1e4 are its own larger error (4096 x
    # 256: 1e-3 of max |G|), hence its looser bound there.
    loose = 1e-5 if offset == 0 else 3e-3
    for how, wanted, rtol in (("numpy", expected, 2e-6),
                              ("the reference", run_function(module, [x])[0], 2e-6),
                              ("unfused on the device", unfused, loose)):
        for result in compare([got], [wanted], 1e-6, rtol, normwise=True):
            assert result.ok, f"split Gram vs {how}: {result.describe(1e-6, rtol)}"


def test_gram_split_constant_columns_and_one_row() -> None:
    """Constant columns give exact zeros (their slice means are the value, every centered value
    and every correction 0), among them a column of 1e4; one row gives exact zeros."""
    x = random((70, 9), 5) * 3
    x[:, 2] = 1e4
    x[:, 7] = -3.25
    device = select_device("cpu")
    (got,) = Executable(split_gram(fused_op_ir("gram", 70, 9, 0)).plan,
                        device)(x)  # type: ignore[arg-type]
    assert (got[2, :] == 0).all() and (got[:, 2] == 0).all() and (got[:, 7] == 0).all()
    assert np.abs(got - covariance(x, 2.0)).max() <= 1e-5 * np.abs(covariance(x, 2.0)).max()
    one = split_gram(fused_op_ir("gram", 1, 6, 0))
    (got,) = Executable(one.plan, device)(random((1, 6), 6) + 7)  # type: ignore[arg-type]
    assert (got == 0).all()


@pytest.mark.parametrize("split", [True, False])
def test_gram_split_switch(split: bool) -> None:
    """A GPU lowering takes the slice-split Gram by default (timed on an H200: 0.034 ms
    against 0.157 for the tiled pair); with the knob `gram_split_on_gpu` off it keeps
    column_mean + centered_gram, as the CPU does."""
    with knobs.overridden({} if split else {"gram_split_on_gpu": False}):
        compiled = lower(load(fused_op_ir("gram", 70, 9, 0)), pipeline="none",
                         device_info=LAYOUTS["gpu"], launch_fusion=False)
    names = [launch.kernel for launch in compiled.plan.launches]
    took_split = any("gram_slices" in name or "gram_combine" in name for name in names)
    assert took_split == split, names


def test_gram_split_lowering_mirrors_the_kernels_sizes() -> None:
    """The lowering (which may not import codegen) sizes slices with copies of the kernels'
    tile and row chunk: they must stay equal, or the slices stop filling the GPU as planned
    (the tile) or the kernel rejects them (the chunk)."""
    from fusec.codegen.kernels import centered_gram_split
    from fusec.lowering import column_stats_ops

    assert column_stats_ops.GRAM_TILE == centered_gram_split.TILE
    for n, d in [(1, 1), (17, 5), (4096, 256), (100000, 64), (33, 1000)]:
        rows = column_stats_ops.gram_slice_rows(n, d)
        assert rows > 0 and rows % centered_gram_split.CHUNK == 0, (n, d, rows)
