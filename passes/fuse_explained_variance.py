"""Recognises the explained variance ``diag(q^T g q)`` and makes it one
``fused.explained_variance`` that never forms the ``k x k`` matrix:

    sum(q * (g @ q), 0)                       (the column-wise form), or
    sum((q^T @ (g @ q)) * I, 0 or 1)          (the k x k form masked by an identity constant)
  becomes
    %v = fused.explained_variance %g, %q : tensor<DxDxf32>, tensor<DxKxf32> -> tensor<Kxf32>

which lowers to two kernels (a tiled GEMM of ``g @ q`` whose tiles end in the column sums of
``q * (g @ q)``, then one that adds the tiles' sums) where the ``nn`` ops take three (or five).
The multiplication's operands may come in either order, and keepdims gives a ``[1, K]`` result.

Guards (each a missed remark at the reduction): g and q are rank-2 f32 matrices, g square;
the sum is over the rows (axis 0) of ``q * (g @ q)``; the matrix multiplied is the product's
own right operand q; ``g @ q`` and the elementwise product are read only inside the pattern.

Before::

    %gq = nn.matmul %g, %q : tensor<6x6xf32>, tensor<6x2xf32> -> tensor<6x2xf32>
    %p = nn.mul %q, %gq : tensor<6x2xf32>, tensor<6x2xf32> -> tensor<6x2xf32>
    %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<6x2xf32> -> tensor<2xf32>

After::

    %v = fused.explained_variance %g, %q : tensor<6x6xf32>, tensor<6x2xf32> -> tensor<2xf32>
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.column_stats import ExplainedVarianceOp
from fusec.dialects.common import ints_prop
from fusec.passes._column_stats import Missed, erase_dead, outside_uses, over_rows, type_reason
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-explained-variance"


def is_identity(value: SSAValue) -> bool:
    """Whether ``value`` is an ``nn.constant`` square identity matrix."""
    op = producer(value)
    if not isinstance(op, nn.ConstantOp):
        return False
    shape = shape_of(value)
    if len(shape) != 2 or shape[0] != shape[1]:
        return False
    values = op.value.get_values()
    if op.value.is_splat():
        return shape[0] == 1 and float(values[0]) == 1.0
    return bool(np.array_equal(np.asarray(values, dtype=np.float64).reshape(shape),
                               np.eye(shape[0])))


@dataclass
class Match:
    g: SSAValue
    q: SSAValue
    ops: list[Operation]
    """The matched ops but the root, users before producers."""


def column_form(op: nn.ReduceSumOp) -> Match | Missed | None:
    """``sum(q * (g @ q), 0)``."""
    mul = producer(op.input)
    if not isinstance(mul, nn.MulOp):
        return None
    for gq, other in ((mul.rhs, mul.lhs), (mul.lhs, mul.rhs)):
        mm = producer(gq)
        if isinstance(mm, nn.MatmulOp):
            break
    else:
        return None
    if mm.rhs is not other:
        return Missed("the product g @ q is multiplied by another tensor than q")
    if (bad := over_rows(op)) is not None:
        return bad
    for value, what in ((mm.rhs, "q"), (mm.lhs, "g")):
        if (bad := type_reason(value, what)) is not None:
            return bad
    inner = [op, mul]
    for value, what in ((gq, "the product g @ q"), (mul.result, "the mul result")):
        if (bad := outside_uses(value, inner, what)) is not None:
            return bad
    return Match(mm.lhs, mm.rhs, [mul, mm])


def masked_form(op: nn.ReduceSumOp) -> Match | Missed | None:
    """``sum((q^T @ (g @ q)) * I, 0 or 1)``."""
    mul = producer(op.input)
    if not isinstance(mul, nn.MulOp):
        return None
    for full, eye in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        outer = producer(full)
        if not isinstance(outer, nn.MatmulOp):
            continue
        transpose, inner_mm = producer(outer.lhs), producer(outer.rhs)
        if (isinstance(transpose, nn.TransposeOp) and list(ints_prop(transpose, "perm")) == [1, 0]
                and isinstance(inner_mm, nn.MatmulOp)):
            break
    else:
        return None
    if not is_identity(eye):
        return Missed("the k x k matrix is multiplied by something other than an identity "
                      "constant")
    if inner_mm.rhs is not transpose.input:
        return Missed("the k x k matrix is not q^T @ (g @ q) of one q")
    axes = ints_prop(op, "axes")
    if len(axes) != 1:
        return Missed(f"the masked sum is over axes {list(axes)}, not one axis")
    for value, what in ((inner_mm.rhs, "q"), (inner_mm.lhs, "g")):
        if (bad := type_reason(value, what)) is not None:
            return bad
    inner = [op, mul, outer]
    for value, what in ((full, "the k x k matrix"), (mul.result, "the mul result"),
                        (outer.rhs, "the product g @ q"), (outer.lhs, "the transpose")):
        if (bad := outside_uses(value, inner, what)) is not None:
            return bad
    return Match(inner_mm.lhs, inner_mm.rhs, [mul, outer, transpose, inner_mm])


class FuseExplainedVariance(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReduceSumOp, rewriter: PatternRewriter) -> None:
        found = masked_form(op)
        if found is None:
            found = column_form(op)
        if found is None:
            return
        if isinstance(found, Missed):
            missed(PASS, op, found.reason)
            return
        g, q = shape_of(found.g), shape_of(found.q)
        if g[0] != g[1]:
            missed(PASS, op, f"g is {found.g.type}, not square")
            return
        k = q[1]
        if shape_of(op.result) not in ((k,), (1, k)):
            missed(PASS, op, f"the result {op.result.type} is not [{k}] or [1, {k}]")
            return
        if not may_fuse(PASS, op, "fused.explained_variance"):
            return
        new = located_at(ExplainedVarianceOp(found.g, found.q, op.result.type), op)
        rewriter.replace(op, new)
        erase_dead(rewriter, found.ops)


@dataclass(frozen=True)
class FuseExplainedVariancePass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseExplainedVariance(), (nn.ReduceSumOp,))
