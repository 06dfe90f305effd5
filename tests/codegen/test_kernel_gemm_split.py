"""GEMM split along K: `gemm` with ``split_k`` writes one partial product per part, and
`gemm_split_sum` adds them and applies the epilogue; both against numpy on the test device, with
every tiling (the GPU's local-memory tiles run on the CPU device too).

Tolerance: rtol = atol = 1e-4 against a float64 product (K <= 300 here).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import IDENTITY_EPILOGUE, Epilogue, KernelArg
from fusec.codegen.kernels.gemm import (
    CPU_TILES,
    CPU_WIDE_TILES,
    GPU_TILES,
    GemmTiles,
    gemm,
    gemm_split_sum,
)

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}

TILINGS = {
    "cpu-default": CPU_TILES,
    "cpu-wide": CPU_WIDE_TILES,
    "registers-scalar": GemmTiles(thread_m=2, thread_n=3, group_m=1, group_n=4),
    "rhs-staged": GemmTiles(thread_m=4, thread_n=16, vector_width=8, group_m=3,
                            staging="rhs", block_k=7),
    "gpu": GPU_TILES,
    "gpu-odd": GemmTiles(thread_m=3, thread_n=2, group_m=5, group_n=4, block_k=5,
                         staging="both"),
    "gpu-float4": GemmTiles(thread_m=8, thread_n=4, group_m=3, group_n=5, block_k=6,
                            staging="both", vector_width=4),
}

BIAS_TANH = Epilogue(
    function="""
inline float split_bias_tanh(float acc, int row, int col, __global const float *bias,
                             __global const float *row_scale, const float alpha) {
    return tanh(acc + bias[col]) * row_scale[row] + alpha;
}""",
    name="split_bias_tanh",
    params=(KernelArg("bias", "in"), KernelArg("row_scale", "in"), KernelArg("alpha", "float")),
)


def _operands(batch: int, m: int, n: int, k: int, rhs_batched: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal((batch, m, k), dtype=np.float32)
    rhs = rng.standard_normal((batch if rhs_batched else 1, k, n), dtype=np.float32)
    return lhs, rhs, lhs.astype(np.float64) @ rhs.astype(np.float64)

SPLIT_SHAPES = [  # batch, m, n, k, rhs_batched, split_k
    (1, 37, 29, 53, True, 3),     # K not a multiple of the parts: the last part is shorter
    (3, 65, 70, 96, False, 4),    # equal parts, a shared right-hand side
    (2, 5, 3, 300, True, 7),
    (1, 1, 1, 9, False, 4),       # parts of 3: the fourth part is empty and adds zeros
    (1, 16, 8, 5, True, 5),       # parts of one column of A
]


def _ids(shape: tuple) -> str:
    batch, m, n, k, rhs_batched, split = shape
    return f"{batch}x{m}x{n}x{k}{'' if rhs_batched else '-shared'}-split{split}"


@pytest.mark.parametrize("tiling", TILINGS)
@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=_ids)
def test_partial_products(launch, tiling, shape):
    batch, m, n, k, rhs_batched, split = shape
    lhs, rhs, _ = _operands(batch, m, n, k, rhs_batched)
    kernel = gemm("gemm_part", batch, m, n, k, rhs_batched, tiles=TILINGS[tiling],
                  split_k=split)
    assert kernel.global_size[2] == batch * split
    result = launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (split, batch, m, n)})["out"]
    chunk = -(-k // split)
    for part in range(split):
        columns = slice(part * chunk, (part + 1) * chunk)
        expected = lhs[:, :, columns].astype(np.float64) @ rhs[:, columns, :].astype(np.float64)
        np.testing.assert_allclose(result[part], expected, **TOLERANCE,
                                   err_msg=f"part {part}")


@pytest.mark.parametrize("tiling", ["cpu-default", "gpu-float4"])
def test_split_then_sum_with_epilogue_equals_one_gemm(launch, tiling):
    batch, m, n, k, split = 3, 19, 23, 170, 4
    lhs, rhs, expected = _operands(batch, m, n, k, True, seed=1)
    rng = np.random.default_rng(2)
    bias = rng.standard_normal(n, dtype=np.float32)
    row_scale = rng.standard_normal(batch * m, dtype=np.float32)
    alpha = 0.25
    parts = launch(gemm("gemm_part", batch, m, n, k, True, tiles=TILINGS[tiling], split_k=split),
                   {"lhs": lhs, "rhs": rhs}, {"out": (split, batch, m, n)})["out"]
    kernel = gemm_split_sum("gemm_sum", batch, m, n, split, BIAS_TANH)
    assert [a.name for a in kernel.args] == ["partials", "out", "bias", "row_scale", "alpha"]
    result = launch(kernel, {"partials": parts, "bias": bias, "row_scale": row_scale,
                             "alpha": alpha}, {"out": (batch, m, n)})["out"]
    flat_rows = np.arange(batch * m).reshape(batch, m, 1)
    want = np.tanh(expected + bias) * row_scale[flat_rows] + alpha
    np.testing.assert_allclose(result, want, **TOLERANCE)


def test_split_sum_without_epilogue(launch):
    parts = np.random.default_rng(3).standard_normal((5, 2, 7, 9), dtype=np.float32)
    kernel = gemm_split_sum("gemm_sum", 2, 7, 9, 5)
    result = launch(kernel, {"partials": parts}, {"out": (2, 7, 9)})["out"]
    np.testing.assert_allclose(result, parts.astype(np.float64).sum(axis=0), rtol=1e-6,
                               atol=1e-6)


def test_a_split_gemm_has_no_epilogue():
    relu = Epilogue("inline float relu_e(float acc, int row, int col) { return fmax(acc, 0.0f); }",
                    "relu_e")
    with pytest.raises(ValueError, match="its epilogue belongs to gemm_split_sum"):
        gemm("g", 1, 8, 8, 64, False, relu, split_k=2)
    assert gemm("g", 1, 8, 8, 64, False, IDENTITY_EPILOGUE, split_k=2).global_size[2] == 2


def test_split_sum_epilogue_names_must_not_clash():
    clash = Epilogue("inline float e_acc(float acc, int row, int col, "
                     "__global const float *acc2) { return acc; }", "e_acc",
                     (KernelArg("partials", "in"),))
    with pytest.raises(ValueError, match="partials"):
        gemm_split_sum("s", 1, 2, 2, 2, clash)
