"""Matmuls through `fusec.compile` on an sm_90 GPU, where products of whole tiles take the
Hopper wgmma GEMM (f16 and TF32 after a transpose of B) and the rest the mma.sync kernels:
all against numpy.

Runs only with ``FUSEC_TEST_WGMMA=1`` on the GPU machine (``FUSEC_TEST_DEVICE=gpu``), where the
device's probe must have found wgmma (`DeviceInfo.wgmma`); on the CPU every test is skipped.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.dtypes import bf16_bits, bf16_to_f32

pytestmark = pytest.mark.skipif(os.environ.get("FUSEC_TEST_WGMMA") != "1",
                                reason="needs FUSEC_TEST_WGMMA=1 on an sm_90 GPU")

MATMUL = """func.func @f(%a: tensor<MxKxT>, %b: tensor<KxNxT>) -> tensor<MxNxT> {
  %y = nn.matmul %a, %b : tensor<MxKxT>, tensor<KxNxT> -> tensor<MxNxT>
  func.return %y : tensor<MxNxT>
}"""
TOLERANCE = {"f16": 2e-3, "bf16": 1e-2, "f32": 2e-3}


@pytest.fixture(scope="module")
def gpu_info():
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.runtime.device import select_device

    info = DeviceInfo.from_device(select_device("gpu").device)
    assert info.wgmma, info.notes
    return info


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1000, 4104, 4096), (1, 256, 64),
                                   (17, 512, 128), (4097, 256, 64), (256, 1000, 64)],
                         ids=lambda s: "x".join(map(str, s)))
def test_matmul_on_the_gpu_matches_numpy(gpu_info, dtype, shape):
    import fusec

    m, n, k = shape
    text = (MATMUL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
            .replace("T", dtype))
    exe = fusec.compile(text, device="gpu", allow_tf32=dtype == "f32")
    whole = m % 128 == 0 and n % 256 == 0 and k % 64 == 0
    assert ("FUSEC_WGMMA_STEP" in exe.plan.source) == whole
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    if dtype == "f16":
        ins = [a.astype(np.float16), b.astype(np.float16)]
        a32, b32 = (x.astype(np.float32) for x in ins)
    elif dtype == "bf16":
        ins = [bf16_bits(a), bf16_bits(b)]
        a32, b32 = (bf16_to_f32(x) for x in ins)
    else:
        ins, a32, b32 = [a, b], a, b
    out = exe(*ins)
    out = out[0] if isinstance(out, list | tuple) else out
    got = bf16_to_f32(out) if dtype == "bf16" else np.asarray(out, dtype=np.float32)
    rows = np.unique(np.r_[0:min(m, 128), max(0, m - 128):m, 0:m:7])
    want = a32[rows] @ b32
    error = float(np.abs(got[rows] - want).max() / np.abs(want).max())
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


LAYER = """func.func @f(%x: tensor<BxMxKxT>, %w: tensor<KxNxT>, %bias: tensor<NxT>,
                  %res: tensor<BxMxNxT>) -> tensor<BxMxNxT> {
  %y = nn.matmul %x, %w : tensor<BxMxKxT>, tensor<KxNxT> -> tensor<BxMxNxT>
  %z = nn.add %y, %bias : tensor<BxMxNxT>, tensor<NxT> -> tensor<BxMxNxT>
  %g = nn.gelu %z : tensor<BxMxNxT> -> tensor<BxMxNxT>
  %o = nn.add %g, %res : tensor<BxMxNxT>, tensor<BxMxNxT> -> tensor<BxMxNxT>
  func.return %o : tensor<BxMxNxT>
}"""


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("bound", [False, True], ids=["b-arg", "b-bound"])
@pytest.mark.parametrize("shape", [(2, 128, 768, 256), (4, 512, 256, 3072), (1, 17, 256, 64),
                                   (1, 1000, 768, 128), (1, 4097, 256, 64)],
                         ids=lambda s: "x".join(map(str, s)))
def test_gemm_bias_gelu_residual_on_the_gpu_matches_the_reference(gpu_info, set_knobs, dtype,
                                                                  bound, shape):
    """With the knob `wgmma_layer_gemms` on: the epilogue (bias, GELU, residual add) on wgmma's
    accumulators where the rows of the batch are whole tiles, with B transposed per call or
    stored so when bound; the mma.sync kernels elsewhere: against the numpy reference."""
    import fusec

    set_knobs(wgmma_layer_gemms=True)
    from fusec.compiler.driver import load
    from fusec.reference.executor import find_function, random_inputs, run_function

    b, m, n, k = shape
    text = (LAYER.replace("B", str(b)).replace("M", str(m)).replace("N", str(n))
            .replace("K", str(k)).replace("T", dtype))
    module = load(text)
    args = random_inputs(find_function(module), seed=1)
    want = run_function(module, args)[0]
    params = {"w": args[1]} if bound else None
    exe = fusec.compile(text, device="gpu", params=params)
    whole = b * m % 128 == 0 and n % 256 == 0 and k % 64 == 0
    assert ("FUSEC_WGMMA_STEP" in exe.plan.source) == whole
    assert ("_bt" in " ".join(launch.kernel for launch in exe.plan.launches)) == (
        whole and dtype == "f16" and not bound)
    out = exe(*(args[:1] + args[2:] if bound else args))
    out = out[0] if isinstance(out, list | tuple) else out
    got, ref = ((bf16_to_f32(v) if dtype == "bf16" else np.asarray(v, np.float32))
                for v in (out, want))
    error = float(np.abs(got - ref).max() / np.abs(ref).max())
    assert error <= 4 * TOLERANCE[dtype], f"max error {error:.3g} of max |C|"


SWIGLU = """func.func @f(%x: tensor<BxMxKxT>, %w: tensor<KxNxT>) -> tensor<BxMxHxT> {
  %c = nn.matmul %x, %w : tensor<BxMxKxT>, tensor<KxNxT> -> tensor<BxMxNxT>
  %y = fused.swiglu %c {gate_first = GATE_FIRST} : tensor<BxMxNxT> -> tensor<BxMxHxT>
  func.return %y : tensor<BxMxHxT>
}"""


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("gate_first", [True, False], ids=["gate-first", "up-first"])
@pytest.mark.parametrize("case", ["random", "saturated"])
@pytest.mark.parametrize("shape", [(32, 128, 768, 4096), (2, 128, 256, 512), (1, 100, 256, 512)],
                         ids=lambda s: "x".join(map(str, s)))
def test_swiglu_in_the_wgmma_epilogue_on_the_gpu_matches_the_reference(gpu_info, dtype,
                                                                      gate_first, case, shape):
    """The knob `wgmma_swiglu_epilogue`: ``fused.swiglu(x @ w)`` with w bound is one wgmma launch
    (B's gate/up columns interleaved) where the rows are whole tiles, the GEMM and the
    ``swiglu`` kernel elsewhere; "saturated": |gate| up to ~100 (silu(g) -> g, or -> -0)."""
    import fusec
    from fusec.compiler.driver import load
    from fusec.reference.executor import run_function

    b, m, k, n = shape
    text = (SWIGLU.replace("GATE_FIRST", "true" if gate_first else "false")
            .replace("B", str(b)).replace("M", str(m)).replace("N", str(n))
            .replace("K", str(k)).replace("H", str(n // 2)).replace("T", dtype))
    rng = np.random.default_rng(4)
    x = rng.standard_normal((b, m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32) / np.sqrt(k)
    if case == "saturated":
        w[:, :n // 2] *= 25.0 if gate_first else 1.0
        w[:, n // 2:] *= 1.0 if gate_first else 25.0
    host = (lambda v: v.astype(np.float16)) if dtype == "f16" else bf16_bits
    x16, w16 = host(x), host(w)
    want = run_function(load(text), [x16, w16])[0]
    exe = fusec.compile(text, device="gpu", params={"w": w16})
    kernels = [launch.kernel for launch in exe.plan.launches]
    whole = b * m % 128 == 0
    assert any("gemm_swiglu" in name for name in kernels) == whole, kernels
    assert len(kernels) == (1 if whole else 2), kernels
    out = exe(x16)
    out = out[0] if isinstance(out, list | tuple) else out
    got, ref = ((bf16_to_f32(v) if dtype == "bf16" else np.asarray(v, np.float32))
                for v in (out, want))
    assert np.isfinite(got).all()
    error = float(np.abs(got - ref).max() / np.abs(ref).max())
    assert error <= 4 * TOLERANCE[dtype], f"max error {error:.3g} of max |y|"
