"""The pipelined tensor-core GEMM (`gemm_mma_pipelined`) against numpy, f16, bf16 and TF32.

On the CPU (CI) it runs with ``mma="emulated"``: ``cp.async`` becomes a plain copy, ``ldmatrix``
an exchange of the lanes' row addresses through local memory and reads by the PTX layouts, and
``mma.sync`` `gemm_mma`'s emulation; so the swizzled local layout, the fragment addresses, the
stage rotation, the zero-filled edges and the epilogue are checked here. With
``FUSEC_TEST_MMA=ptx`` on the GPU machine the same tests run the real instructions.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.gemm_mma_pipelined import (
    DEFAULT_TILES,
    PipelineTiles,
    fits,
    gemm_mma_pipelined,
)
from tests.codegen.test_kernel_gemm_mma import BIAS_RELU, MMA, TOLERANCE, as_float, operands

SHAPES = [  # batch, m, n, k, rhs_batched: K and N multiples of 8, other sizes ragged
    (1, 1, 8, 8, False),
    (1, 17, 72, 40, False),
    (2, 130, 136, 264, True),  # 9 steps of 32 (more than the stages), a K tail of 8
    (1, 129, 200, 96, False),
]

GPU_SHAPES = [
    (1, 1, 8, 4096, False),
    (1, 17, 4096, 1000, False),
    (1, 4097, 1000, 16, False),
    (1, 1000, 4104, 4096, False),
    (1, 4096, 4096, 4096, False),
]

OTHER_TILES = [
    PipelineTiles(128, 128, 2, 4, 2),
    PipelineTiles(128, 128, 2, 2, 3, fragment_prefetch=False),
    PipelineTiles(64, 128, 2, 2, 4, group_m=2),
] + ([PipelineTiles(128, 256, 2, 4, 2)] if MMA == "ptx" else [])
"""8 warps and 2 stages; fragments loaded just before use; 4 stages, 32-row warp tiles and
blocks run in groups of 2 block rows (the test's 3 block rows make a short last group)."""


def product_error(dtype, shape, tiles=DEFAULT_TILES, launch=None, epilogue=False):
    batch, m, n, k, rhs_batched = shape
    lhs, rhs, a, b = operands(dtype, shape)
    inputs = {"lhs": lhs, "rhs": rhs}
    expected = a @ b
    if epilogue:
        bias = np.linspace(-1, 1, n).astype(np.float32)
        inputs["bias"] = bias
        rows = np.arange(batch * m).reshape(batch, m, 1)
        expected = np.maximum(expected + bias + 0.01 * rows, 0)
        kernel = gemm_mma_pipelined("gemm_tcp_epi", batch, m, n, k, rhs_batched, BIAS_RELU,
                                    dtype=dtype, mma=MMA, tiles=tiles)
    else:
        kernel = gemm_mma_pipelined("gemm_tcp", batch, m, n, k, rhs_batched, dtype=dtype,
                                    mma=MMA, tiles=tiles)
    out = launch(kernel, inputs, {"out": (batch, m, n)})["out"]
    scale = max(float(np.abs(expected).max()), 1e-30)
    return float(np.abs(as_float(out) - expected).max()) / scale


CASES = [(dtype, shape) for dtype in ("f16", "bf16", "f32")
         for shape in SHAPES + (GPU_SHAPES if MMA == "ptx" else [])
         if dtype == "f16" or MMA == "ptx" or shape == SHAPES[2]]
"""Every shape in f16; on the CPU one shape for bf16 and for TF32 (f32 operands)."""


@pytest.mark.parametrize(("dtype", "shape"), CASES,
                         ids=lambda c: c if isinstance(c, str) else "x".join(map(str, c[:4])))
def test_pipelined_tensor_core_gemm_matches_numpy(launch, dtype, shape):
    error = product_error(dtype, shape, launch=launch)
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize("tiles", OTHER_TILES, ids=lambda t: f"{t.block_m}x{t.block_n}"
                         f"w{t.warps_m}x{t.warps_n}s{t.stages}"
                         f"{'' if t.fragment_prefetch else 'late'}g{t.group_m}")
def test_pipelined_gemm_with_other_blockings(launch, tiles):
    error = product_error("f16", (1, 150, 264, 104, False), tiles=tiles, launch=launch)
    assert error <= TOLERANCE["f16"], f"max error {error:.3g} of max |C|"


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_pipelined_gemm_applies_the_epilogue_at_each_row_and_column(launch, dtype):
    error = product_error(dtype, (2, 131, 24, 24, False), launch=launch, epilogue=True)
    assert error <= TOLERANCE[dtype]


@pytest.mark.parametrize("tiles", OTHER_TILES[:1], ids=lambda t: f"{t.block_m}x{t.block_n}"
                         f"w{t.warps_m}x{t.warps_n}s{t.stages}")
def test_pipelined_tf32_gemm_with_other_blockings(launch, tiles):
    error = product_error("f32", (1, 70, 132, 52, False), tiles=tiles, launch=launch)
    assert error <= TOLERANCE["f32"], f"max error {error:.3g} of max |C|"


def test_pipelined_gemm_takes_only_16_bit_operands_with_rows_of_whole_chunks():
    assert fits("f16", 8, 16) and fits("bf16", 4096, 4096) and fits("f32", 12, 20)
    assert not fits("f16", 12, 16) and not fits("f16", 8, 20) and not fits("f32", 6, 8)
    assert not fits("i32", 8, 8)
    with pytest.raises(ValueError, match="multiples of 8"):
        gemm_mma_pipelined("g", 1, 4, 12, 16, False)
    with pytest.raises(ValueError, match="block_n a multiple of 64"):
        gemm_mma_pipelined("g", 1, 4, 8, 16, False, tiles=PipelineTiles(128, 96, 2, 2, 3))


def test_default_tiles_fit_the_local_memory_of_nvidia_opencl():
    assert DEFAULT_TILES.local_bytes <= 49152


@pytest.mark.parametrize("kernel", ["pipelined", "staged"])
def test_tf32_operands_are_rounded_to_nearest_before_the_product(launch, kernel):
    """1 + 3 * 2^-12 is 1 + 2^-10 in TF32 (10 mantissa bits, to nearest), 1 truncated: each
    product is then exactly (1 + 2^-10)^2 and the sum of 8 exact in float32, whereas unrounded
    operands (or truncated ones, as the tensor cores take raw f32 bits) give another sum."""
    from fusec.codegen.kernels.gemm_mma import gemm_mma

    m, n, k = 3, 4, 8
    value = np.float32(1 + 3 * 2.0 ** -12)
    lhs = np.full((1, m, k), value, dtype=np.float32)
    rhs = np.full((1, k, n), value, dtype=np.float32)
    if kernel == "pipelined":
        source = gemm_mma_pipelined("gemm_tf32_round", 1, m, n, k, False, dtype="f32", mma=MMA)
    else:
        source = gemm_mma("gemm_tf32_round_staged", 1, m, n, k, False, dtype="f32", mma=MMA)
    out = launch(source, {"lhs": lhs, "rhs": rhs}, {"out": (1, m, n)})["out"]
    expected = k * (1 + 2.0 ** -10) ** 2
    assert np.all(out == np.float32(expected)), f"{out.ravel()[:4]} != {expected}"
