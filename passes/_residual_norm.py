"""The pattern behind ``fuse-residual-layer-norm`` and ``fuse-residual-rms-norm``.

``norm(add(x, r), scales...) -> fused.residual_<norm>(x, r, scales...)`` when the norm runs over
the last axis, the add's only use is the norm (a returned residual sum stays: later layers read
it), and ``x``, ``r`` and the sum have one type (the fused op does not broadcast).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusec.dialects import nn
from fusec.dialects.common import float_prop
from fusec.passes._util import (
    feeds_only,
    is_last_axis,
    located_at,
    producer,
    shape_of,
    why_shared,
)
from fusec.passes.remarks import may_fuse, missed

# (x, residual, the norm op) -> the fused op replacing the norm
FusedBuilder = Callable[[SSAValue, SSAValue, Operation], Operation]


@dataclass
class FuseResidualNorm(RewritePattern):
    """Matches ``norm_type(add(x, r), ...)`` and replaces it with ``build(x, r, norm)``."""

    norm_type: type[nn.NormOp]
    build: FusedBuilder
    pass_name: str

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) is not self.norm_type:
            return
        x_plus_r, result = op.operands[0], op.results[0]
        add = producer(x_plus_r)
        if not isinstance(add, nn.AddOp):
            return
        if not feeds_only(x_plus_r, op):
            missed(self.pass_name, op, why_shared(x_plus_r, op, "the add"))
            return
        if not add.lhs.type == add.rhs.type == add.result.type == result.type:
            missed(
                self.pass_name,
                op,
                "the add broadcasts (x, the residual and the sum differ in type)",
            )
            return
        if not is_last_axis(op, len(shape_of(result))):
            missed(self.pass_name, op, "the norm is not over the last axis")
            return
        fused_name = "fused.residual_" + self.norm_type.name.removeprefix("nn.")
        if not may_fuse(self.pass_name, op, fused_name):
            return
        rewriter.replace(op, located_at(self.build(add.lhs, add.rhs, op), op))
        rewriter.erase(add)


def eps_of(norm: Operation) -> float:
    return float_prop(norm, "eps")
