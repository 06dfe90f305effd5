"""The column-statistics ops are costed as the products they are (`placement.work`): a
centered Gram of a 4096x256 matrix is 4096*256*256 multiply-adds, not 65536 elementwise
elements (costed that way, it stayed on a CPU 3x slower than the GPU)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

from xdsl.dialects import func

from fusec.compiler.driver import load
from fusec.placement.cost_model import Kind
from fusec.placement.work import measure

OPS = """
func.func @ops(%x: tensor<4096x256xf32>, %q: tensor<256x16xf32>) -> (tensor<256x256xf32>, tensor<256x16xf32>, tensor<1x16xf32>) {
  %g = fused.centered_gram %x : tensor<4096x256xf32> -> tensor<256x256xf32>
  %p = fused.power_step_normalize %g, %q : tensor<256x256xf32>, tensor<256x16xf32> -> tensor<256x16xf32>
  %v = fused.explained_variance %g, %p : tensor<256x256xf32>, tensor<256x16xf32> -> tensor<1x16xf32>
  func.return %g, %p, %v : tensor<256x256xf32>, tensor<256x16xf32>, tensor<1x16xf32>
}"""


def test_column_statistics_are_products() -> None:
    fn = next(op for op in load(OPS).ops if isinstance(op, func.FuncOp))
    gram, step, variance = measure(fn)
    assert (gram.kind, gram.flops) == (Kind.MATMUL, 4096 * 256 * 256)
    assert (step.kind, step.flops) == (Kind.MATMUL, 256 * 256 * 16)
    assert (variance.kind, variance.flops) == (Kind.MATMUL, 256 * 256 * 16)
