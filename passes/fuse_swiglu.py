"""Recognises SwiGLU on the two halves of a concatenated projection.

``mul(narrow(cat, 0, N), silu(narrow(cat, N, N))) -> fused.swiglu(cat)``, and the gate-first
mirror ``mul(narrow(cat, N, N), silu(narrow(cat, 0, N))) -> fused.swiglu(cat) {gate_first}``,
with the mul's operands in either order.

Preconditions: both narrows slice the last axis of the same ``cat``, each ``N`` wide, and ``cat``
is exactly ``2N`` wide there (the two halves, nothing else); each narrow and the silu have one
use, inside the pattern (``cat`` itself may have other users). This is the shape
``fuse-shared-input-matmul`` leaves for a gate/up pair.

    %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 64 : i64}
           : tensor<4x128xf32> -> tensor<4x64xf32>
    %g = nn.narrow %cat {axis = 1 : i64, start = 64 : i64, length = 64 : i64}
           : tensor<4x128xf32> -> tensor<4x64xf32>
    %s = nn.silu %g : tensor<4x64xf32> -> tensor<4x64xf32>
    %y = nn.mul %u, %s : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  becomes
    %y = fused.swiglu %cat : tensor<4x128xf32> -> tensor<4x64xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.common import int_prop
from fusec.dialects.fused import SwigluOp
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import discard, first_shared, is_last_axis, located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-swiglu"


def last_axis_half(narrow: nn.NarrowOp) -> tuple[SSAValue, int, int] | None:
    """``(cat, start, length)`` of a narrow over the last axis of ``cat``, else None."""
    if not is_last_axis(narrow, len(shape_of(narrow.input))):
        return None
    return narrow.input, int_prop(narrow, "start"), int_prop(narrow, "length")


class FuseSwiglu(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        for up_value, silu_value in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            silu, up = producer(silu_value), producer(up_value)
            if not isinstance(silu, nn.SiluOp) or not isinstance(up, nn.NarrowOp):
                continue
            gate = producer(silu.input)
            if not isinstance(gate, nn.NarrowOp):
                missed(PASS, op, "the silu's input is not a narrow")
                continue
            shared = first_shared(
                (silu_value, op, "the silu result"),
                (up_value, op, "the up narrow's result"),
                (silu.input, silu, "the gate narrow's result"),
            )
            if shared is not None:
                missed(PASS, op, shared)
                continue
            up_half, gate_half = last_axis_half(up), last_axis_half(gate)
            if up_half is None or gate_half is None:
                missed(PASS, op, "a narrow is not over the last axis")
                continue
            (cat, up_start, n), (gate_cat, gate_start, gate_n) = up_half, gate_half
            if cat != gate_cat:
                missed(PASS, op, "the narrows slice different tensors")
                continue
            if n != gate_n or shape_of(cat)[-1] != 2 * n or {up_start, gate_start} != {0, n}:
                missed(PASS, op, "the narrows are not the two halves of their tensor")
                continue
            fused = SwigluOp(cat, gate_first=gate_start == 0)
            if fused.result.type != op.result.type:
                discard(fused)
                missed(PASS, op, "the mul's result type differs from the halves'")
                continue
            if not may_fuse(PASS, op, "fused.swiglu"):
                discard(fused)
                return
            rewriter.replace(op, located_at(fused, op))
            rewriter.erase(silu)
            rewriter.erase(gate)
            rewriter.erase(up)
            return


@dataclass(frozen=True)
class FuseSwigluPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseSwiglu(), (nn.MulOp,))
