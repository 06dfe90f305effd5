"""Which products take the SwiGLU epilogue of the wgmma GEMM (`fusec.codegen.swiglu_epilogue`),
and that every other plan is the very plan made with it off (the knob `wgmma_swiglu_epilogue`).
The numbers: tests/runtime/test_wgmma_swiglu_emulated.py (CPU) and test_wgmma_gpu.py (GPU).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fusec import knobs
from fusec.codegen.kernels import gemm_wgmma
from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.plan import ProgramPlan, interleave_halves
from fusec.dtypes import bf16_bits, bf16_to_f32

HOPPER = DeviceInfo("H200", is_cpu=False, local_mem_size=232448, max_work_group_size=1024,
                    tensor_cores=("f16", "bf16", "tf32"), wgmma=True)
NO_WGMMA = replace(HOPPER, wgmma=False)
CPU = DeviceInfo("CPU", is_cpu=True)

FFN = """func.func @ffn(%x: tensor<MxKxT>, %w: tensor<KxNxT>) -> RESULTS {
  %c = nn.matmul %x, %w : tensor<MxKxT>, tensor<KxNxT> -> tensor<MxNxT>
  %y = fused.swiglu %c {gate_first = true} : tensor<MxNxT> -> tensor<MxHxT>
  func.return RETURNED
}"""


def ffn(m=256, k=128, n=512, dtype="f16", cat_returned=False):
    results = ("(tensor<MxHxT>, tensor<MxNxT>)" if cat_returned else "tensor<MxHxT>")
    returned = ("%y, %c : tensor<MxHxT>, tensor<MxNxT>" if cat_returned
                else "%y : tensor<MxHxT>")
    text = FFN.replace("RESULTS", results).replace("RETURNED", returned)
    return (text.replace("M", str(m)).replace("K", str(k)).replace("N", str(n))
            .replace("H", str(n // 2)).replace("T", dtype))


def plan_of(text, device, bound=("w",), params=None, allow_tf32=False,
            fused=True) -> ProgramPlan:
    from fusec.compiler.driver import fuse_and_fold, load, lower

    with knobs.overridden(wgmma_swiglu_epilogue=fused):
        module = load(text)
        pipeline = "default"
        if params is not None:
            pipeline, folded = fuse_and_fold(module, None, pipeline, "<test>", params)
            bound = tuple(folded or {})
        return lower(module, None, pipeline, device, bound=list(bound),
                     allow_tf32=allow_tf32).plan


def to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """`x` as the host holds a tensor of `dtype` (bf16: its bits, `fusec.dtypes`)."""
    return bf16_bits(x) if dtype == "bf16" else x.astype(np.float16)


def as_f64(x: np.ndarray) -> np.ndarray:
    return (bf16_to_f32(x) if x.dtype == np.uint16 else x).astype(np.float64)


def same_plan(a: ProgramPlan, b: ProgramPlan) -> bool:
    """Equal in everything, the constants' bytes included."""
    def key(plan):
        buffers = [(s.nbytes, s.role, s.label, None if s.data is None else s.data.tobytes())
                   for s in plan.buffers]
        return (plan.function, plan.source, plan.build_options, buffers, plan.inputs,
                plan.outputs, plan.launches, plan.kernel_lines)
    return key(a) == key(b)


def test_the_product_and_its_swiglu_are_one_launch_into_the_result():
    plan = plan_of(ffn(), HOPPER)
    (launch,) = plan.launches
    assert launch.kernel == "ffn_gemm_swiglu_0" and launch.global_size == (2 * 2 * 256,)
    x, w = (spec.buffer for spec in plan.inputs)
    assert launch.buffers == (x, w, plan.outputs[0].buffer)
    assert "SwiGLU of column pairs" in plan.source and "FUSEC_WGMMA_STEP" in plan.source
    # the result's buffer only: cat [256, 512] gets none
    assert sorted(b.role for b in plan.buffers) == ["input", "input", "output"]
    (spec,) = (s for s in plan.inputs if s.name == "w")
    # transposed ([N, K], nn.Linear's layout), the halves as they are: paired as read
    assert (spec.panels, spec.interleaved) == (1, None) and spec.repacked
    assert "B in halves (first even)" in plan.source
    assert len(launch.places) == 2  # the matmul's and the swiglu's lines


def test_the_bound_weight_is_stored_transposed_in_halves_for_f16_and_bf16():
    """The kernels pair the gate's and up's rows as they read them (`gemm_wgmma.b_row`), so
    the stored B is the two halves transposed, as ``nn.Linear`` holds them; interleaving
    (`interleave_halves`) is for a B read as it is."""
    weight = np.arange(4 * 6, dtype=np.float16).reshape(4, 6)
    assert np.array_equal(interleave_halves(weight, "first")[:, [0, 1, 2, 3]],
                          weight[:, [0, 3, 1, 4]])
    assert np.array_equal(interleave_halves(weight, "second")[:, [0, 1, 4, 5]],
                          weight[:, [3, 0, 5, 2]])
    with pytest.raises(ValueError, match="interleave"):
        interleave_halves(weight[:, :5], "first")
    f16 = plan_of(ffn(), HOPPER)
    (w,) = (s for s in f16.inputs if s.name == "w")
    matrix = np.arange(128 * 512, dtype=np.float16).reshape(128, 512)
    stored = w.stored(matrix).reshape(512, 128)  # [N, K]: gate's rows, then up's
    assert np.array_equal(stored, matrix.T)
    assert "B in halves (first even)" in f16.source
    bf16 = plan_of(ffn(dtype="bf16"), HOPPER)
    (w,) = (s for s in bf16.inputs if s.name == "w")
    assert (w.panels, w.interleaved) == (1, None)
    up_first = ffn().replace("gate_first = true", "gate_first = false")
    plan = plan_of(up_first, HOPPER)
    (w,) = (s for s in plan.inputs if s.name == "w")
    assert w.interleaved is None and "B in halves (second even)" in plan.source
    assert gemm_wgmma.b_row("r", 512, "first") == "(((r) & 1) * 256 + 0 + ((r) >> 1))"
    assert [eval(gemm_wgmma.b_row(str(r), 512, "second")) for r in range(4)] == [
        256, 0, 257, 1]


def llama_b32(dtype):
    from fusec.bench.workloads import LLAMA_INITS, llama
    from fusec.compiler.driver import load
    from fusec.reference.executor import find_function

    text = llama(32, 128, element=dtype).text()
    host = np.float16 if dtype == "f16" else np.uint16
    params = {arg.name_hint: np.zeros(tuple(arg.type.get_shape()), host)
              for arg in find_function(load(text)).body.block.args
              if arg.name_hint in LLAMA_INITS}
    return text, params


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_the_llama_block_at_batch_32_on_hopper_has_7_launches_and_no_swiglu_kernel(
        dtype):
    text, params = llama_b32(dtype)
    plan = plan_of(text, HOPPER, params=params)
    kinds = [k.kernel.removeprefix(f"llama_{dtype}_").rsplit("_", 1)[0] for k in plan.launches]
    assert kinds == ["rms_norm", "gemm", "attention", "gemm", "rms_norm", "gemm_swiglu", "gemm"]
    product = plan.launches[5]
    assert product.global_size == (4096 // 128 * (4096 // 256) * 256,)  # [4096, 4096] of C
    result = plan.buffers[product.buffers[2]]
    assert result.nbytes == 4096 * 2048 * 2 and result.role == "intermediate"
    assert plan.launches[6].buffers[0] == product.buffers[2]
    assert product.buffers[0] != product.buffers[2]
    # nothing holds the [4096, 4096] cat any more
    assert max(b.nbytes for b in plan.buffers) < 4096 * 4096 * 2
    unfused = plan_of(text, HOPPER, params=params, fused=False)
    assert len(unfused.launches) == 8 and "_swiglu_" in unfused.launches[6].kernel
    assert max(b.nbytes for b in unfused.buffers) == 4096 * 4096 * 2


@pytest.mark.parametrize("device", [NO_WGMMA, CPU], ids=["gpu-without-wgmma", "cpu"])
def test_the_llama_block_elsewhere_is_planned_as_without_the_epilogue(device):
    text, params = llama_b32("f16")
    plan = plan_of(text, device, params=params)
    assert any("_swiglu_" in launch.kernel for launch in plan.launches)
    assert same_plan(plan, plan_of(text, device, params=params, fused=False))
    assert all(s.interleaved is None for s in plan.inputs)


TWO_READERS = """func.func @ffn(%x: tensor<256x128xf16>, %w: tensor<128x512xf16>,
                %x2: tensor<256x128xf16>) -> (tensor<256x256xf16>, tensor<256x512xf16>) {
  %c = nn.matmul %x, %w : tensor<256x128xf16>, tensor<128x512xf16> -> tensor<256x512xf16>
  %y = fused.swiglu %c {gate_first = true} : tensor<256x512xf16> -> tensor<256x256xf16>
  %d = nn.matmul %x2, %w : tensor<256x128xf16>, tensor<128x512xf16> -> tensor<256x512xf16>
  func.return %y, %d : tensor<256x256xf16>, tensor<256x512xf16>
}"""


@pytest.mark.parametrize(("text", "device", "bound", "tf32", "why"), [
    (ffn(), NO_WGMMA, ("w",), False, "a GPU without wgmma"),
    (ffn(), CPU, ("w",), False, "a CPU"),
    (ffn(), HOPPER, (), False, "B not bound"),
    (ffn(cat_returned=True), HOPPER, ("w",), False, "cat returned too"),
    (ffn(m=250), HOPPER, ("w",), False, "M not whole tiles: mma.sync"),
    (ffn(n=352), HOPPER, ("w",), False, "N not whole tiles (nor of 64 columns): mma.sync"),
    (ffn(dtype="f32"), HOPPER, ("w",), True, "TF32: not a SwiGLU type"),
    (ffn(dtype="f32"), HOPPER, ("w",), False, "f32: no wgmma"),
    (TWO_READERS, HOPPER, ("w",), False, "B read by another product"),
    (ffn(m=2), HOPPER, (), False, "decode, B not bound: skinny, B as it is"),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_any_other_product_is_planned_as_without_the_epilogue(text, device, bound, tf32, why):
    plan = plan_of(text, device, bound, allow_tf32=tf32)
    assert not any("gemm_swiglu" in launch.kernel for launch in plan.launches), why
    assert any("_swiglu_" in launch.kernel for launch in plan.launches), why
    assert same_plan(plan, plan_of(text, device, bound, allow_tf32=tf32, fused=False)), why
    assert all(s.interleaved is None for s in plan.inputs)


def test_the_epilogue_is_on_by_default():
    assert knobs.KNOBS["wgmma_swiglu_epilogue"].default is True


@pytest.mark.parametrize(("dtype", "kernel", "layout"), [
    ("f16", "skinny K-major", (1, None)),
    ("bf16", "skinny K-major", (1, None)),
])
def test_a_decode_step_product_takes_it_on_the_skinny_kernel_stored_as_the_prefill_stores_it(
        dtype, kernel, layout):
    """At 2 rows (a decode step) the product is the skinny kernel with the SwiGLU, its B
    stored exactly as the prefill's tensor-core product stores it (K-major, in halves the kernel pairs as it reads them), so one copy serves both (`Executable.borrow`), and it computes ``up *
    silu(gate)`` on this device."""
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    step = plan_of(ffn(m=2, dtype=dtype), HOPPER)
    (launch,) = step.launches
    assert launch.kernel == "ffn_gemm_swiglu_0"
    assert kernel in step.source and "SwiGLU of column pairs" in step.source
    (w,) = (s for s in step.inputs if s.name == "w")
    (prefill_w,) = (s for s in plan_of(ffn(dtype=dtype), HOPPER).inputs if s.name == "w")
    assert (w.panels, w.interleaved) == (prefill_w.panels, prefill_w.interleaved) == layout
    rng = np.random.default_rng(3)
    x = to_dtype(rng.standard_normal((2, 128)), dtype)
    weight = to_dtype(rng.standard_normal((128, 512)) * 0.2, dtype)
    (got,) = Executable(step, select_device("cpu"), {"w": weight})(x)
    product = as_f64(x) @ as_f64(weight)
    gate, up = product[:, :256], product[:, 256:]
    want = up * gate / (1.0 + np.exp(-gate))
    np.testing.assert_allclose(as_f64(got), want, rtol=0,
                               atol=1e-2 * max(float(np.abs(want).max()), 1.0))



TWO_LAYERS = """func.func @mlp(%x: tensor<2x128xT>, %w0: tensor<128x128xT>, %w1: tensor<128x512xT>,
                %w2: tensor<256x128xT>, %w3: tensor<128x512xT>,
                %w4: tensor<256x128xT>) -> tensor<2x128xT> {
  %a = nn.matmul %x, %w0 : tensor<2x128xT>, tensor<128x128xT> -> tensor<2x128xT>
  %c1 = nn.matmul %a, %w1 : tensor<2x128xT>, tensor<128x512xT> -> tensor<2x512xT>
  %y1 = fused.swiglu %c1 {gate_first = true} : tensor<2x512xT> -> tensor<2x256xT>
  %h = nn.matmul %y1, %w2 : tensor<2x256xT>, tensor<256x128xT> -> tensor<2x128xT>
  %c2 = nn.matmul %h, %w3 : tensor<2x128xT>, tensor<128x512xT> -> tensor<2x512xT>
  %y2 = fused.swiglu %c2 {gate_first = true} : tensor<2x512xT> -> tensor<2x256xT>
  %z = nn.matmul %y2, %w4 : tensor<2x256xT>, tensor<256x128xT> -> tensor<2x128xT>
  func.return %z : tensor<2x128xT>
}"""
READ_LATER = """  %u = nn.matmul %m, %y1 : tensor<2x2xT>, tensor<2x256xT> -> tensor<2x256xT>
  func.return %z, %u : tensor<2x128xT>, tensor<2x256xT>"""
WEIGHTS = {"w0": (128, 128), "w1": (128, 512), "w2": (256, 128), "w3": (128, 512),
           "w4": (256, 128)}


@pytest.mark.parametrize(("read_later", "buffers"), [(False, 1), (True, 2)],
                         ids=["first-dead", "first-read-later"])
def test_swiglu_results_share_a_buffer_once_the_earlier_is_dead(read_later, buffers):
    """Two SwiGLU products whose results cannot take their slots' (the slot holds the
    product's A, as in a model's layers): the second takes the first's buffer once the
    first's last reader has run, not while the first is still read (by a product after the
    second's, which returns it); the numbers agree with numpy either way."""
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    text = TWO_LAYERS
    if read_later:
        text = (text.replace("  func.return %z : tensor<2x128xT>", READ_LATER)
                .replace("%w4: tensor<256x128xT>) -> tensor<2x128xT>",
                         "%w4: tensor<256x128xT>, %m: tensor<2x2xT>) -> "
                         "(tensor<2x128xT>, tensor<2x256xT>)"))
    plan = plan_of(text.replace("T", "f16"), HOPPER, bound=tuple(WEIGHTS))
    assert sum("_gemm_swiglu_" in launch.kernel for launch in plan.launches) == 2
    assert sum(b.label == "swiglu results" for b in plan.buffers) == buffers
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 128)).astype(np.float16)
    weights = {name: (rng.standard_normal(shape) * 0.1).astype(np.float16)
               for name, shape in WEIGHTS.items()}
    m = rng.standard_normal((2, 2)).astype(np.float16)
    got, *rest = Executable(plan, select_device("cpu"), weights)(x, *([m] if read_later else []))

    def swiglu(product):
        gate, up = product[:, :256], product[:, 256:]
        return up * gate / (1.0 + np.exp(-gate))

    w = {name: weight.astype(np.float64) for name, weight in weights.items()}
    y1 = swiglu(x.astype(np.float64) @ w["w0"] @ w["w1"])
    y2 = swiglu(y1 @ w["w2"] @ w["w3"])
    wants = [y2 @ w["w4"], *([m.astype(np.float64) @ y1] if read_later else [])]
    for array, want in zip([got, *rest], wants, strict=True):
        np.testing.assert_allclose(array.astype(np.float64), want, rtol=0,
                                   atol=1e-2 * max(float(np.abs(want).max()), 1.0))
