"""16-bit products whose result is stored in float32, on the tensor-core kernels (emulated on the
CPU, as the other tensor-core tests; ``FUSEC_TEST_MMA=ptx`` runs the instructions on the GPU).

A GEMM of f16 operands whose epilogue ends in a cast to f32 (`fuse-matmul-epilogue`: a
float16 model's down projection feeding a float32 residual) stores its float32 value, not a
rounding of it to f16; an f16 attention stored in f32 (`fuse-attention-cast`) stores the f16
result widened, bit for bit what the f16 kernel stores.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.attention_mma import attention_mma
from fusec.codegen.kernels.common import DeviceInfo, Epilogue
from fusec.codegen.kernels.gemm import gemm
from fusec.codegen.kernels.gemm_mma import gemm_mma
from fusec.codegen.kernels.gemm_mma_pipelined import gemm_mma_pipelined
from fusec.codegen.kernels.gemm_wgmma import emulated, gemm_plan, gemm_wgmma
from tests.codegen.test_kernel_gemm_mma import MMA

F32_ERROR = 1e-5
"""Relative to max |C|: float32 accumulation of K <= 64 products of f16 values, and no output
rounding; an f16 store of C would be off by up to 2^-11 (4.9e-4)."""


def f16_operands(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float16),
            rng.standard_normal((k, n)).astype(np.float16))


def relative_error(out: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    want = a.astype(np.float64) @ b.astype(np.float64)
    return float(np.abs(out.astype(np.float64) - want).max() / np.abs(want).max())


@pytest.mark.parametrize("kernel", ["mma", "pipelined"])
def test_mma_sync_gemms_store_a_float32_c_of_f16_operands(launch, kernel):
    m, n, k = 33, 40, 64
    a, b = f16_operands(m, n, k)
    make = gemm_mma if kernel == "mma" else gemm_mma_pipelined
    source = make("gemm_wide", 1, m, n, k, False, dtype="f16", mma=MMA, out_dtype="f32")
    assert source.args[2].dtype == "float"
    out = launch(source, {"lhs": a, "rhs": b}, {"out": (1, m, n)})["out"]
    assert out.dtype == np.float32
    assert relative_error(out[0], a, b) <= F32_ERROR


def test_wgmma_gemm_stages_and_stores_a_float32_c_of_f16_operands(launch):
    """C staged as float32 rows (4-byte elements: the row padding and copy-out of TF32's C)."""
    m, n, k = 128, 256, 64
    a, b = f16_operands(m, n, k, seed=1)
    source = gemm_wgmma("gemm_wg_wide", m, n, k, "f16", out_dtype="f32")
    if MMA != "ptx":
        source = emulated(source)
    out = launch(source, {"lhs": a, "rhs_t": np.ascontiguousarray(b.T)}, {"out": (m, n)})["out"]
    assert out.dtype == np.float32
    assert relative_error(out, a, b) <= F32_ERROR


def test_a_widening_epilogue_keeps_the_tensor_core_kernels():
    """The portable kernel is left only for casts to other types (to i32, say)."""
    h200 = DeviceInfo("H200", is_cpu=False, local_mem_size=232448, max_work_group_size=1024,
                      tensor_cores=("f16", "bf16", "tf32"), wgmma=True)
    wide = gemm("g", 1, 64, 64, 64, False, device_info=h200, dtype="f16", out_dtype="f32")
    assert "tensor cores" in wide.source.splitlines()[0]
    narrowed = gemm("g", 1, 64, 64, 64, False, device_info=h200, dtype="f16", out_dtype="i32")
    assert "tensor cores" not in narrowed.source.splitlines()[0]
    identity = Epilogue("", "", ())
    assert gemm_plan("g", 1, 128, 256, 64, False, identity, h200, "f16", False, "f32",
                     1) is not None
    assert gemm_plan("g", 1, 128, 256, 64, False, identity, h200, "f16", False, "i32",
                     1) is None
    with pytest.raises(ValueError, match="stores f16, or f32 of 16-bit operands"):
        gemm_wgmma("g", 128, 256, 64, "f16", swiglu=True, out_dtype="f32")


def test_mma_attention_stores_its_f16_result_widened_bit_for_bit(launch):
    batch, seq, heads, dim = 1, 17, 2, 16
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((batch, seq, heads * dim)).astype(np.float16)
               for _ in range(3))
    sizes = ("attn", batch, seq, seq, heads, dim, dim ** -0.5)
    inputs = {"q": q, "k": k, "v": v}
    half = launch(attention_mma(*sizes, causal=True, dtype="f16", mma=MMA), inputs,
                  {"out": q.shape})["out"]
    wide = launch(attention_mma(*sizes, causal=True, dtype="f16", mma=MMA, out_dtype="f32"),
                  inputs, {"out": q.shape})["out"]
    assert half.dtype == np.float16 and wide.dtype == np.float32
    np.testing.assert_array_equal(wide, half.astype(np.float32))
