"""``lower-to-kernels``: ``fused.row_reduce`` becomes one ``row_reduce`` template launch.

    %y = fused.row_reduce %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> { body }
  becomes
    kernel.template "row_reduce" {rows = 4, cols = 8} ins(%x, %g : ...) outs(%y : ...)
        epilogue { the body, its fused.yield now kernel.yield }

The template (``codegen/kernels/row_reduce.py``) runs the body once per reduction and once more
to store, over each row; ``codegen/row_functions.py`` splits the body into those stages. A row
over another axis than the last (``axis`` of the op) is strided: the template gets ``{axis}``
too, and ``rows`` counts the elements of the other axes.
"""

from __future__ import annotations

import math

from xdsl.ir import Block, Operation, Region, SSAValue

from fusec.dialects import fused, kernel
from fusec.lowering.generated_ops import shape_of
from fusec.lowering.lower_to_kernels import FunctionLowering
from fusec.lowering.template_ops import params


def row_body(op: fused.RowReduceOp) -> Block:
    """A copy of ``op``'s body whose ``fused.yield`` is a ``kernel.yield``."""
    region: Region = op.body.clone()
    block = region.detach_block(0)
    term = block.last_op
    assert isinstance(term, fused.YieldOp)
    value = term.values[0]
    block.erase_op(term)
    block.add_op(kernel.YieldOp(value))
    return block


def lower_row_reduce(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.RowReduceOp)
    shape = shape_of(op.result)
    axis = op.row_axis()
    cols = shape[axis]
    rows = math.prod(shape) // cols if cols else 0
    out = lo.alloc(op.result.type)
    if rows == 0 or cols == 0:
        return [out]  # an empty result: nothing to compute
    strided = {"axis": axis} if axis != len(shape) - 1 else {}
    lo.template(
        "row_reduce",
        params(rows=rows, cols=cols, **strided),
        [lo.buffer(v) for v in op.inputs],
        [out],
        epilogue=row_body(op),
    )
    return [out]


ROW_REDUCE_LOWERINGS = {fused.RowReduceOp: lower_row_reduce}
