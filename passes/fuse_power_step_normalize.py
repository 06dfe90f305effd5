"""Recognises a power-iteration step with column normalization and makes it one
``fused.power_step_normalize``:

    y = a @ q;  y / (sqrt(sum(y^2, 0)) + eps)
  becomes
    %z = fused.power_step_normalize %a, %q {eps} : tensor<MxKxf32>, tensor<KxCxf32> -> tensor<MxCxf32>

which lowers to two kernels (a tiled GEMM that stores y and its tiles' column sums of squares,
then one pass that adds them and divides) where the ``nn`` ops take four or more. The norm may
be written ``sqrt(reduce_sum(y * y, [0]))``, with ``pow(y, 2)``, or as
``sqrt(reduce_mean(y * y, [0]) * m)`` (m the row count), keepdims or not; ``eps`` is a scalar
constant added on either side (or absent: eps = 0, and a zero column gives 0 / 0 = NaN, as the
program does); the division is ``nn.div`` or multiplication by ``1 / denominator``.

Guards (each a missed remark at the division): a and q are rank-2 f32 matrices; the norm is
over the rows (axis 0) and a mean of squares is multiplied by the row count; the norm is of the
divided product itself; eps is a scalar constant >= 0; the product and the norm's intermediates
are read only inside the pattern (else the GEMM would run twice).

Before::

    %y = nn.matmul %a, %q : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
    %s = nn.mul %y, %y : tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
    %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<8x2xf32> -> tensor<1x2xf32>
    %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
    %e = nn.constant {value = dense<1.0e-06> : tensor<f32>} : tensor<f32>
    %d = nn.add %n, %e : tensor<1x2xf32>, tensor<f32> -> tensor<1x2xf32>
    %z = nn.div %y, %d : tensor<8x2xf32>, tensor<1x2xf32> -> tensor<8x2xf32>

After::

    %z = fused.power_step_normalize %a, %q {eps = 1.000000e-06 : f32} : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusec.dialects import nn
from fusec.dialects.column_stats import PowerStepNormalizeOp
from fusec.passes._column_stats import (
    Missed,
    erase_dead,
    outside_uses,
    splat,
    sum_of_squares,
    type_reason,
    with_scalar,
)
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import located_at, producer
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-power-step-normalize"


def division(op: Operation) -> tuple[SSAValue, SSAValue, list[Operation]] | None:
    """``(y, denominator, ops)`` of ``y / denominator`` or ``y * (1 / denominator)``; for
    ``y * rsqrt(s)`` (``canonicalize-nn``'s form of ``y / sqrt(s)``) the denominator is the
    ``rsqrt`` result itself (see `norm_of`)."""
    if isinstance(op, nn.DivOp):
        return op.lhs, op.rhs, []
    if isinstance(op, nn.MulOp):
        for y, r in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            recip = producer(r)
            if isinstance(recip, nn.DivOp) and splat(recip.lhs) == 1.0:
                return y, recip.rhs, [recip]
            if isinstance(recip, nn.RsqrtOp):
                return y, r, []
    return None


def norm_of(value: SSAValue, divided: bool) -> nn.SqrtOp | nn.RsqrtOp | None:
    """The op making the norm: ``sqrt(s)`` that ``y`` is divided by (with or without eps), or
    ``rsqrt(s)`` that ``y`` is multiplied by (eps 0: ``rsqrt(s + eps)`` has eps inside the
    square root, another computation, and ``s + eps`` is no sum of squares)."""
    op = producer(value)
    if isinstance(op, nn.SqrtOp) and divided:
        return op
    if isinstance(op, nn.RsqrtOp) and not divided:
        return op
    return None


def denominator(value: SSAValue) -> tuple[SSAValue, float | None, list[Operation]] | Missed:
    """``(norm, eps, ops)`` of ``norm + eps`` (eps None when not a scalar constant), or of the
    norm alone (eps 0)."""
    add = producer(value)
    if isinstance(add, nn.AddOp):
        scaled = with_scalar(add)
        if scaled is not None:
            return scaled[0], scaled[1], [add]
        for norm, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            if isinstance(producer(norm), nn.SqrtOp):
                return Missed("the norm is added to a tensor, not to a scalar eps")
    return value, 0.0, []


class FusePowerStepNormalize(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        found = division(op)
        if found is None:
            return
        y, den, recip_ops = found
        mm = producer(y)
        if not isinstance(mm, nn.MatmulOp):
            return
        parts = denominator(den)
        if isinstance(parts, Missed):
            missed(PASS, op, parts.reason)
            return
        norm_value, eps, add_ops = parts
        sqrt = norm_of(norm_value, not isinstance(producer(den), nn.RsqrtOp))
        if sqrt is None:
            return  # y divided by something other than a norm: not a candidate
        squares = sum_of_squares(sqrt.input)
        if squares is None:
            return
        if isinstance(squares, Missed):
            missed(PASS, op, squares.reason)
            return
        if squares.value is not y:
            missed(PASS, op, "the norm is of another tensor than the divided product")
            return
        for value, what in ((mm.lhs, "a"), (mm.rhs, "q"), (y, "the product")):
            if (bad := type_reason(value, what)) is not None:
                missed(PASS, op, bad.reason)
                return
        if op.results[0].type != y.type:
            missed(PASS, op, "the division broadcasts the product to a larger shape")
            return
        if eps is None or not eps >= 0.0 or eps == float("inf"):
            missed(PASS, op, f"eps ({eps}) is not a finite constant >= 0")
            return
        inner = [op, *recip_ops, *add_ops, sqrt, *squares.ops]
        checks = [(y, "the product")]
        checks += [(o.results[0], f"the {o.name.removeprefix('nn.')} result")
                   for o in [*recip_ops, *add_ops, sqrt, *squares.ops]]
        for value, what in checks:
            if (bad := outside_uses(value, inner, what)) is not None:
                missed(PASS, op, bad.reason)
                return
        if not may_fuse(PASS, op, "fused.power_step_normalize"):
            return
        new = located_at(PowerStepNormalizeOp(mm.lhs, mm.rhs, eps), op)
        read = [o for v in op.operands if (o := producer(v)) is not None]
        rewriter.replace(op, new)
        erase_dead(rewriter, [*recip_ops, *add_ops, sqrt, *squares.ops, mm, *read])


@dataclass(frozen=True)
class FusePowerStepNormalizePass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FusePowerStepNormalize(), (nn.DivOp, nn.MulOp))
