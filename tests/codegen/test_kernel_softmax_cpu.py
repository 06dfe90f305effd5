"""The CPU shape of the softmax template (one work-item per one or two rows, float8 vectors,
`vector_exp_function`) and the exp function itself, against float64 numpy.

Tolerances: softmax as in ``test_kernel_norm`` (rtol 1e-5, atol 1e-6); the exp function within
the bounds its docstring states (2e-7 relative for ``|x| <= 1``, 1e-6 for ``|x| <= 17``, 4e-6
on its whole range).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import KernelArg, KernelSource, vector_exp_function
from fusec.codegen.kernels.softmax import softmax

SOFTMAX_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def reference(x: np.ndarray) -> np.ndarray:
    shifted = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("rows,cols,rows_per_group,rows_per_item", [
    (6, 128, 16, 2),     # two rows per work-item, a padded work-group
    (6, 128, 1, 1),
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


def test_two_rows_per_work_item_by_default_when_rows_are_even():
    assert softmax("s", 6144, 128).global_size == (1, 3072)
    assert softmax("s", 7, 128).global_size == (1, 7)
    assert "_exp8(" in softmax("s", 6, 16).source


def test_rows_per_item_must_divide_rows():
    with pytest.raises(ValueError, match="rows_per_item 2 does not divide the 7 rows"):
        softmax("s", 7, 16, rows_per_item=2)


def test_nan_in_a_row_makes_that_row_nan(launch):
    """As numpy: the max ignores nothing here (fmax skips NaN, but exp(NaN - max) is NaN and
    so is the sum), so the whole row is NaN and the other rows are untouched."""
    x = np.random.default_rng(0).standard_normal((4, 24)).astype(np.float32)
    x[1, 9] = np.nan
    result = launch(softmax("s", 4, 24), {"x": x}, {"out": (4, 24)})["out"]
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


@pytest.mark.parametrize("width", [4, 8])
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
