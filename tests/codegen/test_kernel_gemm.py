"""The GEMM template against numpy, on the CPU OpenCL device, with odd shapes and every tiling.

Tolerance: rtol = atol = 1e-4 against a float64 product of the float32 inputs (K <= 70 here,
so float32 accumulation error is about 1e-6 relative).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo, Epilogue, KernelArg
from fusec.codegen.kernels.gemm import (
    CPU_TILES,
    CPU_WIDE_TILES,
    GPU_LARGE_TILES,
    GPU_TILES,
    GemmTiles,
    default_gemm_tiles,
    gemm,
)
from fusec.dtypes import bf16_bits, bf16_to_f32

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}

TILINGS = {
    "cpu-default": CPU_TILES,
    "cpu-wide": CPU_WIDE_TILES,
    "registers": GemmTiles(thread_m=3, thread_n=8, vector_width=4, group_m=2, group_n=2),
    "registers-scalar": GemmTiles(thread_m=2, thread_n=3, group_m=1, group_n=4),
    "rhs-staged": GemmTiles(thread_m=4, thread_n=16, vector_width=8, group_m=3,
                            staging="rhs", block_k=7),
    "gpu": GPU_TILES,
    "gpu-large": GPU_LARGE_TILES,
    "gpu-odd": GemmTiles(thread_m=3, thread_n=2, group_m=5, group_n=4, block_k=5,
                         staging="both"),
    "gpu-float4": GemmTiles(thread_m=8, thread_n=4, group_m=3, group_n=5, block_k=6,
                            staging="both", vector_width=4),
}

SHAPES = [  # batch, m, n, k, rhs_batched
    (1, 37, 29, 53, True),
    (3, 65, 70, 33, True),
    (3, 65, 70, 33, False),
    (1, 128, 256, 64, False),
    (2, 1, 1, 1, True),
    (2, 5, 3, 2, False),
]


def _operands(batch: int, m: int, n: int, k: int, rhs_batched: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal((batch, m, k), dtype=np.float32)
    rhs = rng.standard_normal((batch if rhs_batched else 1, k, n), dtype=np.float32)
    expected = lhs.astype(np.float64) @ rhs.astype(np.float64)
    return lhs, rhs, expected


@pytest.mark.parametrize("tiling", TILINGS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[:4])) +
                         ("" if s[4] else "-shared"))
def test_gemm_matches_numpy(launch, tiling, shape):
    batch, m, n, k, rhs_batched = shape
    lhs, rhs, expected = _operands(*shape)
    kernel = gemm("gemm_test", batch, m, n, k, rhs_batched, tiles=TILINGS[tiling])
    result = launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (batch, m, n)})["out"]
    np.testing.assert_allclose(result, expected, **TOLERANCE)


BIAS_TANH = Epilogue(
    function="""
inline float bias_tanh(float acc, int row, int col, __global const float *bias,
                       __global const float *row_scale, const float alpha) {
    return tanh(acc + bias[col]) * row_scale[row] + alpha;
}""",
    name="bias_tanh",
    params=(KernelArg("bias", "in"), KernelArg("row_scale", "in"), KernelArg("alpha", "float")),
)
"""A hand-written epilogue reading a per-column bias, a per-(flattened-)row scale and a scalar."""


@pytest.mark.parametrize("tiling", ["cpu-default", "rhs-staged", "gpu-odd", "gpu-float4"])
def test_epilogue_is_applied_per_element(launch, tiling):
    batch, m, n, k = 3, 19, 23, 17
    lhs, rhs, product = _operands(batch, m, n, k, False, seed=1)
    rng = np.random.default_rng(2)
    bias = rng.standard_normal(n, dtype=np.float32)
    row_scale = rng.standard_normal(batch * m, dtype=np.float32)
    kernel = gemm("gemm_bias_tanh", batch, m, n, k, False, BIAS_TANH, tiles=TILINGS[tiling])
    assert [arg.name for arg in kernel.args] == ["lhs", "rhs", "out", "bias", "row_scale",
                                                  "alpha"]
    result = launch(
        kernel,
        {"lhs": lhs, "rhs": rhs, "bias": bias, "row_scale": row_scale, "alpha": 0.5},
        {"out": (batch, m, n)},
    )["out"]
    expected = np.tanh(product + bias) * row_scale.reshape(batch, m, 1) + 0.5
    np.testing.assert_allclose(result, expected, **TOLERANCE)


def test_sources_concatenate_into_one_program(launch):
    """Two kernels with the same epilogue build as one program (the epilogue is guarded)."""
    first = gemm("gemm_one", 1, 4, 4, 4, True, BIAS_TANH)
    second = gemm("gemm_two", 1, 4, 4, 4, True, BIAS_TANH)
    combined = type(first)(first.name, first.source + second.source, first.args,
                           first.global_size, first.local_size)
    lhs, rhs, product = _operands(1, 4, 4, 4, True)
    ones = np.ones(4, np.float32)
    result = launch(combined, {"lhs": lhs, "rhs": rhs, "bias": ones * 0, "row_scale": ones,
                               "alpha": 0.0}, {"out": (1, 4, 4)})["out"]
    np.testing.assert_allclose(result, np.tanh(product), **TOLERANCE)


@pytest.mark.parametrize("name", ["a", "batch", "c0_1", "a2k", "out"])
def test_epilogue_parameter_names_must_not_clash(name):
    epilogue = Epilogue("inline float f(float acc, int row, int col, const int x) { return acc; }",
                        "f", (KernelArg(name, "int"),))
    with pytest.raises(ValueError, match=name):
        gemm("gemm_clash", 1, 2, 2, 2, True, epilogue)


@pytest.mark.parametrize("fields", [
    {"thread_n": 6, "vector_width": 4},
    {"staging": "rhs", "block_k": 0},
    {"staging": "both", "block_k": 8, "vector_width": 2, "thread_n": 2},
    {"staging": "rhs", "block_k": 8, "group_n": 2},
    {"block_k": 4},
])
def test_inconsistent_tiles_are_rejected(fields):
    with pytest.raises(ValueError, match="GemmTiles"):
        GemmTiles(**fields)


def test_launch_geometry_covers_the_output():
    kernel = gemm("gemm_geometry", 3, 65, 70, 33, True, tiles=GPU_TILES)
    assert kernel.local_size == (16, 16, 1)
    assert kernel.global_size == (32, 32, 3)  # ceil(70/64)*16, ceil(65/64)*16, batch
    assert "reqd_work_group_size(16, 16, 1)" in kernel.source


def test_tiles_that_do_not_fit_the_device_are_rejected():
    small = DeviceInfo(name="small", is_cpu=True, local_mem_size=1024, max_work_group_size=64)
    with pytest.raises(ValueError, match="local memory"):
        gemm("gemm_big_slice", 1, 64, 64, 512, True, tiles=CPU_TILES, device_info=small)
    narrow = DeviceInfo(name="narrow", is_cpu=False, max_work_group_size=64)
    with pytest.raises(ValueError, match="work-groups of 256"):
        gemm("gemm_big_group", 1, 64, 64, 8, True, tiles=GPU_TILES, device_info=narrow)


HALF_SHAPES = [(1, 37, 29, 53, True), (2, 17, 70, 33, False), (1, 1, 1, 1, True)]

HALF_TOLERANCE = {"f16": 1e-3, "bf16": 8e-3}
"""Relative tolerance of a 16-bit result: its rounding (half an ulp: 2^-11 for f16, 2^-8 for
bf16) plus a little float32 accumulation; the inputs are already 16-bit, so the reference is
exact on them."""


def _half_operands(dtype: str, shape: tuple[int, int, int, int, bool]):
    """Inputs as the kernel's host arrays, and the float64 product of their values."""
    lhs, rhs, _ = _operands(*shape)
    if dtype == "f16":
        lhs, rhs = lhs.astype(np.float16), rhs.astype(np.float16)
        values = lhs, rhs
    else:
        lhs, rhs = bf16_bits(lhs), bf16_bits(rhs)
        values = bf16_to_f32(lhs), bf16_to_f32(rhs)
    expected = values[0].astype(np.float64) @ values[1].astype(np.float64)
    return lhs, rhs, expected


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("tiling", ["cpu-default", "registers", "rhs-staged", "gpu-odd",
                                    "gpu-float4"])
@pytest.mark.parametrize("shape", HALF_SHAPES, ids=lambda s: "x".join(map(str, s[:4])))
def test_gemm_16_bit_loads_converts_and_rounds_the_result_once(launch, dtype, tiling, shape):
    dtype = {"fp16": "f16"}.get(dtype, dtype)  # an id that -k "bf16" does not also select
    batch, m, n, k, _ = shape
    lhs, rhs, expected = _half_operands(dtype, shape)
    kernel = gemm("gemm_half", batch, m, n, k, shape[4], tiles=TILINGS[tiling], dtype=dtype)
    out = launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (batch, m, n)})["out"]
    assert out.dtype == (np.float16 if dtype == "f16" else np.uint16)
    result = out.astype(np.float64) if dtype == "f16" else bf16_to_f32(out).astype(np.float64)
    rtol = HALF_TOLERANCE[dtype]
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * 1e-2)
    # Rounded to nearest even, once: all but the rare near-ties (where float32 accumulation
    # and the float64 reference fall on either side) equal the reference rounded to 16 bits.
    rounded = expected.astype(np.float16) if dtype == "f16" else bf16_bits(expected)
    assert np.mean(out == rounded) >= 0.97


def test_cpu_default_tiles_follow_the_native_vector_width():
    """AVX-512 (16 floats in a native vector): 6x32 tiles of float16; otherwise 6x16 of
    float8; autotuned tiles win over both."""
    wide = DeviceInfo(name="avx512", is_cpu=True, float_vector_width=16)
    narrow = DeviceInfo(name="avx2", is_cpu=True, float_vector_width=8)
    assert default_gemm_tiles(wide, 128, 512) == CPU_WIDE_TILES
    assert default_gemm_tiles(narrow, 512, 512) == CPU_TILES
    assert default_gemm_tiles(None, 512, 512) == CPU_TILES
    tuned = replace(wide, gemm_tiles=GPU_TILES)
    assert default_gemm_tiles(tuned, 512, 512) == GPU_TILES
    assert "tiles 8x32v16_g16x1_rhs256" in gemm("g", 1, 64, 64, 256, False,
                                                device_info=wide).source


def test_taller_cpu_groups_where_the_product_has_room():
    """64 or 32 rows of tiles per work-group where that still leaves 24 groups and little of a
    group past the edge; 16 otherwise (a few rows, a narrow product, a ragged tail)."""
    wide = DeviceInfo(name="avx512", is_cpu=True, float_vector_width=16)
    chosen = {(m, n): default_gemm_tiles(wide, m, n).group_m
              for m, n in [(512, 768), (1000, 768), (512, 512), (128, 3072), (600, 768),
                           (256, 64), (4096, 256)]}
    assert chosen == {(512, 768): 64, (1000, 768): 64, (512, 512): 32, (128, 3072): 16,
                      (600, 768): 16, (256, 64): 16, (4096, 256): 64}


@pytest.mark.parametrize("shape", [(1, 1000, 768, 40, False), (2, 512, 768, 33, False)],
                         ids=["ragged-rows", "batched"])
def test_taller_cpu_groups_match_numpy(launch, shape):
    """The default wide CPU tiles with 64 rows of tiles per work-group: a last group mostly
    past the edge (1000 rows), and a batch of two."""
    batch, m, n, k, rhs_batched = shape
    wide = DeviceInfo(name="avx512", is_cpu=True, float_vector_width=16)
    kernel = gemm("gemm_test", batch, m, n, k, rhs_batched, device_info=wide)
    assert "_g64x1_" in kernel.source or "_g32x1_" in kernel.source
    lhs, rhs, expected = _operands(*shape)
    result = launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (batch, m, n)})["out"]
    np.testing.assert_allclose(result, expected, **TOLERANCE)
