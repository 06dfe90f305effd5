"""The pipelined FFMA GEMM (`gemm_ffma_pipelined`) against numpy, float32.

On the CPU (CI) it runs with ``copies="emulated"``: ``cp.async`` becomes a plain float4 copy, so
the swizzled local layout of A, the read offsets, the stage rotation, the zero-filled edges and
the epilogue are checked here. With ``FUSEC_TEST_FFMA=ptx`` on the GPU machine the same tests
run the real asynchronous copies (and larger shapes).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

import numpy as np
import pytest

from fusec import knobs
from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.kernels.gemm import GPU_TILES, gemm
from fusec.codegen.kernels.gemm_ffma_pipelined import (
    DEFAULT_TILES,
    SMALL_TILES,
    FfmaTiles,
    default_tiles,
    fits,
    gemm_ffma_pipelined,
)
from tests.codegen.test_kernel_gemm_mma import BIAS_RELU

COPIES = os.environ.get("FUSEC_TEST_FFMA", "emulated")

TOLERANCE = 1e-5
"""Max error relative to max |C|: float32 products and sums in another order than numpy's."""

SHAPES = [  # batch, m, n, k, rhs_batched: K and N multiples of 4, other sizes ragged
    (1, 1, 4, 4, False),
    (1, 17, 132, 20, False),  # a K tail of 4 past one step of 16, fewer steps than stages
    (2, 130, 136, 264, True),  # 17 steps (more than the stages), a K tail of 8
    (1, 129, 260, 96, False),
    (3, 64, 128, 64, False),  # whole blocks of 64 rows, batches sharing B
]

GPU_SHAPES = [
    (1, 1, 8, 4096, False),
    (1, 17, 4096, 1000, False),
    (1, 4097, 1000, 16, False),
    (1, 1000, 4100, 4096, False),
    (1, 4096, 768, 3072, False),
    (1, 4096, 4096, 4096, False),
]

OTHER_TILES = [
    FfmaTiles(128, 128, 16, 4, 2, 4, 3),  # 8 warps, 4x8 lanes
    FfmaTiles(128, 128, 8, 4, 2, 4, 3, schedule="a"),  # two chunks a row: swizzle over 4 rows
    FfmaTiles(128, 128, 16, 2, 4, 8, 2),  # 8x4 lanes, 2 stages
    FfmaTiles(128, 128, 32, 4, 2, 4, 2, schedule="a"),  # 8 chunks a row: swizzled by the row
    FfmaTiles(64, 128, 16, 2, 2, 4, 4, group_m=2),  # 128 work-items, 4 stages, grouped rows
    FfmaTiles(128, 64, 16, 4, 2, 4, 3),  # 4 columns per work-item
    FfmaTiles(64, 64, 16, 2, 2, 4, 5),
    FfmaTiles(schedule="a"),  # A of every row first, then B column by column of K
    FfmaTiles(schedule="b_carry"),  # the barrier before a step's last four columns
    FfmaTiles(64, 64, 8, 2, 2, 4, 2, schedule="b_carry"),  # ... which follow the first
    SMALL_TILES,  # what products of few blocks take (`default_tiles`)
]


def operands(shape, seed=0):
    batch, m, n, k, rhs_batched = shape
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal((batch, m, k), dtype=np.float32)
    rhs = rng.standard_normal((batch if rhs_batched else 1, k, n), dtype=np.float32)
    return lhs, rhs


def product_error(shape, tiles=DEFAULT_TILES, launch=None, epilogue=False, b_k_major=False):
    """The kernel's largest error relative to max |C|; `b_k_major`: B given ``[N, K]``."""
    batch, m, n, k, rhs_batched = shape
    lhs, rhs = operands(shape)
    inputs = {"lhs": lhs, "rhs": np.ascontiguousarray(rhs.transpose(0, 2, 1)) if b_k_major
              else rhs}
    expected = lhs.astype(np.float64) @ rhs.astype(np.float64)
    if epilogue:
        bias = np.linspace(-1, 1, n).astype(np.float32)
        inputs["bias"] = bias
        rows = np.arange(batch * m).reshape(batch, m, 1)
        expected = np.maximum(expected + bias + 0.01 * rows, 0)
        kernel = gemm_ffma_pipelined("gemm_ffp_epi", batch, m, n, k, rhs_batched, BIAS_RELU,
                                     copies=COPIES, tiles=tiles, b_k_major=b_k_major)
    else:
        kernel = gemm_ffma_pipelined("gemm_ffp", batch, m, n, k, rhs_batched, copies=COPIES,
                                     tiles=tiles, b_k_major=b_k_major)
    out = launch(kernel, inputs, {"out": (batch, m, n)})["out"]
    scale = max(float(np.abs(expected).max()), 1e-30)
    return float(np.abs(out - expected).max()) / scale  # NaN (fails) if any is unwritten


@pytest.mark.parametrize("shape", SHAPES + (GPU_SHAPES if COPIES == "ptx" else []),
                         ids=lambda s: "x".join(map(str, s[:4])) + ("b" if s[4] else ""))
def test_pipelined_ffma_gemm_matches_numpy(launch, shape):
    error = product_error(shape, launch=launch)
    assert error <= TOLERANCE, f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize("tiles", OTHER_TILES, ids=lambda t: t.key())
def test_pipelined_ffma_gemm_with_other_blockings(launch, tiles):
    error = product_error((2, 150, 264, 104, True), tiles=tiles, launch=launch)
    assert error <= TOLERANCE, f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize("shape", SHAPES[:2], ids=lambda s: "x".join(map(str, s[:4])))
def test_carried_schedule_with_fewer_steps_than_stages(launch, shape):
    error = product_error(shape, tiles=FfmaTiles(schedule="b_carry", stages=4), launch=launch)
    assert error <= TOLERANCE, f"max error {error:.3g} of max |C|"


def test_pipelined_ffma_gemm_applies_the_epilogue_at_each_row_and_column(launch):
    error = product_error((2, 131, 24, 36, False), launch=launch, epilogue=True)
    assert error <= TOLERANCE


@pytest.mark.parametrize("shape", SHAPES + (GPU_SHAPES[:5] if COPIES == "ptx" else []),
                         ids=lambda s: "x".join(map(str, s[:4])) + ("b" if s[4] else ""))
def test_pipelined_ffma_gemm_reads_b_k_major(launch, shape):
    """B ``[N, K]``: its tiles copied as A's are, swizzled by groups of four rows, edges of N
    and K zero-filled."""
    error = product_error(shape, launch=launch, b_k_major=True)
    assert error <= TOLERANCE, f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize("tiles", OTHER_TILES, ids=lambda t: t.key())
def test_k_major_b_with_other_blockings_and_schedules(launch, tiles):
    error = product_error((2, 150, 264, 104, True), tiles=tiles, launch=launch, b_k_major=True)
    assert error <= TOLERANCE, f"max error {error:.3g} of max |C|"


def test_k_major_b_with_the_epilogue_and_the_carried_schedule(launch):
    for tiles in (DEFAULT_TILES, FfmaTiles(schedule="b_carry", stages=4)):
        error = product_error((2, 131, 24, 36, False), tiles=tiles, launch=launch,
                              epilogue=True, b_k_major=True)
        assert error <= TOLERANCE, f"{tiles.key()}: max error {error:.3g} of max |C|"


def test_pipelined_ffma_gemm_takes_rows_of_whole_float4():
    assert fits(4, 4) and fits(4096, 768) and not fits(6, 8) and not fits(8, 1000 + 2)
    with pytest.raises(ValueError, match="multiples of 4"):
        gemm_ffma_pipelined("g", 1, 4, 8, 18, False)
    with pytest.raises(ValueError, match="powers of two"):
        gemm_ffma_pipelined("g", 1, 4, 8, 16, False, tiles=FfmaTiles(96, 128))
    with pytest.raises(ValueError, match="at least 2 stages"):
        gemm_ffma_pipelined("g", 1, 4, 8, 16, False, tiles=FfmaTiles(stages=1))


def test_default_tiles_fit_the_local_memory_of_nvidia_opencl():
    assert DEFAULT_TILES.local_bytes <= 49152
    for k_major in (False, True):  # a K-major B's tile is padded: the kernel's array says
        source = gemm_ffma_pipelined("g", 1, 256, 256, 256, False, b_k_major=k_major).source
        (floats,) = re.findall(r"__local float smem\[(\d+)\]", source)
        assert DEFAULT_TILES.local_bytes <= 4 * int(floats) <= 49152


GPU_INFO = DeviceInfo("an NVIDIA GPU", is_cpu=False, tensor_cores=("f16", "bf16", "tf32"))


def test_gemm_takes_the_ffma_kernel_for_float32_on_devices_with_ptx():
    """`gemm` picks the kernel by device and shape: the FFMA kernel where ``mma.sync`` for
    TF32 built (NVIDIA sm_80+) and rows are whole float4; else the portable kernel (or the
    tensor cores when TF32 is allowed)."""
    def header(**kw):
        args = {"batch": 1, "m": 100, "n": 64, "k": 36, "rhs_batched": False,
                "device_info": GPU_INFO, **kw}
        return gemm("g", **args).source.splitlines()[0]

    assert "FFMA" in header() and DEFAULT_TILES.key() in header()
    assert "FFMA" in header(batch=3, rhs_batched=True, epilogue=BIAS_RELU)
    assert "FFMA" not in header(k=18) and "FFMA" not in header(n=66)
    assert "FFMA" not in header(device_info=replace(GPU_INFO, tensor_cores=()))
    assert "FFMA" not in header(device_info=None)
    assert "FFMA" not in header(split_k=2)
    assert "FFMA" not in header(out_dtype="f16")
    assert "FFMA" not in header(tiles=GPU_TILES)
    assert "tensor cores" in header(allow_tf32=True)


def test_products_of_few_blocks_take_the_small_tiles():
    """128x64 blocks filling less than 0.8 of the slots of their waves (3 a unit) give way to
    64x64 ones: GPT-2's 2048-row products on an H200's 132 units, not its 3072-column one nor
    BERT's 4096-row ones; not where the units are unknown, nor with the knob off."""
    assert default_tiles(2048, 768, 1, 132) == SMALL_TILES  # 192 blocks of 396 slots
    assert default_tiles(2048, 2304, 1, 132) == SMALL_TILES  # 576 of 792: 0.73
    assert default_tiles(2048, 3072, 1, 132) == DEFAULT_TILES  # 768 of 792
    assert default_tiles(4096, 768, 1, 132) == DEFAULT_TILES  # 384 of 396
    assert default_tiles(2048, 768, 2, 132) == DEFAULT_TILES  # the batch's blocks count too
    assert default_tiles(2048, 768) == DEFAULT_TILES
    with knobs.overridden(ffma_fill_waves=False):
        assert default_tiles(2048, 768, 1, 132) == DEFAULT_TILES
    info = replace(GPU_INFO, compute_units=132)
    header = gemm("g", 1, 2048, 768, 768, False, device_info=info).source.splitlines()[0]
    assert "FFMA" in header and SMALL_TILES.key() in header
