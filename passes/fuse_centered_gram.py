"""Recognises a centered Gram matrix (a covariance) and makes it one ``fused.centered_gram``:

    xc = x - mean(x, 0);  g = xc^T @ xc;  optionally g / s or g * s (s a scalar constant)
  becomes
    %g = fused.centered_gram %x {scale = 1/s or s} : tensor<NxDxf32> -> tensor<DxDxf32>

which lowers to two kernels (column means, then a tiled Gram that centers its tiles as it
loads them) where the ``nn`` ops take five. The mean may be written ``reduce_mean(x, [0])``,
``reduce_sum(x, [0]) / n`` or ``reduce_sum(x, [0]) * (1 / n)``, with or without keepdims; the
transpose is ``nn.transpose {perm = [1, 0]}`` of the centered matrix (the same value, or a
second centering of the same ``x``). Division by a constant ``s`` is multiplication by
``1 / s`` (``s = 0``, i.e. ``n - 1`` with one row: ``scale = inf``, and the zero Gram gives NaN,
as ``0 / 0`` does).

Guards (each a missed remark at the matmul): x is a rank-2 f32 tensor; the mean is over the
rows (axis 0) and divides by the row count; the subtracted mean is of the centered tensor
itself; both matmul operands are the centering of the same x. The centering, the mean and the
Gram may have other users: those keep their own ops (correct, but fewer launches saved).

Before::

    %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<8x3xf32> -> tensor<1x3xf32>
    %c = nn.sub %x, %m : tensor<8x3xf32>, tensor<1x3xf32> -> tensor<8x3xf32>
    %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<8x3xf32> -> tensor<3x8xf32>
    %g = nn.matmul %t, %c : tensor<3x8xf32>, tensor<8x3xf32> -> tensor<3x3xf32>
    %s = nn.constant {value = dense<7.0> : tensor<f32>} : tensor<f32>
    %v = nn.div %g, %s : tensor<3x3xf32>, tensor<f32> -> tensor<3x3xf32>

After::

    %v = fused.centered_gram %x {scale = 0.142857149 : f32} : tensor<8x3xf32> -> tensor<3x3xf32>
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.column_stats import CenteredGramOp
from fusec.dialects.common import ints_prop
from fusec.passes._column_stats import Found, Missed, centered, erase_dead, type_reason, with_scalar
from fusec.passes._elementwise import sole_user
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import located_at, producer
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-centered-gram"


def reciprocal(c: float) -> float:
    """``1 / c`` with IEEE semantics for ``c = 0`` (a signed infinity)."""
    return 1.0 / c if c != 0.0 else math.copysign(math.inf, c)


def scaling(op: nn.MatmulOp) -> tuple[Operation, float]:
    """The op that ends the pattern and the scale: the matmul's sole user when it divides or
    multiplies the Gram by a scalar constant, else the matmul itself and 1."""
    user = sole_user(op.result)
    if isinstance(user, nn.DivOp | nn.MulOp):
        scaled = with_scalar(user)
        if scaled is not None and scaled[0] is op.result:
            _, c, is_lhs = scaled
            if isinstance(user, nn.MulOp):
                return user, c
            if not is_lhs:
                return user, reciprocal(c)
    return op, 1.0


class FuseCenteredGram(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MatmulOp, rewriter: PatternRewriter) -> None:
        transpose = producer(op.lhs)
        if not isinstance(transpose, nn.TransposeOp) or list(ints_prop(transpose, "perm")) != [1, 0]:
            return
        lhs = centered(transpose.input)
        if lhs is None:
            return  # a plain x^T y: not a centered Gram
        if isinstance(lhs, Missed):
            missed(PASS, op, lhs.reason)
            return
        rhs = lhs if op.rhs is transpose.input else centered(op.rhs)
        if not isinstance(rhs, Found) or rhs.value is not lhs.value:
            missed(PASS, op, "the matmul's operands are not the centering of one tensor")
            return
        if (bad := type_reason(lhs.value, "x")) is not None:
            missed(PASS, op, bad.reason)
            return
        root, scale = scaling(op)
        if not may_fuse(PASS, op, "fused.centered_gram"):
            return
        new = located_at(CenteredGramOp(lhs.value, scale), op)
        read = [o for v in root.operands if (o := producer(v)) is not None]
        rewriter.replace(root, new)
        erase_dead(rewriter, [op, transpose, *lhs.ops, *rhs.ops, *read])


@dataclass(frozen=True)
class FuseCenteredGramPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseCenteredGram(), (nn.MatmulOp,))
