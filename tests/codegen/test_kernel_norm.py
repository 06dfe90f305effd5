"""LayerNorm / RMSNorm and softmax templates against numpy (float64) on the CPU OpenCL device.

Rows are odd lengths (129, 130), a typical one (768), and rows forced onto the streamed
(Welford / online) paths by small or non-power-of-two work-groups. Inputs carry an offset of
20, so that a one-pass sum-of-squares variance would lose digits. Tolerances: rtol = atol = 1e-5
for the norms and 1e-6 (atol) for softmax probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo, RowSlots
from fusec.codegen.kernels.norm import layer_norm
from fusec.codegen.kernels.softmax import softmax

NORM_TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}
SOFTMAX_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}

NORM_SHAPES = [  # rows, cols, local_size (None: the default)
    (7, 129, None),
    (5, 768, None),
    (3, 255, None),  # one short of a whole number of work-group strides
    (3, 300, 4),     # 75 elements per work-item: streamed
    (3, 200, 24),    # not a power of two
    (4, 1, None),
    (2, 3, 8),       # more work-items than elements
    (100, 64, None),  # CPU default: 12 rows per work-group, the last one padded
    (300, 40, None),  # CPU default: 32 rows per work-group, the last one padded
]


def norm_reference(x, residual, gamma, beta, eps, rms):
    v = x.astype(np.float64) + (0.0 if residual is None else residual)
    if rms:
        y = v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + eps)
    else:
        centred = v - v.mean(axis=-1, keepdims=True)
        y = centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    y = y * gamma
    return y if beta is None else y + beta


@pytest.mark.parametrize("row_size", [1, 16])
@pytest.mark.parametrize("rows_per_group", [1, 3])
def test_rows_per_group_with_padding_rows(launch, rows_per_group, row_size):
    rows, cols = 7, 129
    rng = np.random.default_rng(4)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    gamma = rng.standard_normal(cols, dtype=np.float32)
    kernel = layer_norm("norm_rows", rows, cols, 1e-5, rms=True, has_beta=False,
                        local_size=row_size, rows_per_group=rows_per_group)
    assert kernel.local_size == (row_size, rows_per_group)
    result = launch(kernel, {"x": x, "gamma": gamma}, {"out": (rows, cols)})["out"]
    np.testing.assert_allclose(result, norm_reference(x, None, gamma, None, 1e-5, rms=True),
                               **NORM_TOLERANCE)
    kernel = softmax("softmax_rows", rows, cols, local_size=row_size,
                     rows_per_group=rows_per_group)
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    shifted = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(result, shifted / shifted.sum(axis=-1, keepdims=True),
                               **SOFTMAX_TOLERANCE)


@pytest.mark.parametrize("rms", [False, True], ids=["layer", "rms"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("has_beta", [True, False], ids=["beta", "no-beta"])
@pytest.mark.parametrize("shape", NORM_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}-ls{s[2]}")
def test_norm_matches_numpy(launch, shape, residual, rms, has_beta):
    rows, cols, local_size = shape
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((rows, cols)) + 20).astype(np.float32)
    res = rng.standard_normal((rows, cols), dtype=np.float32) if residual else None
    gamma = rng.standard_normal(cols, dtype=np.float32)
    beta = rng.standard_normal(cols, dtype=np.float32) if has_beta else None
    eps = 1e-5
    kernel = layer_norm("norm_test", rows, cols, eps, residual=residual, rms=rms,
                        has_beta=has_beta, local_size=local_size)
    inputs = {"x": x, "gamma": gamma}
    if residual:
        inputs["residual"] = res
    if has_beta:
        inputs["beta"] = beta
    result = launch(kernel, inputs, {"out": (rows, cols)})["out"]
    expected = norm_reference(x, res, gamma, beta, eps, rms)
    np.testing.assert_allclose(result, expected, **NORM_TOLERANCE)


def test_norm_parameters_and_geometry():
    kernel = layer_norm("norm_geometry", 5, 768, 1e-6, residual=True, rms=True, has_beta=False)
    assert [(arg.name, arg.kind) for arg in kernel.args] == [
        ("x", "in"), ("residual", "in"), ("gamma", "in"), ("out", "out")]
    assert kernel.local_size == (1, 1)  # on a CPU one work-item reads a row as vectors
    assert kernel.global_size == (1, 5)
    assert "1e-06f" in kernel.source


def test_cpu_norm_rows_share_work_groups_and_still_spread_over_cores():
    """On a CPU up to 32 rows share a work-group, but there are at least 8 work-groups."""
    assert layer_norm("n", 512, 768, 1e-5).local_size == (1, 32)
    assert layer_norm("n", 512, 768, 1e-5).global_size == (1, 512)
    assert layer_norm("n", 100, 64, 1e-5).local_size == (1, 12)
    assert layer_norm("n", 100, 64, 1e-5).global_size == (1, 108)
    assert layer_norm("n", 7, 64, 1e-5).local_size == (1, 1)
    assert layer_norm("n", 64, 768, 1e-5, local_size=16).local_size == (16, 1)


def test_gpu_defaults_run_on_the_cpu_device(launch):
    """The GPU's layout (64 work-items a 768-wide row, 4 rows a work-group: 5 rows leave 3
    padding rows in the second) gives the same numbers."""
    gpu = DeviceInfo(name="a GPU", is_cpu=False, max_work_group_size=1024)
    rows, cols = 5, 768
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((rows, cols)) + 20).astype(np.float32)
    gamma = rng.standard_normal(cols, dtype=np.float32)
    beta = rng.standard_normal(cols, dtype=np.float32)
    kernel = layer_norm("norm_gpu", rows, cols, 1e-5, device_info=gpu)
    assert kernel.local_size == (64, 4)
    result = launch(kernel, {"x": x, "gamma": gamma, "beta": beta}, {"out": (rows, cols)})["out"]
    expected = norm_reference(x, None, gamma, beta, 1e-5, rms=False)
    np.testing.assert_allclose(result, expected, **NORM_TOLERANCE)
    kernel = softmax("softmax_gpu", rows, cols, device_info=gpu)
    assert kernel.local_size == (256, 1)
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    shifted = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(result, shifted / shifted.sum(axis=-1, keepdims=True),
                               **SOFTMAX_TOLERANCE)


def test_row_slots_guard_only_the_ragged_slot():
    slots = RowSlots(cols=129, local_size=64)
    assert slots.count == 3
    assert [slots.guard(s) for s in range(3)] == ["1", "1", "lid + 128 < 129"]


SOFTMAX_SHAPES = [(9, 130, None), (9, 530, 8), (3, 1, None), (4, 77, 5), (3, 63, 16)]


@pytest.mark.parametrize("shape", SOFTMAX_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}-ls{s[2]}")
def test_softmax_matches_numpy(launch, shape):
    rows, cols, local_size = shape
    rng = np.random.default_rng(rows * cols)
    x = (rng.standard_normal((rows, cols)) * 10 + 50).astype(np.float32)
    x[0, -1] = 150.0  # one dominant logit: exp would overflow without the max shift
    kernel = softmax("softmax_test", rows, cols, local_size=local_size)
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    shifted = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    expected = shifted / shifted.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(result, expected, **SOFTMAX_TOLERANCE)


def test_short_row_counts_spread_over_the_units(set_knobs):
    """On a GPU a work-group holds 256 work-items' worth of rows, fewer (the knob
    `row_groups_fill_units`, on) where the rows would then make fewer work-groups than the
    device has units: a batch-1 model's 128 rows of 768 on the H200's 132 units run as 128
    work-groups, 4096 rows as before."""
    h200 = DeviceInfo("H200", is_cpu=False, max_work_group_size=1024, compute_units=132)
    unknown_units = DeviceInfo("GPU", is_cpu=False, max_work_group_size=1024)
    assert layer_norm("ln", 128, 768, 1e-5, device_info=h200, dtype="f16").local_size == (64, 1)
    assert layer_norm("ln", 600, 768, 1e-5, device_info=h200).local_size == (64, 4)
    assert layer_norm("ln", 300, 768, 1e-5, device_info=h200).local_size == (64, 2)
    assert softmax("sm", 128, 128, device_info=h200).local_size[1] == 1
    assert layer_norm("ln", 128, 768, 1e-5, device_info=unknown_units).local_size == (64, 4)
    set_knobs(row_groups_fill_units=False)
    assert layer_norm("ln", 128, 768, 1e-5, device_info=h200).local_size == (64, 4)


@pytest.mark.parametrize("rows_per_group", [1, 4])
def test_one_row_a_group_matches_numpy(launch, rows_per_group):
    """The two layouts the knob chooses between (a GPU's 64 work-items a row) agree with
    numpy on the CPU device, with a residual in f16."""
    rng = np.random.default_rng(3)
    x, residual = (rng.standard_normal((6, 768)).astype(np.float16) for _ in range(2))
    gamma, beta = (rng.standard_normal(768).astype(np.float16) for _ in range(2))
    kernel = layer_norm("ln", 6, 768, 1e-5, residual=True, local_size=64,
                        rows_per_group=rows_per_group, dtype="f16")
    out = launch(kernel, {"x": x, "residual": residual, "gamma": gamma, "beta": beta},
                 {"out": (6, 768)})["out"]
    summed = (x + residual).astype(np.float64)
    expected = norm_reference(summed, None, gamma.astype(np.float64), beta.astype(np.float64),
                               1e-5, False)
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=1e-2, atol=1e-2)
