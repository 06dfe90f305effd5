"""Programs lowered for a CPU and for a GPU agree with the numpy reference on the test device:
generated reductions, the row templates, and matmuls split along K (GPU).

The CPU shape (a work-item folds a contiguous run, float8 vectors then a scalar remainder,
few-output reductions split into chunks plus a combine kernel) and the GPU shape (work-group
trees) are both run on the test device: the GPU shape is forced by lowering for a GPU
`DeviceInfo` and running the plan on the CPU device. Sizes are chosen around the edges of the
shapes: one element, fewer elements than two vectors, not a multiple of the vector width or of
the chunk, several reduced dimensions with and without a vector-aligned innermost one, and
prologue bodies that read broadcast operands. Tolerances as in ``test_ops_nn``.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.compiler.check import compare
from fusec.compiler.context import make_context
from fusec.compiler.driver import load, lower
from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.program import build_plan
from fusec.compiler.pipeline import run_pipeline
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable
from fusec.reference.executor import find_function, random_inputs, run_function

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

LAYOUTS = {
    "cpu": DeviceInfo(name="CPU layout", is_cpu=True),
    "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256),
}
"""The device each layout is generated for; both run on the test device."""

EXACT = (0.0, 0.0)
ACCUMULATED = (1e-5, 1e-4)


def run_layout(source: str, layout: str, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The program lowered for `layout`, run on the test device, and the reference outputs."""
    module = load(source)
    fn = find_function(module, None)
    args = random_inputs(fn, seed)
    expected = run_function(module, args, fn.sym_name.data)
    plan = lower(load(source), pipeline="none", device_info=LAYOUTS[layout]).plan
    executable = Executable(plan, select_device(DEVICE))  # type: ignore[arg-type]
    return executable(*args), expected


def check(source: str, layout: str, tol: tuple[float, float] = ACCUMULATED) -> None:
    outputs, expected = run_layout(source, layout)
    atol, rtol = tol
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)
    for out, ref in zip(outputs, expected, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype


def reduce_program(kind: str, shape: str, axes: str, keepdims: bool, t: str = "f32") -> str:
    dims = [int(d) for d in shape.split("x")]
    reduced = {int(a) % len(dims) for a in axes.split(",")}
    kept = [1 if i in reduced else d for i, d in enumerate(dims)] if keepdims else \
        [d for i, d in enumerate(dims) if i not in reduced]
    out = "".join(f"{d}x" for d in kept)
    return f"""
func.func @f(%x: tensor<{shape}x{t}>) -> tensor<{out}{t}> {{
  %y = nn.reduce_{kind} %x {{axes = array<i64: {axes}>, keepdims = {str(keepdims).lower()}}} : tensor<{shape}x{t}> -> tensor<{out}{t}>
  func.return %y : tensor<{out}{t}>
}}"""


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape,axes", [
    ("1", "0"),               # one element
    ("31", "0"),              # fewer than two float16 vectors: scalar loop only
    ("32", "0"),              # exactly two vectors, no remainder
    ("33", "0"),              # two vectors and a remainder of 1
    ("4097", "0"),            # one work-item, vectors and a remainder of 1
    ("20011", "0"),           # split into chunks, the last one ragged
    ("65536", "0"),           # split into whole chunks, no remainder
    ("3x9000", "0,1"),        # two reduced dimensions, the inner one float8-aligned (not 16)
    ("3x4096", "0,1"),        # two reduced dimensions, the inner one float16-aligned
    ("3x4001", "0,1"),        # two reduced dimensions, the inner one not: no vectors
    ("37x129", "1"),          # rows: a work-item per row, vectors and a remainder
    ("3x20011", "1"),         # few long rows: split per row
    ("5x33x7", "1"),          # middle axis: strided, no vectors
    ("301x3x7", "0"),         # outermost axis
    ("3x17x40", "1,2"),       # two inner axes, float8-aligned
    ("3x17x20", "1,2"),       # two inner axes, float4-aligned
])
def test_reduce_shapes(layout: str, kind: str, shape: str, axes: str) -> None:
    check(reduce_program(kind, shape, axes, keepdims=False), layout)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape,axes", [("20011", "0"), ("37x129", "1"), ("3x17x40", "0,2")])
def test_reduce_keepdims(layout: str, shape: str, axes: str) -> None:
    check(reduce_program("mean", shape, axes, keepdims=True), layout)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("shape", ["3x20011", "20011", "7x129"])
def test_reduce_int(layout: str, kind: str, shape: str) -> None:
    """Integers are folded exactly (no vectors) in both shapes, split or not."""
    axes = str(len(shape.split("x")) - 1)
    check(reduce_program(kind, shape, axes, keepdims=False, t="i32"), layout, EXACT)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("rows,cols", [(6, 1000), (2, 20011), (9, 13)])
def test_fused_prologue_with_broadcast_operands(layout: str, rows: int, cols: int) -> None:
    """``sum((x - b) * s)`` over rows: ``b`` is read along the row (a vector load), ``s`` once
    per row (a scalar broadcast to every lane)."""
    check(f"""
func.func @f(%x: tensor<{rows}x{cols}xf32>, %b: tensor<{cols}xf32>, %s: tensor<{rows}x1xf32>) -> tensor<{rows}xf32> {{
  %y = fused.reduce %x, %b, %s {{kind = "sum", axes = array<i64: 1>, keepdims = false}} : (tensor<{rows}x{cols}xf32>, tensor<{cols}xf32>, tensor<{rows}x1xf32>) -> tensor<{rows}xf32> {{
  ^bb0(%a: f32, %c: f32, %e: f32):
    %d = arith.subf %a, %c : f32
    %p = arith.mulf %d, %e : f32
    fused.yield %p : f32
  }}
  func.return %y : tensor<{rows}xf32>
}}""", layout)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_row_templates_in_both_layouts(layout: str) -> None:
    """Softmax and LayerNorm follow the layout too (a work-group per row on a GPU)."""
    check("""
func.func @f(%x: tensor<13x200xf32>, %g: tensor<200xf32>, %b: tensor<200xf32>) -> (tensor<13x200xf32>, tensor<13x200xf32>) {
  %s = nn.softmax %x {axis = -1 : i64} : tensor<13x200xf32> -> tensor<13x200xf32>
  %n = nn.layer_norm %x, %g, %b {axis = -1 : i64, eps = 1.0e-05 : f32} : tensor<13x200xf32>, tensor<200xf32>, tensor<200xf32> -> tensor<13x200xf32>
  func.return %s, %n : tensor<13x200xf32>, tensor<13x200xf32>
}""", layout)


def test_layouts_differ() -> None:
    """The device reaches the lowering and the templates: the two layouts emit different
    programs (so a program cache keyed by source keeps them apart)."""
    source = reduce_program("sum", "20011", "0", keepdims=False)
    cpu, gpu = (lower(load(source), pipeline="none", device_info=LAYOUTS[k]).plan.source
                for k in ("cpu", "gpu"))
    assert "vload16" in cpu and "barrier" not in cpu
    assert "barrier" in gpu and "vload" not in gpu


def run_lowered_with(source: str, options: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The program lowered by ``lower-to-kernels{options}``, run, and the reference outputs."""
    module = load(source)
    fn = find_function(module, None)
    args = random_inputs(fn, 0)
    expected = run_function(module, args, fn.sym_name.data)
    lowered = load(source)
    run_pipeline(make_context(), lowered, f"lower-to-kernels{{{options}}},plan-buffers")
    executable = Executable(build_plan(lowered), select_device(DEVICE))  # type: ignore[arg-type]
    return executable(*args), expected


@pytest.mark.parametrize("kind", ["sum", "max", "mean"])
@pytest.mark.parametrize("shape,axes,width", [
    ("100", "0", 8),          # 12 chunks of 16 (whole vectors): the last five are empty
    ("2x61", "1", 4),         # ragged chunks of each row
    ("7x6x5", "1,2", 2),      # several dimensions, chunks across the outer one
])
def test_small_chunks(kind: str, shape: str, axes: str, width: int) -> None:
    """Chunks far smaller than the defaults, so that some are ragged or empty."""
    options = f"device=cpu cpu-chunk-min=8 split-outputs=24 reduce-vector-width={width}"
    outputs, expected = run_lowered_with(reduce_program(kind, shape, axes, False), options)
    for result in compare(outputs, expected, *ACCUMULATED):
        assert result.ok, result.describe(*ACCUMULATED)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("m,k,n,activation", [
    (9, 1031, 40, "gelu"),    # split in 4 parts (the last shorter), bias and GELU after the sum
    (2, 3, 5, "relu"),        # too shallow to split
])
def test_matmul_bias_act_split_along_k(layout: str, m: int, k: int, n: int,
                                       activation: str) -> None:
    source = f"""
func.func @f(%x: tensor<3x{m}x{k}xf32>, %w: tensor<{k}x{n}xf32>, %b: tensor<{n}xf32>) -> tensor<3x{m}x{n}xf32> {{
  %y = fused.matmul_bias_act %x, %w, %b {{activation = "{activation}"}} : tensor<3x{m}x{k}xf32>, tensor<{k}x{n}xf32>, tensor<{n}xf32> -> tensor<3x{m}x{n}xf32>
  func.return %y : tensor<3x{m}x{n}xf32>
}}"""
    plan = lower(load(source), pipeline="none", device_info=LAYOUTS[layout]).plan
    split = layout == "gpu" and k >= 1024
    assert ("gemm_split_sum" in plan.source) == split
    check(source, layout)


def test_batched_matmul_split_along_k_on_a_gpu() -> None:
    """``[2, 5, 600] @ [2, 600, 7]``: both operands batched, split in two parts."""
    source = """
func.func @f(%a: tensor<2x5x600xf32>, %b: tensor<2x600x7xf32>) -> tensor<2x5x7xf32> {
  %y = nn.matmul %a, %b : tensor<2x5x600xf32>, tensor<2x600x7xf32> -> tensor<2x5x7xf32>
  func.return %y : tensor<2x5x7xf32>
}"""
    assert "split along K in 2 parts" in lower(load(source), pipeline="none",
                                               device_info=LAYOUTS["gpu"]).plan.source
    check(source, "gpu")
