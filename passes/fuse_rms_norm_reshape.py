"""Lets the RMS norm write the flattened 2-D shape that a reshape after it asks for.

``reshape(rms_norm(x, g)) -> rms_norm(x, g)`` with the reshape's result type, when the reshape
only flattens the leading dimensions (``[a, b, H] -> [a*b, H]``).

Preconditions: the norm is over the last axis and has its input's shape (not already flattened);
its only use is the reshape (a returned or shared norm result keeps its shape); the reshape's
result is ``[prod(leading dims), H]``. The norm's rows are contiguous, so the flattened result is
the same bytes: the copy the reshape made is gone.

    %n = nn.rms_norm %x, %g : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
    %f = nn.reshape %n : tensor<1x8x64xf32> -> tensor<8x64xf32>
  becomes
    %f = nn.rms_norm %x, %g : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.common import float_prop, int_prop
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import (
    feeds_only,
    is_last_axis,
    located_at,
    producer,
    shape_of,
    why_shared,
)
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-rms-norm-reshape"


def flattens_leading(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    """``dst`` is ``src`` with every dimension but the last folded into one."""
    return len(src) >= 2 and dst == (math.prod(src[:-1]), src[-1])


class FoldReshapeIntoRmsNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReshapeOp, rewriter: PatternRewriter) -> None:
        norm = producer(op.input)
        if not isinstance(norm, nn.RmsNormOp):
            return
        if not feeds_only(op.input, op):
            missed(PASS, op, why_shared(op.input, op, "the rms_norm result"))
            return
        src = shape_of(norm.input)
        if norm.result.type != norm.input.type:
            missed(PASS, op, "the rms_norm changes the type")
            return
        if not is_last_axis(norm, len(src)):
            missed(PASS, op, "the rms_norm is not over the last axis")
            return
        if not flattens_leading(src, shape_of(op.result)):
            missed(PASS, op, "the reshape does not fold the leading dimensions into one")
            return
        if not may_fuse(PASS, op, "nn.rms_norm over the reshaped rows"):
            return
        flat = nn.RmsNormOp(
            norm.input,
            norm.gamma,
            axis=int_prop(norm, "axis"),
            eps=float_prop(norm, "eps"),
            result_type=op.result.type,
        )
        rewriter.replace(op, located_at(flat, op))
        rewriter.erase(norm)


@dataclass(frozen=True)
class FuseRmsNormReshapePass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FoldReshapeIntoRmsNorm(), (nn.ReshapeOp,))
