"""The tensor-core GEMM (`gemm_mma`) against numpy.

On the CPU (CI) the kernel runs with ``mma="emulated"``: each ``mma.sync`` is replaced by plain
OpenCL C that gathers the warp's fragments by the PTX layouts, so the tiling, the edge handling
(shapes that are not multiples of the 128x128x32 block, of the 16x8x16 mma, of the 16-byte
reads) and the epilogue are checked here; with ``FUSEC_TEST_MMA=ptx`` on the GPU machine the
same tests run the real instructions.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.codegen.kernels.common import Epilogue, KernelArg
from fusec.codegen.kernels.gemm_mma import gemm_mma
from fusec.dtypes import bf16_bits, bf16_to_f32

MMA = os.environ.get("FUSEC_TEST_MMA", "emulated")

SHAPES = [  # batch, m, n, k, rhs_batched
    (1, 1, 1, 1, False),
    (1, 17, 33, 40, False),
    (2, 130, 136, 70, True),
    (1, 129, 17, 17, False),
]


def operands(dtype: str, shape: tuple[int, int, int, int, bool], seed: int = 0):
    """Host arrays of the kernel and the float64 values they hold."""
    batch, m, n, k, rhs_batched = shape
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal((batch, m, k), dtype=np.float32)
    rhs = rng.standard_normal((batch if rhs_batched else 1, k, n), dtype=np.float32)
    if dtype == "f16":
        lhs, rhs = lhs.astype(np.float16), rhs.astype(np.float16)
        return lhs, rhs, lhs.astype(np.float64), rhs.astype(np.float64)
    if dtype == "bf16":
        lhs, rhs = bf16_bits(lhs), bf16_bits(rhs)
        return lhs, rhs, bf16_to_f32(lhs).astype(np.float64), bf16_to_f32(rhs).astype(np.float64)
    return lhs, rhs, lhs.astype(np.float64), rhs.astype(np.float64)


def as_float(out: np.ndarray) -> np.ndarray:
    return (bf16_to_f32(out) if out.dtype == np.uint16 else out).astype(np.float64)


TOLERANCE = {"f16": 2e-3, "bf16": 1e-2, "f32": 3e-3}
"""Relative to max |C|: the output's rounding (f16, bf16), or TF32's 2^-11 per operand."""


GPU_SHAPES = [  # the odd sizes, too slow to emulate
    (1, 1, 17, 4097, False),
    (1, 17, 4097, 1000, False),
    (1, 4097, 1000, 17, False),
    (1, 1000, 1, 4097, False),
]

CASES = [(dtype, shape) for dtype in ("f16", "bf16", "f32")
         for shape in SHAPES + (GPU_SHAPES if MMA == "ptx" else [])
         if dtype == "f16" or MMA == "ptx" or shape in (SHAPES[1], SHAPES[2])]
"""Every shape in f16; on the CPU (each emulated kernel takes seconds to build) two shapes
for bf16 and TF32, whose tiles differ from f16's only in their element type."""


@pytest.mark.parametrize(("dtype", "shape"), CASES,
                         ids=lambda c: c if isinstance(c, str) else "x".join(map(str, c[:4])))
def test_tensor_core_gemm_matches_numpy(launch, dtype, shape):
    batch, m, n, k, rhs_batched = shape
    lhs, rhs, a, b = operands(dtype, shape)
    kernel = gemm_mma("gemm_tc", batch, m, n, k, rhs_batched, dtype=dtype, mma=MMA)
    out = launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (batch, m, n)})["out"]
    expected = a @ b
    scale = max(float(np.abs(expected).max()), 1e-30)
    error = float(np.abs(as_float(out) - expected).max()) / scale
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C| {scale:.3g}"


BIAS_RELU = Epilogue(
    function="""
inline float bias_relu(float acc, int row, int col, __global const float *bias) {
    return fmax(acc + bias[col] + 0.01f * row, 0.0f);
}""",
    name="bias_relu",
    params=(KernelArg("bias", "in"),),
)


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_tensor_core_gemm_applies_the_epilogue_at_each_row_and_column(launch, dtype):
    shape = (2, 131, 20, 24, False)
    batch, m, n, k, _ = shape
    lhs, rhs, a, b = operands(dtype, shape, seed=3)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    kernel = gemm_mma("gemm_tc_epi", batch, m, n, k, False, BIAS_RELU, dtype=dtype, mma=MMA)
    out = launch(kernel, {"lhs": lhs, "rhs": rhs, "bias": bias}, {"out": (batch, m, n)})["out"]
    rows = np.arange(batch * m).reshape(batch, m, 1)
    expected = np.maximum(a @ b + bias + 0.01 * rows, 0)
    error = float(np.abs(as_float(out) - expected).max()) / float(np.abs(expected).max())
    assert error <= TOLERANCE[dtype]


def test_gemm_uses_tensor_cores_only_where_the_device_has_them_and_tf32_is_allowed():
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.codegen.kernels.gemm import gemm

    nvidia = DeviceInfo("H100", is_cpu=False, local_mem_size=49152, max_work_group_size=1024,
                        tensor_cores=("f16", "bf16", "tf32"))
    plain = DeviceInfo("other GPU", is_cpu=False, local_mem_size=49152)

    def uses_mma(info: DeviceInfo, dtype: str, **kw) -> bool:
        return "mma.sync" in gemm("g", 1, 64, 64, 64, False, device_info=info, dtype=dtype,
                                  **kw).source

    assert uses_mma(nvidia, "f16") and uses_mma(nvidia, "bf16")
    assert not uses_mma(nvidia, "f32")
    assert uses_mma(nvidia, "f32", allow_tf32=True)
    assert not uses_mma(plain, "f16") and not uses_mma(plain, "f32", allow_tf32=True)
    assert not uses_mma(nvidia, "f16", split_k=2)


def test_allow_tf32_reaches_the_gemm_template():
    from fusec.compiler.driver import load, lower

    text = """func.func @f(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = nn.matmul %a, %b : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}"""
    allowed = lower(load(text), allow_tf32=True).module
    assert "allow_tf32 = true" in str(allowed)
    assert "allow_tf32" not in str(lower(load(text)).module)
