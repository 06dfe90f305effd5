"""The Hopper wgmma GEMM (`gemm_wgmma`) and the transpose before it, against numpy.

On the CPU (CI) the GEMM runs `emulated`: ``cp.async`` a plain copy, each ``wgmma`` step a
loop reading the operands through their descriptors with the 128-byte swizzle as the tensor
cores read them, so the copies, the swizzled layout, the descriptors, the stage rotation, the
block order and the staged stores of C (f16, bf16, float32) are checked here. With
``FUSEC_TEST_MMA=ptx`` on an sm_90 GPU (``FUSEC_TEST_DEVICE=gpu``) the same tests run the real
instructions, their PTX patched by `fusec.codegen.ptx_patch` in the program build.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from fusec import knobs
from fusec.codegen.kernels.common import IDENTITY_EPILOGUE, DeviceInfo, Epilogue, KernelArg
from fusec.codegen.kernels.gemm_wgmma import (
    block_cost,
    block_m_for,
    block_n_for,
    emulated,
    fits,
    gemm_plan,
    gemm_wgmma,
    parts_for,
    persistent_groups_for,
    transpose,
    resident_blocks,
    stages_for,
    why_not,
)
from fusec.dtypes import bf16_bits, bf16_to_f32
from fusec.runtime.plan_codec import decode_plan, encode_plan
from tests.codegen.test_kernel_gemm_mma import MMA

SHAPES = [(128, 256, 64), (256, 512, 256), (1152, 256, 128)]  # 9 block rows: a short group
GPU_SHAPES = [(4096, 4096, 4096), (1024, 4096, 4096)] if MMA == "ptx" else []
TOLERANCE = {"f16": 2e-3, "bf16": 1e-2, "f32": 2e-3}


def operands(dtype, m, n, k, seed=0):
    """(A, B as [N, K], their float32 values): B given K-major, as the kernel reads it."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b_t = rng.uniform(-1, 1, (n, k)).astype(np.float32)
    if dtype == "f16":
        a, b_t = a.astype(np.float16), b_t.astype(np.float16)
        return a, b_t, a.astype(np.float32), b_t.astype(np.float32)
    if dtype == "bf16":
        a16, b16 = bf16_bits(a), bf16_bits(b_t)
        return a16, b16, bf16_to_f32(a16), bf16_to_f32(b16)
    return a, b_t, a, b_t


def as_float(out, dtype):
    return bf16_to_f32(out) if dtype == "bf16" else out.astype(np.float32)


@pytest.mark.parametrize(("dtype", "b_rows"), [("f16", False), ("bf16", False), ("f32", False),
                                               ("f16", True), ("bf16", True)],
                         ids=["f16", "bf16", "tf32", "f16-b-rows", "bf16-b-rows"])
@pytest.mark.parametrize("shape", SHAPES[:2] + GPU_SHAPES,
                         ids=lambda s: "x".join(map(str, s)))
def test_wgmma_gemm_matches_numpy(launch, dtype, b_rows, shape):
    m, n, k = shape
    a, b_t, a32, b32 = operands(dtype, m, n, k)
    kernel = gemm_wgmma("gemm_wg", m, n, k, dtype, b_rows=b_rows)
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    out = launch(kernel, {"lhs": a, **b_in}, {"out": (m, n)})["out"]
    assert out.dtype == {"f16": np.float16, "bf16": np.uint16, "f32": np.float32}[dtype]
    rows = np.unique(np.r_[0:128, m - 128:m, 0:m:7])
    want = a32[rows] @ b32.T
    error = float(np.abs(as_float(out[rows], dtype) - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize(("dtype", "b_rows"), [("f16", False), ("bf16", False), ("f32", False),
                                               ("bf16", True)],
                         ids=["f16", "bf16", "tf32", "bf16-b-rows"])
@pytest.mark.parametrize("shape", [(128, 384, 64), (1152, 128, 128)],
                         ids=lambda s: "x".join(map(str, s)))
def test_narrow_blocks_match_numpy(launch, dtype, b_rows, shape):
    """128 x 128 blocks (`BLOCK_NS`): 3 block columns of a product that 256-wide blocks do
    not tile; 9 block rows, a short group, one block column."""
    m, n, k = shape
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=3)
    kernel = gemm_wgmma("gemm_nb", m, n, k, dtype, b_rows=b_rows, block_n=128)
    assert "m64n128k" in kernel.source and kernel.global_size == (m // 128 * n // 128 * 256,)
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    out = launch(kernel, {"lhs": a, **b_in}, {"out": (m, n)})["out"]
    want = a32 @ b32.T
    error = float(np.abs(as_float(out, dtype) - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize(("dtype", "b_rows", "block_m", "extra"),
                         [("f16", False, 128, ""), ("bf16", True, 128, ""),
                          ("f32", False, 128, ""), ("f16", False, 64, ""),
                          ("f16", False, 128, "epilogue"), ("bf16", False, 128, "f32-out"),
                          ("f16", False, 128, "parts")],
                         ids=["f16", "bf16-b-rows", "tf32", "f16-64-rows", "f16-epilogue",
                              "bf16-f32-out", "f16-parts"])
@pytest.mark.parametrize("width", [192, 64])
def test_192_and_64_wide_blocks_match_numpy(launch, dtype, b_rows, block_m, extra, width):
    """128 x 192 blocks (the knob `wgmma_192_blocks`): ``m64n192`` accumulators (96 a thread),
    B's tile 192 rows (K-major) or 3 blocks of 64 columns (MN-major), C staged in rows of 24
    (or 48, float32 C) 16-byte chunks that 128 threads copy out in passes across rows; 9 block
    rows (a short group) by 2 block columns; with an epilogue, a float32 C and K summed in the
    kernel from parts. The same in 64-wide blocks (the knob `wgmma_64_blocks`: 32 accumulators a
    thread, B's tile one block of 64 columns, C staged in rows of 8 or 16 chunks), 6 block
    columns."""
    m, n, k = 1152, 384, 128
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=21)
    bias = np.random.default_rng(22).standard_normal(n).astype(np.float32)
    kernel = gemm_wgmma(f"gemm_{width}", m, n, k, dtype, b_rows=b_rows, block_n=width,
                        block_m=block_m, epilogue=BIAS if extra == "epilogue" else
                        IDENTITY_EPILOGUE, out_dtype="f32" if extra == "f32-out" else None,
                        parts=2 if extra == "parts" else 1)
    parts = 2 if extra == "parts" else 1
    assert f"m64n{width}k" in kernel.source and f"{block_m}x{width} blocks" in kernel.source
    assert kernel.global_size == (m // block_m * (n // width) * parts * 2 * block_m,)
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    inputs = {"lhs": a, **b_in, **({"bias": bias} if extra == "epilogue" else {})}
    out = launch(kernel, inputs, {"out": (m, n)})["out"]
    got = out if extra == "f32-out" else as_float(out, dtype)
    want = a32 @ b32.T + (bias if extra == "epilogue" else 0)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


BLOCKS_MEASURED = {  # (rows, N, K): ms in 256-, 192-, 128- and 64-wide blocks, H200, f16
    (2048, 2304, 768): (0.0311, 0.0233, 0.0231, 0.0227),
    (2048, 768, 768): (0.0193, 0.0162, 0.0138, 0.0127),
    (2048, 3072, 768): (0.0312, 0.0237, 0.0246, 0.0260),
    (2048, 768, 3072): (0.0495, 0.0417, 0.0306, 0.0284),
    (4096, 768, 768): (0.0176, 0.0133, 0.0169, None), (4096, 3072, 768): (0.0443, 0.0391, 0.0417, None),
    (4096, 768, 3072): (0.0472, 0.0329, 0.0450, None), (4096, 2560, 2048): (0.0953, None, 0.0791, None),
    (4096, 2048, 2048): (0.0540, None, 0.0620, None), (4096, 2048, 5632): (0.1302, None, 0.1686, None),
}
"""The whole models' products of several block rows: GPT-2 small's at batch 16 from
bench/results/h200-2026-12-04-s25-resident_sweep.log (every width), BERT-base's and the
Llama-style model's at 32 from bench/results/h200-2026-12-03-s22-blocks-f16.log (64 not
timed: four waves of 64-wide blocks or more, which the rule does not weigh as one)."""


@pytest.mark.parametrize("shape", list(BLOCKS_MEASURED), ids=lambda s: "x".join(map(str, s)))
def test_block_widths_are_the_fastest_measured(shape):
    """`block_n_for` (the knobs `wgmma_192_blocks`, `wgmma_64_blocks` and
    `wgmma_resident_waves` on, their defaults) picks, for each whole-model product, a width
    within 3% of the fastest on the H200 (GPT-2's 2048 x 2304: 192 at 0.0233 ms, 64 took
    0.0227; the others the fastest)."""
    times = dict(zip((256, 192, 128, 64), BLOCKS_MEASURED[shape], strict=True))
    fastest = min(t for t in times.values() if t is not None)
    picked = block_n_for(shape[0], shape[1], 132)
    assert times[picked] is not None and times[picked] <= 1.03 * fastest, (picked, times)


BATCH_1_MEASURED = {  # (rows, N, K, split parts): ms in 128-, 64-wide blocks, H200, f16, session 24
    (128, 2304, 768, 1): (0.0104, 0.0096), (128, 768, 768, 1): (0.0101, 0.0085),
    (128, 3072, 768, 1): (0.0103, 0.0089), (128, 768, 3072, 6): (0.0177, 0.0162),
    (512, 768, 768, 1): (0.0099, 0.0093),
}
"""bench/results/h200-2026-12-04-s24-blocks64_sweep.log (OpenCL's kernel times, each with
about 5.5 us of a kernel that does nothing): GPT-2 small's products at batch 1 and BERT-base's
512-row one of K 768, which one wave of 64-wide blocks holds (768 x 3072 split in 6 parts,
as `whole_tile_split` splits it: a sixth of the units each)."""


@pytest.mark.parametrize("shape", list(BATCH_1_MEASURED), ids=lambda s: "x".join(map(str, s)))
def test_batch_1_products_take_64_wide_blocks_where_they_were_faster(shape):
    """`block_n_for` (the knob `wgmma_64_blocks` on, its default) picks 64-wide blocks for
    the batch-1 products where they were faster on the H200 (GPT-2 small at batch 1: 0.436 ms
    a call against 0.541 in 128, the two in the same turns), and 128 with the knob off."""
    rows, n, _, parts = shape
    times = dict(zip((128, 64), BATCH_1_MEASURED[shape], strict=True))
    assert block_n_for(rows, n, 132 // parts) == min(times, key=times.__getitem__) == 64
    with knobs.overridden(wgmma_64_blocks=False):
        assert block_n_for(rows, n, 132 // parts) == 128


def test_192_wide_blocks_are_taken_with_the_knob_where_they_fill_the_waves():
    """`block_n_for` at BERT-base's 4096 rows on 132 units: its 768-column products one wave of
    128 blocks of 192 (97% full, where 96 of 256 fill 73%), its 2304- and 3072-column ones 3 and
    4 waves of 192 (`BLOCK_COSTS`); without the knob 256 or 128; N not a multiple of 192 (the
    Llama-style model's 2048 and 2560) alike either way."""
    widths = (768, 2304, 3072, 2048, 2560)
    picks = {n: block_n_for(4096, n, 132) for n in widths}
    assert picks == {768: 192, 2304: 192, 3072: 192, 2048: 256, 2560: 128}
    assert block_n_for(2048, 768, 132) == 64  # GPT-2 at batch 16: 192 blocks, two a unit
    with knobs.overridden(wgmma_resident_waves=False):
        assert block_n_for(2048, 768, 132) == 128  # 96 blocks of 128 on 132 units
    h200 = replace(NVIDIA_H, compute_units=132)
    plan = gemm_plan("g", 32, 128, 768, 768, False, IDENTITY_EPILOGUE, h200, "f16", False,
                     "f16", 1, b_transposed=True)
    assert plan is not None and "128x192 blocks" in plan[1].source
    assert plan[1].global_size == (32 * 4 * 256,)
    with knobs.overridden(wgmma_192_blocks=False):
        picks = {n: block_n_for(4096, n, 132) for n in widths}
        assert picks == {768: 256, 2304: 128, 3072: 256, 2048: 256, 2560: 128}
    assert block_cost(256) == 1.0 and block_cost(192) < 1.0 < block_cost(128)


@pytest.mark.parametrize(("dtype", "b_rows", "block_n"),
                         [("f16", False, 128), ("bf16", False, 256), ("f32", False, 128),
                          ("f16", True, 256), ("bf16", True, 128)],
                         ids=["f16", "bf16-256", "tf32", "f16-b-rows-256", "bf16-b-rows"])
@pytest.mark.parametrize("split_k", [1, 2])
def test_short_blocks_match_numpy(launch, dtype, b_rows, block_n, split_k):
    """64-row blocks (`BLOCK_MS`: one warpgroup, 128 threads): 10 block rows (a group of 8 and
    a short one) by 2 block columns, whole and with K in 2 parts (float32 partial products)."""
    m, n, k = 640, 2 * block_n, 256
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=5)
    out_dtype = "f32" if split_k > 1 else None
    kernel = gemm_wgmma("gemm_sb", m, n, k, dtype, b_rows=b_rows, block_n=block_n,
                        block_m=64, split_k=split_k, out_dtype=out_dtype)
    assert kernel.global_size == (10 * 2 * split_k * 128,) and kernel.local_size == (128,)
    assert f"64x{block_n} blocks" in kernel.source
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    shape = (split_k, m, n) if split_k > 1 else (m, n)
    out = launch(kernel, {"lhs": a, **b_in}, {"out": shape})["out"]
    got = out.sum(axis=0) if split_k > 1 else as_float(out, dtype)
    want = a32 @ b32.T
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


def test_short_blocks_apply_the_swiglu_epilogue_with_b_in_halves(launch):
    """A 64-row block with the SwiGLU epilogue, B stored in halves (gate second): ``up *
    silu(gate)`` of each pair."""
    m, n, k = 128, 512, 128
    a, b_t, a32, b32 = operands("f16", m, n, k, seed=13)
    kernel = gemm_wgmma("gemm_sh", m, n, k, "f16", swiglu=True, block_n=256, halves="second",
                        block_m=64)
    if MMA != "ptx":
        kernel = emulated(kernel)
    out = launch(kernel, {"lhs": a, "rhs_t": b_t}, {"out": (m, n // 2)})["out"]
    c = a32.astype(np.float64) @ b32.T.astype(np.float64)
    gate, up = c[:, n // 2:], c[:, :n // 2]
    want = up * gate / (1 + np.exp(-gate))
    error = float(np.abs(as_float(out, "f16") - want).max() / np.abs(want).max())
    assert error <= TOLERANCE["f16"], f"max error {error:.3g} of max |out|"


def test_the_block_width_is_the_one_whose_waves_finish_first():
    """At the H200's 132 units: GPT-2's 768-column products at 2048 rows are 48 blocks of 256
    (one third of a wave) and take 128; BERT's at 4096 rows, 96 blocks of 256, take 192 (one
    wave of 128); a product 256-wide blocks do not tile takes 128, or 64 where one wave of
    64-wide blocks holds it (the knob `wgmma_64_blocks`); an unknown device keeps the
    widest. (Without `wgmma_resident_waves`: with it GPT-2's are 64 wide, its own test.)"""
    with knobs.overridden(wgmma_resident_waves=False):
        assert block_n_for(2048, 768, 132) == 128
    assert block_n_for(4096, 768, 132) == 192
    assert block_n_for(4096, 4096, 132) == 256
    assert block_n_for(128, 384, 132) == 64 and block_n_for(128, 384, None) == 192
    with knobs.overridden(wgmma_64_blocks=False):
        assert block_n_for(128, 384, 132) == 128
    assert block_n_for(2048, 768, None) == 256
    with pytest.raises(ValueError, match="not whole blocks"):
        block_n_for(128, 200, 132)
    with pytest.raises(ValueError, match="blocks of 32 columns"):
        gemm_wgmma("g", 128, 256, 64, "f16", block_n=32)
    h200 = replace(NVIDIA_H, compute_units=132)
    plan = gemm_plan("g", 16, 128, 768, 3072, False, IDENTITY_EPILOGUE, h200, "f16", False,
                     "f16", 1, b_transposed=True)
    assert plan is not None and "m64n64k16" in plan[1].source  # 192 blocks, two a unit
    assert plan[1].global_size == (16 * 12 * 256,)
    with knobs.overridden(wgmma_resident_waves=False):
        plan = gemm_plan("g", 16, 128, 768, 3072, False, IDENTITY_EPILOGUE, h200, "f16",
                         False, "f16", 1, b_transposed=True)
    assert plan is not None and "m64n128k16" in plan[1].source
    assert plan[1].global_size == (16 * 6 * 256,)
    plan = gemm_plan("g", 16, 128, 768, 3072, False, IDENTITY_EPILOGUE, NVIDIA_H, "f16", False,
                     "f16", 1, b_transposed=True)
    assert plan is not None and "m64n256k16" in plan[1].source


def test_with_narrow_blocks_off_every_product_runs_in_blocks_of_256(set_knobs):
    set_knobs(wgmma_narrow_blocks=False)
    assert block_n_for(2048, 768, 132) == 256
    assert not fits("f16", 1, 128, 384, 64)
    assert "128x256x64 tiles" in why_not(NVIDIA_H, 1, 128, 384, 64, False, IDENTITY_EPILOGUE,
                                         "f16", False, "f16", 1)


RESIDUAL_GELU = Epilogue(
    """inline float res_gelu(float acc, int row, int col, __global const float *restrict bias,
                          __global const half *restrict res) {
    const float x = acc + bias[col];
    return 0.5f * x * (1.0f + erf(x * 0.70710678f)) + vload_half(row * RES_N + col, res);
}""", "res_gelu", (KernelArg("bias", "in", "float"), KernelArg("res", "in", "half")))


def residual_gelu(n):
    return replace(RESIDUAL_GELU, function=RESIDUAL_GELU.function.replace("RES_N", str(n)))


@pytest.mark.parametrize("block_n", [256, 128])
@pytest.mark.parametrize(("dtype", "b_rows"), [("f16", False), ("bf16", True), ("f32", False)],
                         ids=["f16", "bf16-b-rows", "tf32"])
def test_wgmma_gemm_applies_the_epilogue_at_each_element_of_c(launch, dtype, b_rows, block_n):
    """bias[col] + GELU + res[row, col] on the float32 accumulators, then C rounded once: a
    row or column off anywhere in the 128 x 256 blocks (both warpgroups, both halves of each
    accumulator pair, 3 block columns) changes the result."""
    m, n, k = 256, 768, 64
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=5)
    rng = np.random.default_rng(6)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    res = rng.uniform(-4, 4, (m, n)).astype(np.float16)
    kernel = gemm_wgmma("gemm_ep", m, n, k, dtype, b_rows=b_rows, epilogue=residual_gelu(n),
                        block_n=block_n)
    assert [arg.name for arg in kernel.args] == ["lhs", "rhs" if b_rows else "rhs_t", "out",
                                                 "bias", "res"]
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    out = launch(kernel, {"lhs": a, **b_in, "bias": bias, "res": res}, {"out": (m, n)})["out"]
    x = a32 @ b32.T + bias
    want = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))) + res.astype(np.float32)
    error = float(np.abs(as_float(out, dtype) - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


def test_wgmma_gemm_refuses_epilogue_parameters_named_like_its_locals(layer_gemms):
    for clash in ("bm", "d17", "out"):
        epilogue = Epilogue(f"inline float e(float acc, int row, int col, "
                            f"__global const float *{clash}) {{ return acc; }}", "e",
                            (KernelArg(clash, "in", "float"),))
        with pytest.raises(ValueError, match=clash):
            gemm_wgmma("g", 128, 256, 64, "f16", epilogue=epilogue)
        assert "named like" in why_not(NVIDIA_H, 1, 128, 256, 64, False, epilogue, "f16",
                                       False, "f16", 1)


def test_wgmma_gemm_visits_short_block_groups(launch):
    m, n, k = SHAPES[2]
    a, b_t, a32, b32 = operands("f16", m, n, k, seed=3)
    kernel = gemm_wgmma("gemm_wg", m, n, k, "f16", b_rows=True)
    out = launch(kernel if MMA == "ptx" else emulated(kernel),
                 {"lhs": a, "rhs": np.ascontiguousarray(b_t.T)}, {"out": (m, n)})["out"]
    want = a32 @ b32.T
    assert float(np.abs(out.astype(np.float32) - want).max() / np.abs(want).max()) <= 2e-3


@pytest.mark.parametrize(("rows", "cols", "dtype"),
                         [(64, 256, "f16"), (32, 64, "f32"), (96, 192, "bf16"), (4096, 512, "f32")])
def test_transpose(launch, rows, cols, dtype):
    host = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32}[dtype]
    src = np.random.default_rng(1).integers(0, 60000, (rows, cols)).astype(host)
    out = launch(transpose("t", rows, cols, dtype), {"src": src}, {"dst": (cols, rows)})["dst"]
    assert np.array_equal(out.view(np.uint16 if dtype != "f32" else np.uint32),
                          src.T.view(np.uint16 if dtype != "f32" else np.uint32))


def test_source_carries_the_hopper_instructions_as_comments_with_operands():
    src = gemm_wgmma("g", 128, 256, 64, "f16").source
    assert re.search(r'"// FUSEC_WGMMA_STEP m64n256k16\.f32\.f16\.f16 4 2 2 0 1 %0, %1" :: '
                     r'"l"\(da\), "l"\(db\)', src)
    rows = gemm_wgmma("g", 128, 256, 64, "bf16", b_rows=True).source
    assert "FUSEC_WGMMA_STEP m64n256k16.f32.bf16.bf16 4 2 128 1 1 %0, %1" in rows
    assert "// FUSEC_WGMMA_INIT 128" in src and "// FUSEC_WGMMA_DONE 128 %0, " in src
    assert "FUSEC_FENCE_PROXY_ASYNC" in src and "((c ^ (r & 7)) << 4)" in src
    assert "m64n256k8.f32.tf32.tf32 4 2 2 0 1" in gemm_wgmma("g", 128, 256, 32, "f32").source
    with pytest.raises(ValueError, match="only K-major"):
        gemm_wgmma("g", 128, 256, 32, "f32", b_rows=True)
    with pytest.raises(ValueError, match="not whole 128x256x64"):
        gemm_wgmma("g", 128, 256, 96, "bf16")


NVIDIA_H = DeviceInfo("H100", is_cpu=False, local_mem_size=49152, max_work_group_size=1024,
                      tensor_cores=("f16", "bf16", "tf32"), wgmma=True)


@pytest.fixture
def layer_gemms(set_knobs):
    """The knob `wgmma_layer_gemms` on: epilogues, batches of rows and bound B take wgmma."""
    set_knobs(wgmma_layer_gemms=True)


def test_only_whole_tiles_of_one_b_on_a_wgmma_device_take_it(layer_gemms):
    def reason(m, n, k, dtype="f16", info=NVIDIA_H, epilogue=IDENTITY_EPILOGUE, tf32=False,
               out=None, batch=1, split=1, batched=False):
        return why_not(info, batch, m, n, k, batched, epilogue, dtype, tf32, out or dtype, split)

    assert reason(4096, 4096, 4096) is None and reason(4096, 4096, 4096, "bf16") is None
    assert reason(4096, 4096, 4096, "f32", tf32=True) is None
    assert reason(4096, 4096, 4096, "f32") is None  # split TF32 (the knob wgmma_split_tf32)
    with knobs.overridden(wgmma_split_tf32=False):
        assert reason(4096, 4096, 4096, "f32") == "f32 without allow_tf32"
    for m, n, k in [(1000, 4104, 4096), (1, 256, 64), (17, 256, 64), (4097, 4096, 4096),
                    (128, 1000, 64), (128, 256, 4097), (128, 256, 96)]:
        assert "not whole" in reason(m, n, k)
    assert fits("f32", 1, 128, 256, 96) and not fits("f16", 1, 128, 256, 96)
    assert reason(128, 256, 64, info=DeviceInfo("x", is_cpu=False)) == "the device has no wgmma"
    assert reason(128, 256, 64, epilogue=residual_gelu(256)) is None
    assert reason(128, 256, 64, out="f32") is None  # f16 operands, C widened to f32
    assert "the result is cast" in reason(128, 256, 64, out="i32")
    assert "the result is cast" in reason(128, 256, 64, "bf16", out="f16")
    assert "its own B" in reason(128, 256, 64, batch=2, batched=True)
    assert reason(128, 256, 64, batch=1, batched=True) is None
    assert reason(64, 256, 64, batch=2) is None  # one product of 128 rows
    assert reason(64, 256, 64, batch=4) is None
    assert "3x64x256x64 is not whole" in reason(64, 256, 64, batch=3)
    assert "a split K with an epilogue or C not float32" in reason(128, 256, 64, split=2)
    folded = gemm_plan("g", 4, 64, 512, 64, False, IDENTITY_EPILOGUE, NVIDIA_H, "bf16", False,
                       "bf16", 1)
    assert folded is not None and folded[1].global_size == (2 * 2 * 256,)  # 256 rows, 2 x 2
    assert "[256x64] @ [64x512]" in folded[1].source
    plan = gemm_plan("g", 1, 128, 256, 64, False, IDENTITY_EPILOGUE, NVIDIA_H, "bf16", False,
                     "bf16", 1)
    assert plan is not None and plan[0] is None and "rhs" in plan[1].source
    plan = gemm_plan("g", 1, 128, 256, 64, False, IDENTITY_EPILOGUE, NVIDIA_H, "f32", True,
                     "f32", 1)
    assert plan is not None and plan[0] is not None and plan[0].global_size == (1024, 2)
    with pytest.raises(ValueError, match="multiple of 32"):
        transpose("t", 33, 64, "f16")


MATMUL = """func.func @f(%a: tensor<MxKxT>, %b: tensor<KxNxT>) -> tensor<MxNxT> {
  %y = nn.matmul %a, %b : tensor<MxKxT>, tensor<KxNxT> -> tensor<MxNxT>
  func.return %y : tensor<MxNxT>
}"""


def plan_of(m, n, k, dtype, info, **kw):
    from fusec.compiler.driver import load, lower

    text = (MATMUL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
            .replace("T", dtype))
    return lower(load(text), device_info=info, **kw).plan


@pytest.mark.parametrize(("m", "n", "k", "dtype", "tf32", "launches", "wgmma"), [
    (256, 512, 128, "f16", False, 2, True), (256, 512, 128, "bf16", False, 1, True),
    (256, 512, 128, "f32", True, 2, True), (256, 512, 128, "f32", False, 2, True),
    (250, 512, 128, "f16", False, 1, False), (1, 256, 64, "f16", False, 1, False),
])
def test_the_plan_runs_wgmma_for_whole_tiles_f16_and_tf32_after_a_transpose(m, n, k, dtype, tf32,
                                                                     launches, wgmma):
    plan = plan_of(m, n, k, dtype, NVIDIA_H, allow_tf32=tf32)
    assert len(plan.launches) == launches
    assert ("FUSEC_WGMMA_STEP" in plan.source) == wgmma
    if launches == 2:
        transposed = plan.launches[0].buffers[1]
        assert plan.launches[1].buffers[1] == transposed
        assert plan.buffers[transposed].role == "intermediate"
        assert plan.buffers[transposed].nbytes == k * n * (4 if dtype == "f32" else 2)
    if dtype == "f32" and not tf32:  # split TF32; without it, the FFMA kernel's one launch
        assert "split TF32" in plan.source
        with knobs.overridden(wgmma_split_tf32=False):
            unsplit = plan_of(m, n, k, dtype, NVIDIA_H, allow_tf32=tf32)
        assert len(unsplit.launches) == 1 and "FUSEC_WGMMA_STEP" not in unsplit.source
    no_wgmma = DeviceInfo("H100", is_cpu=False, local_mem_size=49152, max_work_group_size=1024,
                          tensor_cores=("f16", "bf16", "tf32"))
    assert "FUSEC_WGMMA" not in plan_of(m, n, k, dtype, no_wgmma, allow_tf32=tf32).source


LAYER = """func.func @f(%x: tensor<2x128x256xf16>, %w: tensor<256x512xf16>, %bias: tensor<512xf16>,
                  %res: tensor<2x128x512xf16>) -> tensor<2x128x512xf16> {
  %y = nn.matmul %x, %w : tensor<2x128x256xf16>, tensor<256x512xf16> -> tensor<2x128x512xf16>
  %z = nn.add %y, %bias : tensor<2x128x512xf16>, tensor<512xf16> -> tensor<2x128x512xf16>
  %g = nn.gelu %z : tensor<2x128x512xf16> -> tensor<2x128x512xf16>
  %o = nn.add %g, %res : tensor<2x128x512xf16>, tensor<2x128x512xf16> -> tensor<2x128x512xf16>
  func.return %o : tensor<2x128x512xf16>
}"""


def layer_plan(info, bound=(), text=LAYER):
    from fusec.compiler.driver import load, lower

    return lower(load(text), device_info=info, bound=bound).plan


def test_a_gemm_with_its_epilogue_and_a_batch_of_rows_runs_wgmma_with_the_extras_bound(
        layer_gemms):
    plan = layer_plan(NVIDIA_H)
    assert "FUSEC_WGMMA_STEP" in plan.source and "erf(" in plan.source
    (transposed, product) = plan.launches
    names = [spec.name for spec in plan.inputs]
    x, w, bias, res = (plan.inputs[names.index(n)].buffer for n in ("x", "w", "bias", "res"))
    assert transposed.buffers[0] == w and product.buffers[:2] == (x, transposed.buffers[1])
    assert product.buffers[2] == plan.outputs[0].buffer
    assert set(product.buffers[3:]) == {bias, res}
    assert product.global_size == (2 * 2 * 256,)  # 256 rows of 2 batches: 2 x 2 blocks


def test_a_bound_b_read_k_major_is_stored_transposed_and_not_transposed_per_call(layer_gemms):
    plan = layer_plan(NVIDIA_H, bound=("w",))
    (product,) = plan.launches
    (w,) = (spec for spec in plan.inputs if spec.name == "w")
    assert w.panels == 1 and product.buffers[1] == w.buffer
    weight = np.arange(256 * 512, dtype=np.float16).reshape(256, 512)
    assert np.array_equal(w.stored(weight).reshape(512, 256), weight.T)
    # bf16 reads an unbound B [K, N] as it is (one launch), and a bound one stored [N, K] as
    # f16's is (PyTorch's nn.Linear layout: the weight can be held once)
    bf16 = layer_plan(NVIDIA_H, text=LAYER.replace("f16", "bf16"))
    assert len(bf16.launches) == 1 and all(spec.panels is None for spec in bf16.inputs)
    assert "@ [256x512] on wgmma" in bf16.source
    bf16 = layer_plan(NVIDIA_H, bound=("w",), text=LAYER.replace("f16", "bf16"))
    (w,) = (spec for spec in bf16.inputs if spec.name == "w")
    assert len(bf16.launches) == 1 and w.panels == 1
    assert "@ [512x256].T on wgmma" in bf16.source
    # without wgmma a GPU's bound weight stays as it is
    no_wgmma = replace(NVIDIA_H, wgmma=False)
    assert all(spec.panels is None for spec in layer_plan(no_wgmma, bound=("w",)).inputs)


def test_layer_gemms_are_on_by_default():
    """Timed on an H200 (the f16 BERT layer 0.40 -> 0.26 ms of kernels), `wgmma_layer_gemms` is
    on: an epilogue's product and a batch sharing one B take wgmma."""
    assert knobs.KNOBS["wgmma_layer_gemms"].default is True
    assert why_not(NVIDIA_H, 1, 128, 256, 64, False, residual_gelu(256), "f16", False, "f16",
                   1) is None
    assert why_not(NVIDIA_H, 2, 64, 256, 64, False, IDENTITY_EPILOGUE, "f16", False, "f16",
                   1) is None
    assert "FUSEC_WGMMA" in layer_plan(NVIDIA_H, bound=("w",)).source


def test_with_layer_gemms_off_epilogues_batches_and_bound_b_keep_the_mma_sync_kernels(
        set_knobs):
    """With the knob `wgmma_layer_gemms` off, a layer's product is planned as before it: the
    epilogue's GEMM on mma.sync, a bound B as it is; identity products of one B still take
    wgmma."""
    set_knobs(wgmma_layer_gemms=False)
    plan = layer_plan(NVIDIA_H, bound=("w",))
    assert "FUSEC_WGMMA" not in plan.source and all(s.panels is None for s in plan.inputs)
    assert "wgmma_layer_gemms is off" in why_not(NVIDIA_H, 1, 128, 256, 64, False,
                                                 residual_gelu(256), "f16", False, "f16", 1)
    assert "wgmma_layer_gemms is off" in why_not(NVIDIA_H, 2, 64, 256, 64, False,
                                                 IDENTITY_EPILOGUE, "f16", False, "f16", 1)
    assert why_not(NVIDIA_H, 1, 128, 256, 64, False, IDENTITY_EPILOGUE, "f16", False, "f16",
                   1) is None
    bound = layer_plan(NVIDIA_H, bound=("w",), text=MATMUL.replace("M", "128").replace(
        "N", "256").replace("K", "64").replace("T", "f16").replace("%b", "%w"))
    # a bound B kept as it is is read MN-major, not transposed at each call
    assert len(bound.launches) == 1 and all(s.panels is None for s in bound.inputs)
    assert "[128x64] @ [64x256] on wgmma" in bound.source


def swiglu_of_pairs(c):
    """``up * silu(gate)`` of C's column pairs (gate even, up odd), in float64."""
    gate, up = c[:, 0::2].astype(np.float64), c[:, 1::2].astype(np.float64)
    return up * gate / (1 + np.exp(-gate))


@pytest.mark.parametrize("case", ["random", "saturated", "zeros"])
@pytest.mark.parametrize(("dtype", "b_rows"), [("f16", False), ("bf16", True), ("f16", True),
                                               ("bf16", False)],
                         ids=["f16", "bf16-b-rows", "f16-b-rows", "bf16"])
@pytest.mark.parametrize("block_n", [256, 128])
def test_wgmma_swiglu_epilogue_stores_up_times_silu_gate_of_each_column_pair(
        launch, dtype, b_rows, case, block_n):
    """out[M, N / 2] = up * silu(gate) of the product's column pairs (gate 2 j, up 2 j + 1),
    every output element written (the outputs start as NaN): 2 x 2 blocks, both warpgroups,
    both halves of each accumulator pair. "saturated": gate columns scaled so that |gate|
    reaches ~60 (silu(x) -> x, or -> -0); "zeros": zero rows of A and zero columns of B."""
    m, n, k = 256, 512, 128
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=11)
    if case != "random":
        rng = np.random.default_rng(12)
        a32 = a32.copy()
        b32 = b32.copy()
        if case == "saturated":
            b32[0::2] *= 8.0  # gate columns: |gate| up to ~60 for these sizes
        else:
            a32[rng.choice(m, 40, replace=False)] = 0.0
            b32[rng.choice(n, 64, replace=False)] = 0.0
        if dtype == "f16":
            a, b_t = a32.astype(np.float16), b32.astype(np.float16)
        else:
            a, b_t = bf16_bits(a32), bf16_bits(b32)
        a32, b32 = as_float(a, dtype), as_float(b_t, dtype)
    kernel = gemm_wgmma("gemm_sw", m, n, k, dtype, b_rows=b_rows, swiglu=True, block_n=block_n)
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    out = launch(kernel, {"lhs": a, **b_in}, {"out": (m, n // 2)})["out"]
    c = a32.astype(np.float64) @ b32.T.astype(np.float64)
    want = swiglu_of_pairs(c)
    got = as_float(out, dtype).astype(np.float64)
    assert np.isfinite(got).all()
    if case == "saturated":
        assert np.abs(c[:, 0::2]).max() > 40
    if case == "zeros":
        assert (want == 0).sum() > 1000 and np.array_equal(got == 0, want == 0)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |out|"


def test_the_swiglu_epilogue_takes_16_bit_products_without_an_epilogue_of_their_own():
    with pytest.raises(ValueError, match="SwiGLU epilogue"):
        gemm_wgmma("g", 128, 256, 64, "f32", swiglu=True)
    with pytest.raises(ValueError, match="SwiGLU epilogue"):
        gemm_wgmma("g", 128, 256, 64, "f16", swiglu=True, epilogue=residual_gelu(256))
    assert gemm_plan("g", 1, 128, 256, 64, False, residual_gelu(256), NVIDIA_H, "f16", False,
                     "f16", 1, swiglu=True) is None
    plan = gemm_plan("g", 1, 128, 256, 64, False, IDENTITY_EPILOGUE, NVIDIA_H, "f16", False,
                     "f16", 1, b_transposed=True, swiglu=True)
    assert plan is not None and plan[0] is None and "SwiGLU of column pairs" in plan[1].source
    assert "* 128\n" in plan[1].source  # the copy-out's rows: N / 2 = 128 elements apart


@pytest.mark.parametrize(("shape", "parts"), [((512, 768, 768), 1), ((128, 2304, 768), 1),
                                             ((128, 768, 3072), 6)],
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
def test_products_of_whole_tiles_run_on_wgmma_split_only_into_deep_parts(set_knobs, shape,
                                                                          parts):
    """A batch-1 model's products (128 or 512 rows) have too few outputs to fill a GPU, and
    without wgmma are split along K on the mma.sync kernels; with it they run on wgmma in
    128 x 128 blocks (the lowering's gemm-whole-tile, set by the driver), with the knob
    `wgmma_split_k` split along K only into parts at least 512 deep (`whole_tile_split`):
    128 x 768 x 3072 in 6, 36 blocks; without it, whole. (With the knob `wgmma_sum_parts`,
    off by default, such products are split in the kernel instead.)"""
    set_knobs(wgmma_split_k=True, wgmma_sum_parts=False, wgmma_short_blocks=False,
              wgmma_64_blocks=False)
    m, n, k = shape
    h200 = replace(NVIDIA_H, compute_units=132)
    plan = plan_of(m, n, k, "f16", h200)
    sums = [launch for launch in plan.launches if "split_sum" in launch.kernel]
    assert len(sums) == (parts > 1) and "128x128 blocks" in plan.source
    assert (f"K in {parts} parts" in plan.source) == (parts > 1)
    without = plan_of(m, n, k, "f16", replace(h200, wgmma=False))
    assert any("split_sum" in launch.kernel for launch in without.launches)
    assert "FUSEC_WGMMA" not in without.source
    set_knobs(wgmma_split_k=False, wgmma_short_blocks=False, wgmma_64_blocks=False)
    whole = plan_of(m, n, k, "f16", h200)
    assert not any("split_sum" in launch.kernel for launch in whole.launches)
    assert "128x128 blocks" in whole.source


def test_with_short_blocks_a_batch_1_product_runs_in_blocks_of_64_rows(set_knobs):
    """With the knob `wgmma_short_blocks` (on by default) a product whose 128-row blocks
    would occupy at most half of the H200's 132 units runs in 64-row blocks (`block_m_for`):
    GPT-2 small's 128 x 768 (6 blocks) and 128 x 3072 (24); at 2048 rows (96 blocks) it keeps
    128. Off, 128 everywhere."""
    assert knobs.knob("wgmma_short_blocks").default
    set_knobs(wgmma_short_blocks=False)
    assert block_m_for(128, 768, 128, 132) == 128
    set_knobs(wgmma_short_blocks=True)
    assert [block_m_for(m, n, 128, 132) for m, n in [(128, 768), (128, 3072), (256, 2048),
                                                     (2048, 768), (4096, 768)]] == [
        64, 64, 64, 128, 128]
    assert block_m_for(128, 768, 128, None) == 128  # the units unknown
    set_knobs(wgmma_short_blocks=True, wgmma_sum_parts=False, wgmma_64_blocks=False)
    h200 = replace(NVIDIA_H, compute_units=132)
    plan = plan_of(128, 768, 768, "f16", h200)
    assert "64x128 blocks" in plan.source
    sizes = [(launch.global_size, launch.local_size) for launch in plan.launches]
    assert ((2 * 6 * 128,), (128,)) in sizes, sizes  # 12 blocks of one warpgroup


def test_with_narrow_blocks_off_whole_tile_products_are_split_as_before(set_knobs):
    set_knobs(wgmma_narrow_blocks=False)
    plan = plan_of(512, 768, 768, "f16", replace(NVIDIA_H, compute_units=132))
    assert any("split_sum" in launch.kernel for launch in plan.launches)


@pytest.mark.parametrize(("dtype", "b_rows", "block_n"), [("f16", False, 128), ("bf16", True, 256),
                                                        ("f32", False, 128)],
                         ids=["f16", "bf16-b-rows", "tf32"])
def test_split_k_writes_each_parts_partial_product(launch, dtype, b_rows, block_n):
    """With `split_k` work-group group ``p`` multiplies the ``p``-th part of K and writes its
    float32 partial product at ``out[p]``: 3 parts, 2 x 2 blocks each."""
    m, n, k, parts = 256, 2 * block_n, 3 * 128, 3
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=9)
    kernel = gemm_wgmma("gemm_sk", m, n, k, dtype, b_rows=b_rows, out_dtype="f32",
                        block_n=block_n, split_k=parts)
    assert kernel.global_size == (2 * 2 * parts * 256,) and "K in 3 parts" in kernel.source
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    out = launch(kernel, {"lhs": a, **b_in}, {"out": (parts, m, n)})["out"]
    assert out.dtype == np.float32
    for p in range(parts):
        cut = slice(p * k // parts, (p + 1) * k // parts)
        want = a32[:, cut] @ b32[:, cut].T
        error = float(np.abs(out[p] - want).max() / np.abs(want).max())
        assert error <= TOLERANCE[dtype], f"part {p}: max error {error:.3g} of max |C|"


def test_a_split_k_takes_whole_steps_float32_and_no_epilogue():
    with pytest.raises(ValueError, match="not whole steps"):
        gemm_wgmma("g", 128, 256, 192, "f16", out_dtype="f32", split_k=2)
    with pytest.raises(ValueError, match="float32 partial"):
        gemm_wgmma("g", 128, 256, 256, "f16", split_k=2)
    assert "whole steps" in why_not(NVIDIA_H, 1, 128, 256, 192, False, IDENTITY_EPILOGUE, "f16",
                                    False, "f32", 2)
    assert "an epilogue" in why_not(NVIDIA_H, 1, 128, 256, 256, False, residual_gelu(256),
                                    "f16", False, "f32", 2)
    assert why_not(NVIDIA_H, 1, 128, 256, 256, False, IDENTITY_EPILOGUE, "f16", False, "f32",
                   2) is None


@pytest.mark.parametrize(("dtype", "b_rows", "block_n", "block_m", "parts"),
                         [("f16", False, 128, 64, 4), ("bf16", True, 256, 128, 3),
                          ("f32", False, 128, 128, 2), ("f16", True, 128, 64, 3)],
                         ids=["f16-short-4", "bf16-b-rows-3", "tf32-2", "f16-b-rows-short-3"])
def test_parts_summed_in_the_kernel_give_the_whole_product_with_its_epilogue(
        launch, dtype, b_rows, block_n, block_m, parts):
    """With `parts` each block of C is summed in the kernel from that many work-groups' float32
    partial blocks (K in `parts` parts) by the last of them to arrive, then the epilogue
    (bias, GELU, residual) and C in the operands' type: the whole product's result, in two
    launches over the same scratch (the first must set the counts back to 0, or the second
    stores nothing and C keeps its NaNs), the counts left 0. Adversarial parts: A's columns
    of the first part scaled by 64, so that a part dropped or added twice shows."""
    m, n, k = 256, 2 * block_n, parts * 128
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=21)
    a32 = a32.copy()
    a32[:, :k // parts] *= 64.0
    a = {"f16": lambda x: x.astype(np.float16), "bf16": bf16_bits,
         "f32": lambda x: x.astype(np.float32)}[dtype](a32)
    a32 = as_float(a, dtype) if dtype != "f32" else a
    rng = np.random.default_rng(22)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    res = rng.uniform(-4, 4, (m, n)).astype(np.float16)
    kernel = gemm_wgmma("gemm_parts", m, n, k, dtype, b_rows=b_rows, epilogue=residual_gelu(n),
                        block_n=block_n, block_m=block_m, parts=parts)
    blocks = (m // block_m) * (n // block_n)
    assert kernel.global_size == (blocks * parts * 2 * block_m,)
    assert [arg.name for arg in kernel.args][-2:] == ["partials", "arrivals"]
    assert [(s.arg, s.zeroed) for s in kernel.scratch] == [("partials", False),
                                                           ("arrivals", True)]
    assert f"K in {parts} parts summed in the kernel" in kernel.source
    # the writes fenced GPU-wide before the count and the reads after it (`ptx_patch`)
    assert kernel.source.count('asm volatile("// FUSEC_FENCE_GPU"') == 2
    assert "mem_fence" not in kernel.source
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    got = launch(kernel, {"lhs": a, **b_in, "bias": bias, "res": res}, {"out": (m, n)},
                 launches=2)
    assert not got["arrivals"].any()
    x = a32.astype(np.float64) @ b32.T.astype(np.float64) + bias
    want = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))) + res.astype(np.float32)
    error = float(np.abs(as_float(got["out"], dtype) - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


def test_parts_summed_in_the_kernel_apply_the_swiglu_epilogue_with_b_in_halves(launch):
    m, n, k = 128, 512, 256
    a, b_t, a32, b32 = operands("f16", m, n, k, seed=23)
    kernel = gemm_wgmma("gemm_psw", m, n, k, "f16", swiglu=True, block_n=256, halves="first",
                        block_m=64, parts=2)
    if MMA != "ptx":
        kernel = emulated(kernel)
    got = launch(kernel, {"lhs": a, "rhs_t": b_t}, {"out": (m, n // 2)})
    half_n = n // 2
    paired = np.empty_like(b32)  # column 2 j: gate j (the first half), 2 j + 1: up j
    paired[0::2], paired[1::2] = b32[:half_n], b32[half_n:]
    want = swiglu_of_pairs(a32.astype(np.float64) @ paired.T.astype(np.float64))
    error = float(np.abs(got["out"].astype(np.float64) - want).max() / np.abs(want).max())
    assert error <= TOLERANCE["f16"] and not got["arrivals"].any()


def test_parts_are_whole_steps_and_not_with_a_split_k():
    with pytest.raises(ValueError, match="not whole steps"):
        gemm_wgmma("g", 128, 256, 192, "f16", parts=2)
    with pytest.raises(ValueError, match="split along K as well"):
        gemm_wgmma("g", 128, 256, 512, "f16", out_dtype="f32", split_k=2, parts=2)


def test_a_batch_1_product_is_summed_from_parts_in_one_launch(set_knobs):
    """With the knob `wgmma_sum_parts` (off by default) a product whose blocks would occupy at most half
    of the H200's 132 units is summed in the kernel from up to 4 parts of at least 2 steps
    (`parts_for`), all its work-groups on the units at once: one launch, a scratch of its
    float32 parts and a zeroed buffer of counts (one each for the program); a product that
    fills the device, whole."""
    assert not knobs.knob("wgmma_sum_parts").default
    set_knobs(wgmma_short_blocks=False, wgmma_sum_parts=True, wgmma_64_blocks=False)
    assert parts_for(128, 768, 768, "f16", 128, 128, 132) == 4  # 6 blocks
    assert parts_for(128, 768, 192, "f16", 128, 128, 132) == 1  # 3 steps: no 2 parts of 2
    assert parts_for(128, 768, 256, "f16", 128, 128, 132) == 2  # 4 steps
    assert parts_for(2048, 768, 768, "f16", 128, 128, 132) == 1  # 96 blocks
    assert parts_for(128, 3072, 768, "f16", 64, 128, 132) == 2  # 48 blocks, 96 with 2 parts
    assert parts_for(128, 768, 768, "f16", 128, 128, None) == 1
    h200 = replace(NVIDIA_H, compute_units=132)
    plan = plan_of(128, 768, 768, "f16", h200)
    assert not any("split_sum" in launch.kernel for launch in plan.launches)
    assert "K in 4 parts summed in the kernel" in plan.source
    transpose_b, product = plan.launches  # B is not bound here: transposed each call
    assert product.global_size == (6 * 4 * 256,)
    partials, arrivals = (plan.buffers[i] for i in product.buffers[-2:])
    assert partials.role == "intermediate" and partials.nbytes == 4 * 128 * 768 * 4
    assert arrivals.role == "zeroed" and arrivals.nbytes == 6 * 4
    assert arrivals.data is not None and not arrivals.data.any()
    data, arrays = encode_plan(plan)  # an artifact carries the counts' role and zeros
    shipped = decode_plan(json.loads(json.dumps(data)), arrays.__getitem__)
    assert shipped.buffers[product.buffers[-1]] == arrivals
    assert np.array_equal(shipped.buffers[product.buffers[-1]].data, arrivals.data)
    assert "summed in the kernel" not in plan_of(2048, 768, 768, "f16", h200).source
    set_knobs(wgmma_sum_parts=False)
    assert "summed in the kernel" not in plan_of(128, 768, 768, "f16", h200).source


@pytest.mark.parametrize("shape,kwargs,rows,lines", [
    ((128, 768, 768, "f16"), {"block_n": 128}, 128, 12),  # K-major: block_n rows of 1536 bytes
    ((128, 768, 3072, "f16"), {"block_n": 128, "parts": 4}, 128, 12),  # a quarter of K each
    ((128, 768, 768, "f16"), {"block_n": 128, "b_rows": True}, 768, 2),  # K rows of 256 bytes
    ((128, 1024, 512, "bf16"), {"block_n": 128, "swiglu": True, "halves": "first"}, 128, 8),
    ((128, 256, 256, "f32"), {"block_n": 128, "out_dtype": "f32"}, 128, 8),  # TF32
])
def test_a_dependent_launch_prefetches_its_panel_of_b_before_it_waits(shape, kwargs, rows,
                                                                      lines):
    """With dependent launches (and `wgmma_prefetch_b`) a work-group asks L2 for each line of
    its block's panel of B, then waits for the kernel before it, before its first copy; the
    halves of a SwiGLU's B are rows j and N / 2 + j. Without, neither."""
    with knobs.overridden(cuda_dependent_launch=True):
        source = gemm_wgmma("g", *shape, **kwargs, prefetch_b=True).source
    loop = re.search(r"for \(int i = tid; i < (\d+); i \+= \d+\) \{\n\s+const int r = i / (\d+)"
                     r", c = i % \d+;\n\s+asm volatile\(\"prefetch\.global\.L2 \[%0\];\" :: "
                     r"\"l\"\(b_glob \+ (.*?) \+ \(ulong\)c \* 128\)\);", source)
    assert loop is not None
    assert (int(loop.group(1)), int(loop.group(2))) == (rows * lines, lines)
    m, n, k, dtype = shape
    if kwargs.get("halves"):
        assert loop.group(3) == f"(ulong)((r & 1) * {n // 2} + (r >> 1)) * {k * 2}"
    wait = source.index('asm volatile("griddepcontrol.wait;" ::: "memory");')
    assert source.count("griddepcontrol.wait") == 1
    assert loop.start() < wait < source.index("_load_stage(a_glob, b_glob, s,")
    with knobs.overridden(wgmma_prefetch_b=False, cuda_dependent_launch=True):
        assert "griddepcontrol" not in gemm_wgmma("g", *shape, **kwargs, prefetch_b=True).source
    with knobs.overridden(cuda_dependent_launch=True):
        assert "prefetch" not in gemm_wgmma("g", *shape, **kwargs).source  # not one wave
    with knobs.overridden(cuda_dependent_launch=False):
        assert "prefetch" not in gemm_wgmma("g", *shape, **kwargs, prefetch_b=True).source


def test_only_products_whose_work_groups_all_run_at_once_prefetch_b():
    """`gemm_plan` asks for the prefetch before the wait where the product's work-groups are
    at most the device's units (a batch-1 model's products), not where they run in waves
    (batch 32), whose dependent launches cost more than they hide."""
    h200 = replace(NVIDIA_H, compute_units=132)
    with knobs.overridden(cuda_dependent_launch=True, wgmma_persistent=False):
        small = gemm_plan("g", 1, 128, 768, 768, False, IDENTITY_EPILOGUE, h200, "f16", False,
                          "f16", 1, b_transposed=True)
        large = gemm_plan("g", 32, 128, 3072, 768, False, IDENTITY_EPILOGUE, h200, "f16", False,
                          "f16", 1, b_transposed=True)
    assert small is not None and large is not None
    assert small[1].global_size[0] // small[1].local_size[0] <= 132
    assert "griddepcontrol.wait" in small[1].source
    assert large[1].global_size[0] // large[1].local_size[0] > 132
    assert "griddepcontrol" not in large[1].source


BIAS = Epilogue("""inline float add_bias(float acc, int row, int col,
                                  __global const float *restrict bias) {
    return acc + bias[col];
}""", "add_bias", (KernelArg("bias", "in", "float"),))


@pytest.mark.parametrize("shape,block_m", [((128, 256, 96), 128), ((256, 128, 320), 64),
                                           ((128, 128, 32), 128), ((128, 128, 512), 128)],
                         ids=["128x256x96", "256x128x320-short", "one-step", "k512"])
def test_split_tf32_is_float32_accurate(launch, shape, block_m):
    """`split_tf32`: each step ``A B + A B_lo + A_lo B`` on TF32, the low parts made in local
    memory. Against float64, within a few float32 roundings (1e-6 of max |C|), where plain TF32
    is off by about 1e-3; the epilogue still applies. The emulation adds into the accumulators
    rounding toward zero, as the tensor cores do: without the promotions into float32 sums
    each step, K 512 is off by 6e-6 (the H200 by 0.7-2.3e-5 at K 768 to 3072). The bound,
    2e-6, is cuBLAS's own float32 error at the models' shapes (0.5-2.6e-6); the H200 gives
    1.04-1.14e-6 here, the emulation up to 8.5e-7."""
    m, n, k = shape
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b_t = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    want = a.astype(np.float64) @ b_t.T.astype(np.float64)
    errors = {}
    for split in (True, False):
        kernel = gemm_wgmma("gemm_x3", m, n, k, "f32", block_n=128, block_m=block_m,
                            split_tf32=split, epilogue=BIAS)
        assert ("split TF32" in kernel.source) == split
        if MMA != "ptx":
            kernel = emulated(kernel)
        out = launch(kernel, {"lhs": a, "rhs_t": b_t, "bias": bias}, {"out": (m, n)})["out"]
        errors[split] = float(np.abs(out - bias - want).max() / np.abs(want).max())
    assert errors[True] <= 2e-6, errors
    assert errors[False] >= 1e-4, errors  # what the split buys
    with pytest.raises(ValueError, match="split TF32 takes f32 operands in blocks 128 wide"):
        gemm_wgmma("g", 128, 256, 64, "f32", split_tf32=True)


@pytest.mark.parametrize("shape,block_m", [((128, 256, 96), 128), ((256, 128, 512), 64),
                                           ((128, 128, 32), 128)],
                         ids=["128x256x96", "256x128x512-short", "one-step"])
def test_split_tf32_reads_b_as_stored(launch, shape, block_m):
    """`split_tf32` with `b_rows`: B ``[K, N]`` copied into the stages as it lies and written
    K-major, with its low parts, by the step's pass; float32-accurate, as with B ``[N, K]``,
    the epilogue applied."""
    m, n, k = shape
    rng = np.random.default_rng(9)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    kernel = gemm_wgmma("gemm_x3r", m, n, k, "f32", block_n=128, block_m=block_m,
                        split_tf32=True, b_rows=True, epilogue=BIAS)
    assert [arg.name for arg in kernel.args][:2] == ["lhs", "rhs"]
    assert "m64n128k8.f32.tf32.tf32 4 2 2 0 1" in kernel.source  # K-major descriptors
    if MMA != "ptx":
        kernel = emulated(kernel)
    out = launch(kernel, {"lhs": a, "rhs": b, "bias": bias}, {"out": (m, n)})["out"]
    assert float(np.abs(out - bias - want).max() / np.abs(want).max()) <= 2e-6
    with pytest.raises(ValueError, match="reads f32 B only K-major"):
        gemm_wgmma("g", 128, 128, 64, "f32", block_n=128, b_rows=True)


def test_split_tf32_reads_b_as_stored_with_the_knob():
    """With `wgmma_split_tf32_b_rows` a float32 product whose B is ``[K, N]`` takes no
    transpose launch: the kernel reads B as it is (`gemm_plan`)."""
    h200 = replace(NVIDIA_H, compute_units=132)
    args = ("g", 1, 256, 512, 64, False, IDENTITY_EPILOGUE, h200, "f32", False, "f32", 1)
    transpose_first, product = gemm_plan(*args)
    assert transpose_first is not None and "rhs_t" in [a.name for a in product.args]
    with knobs.overridden(wgmma_split_tf32_b_rows=True):
        transpose_first, product = gemm_plan(*args)
        bound = gemm_plan(*args, b_bound=True)
    assert transpose_first is None and "rhs" in [a.name for a in product.args]
    assert "split TF32" in product.source and bound is not None and bound[0] is None


def test_float32_products_take_split_tf32_with_the_knob(launch):
    """With `wgmma_split_tf32` (on) a float32 product without TF32 takes the kernel, split, in
    128-wide blocks, its bound B read ``[N, K]``; its numbers those of float32; off, it keeps
    the FFMA kernel (`why_not`). With TF32 allowed it stays plain TF32."""
    h200 = replace(NVIDIA_H, compute_units=132)
    args = ("g", 1, 256, 512, 64, False, IDENTITY_EPILOGUE, h200, "f32")
    with knobs.overridden(wgmma_split_tf32=False):
        assert gemm_plan(*args, False, "f32", 1, b_transposed=True) is None
        assert why_not(h200, *args[1:7], "f32", False, "f32", 1) == "f32 without allow_tf32"
    plan = gemm_plan(*args, False, "f32", 1, b_transposed=True)
    tf32 = gemm_plan(*args, True, "f32", 1, b_transposed=True)
    assert plan is not None and plan[0] is None and tf32 is not None
    assert "split TF32" in plan[1].source and "m64n128k8.f32.tf32.tf32" in plan[1].source
    assert "split TF32" not in tf32[1].source
    rng = np.random.default_rng(8)
    a = rng.standard_normal((256, 64)).astype(np.float32)
    b_t = rng.standard_normal((512, 64)).astype(np.float32)
    kernel = plan[1] if MMA == "ptx" else emulated(plan[1])
    out = launch(kernel, {"lhs": a, "rhs_t": b_t}, {"out": (256, 512)})["out"]
    want = a.astype(np.float64) @ b_t.T.astype(np.float64)
    assert float(np.abs(out - want).max() / np.abs(want).max()) <= 2e-6


def test_resident_blocks_count_shared_memory_threads_and_registers():
    """`resident_blocks` on Hopper: 128 x 64 blocks (96 KiB of stages, 256 threads) two a unit,
    128 x 128 and wider one, 64 x 64 (64 KiB, 128 threads) three; fewer shared bytes a unit or
    more registers a thread lower it."""
    assert [resident_blocks(128, w) for w in (256, 192, 128, 64)] == [1, 1, 1, 2]
    assert resident_blocks(64, 128) == 2
    assert resident_blocks(64, 64) == 3


def test_with_resident_waves_blocks_that_all_run_at_once_are_one_wave(set_knobs):
    """With the knob `wgmma_resident_waves` the Llama-style model's batch-1 gate and up product
    (128 x 11264) takes 64-wide blocks: 176 of them, two a unit, all run at once on 132 units,
    where 88 blocks of 128 leave 44 idle; off, 176 blocks are two waves and 128 is taken.
    Products of several waves even counted so (BERT-base's at 4096 rows) keep their widths."""
    set_knobs(wgmma_resident_waves=False)
    assert block_n_for(128, 11264, 132) == 128
    assert block_n_for(4096, 3072, 132) == 192
    set_knobs(wgmma_resident_waves=True)
    assert block_n_for(128, 11264, 132) == 64
    assert block_n_for(128, 11264, 80) == 256  # 176 blocks on 80 units: not at once
    assert block_n_for(4096, 3072, 132) == 192
    assert block_n_for(4096, 768, 132) == 192


PERSISTENT_CASES = {  # id: dtype, b_rows, block_m, width, K, groups, extra
    "f16-256-one-step": ("f16", False, 128, 256, 64, 3, ""),
    "bf16-b-rows-192-two-steps": ("bf16", True, 128, 192, 128, 5, ""),
    "f16-64-rows-128-five-steps": ("f16", False, 64, 128, 320, 7, ""),
    "f16-64-wide-epilogue-three-steps": ("f16", False, 128, 64, 192, 4, "epilogue"),
    "bf16-128-swiglu-six-steps": ("bf16", False, 128, 128, 384, 6, "swiglu"),
}
"""Persistent work-groups over 9 block rows (a short group) of a few block columns: each
work-group takes 2 to 6 blocks, some one more than others; K of 1 to 6 steps, so that a
block's stages start anywhere in the turn of 4."""


@pytest.mark.parametrize("case", list(PERSISTENT_CASES))
def test_persistent_work_groups_match_numpy(launch, case):
    """`persistent_groups`: fewer work-groups than blocks, each taking its blocks in turn; the
    next block's first two steps are copied while C is staged in the two other stages (the
    emulated copies land at once, so a stage the staging or the next copies overwrite too soon
    shows as a wrong block). Checked against numpy with K-major and MN-major B, 64-row blocks,
    an epilogue and the SwiGLU epilogue."""
    dtype, b_rows, block_m, width, k, groups, extra = PERSISTENT_CASES[case]
    m, n = 1152, 3 * width if extra != "swiglu" else 4 * width
    a, b_t, a32, b32 = operands(dtype, m, n, k, seed=31)
    bias = np.random.default_rng(32).standard_normal(n).astype(np.float32)
    kernel = gemm_wgmma(f"persistent_{width}", m, n, k, dtype, b_rows=b_rows, block_n=width,
                        block_m=block_m, epilogue=BIAS if extra == "epilogue" else
                        IDENTITY_EPILOGUE, swiglu=extra == "swiglu", persistent_groups=groups)
    assert f"{groups} persistent work-groups" in kernel.source
    assert kernel.global_size == (groups * 2 * block_m,)
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    inputs = {"lhs": a, **b_in, **({"bias": bias} if extra == "epilogue" else {})}
    c = a32 @ b32.T + (bias if extra == "epilogue" else 0)
    if extra == "swiglu":  # column 2 j the gate of j, 2 j + 1 its up
        gate, up = c[:, 0::2], c[:, 1::2]
        want = up * gate / (1 + np.exp(-gate))
    else:
        want = c
    out = launch(kernel, inputs, {"out": want.shape})["out"]
    error = float(np.abs(as_float(out, dtype) - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


def test_persistent_groups_only_where_blocks_outnumber_the_units(set_knobs):
    """`persistent_groups_for` with the knob `wgmma_persistent`: BERT-base's 4096 x 3072
    product in blocks of 128 x 192 (512 blocks) on the H200's 132 units runs in 132 work-groups;
    128 x 64 blocks two a unit (264); a product of one wave, float32 C (its staged rows do not
    fit in a stage), parts, split K, split TF32 or an unknown device keep a work-group a block;
    and so does every product with the knob off."""
    set_knobs(wgmma_persistent=True)
    assert persistent_groups_for(4096, 3072, 128, 192, 132, "f16", False) == 132
    assert persistent_groups_for(4096, 3072, 128, 64, 132, "f16", False) == 264
    assert persistent_groups_for(4096, 3072, 128, 256, 132, "bf16", True) == 132
    assert persistent_groups_for(4096, 768, 128, 192, 132, "f16", False) == 0  # 128 blocks
    assert persistent_groups_for(4096, 3072, 128, 128, 132, "f32", False) == 0
    assert persistent_groups_for(4096, 3072, 128, 128, 132, "f16", False, parts=2) == 0
    assert persistent_groups_for(4096, 3072, 128, 128, 132, "f16", False, split_k=2) == 0
    assert persistent_groups_for(4096, 3072, 128, 128, 132, "f16", False,
                                 split_tf32=True) == 0
    assert persistent_groups_for(4096, 3072, 128, 192, None, "f16", False) == 0
    h200 = replace(NVIDIA_H, compute_units=132)
    plan = gemm_plan("g", 32, 128, 3072, 768, False, IDENTITY_EPILOGUE, h200, "f16", False,
                     "f16", 1, b_transposed=True)
    assert plan is not None and "132 persistent work-groups" in plan[1].source
    assert plan[1].global_size == (132 * 256,)
    with pytest.raises(ValueError, match="persistent work-groups take a whole product"):
        gemm_wgmma("g", 1152, 256, 64, "f16", block_n=128, out_dtype="f32",
                   persistent_groups=3)
    set_knobs(wgmma_persistent=False)
    assert persistent_groups_for(4096, 3072, 128, 192, 132, "f16", False) == 0


def test_deep_stages_only_where_they_were_faster(set_knobs):
    """`stages_for` with the knob `wgmma_deep_stages`: 128 x 128 blocks 6 stages (faster on
    the H200), 128 x 192 and 128 x 256 4 (5 were no faster, 256 has no room), 128 x 64 (two a
    unit) 4, 64-row blocks 4, split TF32 4; off, 4 for every block."""
    set_knobs(wgmma_deep_stages=False)
    assert {w: stages_for(128, w) for w in (256, 192, 128, 64)} == dict.fromkeys(
        (256, 192, 128, 64), 4)
    set_knobs(wgmma_deep_stages=True)
    assert {w: stages_for(128, w) for w in (256, 192, 128, 64)} == {256: 4, 192: 4, 128: 6,
                                                                    64: 4}
    assert stages_for(64, 128) == 4
    assert stages_for(128, 128, split_tf32=True) == 4
    assert "128x128 blocks, 6 stages" in gemm_wgmma("g", 128, 128, 64, "f16", block_n=128).source
    stage = (128 + 128) * 128
    assert 6 * stage <= 227 * 1024  # the most shared memory a work-group takes


@pytest.mark.parametrize(("width", "b_rows", "k", "groups"),
                         [(128, False, 448, 0), (128, True, 512, 0), (128, False, 320, 5),
                          (128, False, 64 * 9, 4)],
                         ids=["128-7-steps", "128-b-rows-8-steps", "128-persistent",
                              "128-persistent-9-steps"])
def test_deep_stages_match_numpy(launch, set_knobs, width, b_rows, k, groups):
    """6 stages (the knob `wgmma_deep_stages`), the copies 4 steps ahead, K of 5 to 9 steps
    (more than a turn of the stages), K-major and MN-major B, in work-groups a block and
    persistent ones: against numpy (the emulated copies land at once, so a stage refilled too
    soon or read from the wrong turn shows)."""
    set_knobs(wgmma_deep_stages=True)
    m, n = 1152, 2 * width
    a, b_t, a32, b32 = operands("f16", m, n, k, seed=41)
    kernel = gemm_wgmma(f"deep_{width}", m, n, k, "f16", b_rows=b_rows, block_n=width,
                        persistent_groups=groups)
    assert f"{stages_for(128, width)} stages" in kernel.source
    if MMA != "ptx":
        kernel = emulated(kernel)
    b_in = {"rhs": np.ascontiguousarray(b_t.T)} if b_rows else {"rhs_t": b_t}
    out = launch(kernel, {"lhs": a, **b_in}, {"out": (m, n)})["out"]
    want = a32 @ b32.T
    error = float(np.abs(as_float(out, "f16") - want).max() / np.abs(want).max())
    assert error <= TOLERANCE["f16"], f"max error {error:.3g} of max |C|"
