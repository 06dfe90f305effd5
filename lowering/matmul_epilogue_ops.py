"""``lower-to-kernels``: ``fused.matmul_epilogue`` becomes one ``gemm`` template launch whose
epilogue region is the op's body.

The epilogue block's arguments are the accumulated value, the flattened output row (over the
leading dimensions) and the column, then one buffer per extra operand. Each extra is loaded at
the element the output element broadcasts from (numpy rules): a dimension of size 1 reads index
0, the last dimension reads the column, and the leading ones are recovered from the flattened
row by division and remainder. Then the body's ops follow, on the loaded scalars::

    epilogue {
    ^bb0(%acc: f32, %row: index, %col: index, %c: memref<5x3xf32>, %rs: memref<5x1xf32>):
      %0 = memref.load %c[%row, %col]
      %1 = memref.load %rs[%row, %zero]
      ... the body on %acc, %0, %1 ...
      kernel.yield %v : f32
    }
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, TensorType, f32
from xdsl.ir import Block, Operation, SSAValue

from fusec.dialects import fused, kernel
from fusec.dialects.common import FLOAT_TYPES
from fusec.lowering.generated_ops import shape_of
from fusec.lowering.lower_to_kernels import FunctionLowering, LoweringError
from fusec.lowering.template_ops import gemm


def extra_index(
    block: Block, row: SSAValue, col: SSAValue, shape: Sequence[int], out: Sequence[int]
) -> list[SSAValue]:
    """Indices into an extra of ``shape`` for output element (``row``, ``col``) of ``out``."""
    rank = len(out)
    padded = (1,) * (rank - len(shape)) + tuple(shape)
    zero: SSAValue | None = None

    def const(value: int) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(value, IndexType()))
        block.add_op(op)
        return op.result

    def add(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    indices: list[SSAValue] = []
    for d in range(rank - len(shape), rank):
        if padded[d] == 1:
            zero = zero or const(0)
            indices.append(zero)
        elif d == rank - 1:
            indices.append(col)
        else:
            inner = math.prod(out[d + 1:-1])
            index = row if inner == 1 else add(arith.DivUIOp(row, const(inner)))
            if math.prod(out[:d]) > 1:
                index = add(arith.RemUIOp(index, const(out[d])))
            indices.append(index)
    return indices


def epilogue_block(op: fused.MatmulEpilogueOp, buffers: Sequence[SSAValue]) -> Block:
    """The gemm epilogue computing ``op``'s body from the accumulator and the extras."""
    out = shape_of(op.result)
    # The accumulator is f32; a 16-bit product is rounded to its type first, as the unfused
    # matmul would store it. The result may be of another type (a cast at the end).
    block = kernel.epilogue_block(f32, [b.type for b in buffers])
    acc, row, col, *extras = block.args
    product = op.x.type.element_type  # type: ignore[attr-defined]
    if product != f32:
        rounded = arith.TruncFOp(acc, product)
        block.add_op(rounded)
        acc = rounded.result
    mapping: dict[SSAValue, SSAValue] = {op.body.block.args[0]: acc}
    for arg, buffer, value in zip(op.body.block.args[1:], extras, op.extras, strict=True):
        mtype = buffer.type
        assert isinstance(mtype, MemRefType)
        index = extra_index(block, row, col, shape_of(value), out)
        load = memref.LoadOp.get(buffer, index)
        block.add_op(load)
        mapping[arg] = load.res
    body = op.body.block
    for body_op in body.ops:
        if body_op is body.last_op:
            block.add_op(kernel.YieldOp(mapping.get(body_op.operands[0], body_op.operands[0])))
            break
        new = body_op.clone()
        for i, v in enumerate(body_op.operands):
            new.operands[i] = mapping.get(v, v)
        block.add_op(new)
        for old, res in zip(body_op.results, new.results, strict=True):
            mapping[old] = res
    return block


def require_float(op: Operation, values: Sequence[SSAValue]) -> None:
    """The product is f32, f16 or bf16 (the extras and the result may be of any type the body
    reads and yields: f32, f16, bf16, i32, i8, i1)."""
    for v in values:
        t = v.type
        if isinstance(t, TensorType) and t.element_type not in FLOAT_TYPES:
            raise LoweringError(f"the '{op.name}' epilogue computes on f32, f16 or bf16 "
                                f"products only, got {t}")


def lower_matmul_epilogue(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.MatmulEpilogueOp)
    require_float(op, [op.x, op.w])
    buffers = [lo.buffer(v) for v in op.extras]
    block = epilogue_block(op, buffers)
    return [gemm(lo, op.x, op.w, op.result.type, custom=(block, buffers))]


MATMUL_EPILOGUE_LOWERINGS = {fused.MatmulEpilogueOp: lower_matmul_epilogue}
