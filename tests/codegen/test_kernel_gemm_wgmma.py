"""The Hopper wgmma GEMM (`gemm_wgmma`) and the transpose before it, against numpy.

On the CPU (CI) the GEMM runs `emulated`: ``cp.async`` a plain copy, each ``wgmma`` step a
loop reading the operands through their descriptors with the 128-byte swizzle as the tensor
cores read them, so the copies, the swizzled layout, the descriptors, the stage rotation, the
block order and the staged stores of C (f16, bf16, float32) are checked here. With
``FUSEC_TEST_MMA=ptx`` on an sm_90 GPU (``FUSEC_TEST_DEVICE=gpu``) the same tests run the real
instructions, their PTX patched by `fusec.codegen.ptx_patch` in the program build.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from fusec.codegen.kernels.common import IDENTITY_EPILOGUE, DeviceInfo, Epilogue
from fusec.codegen.kernels.gemm_wgmma import (
    emulated,
    fits,
    gemm_plan,
    gemm_wgmma,
    transpose,
    why_not,
)
from fusec.dtypes import bf16_bits, bf16_to_f32
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


def test_only_whole_tiles_with_the_identity_on_a_wgmma_device_take_it():
    def reason(m, n, k, dtype="f16", info=NVIDIA_H, epilogue=IDENTITY_EPILOGUE, tf32=False,
               out=None, batch=1, split=1, batched=False):
        return why_not(info, batch, m, n, k, batched, epilogue, dtype, tf32, out or dtype, split)

    assert reason(4096, 4096, 4096) is None and reason(4096, 4096, 4096, "bf16") is None
    assert reason(4096, 4096, 4096, "f32", tf32=True) is None
    assert reason(4096, 4096, 4096, "f32") == "f32 without allow_tf32"
    for m, n, k in [(1000, 4104, 4096), (1, 256, 64), (17, 256, 64), (4097, 4096, 4096),
                    (128, 1000, 64), (128, 256, 4097), (128, 256, 96)]:
        assert "not whole" in reason(m, n, k)
    assert fits("f32", 1, 128, 256, 96) and not fits("f16", 1, 128, 256, 96)
    assert reason(128, 256, 64, info=DeviceInfo("x", is_cpu=False)) == "the device has no wgmma"
    assert "epilogue" in reason(128, 256, 64, epilogue=Epilogue("float e(float a) {}", "e"))
    assert reason(128, 256, 64, out="f32") == "the result is cast"
    assert "batch" in reason(128, 256, 64, batch=2, batched=True)
    assert "batch" in reason(128, 256, 64, split=2)
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
    (256, 512, 128, "f32", True, 2, True), (256, 512, 128, "f32", False, 1, False),
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
    no_wgmma = DeviceInfo("H100", is_cpu=False, local_mem_size=49152, max_work_group_size=1024,
                          tensor_cores=("f16", "bf16", "tf32"))
    assert "FUSEC_WGMMA" not in plan_of(m, n, k, dtype, no_wgmma, allow_tf32=tf32).source
