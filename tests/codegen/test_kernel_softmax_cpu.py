"""The CPU shapes of the softmax template (a row of at most `CPU_REGISTER_ROW` in registers as
float16 vectors and a tail, with `scaled_exp_function`; longer rows, or two rows per work-item,
in three passes of float8 vectors with `vector_exp_nonpositive_function`) and the exp functions
themselves, against float64 numpy.

Tolerances: softmax as in ``test_kernel_norm`` (rtol 1e-5, atol 1e-6); the exp function within
the bounds its docstring states (2e-7 relative for ``|x| <= 1``, 1e-6 for ``|x| <= 17``, 4e-6
on its whole range).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    vector_exp_function,
    vector_exp_nonpositive_function,
)
from fusec.codegen.kernels.softmax import (
    CPU_REGISTER_ROW,
    SCALE_EXPONENT,
    register_chunks,
    register_rows_per_group,
    scaled_exp_function,
    softmax,
)

SOFTMAX_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def reference(x: np.ndarray) -> np.ndarray:
    shifted = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("rows,cols,rows_per_group,rows_per_item", [
    (6, 128, 16, 2),     # two rows per work-item in registers, a padded work-group
    (6, 128, 1, 1),
    (6, 37, 2, 2),       # two rows per work-item in registers, ragged (16, 16, 4, 1)
    (7, 37, 4, None),    # odd rows: one per work-item; ragged columns (4 vectors + 5)
    (10, 8, 3, 2),       # one vector per row, padding work-items
    (4, 5, 1, 2),        # shorter than a vector: the scalar loop only
    (3, 1, 2, None),     # one column: every output is 1
    (2, 300, 1, 2),
])
def test_cpu_softmax_matches_numpy(launch, rows, cols, rows_per_group, rows_per_item):
    rng = np.random.default_rng(rows * cols)
    x = (rng.standard_normal((rows, cols)) * 10).astype(np.float32)
    x[0, -1] = 150.0  # one dominant logit: the others underflow relative to it
    kernel = softmax("softmax_cpu", rows, cols, rows_per_group=rows_per_group,
                     rows_per_item=rows_per_item)
    assert kernel.local_size == (1, rows_per_group)
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    np.testing.assert_allclose(result, reference(x), **SOFTMAX_TOLERANCE)


def test_register_rows_by_default_two_rows_per_item_for_longer_even_rows():
    register = softmax("s", 6144, 128)
    assert register.global_size == (1, 3072) and register.local_size == (1, 32)
    assert "2 rows per work-item in registers" in register.source
    assert "_exp16(" in register.source
    odd = softmax("s", 6143, 128)
    assert odd.local_size == (1, 64) and "one row per work-item in registers" in odd.source
    wide = softmax("s", 6144, 200)  # 13 vectors a row: too many registers for two rows
    assert wide.global_size == (1, 6144) and wide.local_size == (1, 64)
    assert softmax("s", 6144, CPU_REGISTER_ROW + 1).global_size == (1, 3072)
    assert softmax("s", 7, 300).global_size == (1, 7)
    assert "_exp8(" in softmax("s", 6, 300, rows_per_item=2).source


def test_register_chunks_cover_the_row_once():
    for cols in (1, 2, 3, 5, 15, 16, 17, 31, 37, 128, 255, 256):
        chunks = register_chunks(cols)
        assert [offset for offset, _ in chunks] == [
            sum(w for _, w in chunks[:i]) for i in range(len(chunks))]
        assert sum(w for _, w in chunks) == cols
    assert register_chunks(37) == [(0, 16), (16, 16), (32, 4), (36, 1)]


def test_few_rows_still_make_several_work_groups():
    """Intel's runtime runs a work-group on one thread: 16 rows make 8 groups of 2, not one."""
    assert register_rows_per_group(6144) == 64
    assert register_rows_per_group(16) == 2
    assert register_rows_per_group(3) == 1
    assert softmax("s", 16, 64, rows_per_item=1).local_size == (1, 2)
    paired = softmax("s", 16, 64)  # 8 work-items of two rows: 8 groups of one
    assert paired.global_size == (1, 8) and paired.local_size == (1, 1)


ADVERSARIAL_SHAPES = [(1, 1), (5, 1), (3, 2), (9, 17), (16, 31), (6, 128), (4, 255), (3, 256),
                      (2, 257), (3, 300)]


@pytest.mark.parametrize("rows,cols", ADVERSARIAL_SHAPES)
def test_cpu_softmax_adversarial_rows(launch, rows, cols):
    """Huge magnitudes (a difference of 1e30 between entries), -inf entries (exp gives 0 up to
    the clamp's 1.2e-38), a row all equal, a row of one large value and the rest -inf, rows
    of both signs at +-3e38: every row sums to 1 and matches float64 numpy."""
    rng = np.random.default_rng(rows * 1000 + cols)
    x = (rng.standard_normal((rows, cols)) * 30).astype(np.float32)
    x[0] = 7.25  # all equal: uniform
    if rows > 1:
        x[1] = rng.standard_normal(cols) * 1e30
    if rows > 2:
        x[2] = -np.inf
        x[2, cols // 2] = 1e38
    if rows > 3:
        x[3, ::2] = -np.inf
        x[3, -1] = -3e38
    if rows > 4:
        x[4] = np.where(rng.random(cols) < 0.5, 3e38, -3e38)
        x[4, 0] = 3e38
    kernel = softmax("softmax_adv", rows, cols)
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    expected = reference(x)
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(result, expected, **SOFTMAX_TOLERANCE)
    np.testing.assert_allclose(result.astype(np.float64).sum(axis=1), 1.0, rtol=1e-5)


def test_row_of_minus_inf_is_nan_as_numpy(launch):
    """Every entry -inf: max is -inf, -inf - -inf is NaN, as in numpy; other rows untouched."""
    x = np.random.default_rng(1).standard_normal((3, 40)).astype(np.float32)
    x[1] = -np.inf
    result = launch(softmax("s", 3, 40), {"x": x}, {"out": (3, 40)})["out"]
    assert np.isnan(result[1]).all()
    np.testing.assert_allclose(result[[0, 2]], reference(x[[0, 2]]), **SOFTMAX_TOLERANCE)


def test_rows_per_item_must_divide_rows():
    with pytest.raises(ValueError, match="rows_per_item 2 does not divide the 7 rows"):
        softmax("s", 7, 16, rows_per_item=2)


@pytest.mark.parametrize("cols", [24, 300])
def test_nan_in_a_row_makes_that_row_nan(launch, cols):
    """As numpy: the max ignores nothing here (fmax skips NaN, but exp(NaN - max) is NaN and
    so is the sum), so the whole row is NaN and the other rows are untouched."""
    x = np.random.default_rng(0).standard_normal((4, cols)).astype(np.float32)
    x[1, 9] = np.nan
    result = launch(softmax("s", 4, cols), {"x": x}, {"out": (4, cols)})["out"]
    assert np.isnan(result[1]).all()
    rest = [0, 2, 3]
    np.testing.assert_allclose(result[rest], reference(x[rest]), **SOFTMAX_TOLERANCE)


def exp_kernel(width: int) -> KernelSource:
    vtype = f"float{width}"
    source = (f"{vector_exp_function('test_exp', width)}"
              f"__kernel void exp_test(__global const float *x, __global float *out) {{\n"
              f"    const int i = get_global_id(0);\n"
              f"    vstore{width}(test_exp(vload{width}(i, x)), i, out);\n}}\n")
    assert vtype in source
    return KernelSource("exp_test", source, (KernelArg("x", "in"), KernelArg("out", "out")),
                        (0,), None)


@pytest.mark.parametrize("width", [2, 4, 8, 16])
def test_vector_exp_accuracy(launch, width):
    x = np.linspace(-87.0, 88.0, 1 << 16, dtype=np.float32)
    kernel = exp_kernel(width)
    kernel = KernelSource(kernel.name, kernel.source, kernel.args, (x.size // width,), None)
    result = launch(kernel, {"x": x}, {"out": x.shape})["out"]
    expected = np.exp(x.astype(np.float64))
    error = np.abs(result - expected) / expected
    assert error[np.abs(x) <= 1].max() < 2e-7
    assert error[np.abs(x) <= 17].max() < 1e-6
    assert error.max() < 4e-6


def test_vector_exp_special_values(launch):
    x = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, -1000.0, 1000.0, -87.5], np.float32)
    kernel = exp_kernel(8)
    kernel = KernelSource(kernel.name, kernel.source, kernel.args, (1,), None)
    result = launch(kernel, {"x": x}, {"out": x.shape})["out"]
    assert np.isnan(result[0])
    assert result[1] == result[5] == 0.0  # e^-inf is 0, not the smallest normal (was 1.2e-38)
    assert result[3] == result[4] == 1.0
    assert result[2] == result[6] == np.inf  # was 2.4e38
    np.testing.assert_allclose(result[7], np.exp(np.float64(-87.5)), rtol=1e-6)


def test_vector_exp_at_the_ends_of_the_float_range(launch):
    """Subnormal results round once (to within their spacing), below them 0, past the largest
    float inf, as numpy's exp in float32 gives."""
    x = np.concatenate([np.linspace(-104.5, -87.0, 2048), np.linspace(87.0, 89.5, 2048)])
    x = x.astype(np.float32)
    kernel = exp_kernel(8)
    kernel = KernelSource(kernel.name, kernel.source, kernel.args, (x.size // 8,), None)
    result = launch(kernel, {"x": x}, {"out": x.shape})["out"]
    with np.errstate(over="ignore"):
        expected = np.exp(x)  # float32, as the kernel computes it
    assert np.array_equal(np.isinf(result), np.isinf(expected))
    assert (result[x < -103.3] <= 1.4e-45).all() and (expected[x < -103.3] <= 1.4e-45).all()
    finite = np.isfinite(expected)
    got, want = result[finite].astype(np.float64), expected[finite].astype(np.float64)
    tolerance = 6e-6 * want + 2 * np.spacing(expected[finite]).astype(np.float64)
    assert (np.abs(got - want) <= tolerance).all()


def nonpositive_exp_kernel(width: int, items: int) -> KernelSource:
    source = (f"{vector_exp_nonpositive_function('test_exp', width)}"
              f"__kernel void exp_test(__global const float *x, __global float *out) {{\n"
              f"    const int i = get_global_id(0);\n"
              f"    vstore{width}(test_exp(vload{width}(i, x)), i, out);\n}}\n")
    return KernelSource("exp_test", source, (KernelArg("x", "in"), KernelArg("out", "out")),
                        (items,), None)


@pytest.mark.parametrize("width", [4, 16])
def test_nonpositive_exp_accuracy(launch, width):
    """softmax's exp of ``x - max``: the bounds `vector_exp_function` keeps, on ``x <= 0``."""
    x = np.linspace(-87.0, 0.0, 1 << 16, dtype=np.float32)
    result = launch(nonpositive_exp_kernel(width, x.size // width), {"x": x},
                    {"out": x.shape})["out"]
    expected = np.exp(x.astype(np.float64))
    error = np.abs(result - expected) / expected
    assert error[np.abs(x) <= 1].max() < 2e-7
    assert error[np.abs(x) <= 17].max() < 1e-6
    assert error.max() < 4e-6


def test_nonpositive_exp_special_values_and_subnormals(launch):
    """NaN stays NaN; e^-inf is 0; e^0 is exactly 1; subnormal results round once, as
    numpy's float32 exp gives them, and below them 0."""
    special = np.array([np.nan, -np.inf, 0.0, -0.0, -1000.0, -104.0, -0.5, -60.0], np.float32)
    result = launch(nonpositive_exp_kernel(8, 1), {"x": special}, {"out": special.shape})["out"]
    assert np.isnan(result[0])
    assert result[1] == result[4] == result[5] == 0.0
    assert result[2] == result[3] == 1.0
    np.testing.assert_allclose(result[[6, 7]], np.exp(special[[6, 7]].astype(np.float64)),
                               rtol=4e-6)
    x = np.linspace(-104.5, -86.0, 4096).astype(np.float32)
    low = launch(nonpositive_exp_kernel(8, x.size // 8), {"x": x}, {"out": x.shape})["out"]
    expected = np.exp(x)  # float32, as the kernel computes it
    assert (low[x < -103.3] <= 1.4e-45).all() and (expected[x < -103.3] <= 1.4e-45).all()
    assert (low[(x > -103) & (x < -87.5)] > 0).all()  # subnormal, not flushed
    tolerance = 6e-6 * expected + 2 * np.spacing(expected)
    assert (np.abs(low.astype(np.float64) - expected) <= tolerance).all()


def scaled_exp_kernel(width: int, items: int) -> KernelSource:
    source = (f"{scaled_exp_function('test_exp', width)}"
              f"__kernel void exp_test(__global const float *x, __global float *out) {{\n"
              f"    const int i = get_global_id(0);\n"
              + ("    out[i] = test_exp(x[i]);\n}\n" if width == 1 else
                 f"    vstore{width}(test_exp(vload{width}(i, x)), i, out);\n}}\n"))
    return KernelSource("exp_test", source, (KernelArg("x", "in"), KernelArg("out", "out")),
                        (items,), None)


@pytest.mark.parametrize("width", [1, 2, 16])
def test_scaled_exp_accuracy(launch, width):
    """The register softmax's ``e^d * 2^64`` on ``-110 <= d <= 0``: within the bounds of the
    other exp functions (the factor 2^64 is exact), never subnormal."""
    x = np.linspace(-110.0, 0.0, 1 << 16, dtype=np.float32)
    result = launch(scaled_exp_kernel(width, x.size // width), {"x": x},
                    {"out": x.shape})["out"]
    expected = np.exp(x.astype(np.float64)) * 2.0**SCALE_EXPONENT
    error = np.abs(result - expected) / expected
    assert error[np.abs(x) <= 1].max() < 2e-7
    assert error[np.abs(x) <= 17].max() < 1e-6
    assert error.max() < 4e-6


def test_scaled_exp_special_values(launch):
    """NaN stays NaN; 0 gives exactly 2^64; -inf and anything below -110 give e^-110 * 2^64
    (2^-94.7, which softmax's normalisation by a sum of at least 2^64 takes to 0)."""
    x = np.array([np.nan, 0.0, -0.0, -np.inf, -1000.0, -110.0, -3e38, -1.0], np.float32)
    result = launch(scaled_exp_kernel(8, 1), {"x": x}, {"out": x.shape})["out"]
    assert np.isnan(result[0])
    assert result[1] == result[2] == 2.0**SCALE_EXPONENT
    floor = np.exp(np.float64(-110.0)) * 2.0**SCALE_EXPONENT
    np.testing.assert_allclose(result[3:7], floor, rtol=4e-6)
    assert (result[3:7] < 2.0**-94).all()
    np.testing.assert_allclose(result[7], np.exp(np.float64(-1.0)) * 2.0**SCALE_EXPONENT,
                               rtol=2e-7)


@pytest.mark.parametrize("rows_per_item", [1, 2])
@pytest.mark.parametrize("cols", [128, 37, 1])
def test_register_softmax_outputs_down_to_the_subnormals(launch, cols, rows_per_item):
    """Entries at +-80 (``x - max`` down to -160, past the clamp at -110): every output as
    float64 numpy gives it, to within 6e-6 relative and two spacings of float32, subnormal
    outputs included (``e^d * 2^64`` is normal, the one rounding is the final multiply), and 0
    where ``e^(x - max) / sum`` is below half the smallest subnormal."""
    rng = np.random.default_rng(cols)
    rows = 6
    x = np.where(rng.random((rows, cols)) < 0.5, 80.0, -80.0).astype(np.float32)
    x += rng.standard_normal((rows, cols)).astype(np.float32)
    x[:, 0] = 80.0
    x[1] = np.linspace(0.0, -110.0, cols)  # from the max through the subnormal outputs
    x[2] = np.linspace(-80.0, 80.0, cols)
    x[3] = -np.inf
    x[3, -1] = -80.0  # all -inf but one
    x[4, 1:] = np.float32(-80.0)
    x[5] = np.linspace(-20.0, -130.0, cols)
    kernel = softmax("softmax_low", rows, cols, rows_per_item=rows_per_item)
    assert "in registers" in kernel.source
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    want = reference(x)
    expected = want.astype(np.float32)
    tolerance = 6e-6 * want + 2 * np.spacing(expected).astype(np.float64)
    assert (np.abs(result.astype(np.float64) - want) <= tolerance).all()
    if cols > 1:
        assert result[3, -1] == 1.0 and (result[3, :-1] == 0.0).all()
        subnormal = (want[1] >= 2.0**-149) & (want[1] < np.finfo(np.float32).tiny)
        assert subnormal.any() and (result[1][subnormal] > 0).all()
        assert (result[1][want[1] < 2.0**-150] == 0).all()
