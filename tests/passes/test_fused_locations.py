"""A fused op carries MLIR's fused location of its group: the op it replaced first (errors and
remarks name that one), then every op it absorbed, in source order (``located_at``)."""

from __future__ import annotations

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import format_location
from fusec.compiler.driver import load
from fusec.compiler.pipeline import run_pipeline
from fusec.dialects.locations import file_line_cols

SOURCE = """func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %e = nn.exp %h : tensor<8x64xf32> -> tensor<8x64xf32>
  %n = nn.neg %e : tensor<8x64xf32> -> tensor<8x64xf32>
  %r = nn.relu %n : tensor<8x64xf32> -> tensor<8x64xf32>
  func.return %r : tensor<8x64xf32>
}
"""


def fused_ops(pipeline: str) -> dict[str, tuple[str, ...]]:
    module = load(SOURCE, "m.mlir")
    run_pipeline(make_context(), module, pipeline, "m.mlir")
    return {op.name: file_line_cols(op.location) for op in module.walk()
            if op.name.startswith("fused.") and op.name != "fused.yield"}


def test_matmul_bias_names_the_add_then_the_matmul() -> None:
    assert fused_ops("fuse-matmul-bias-act") == {
        "fused.matmul_bias_act": ("m.mlir:3:3", "m.mlir:2:3")}


def test_elementwise_chain_names_its_root_then_the_rest_in_order() -> None:
    assert fused_ops("fuse-elementwise")["fused.elementwise"] == (
        "m.mlir:6:3", "m.mlir:3:3", "m.mlir:4:3", "m.mlir:5:3")


def test_a_fused_op_absorbed_again_keeps_every_place() -> None:
    # The bias GEMM, then its elementwise consumers fused into its epilogue.
    places = fused_ops("fuse-matmul-bias-act,fuse-elementwise,fuse-matmul-epilogue")
    assert set(places) == {"fused.matmul_epilogue"}, places
    (located,) = places.values()
    assert located[0] == "m.mlir:6:3" and sorted(located[1:]) == sorted(
        f"m.mlir:{line}:3" for line in (2, 3, 4, 5)), located


def test_errors_name_the_replaced_op() -> None:
    module = load(SOURCE, "m.mlir")
    run_pipeline(make_context(), module, "fuse-matmul-bias-act", "m.mlir")
    op = next(o for o in module.walk() if o.name == "fused.matmul_bias_act")
    assert format_location(op, "?") == "m.mlir:3:3"


DUAL = """func.func @f(%h: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %x = nn.relu %h : tensor<4x32xf32> -> tensor<4x32xf32>
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
"""


def test_a_helper_that_computes_none_of_the_group_has_the_root_alone() -> None:
    # fuse-swiglu-dual-matmul: concat(wu, wg) (weights only), one matmul, fused.swiglu. The
    # walk from the mul back to the concat's operands would leave the group (through %x to
    # the relu and beyond: quadratic on a chain of layers); the concat gets the mul alone.
    module = load(DUAL, "d.mlir")
    run_pipeline(make_context(), module, "fuse-swiglu-dual-matmul", "d.mlir")
    places = {op.name: file_line_cols(op.location) for op in module.walk()
              if op.name in ("nn.concat", "nn.matmul", "fused.swiglu", "nn.relu")}
    assert places == {
        "nn.relu": ("d.mlir:2:3",),
        "nn.concat": ("d.mlir:6:3",),
        "nn.matmul": ("d.mlir:6:3", "d.mlir:3:3", "d.mlir:4:3", "d.mlir:5:3"),
        "fused.swiglu": ("d.mlir:6:3", "d.mlir:3:3", "d.mlir:4:3", "d.mlir:5:3"),
    }, places
