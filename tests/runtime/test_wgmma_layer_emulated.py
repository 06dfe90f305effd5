"""A small f16 / bf16 encoder layer planned for a Hopper GPU with the knob `wgmma_layer_gemms` on
(every GEMM on wgmma: the epilogues of bias, GELU and residual in the kernel, the weights bound
and stored as the kernel reads them), then run on the CPU device with the wgmma kernels'
PTX emulated (`gemm_wgmma.emulated`) and checked against the numpy reference and the layer
compiled for the CPU: the plan's buffers, the extras' order, the weights' stored layout and
the launches end to end, everything but the Hopper instructions themselves (those run only
on the GPU machine: tests/runtime/test_wgmma_gpu.py).
"""

from __future__ import annotations

import re

from dataclasses import replace

import numpy as np
import pytest

from fusec.codegen.kernels import gemm_wgmma
from fusec.codegen.kernels.common import DeviceInfo, KernelSource
from fusec.codegen.plan import KernelLines, ProgramPlan
from fusec.dtypes import bf16_to_f32

HOPPER = DeviceInfo("H100", is_cpu=False, local_mem_size=232448, max_work_group_size=1024,
                    tensor_cores=("f16", "bf16", "tf32"), wgmma=True)

# x [2, 128, 256] (256 rows: two block rows); h = gelu(x @ w1 + b1) [.., 512];
# y = x + h @ w2 (the residual in the second product's epilogue, as the Llama block's).
# Each product's outputs and K are such that the lowering does not split it along K
# (`gemm_split`, which keeps the mma.sync kernels).
LAYER = """func.func @layer(%x: tensor<2x128x256xT>, %w1: tensor<256x512xT>, %b1: tensor<512xT>,
                      %w2: tensor<512x256xT>) -> tensor<2x128x256xT> {
  %h0 = nn.matmul %x, %w1 : tensor<2x128x256xT>, tensor<256x512xT> -> tensor<2x128x512xT>
  %h1 = nn.add %h0, %b1 : tensor<2x128x512xT>, tensor<512xT> -> tensor<2x128x512xT>
  %h = nn.gelu %h1 : tensor<2x128x512xT> -> tensor<2x128x512xT>
  %y0 = nn.matmul %h, %w2 : tensor<2x128x512xT>, tensor<512x256xT> -> tensor<2x128x256xT>
  %y = nn.add %x, %y0 : tensor<2x128x256xT>, tensor<2x128x256xT> -> tensor<2x128x256xT>
  func.return %y : tensor<2x128x256xT>
}"""
WEIGHTS = ("w1", "b1", "w2")
# The same at batch 1 with a deeper second product: 128 x 256 outputs over K 1024 are split
# along K in 2 parts on wgmma with the knob wgmma_split_k (`whole_tile_split`), the residual
# added by the parts' sum.
LAYER_B1 = (LAYER.replace("2x128x", "1x128x").replace("512", "1024"))


def emulated_plan(plan: ProgramPlan) -> ProgramPlan:
    """`plan` with each wgmma kernel's source replaced by its `emulated` version."""
    lines = plan.source.split("\n")
    pieces, at, kernel_lines, first = [], 0, [], 1
    for k in plan.kernel_lines:
        pieces.append("\n".join(lines[at:k.first - 1]))
        text = "\n".join(lines[k.first - 1:k.last])
        if "FUSEC_WGMMA_STEP" in text:
            text = gemm_wgmma.emulated(KernelSource(k.kernel, text, (), (1,), None)).source
        pieces.append(text)
        at = k.last
    pieces.append("\n".join(lines[at:]))
    source = "\n".join(pieces)
    assert "FUSEC_WGMMA" not in source and "asm" not in source
    for k in plan.kernel_lines:  # the new line numbers, for build errors
        count = source.count("\n", 0, source.index(f"void {k.kernel}(")) + 1
        kernel_lines.append(KernelLines(k.kernel, count, count))
        first = count
    assert first > 0
    return replace(plan, source=source, kernel_lines=tuple(kernel_lines))


@pytest.mark.parametrize("layer", ["b2", "b1-split", "b1-short", "b1-sum"])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_a_layer_on_wgmma_with_its_epilogues_and_bound_weights_matches_the_reference(
        set_knobs, dtype, layer):
    import fusec
    from fusec.compiler.driver import fuse_and_fold, load, lower
    from fusec.reference.executor import find_function, random_inputs, run_function
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    # b1-short: in blocks of 64 rows (`block_m_for`); b1-sum: so, with each product's parts
    # summed in the kernel (`parts_for`), its scratch buffers from the program
    split = layer.startswith("b1")
    summed = layer == "b1-sum"
    set_knobs(wgmma_layer_gemms=True, wgmma_split_k=split,
              wgmma_short_blocks=layer in ("b1-short", "b1-sum"), wgmma_sum_parts=summed)
    text = (LAYER_B1 if split else LAYER).replace("xT>", f"x{dtype}>")
    reference_module = load(text)
    names = ["x", *WEIGHTS]
    args = random_inputs(find_function(reference_module), seed=2)
    want = run_function(reference_module, args)[0]
    params = dict(zip(names[1:], args[1:], strict=True))

    module = load(text)
    pipeline, bound = fuse_and_fold(module, None, "default", "<test>", params)
    device = replace(HOPPER, compute_units=132)  # an H200's: block_m_for needs the units
    plan = lower(module, None, pipeline, device, bound=list(bound or {})).plan
    products = [launch for launch in plan.launches if "FUSEC_WGMMA_STEP" in
                plan.source.split(f"void {launch.kernel}(")[1].split("__kernel")[0]]
    assert len(products) == 2, [launch.kernel for launch in plan.launches]
    assert not any(launch.kernel.endswith("_bt") for launch in plan.launches)
    sums = [launch for launch in plan.launches if "split_sum" in launch.kernel]
    if summed:  # 128 x 1024 x 256 in 2 parts, 128 x 256 x 1024 in 4, each one launch
        assert not sums and "K in 2 parts summed" in plan.source
        assert "K in 4 parts summed" in plan.source
        scratch = {plan.buffers[b].role for launch in products for b in launch.buffers[-2:]}
        assert scratch == {"intermediate", "zeroed"}
    elif split:  # the second product's parts, then their sum with the residual
        assert len(sums) == 1 and "K in 2 parts" in plan.source
        assert len(products[0].buffers) > 3 and len(products[1].buffers) == 3
        assert len(sums[0].buffers) > 2
    else:
        assert not sums and all(len(launch.buffers) > 3 for launch in products)
    short = re.findall(r"on wgmma, \w+, 64x\d+ blocks", plan.source)
    assert (len(short) == 2) == (layer in ("b1-short", "b1-sum")), short
    # bound weights stored [N, K] in every type (nn.Linear's layout)
    assert [s.panels for s in plan.inputs if s.name in ("w1", "w2")] == [1, 1]

    device = select_device("cpu")
    exe = Executable(emulated_plan(plan), device, bound)
    exe(args[0])  # a second call finds the counts the first left (zero, or no C is stored)
    got = exe(args[0])
    got = got[0] if isinstance(got, list | tuple) else got
    cpu = fusec.compile(text, device="cpu", params=params)(args[0])
    cpu = cpu[0] if isinstance(cpu, list | tuple) else cpu

    def error(out: np.ndarray) -> float:
        def as32(v: np.ndarray) -> np.ndarray:
            return bf16_to_f32(v) if dtype == "bf16" else v.astype(np.float32)
        return float(np.abs(as32(out) - as32(want)).max() / np.abs(as32(want)).max())

    print(f"{dtype}: max error / max |y|: wgmma (emulated) {error(got):.3g}, "
          f"CPU kernels {error(cpu):.3g}")
    # a few roundings of the 16-bit type, as the layer compiled for the CPU
    tolerance = {"f16": 4e-3, "bf16": 3e-2}[dtype]
    assert error(cpu) <= tolerance and error(got) <= tolerance


def test_unbound_weights_are_transposed_into_one_scratch_buffer(set_knobs):
    """The same f16 layer with its weights as call inputs: each product first transposes its B
    (a ``_bt`` launch) into one buffer shared by both products (as large as the larger B, not a
    buffer each), and the emulated run still matches the reference."""
    from fusec.compiler.driver import load, lower
    from fusec.reference.executor import find_function, random_inputs, run_function
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    set_knobs(wgmma_layer_gemms=True)
    text = LAYER.replace("xT>", "xf16>")
    args = random_inputs(find_function(load(text)), seed=3)
    want = run_function(load(text), args)[0].astype(np.float32)
    plan = lower(load(text), None, "default", HOPPER).plan
    transposes = [launch for launch in plan.launches if launch.kernel.endswith("_bt")]
    assert len(transposes) == 2
    scratch = {launch.buffers[1] for launch in transposes}  # (src, dst) of each transpose
    assert len(scratch) == 1
    (index,) = scratch
    assert plan.buffers[index].nbytes == 512 * 256 * 2  # the larger B, once
    got = Executable(emulated_plan(plan), select_device("cpu"))(*args)
    got = (got[0] if isinstance(got, list | tuple) else got).astype(np.float32)
    assert float(np.abs(got - want).max() / np.abs(want).max()) <= 4e-3


# A float16 model's down projection feeding its float32 residual stream (torch's TorchScript
# exporter writes Llama so): the f16 product's epilogue widens it and adds the f32 residual.
WIDENED = """func.func @down(%h: tensor<2x128x512xf16>, %w: tensor<512x256xf16>,
                     %r: tensor<2x128x256xf32>) -> tensor<2x128x256xf32> {
  %p = nn.matmul %h, %w : tensor<2x128x512xf16>, tensor<512x256xf16> -> tensor<2x128x256xf16>
  %c = nn.cast %p : tensor<2x128x256xf16> -> tensor<2x128x256xf32>
  %y = nn.add %r, %c : tensor<2x128x256xf32>, tensor<2x128x256xf32> -> tensor<2x128x256xf32>
  func.return %y : tensor<2x128x256xf32>
}"""


def test_a_widening_epilogue_stays_on_wgmma_and_stores_float32(set_knobs):
    """One launch: the wgmma product, its C rounded to f16, widened and added to the f32
    residual in the epilogue, staged and stored as float32 rows; the emulated run matches
    the reference of the program as written."""
    from fusec.compiler.driver import load, lower
    from fusec.reference.executor import find_function, random_inputs, run_function
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    set_knobs(wgmma_layer_gemms=True)
    args = random_inputs(find_function(load(WIDENED)), seed=4)
    want = run_function(load(WIDENED), args)[0]
    plan = lower(load(WIDENED), None, "default", HOPPER).plan
    products = [launch for launch in plan.launches if "FUSEC_WGMMA_STEP" in
                plan.source.split(f"void {launch.kernel}(")[1].split("__kernel")[0]]
    assert len(products) == 1 and len(plan.launches) == 2  # the transpose of B, the product
    got = Executable(emulated_plan(plan), select_device("cpu"))(*args)
    got = got[0] if isinstance(got, list | tuple) else got
    assert got.dtype == np.float32
    assert float(np.abs(got - want).max() / np.abs(want).max()) <= 1e-3
