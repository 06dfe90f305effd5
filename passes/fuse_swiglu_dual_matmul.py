"""Fuses the gate and up projections of a SwiGLU FFN into one matmul and ``fused.swiglu``.

``mul(silu(matmul(x, wg)), matmul(x, wu)) -> fused.swiglu(matmul(x, concat(wu, wg)))``, with the
mul's operands in either order.

Preconditions: both matmuls read the same ``x`` and have 2-D weights of one shape ``[K, N]``; the
gate matmul's only use is the silu, and the silu's and the up matmul's only use is the mul (a
projection read elsewhere or returned stays). The concatenated weight puts ``up`` first, the
layout ``fused.swiglu`` reads without ``gate_first``.

    %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
    %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
    %s = nn.silu %g : tensor<4x64xf32> -> tensor<4x64xf32>
    %y = nn.mul %s, %u : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  becomes
    %w = nn.concat %wu, %wg {axis = 1 : i64}
           : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x128xf32>
    %c = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x128xf32> -> tensor<4x128xf32>
    %y = fused.swiglu %c : tensor<4x128xf32> -> tensor<4x64xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.fused import SwigluOp
from fusec.passes._util import feeds_only, producer, shape_of


def with_last_dim(t: TensorType, size: int) -> TensorType:
    shape = list(t.get_shape())
    shape[-1] = size
    return TensorType(t.element_type, shape)


class FuseDualMatmulSwiglu(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        for up_value, silu_value in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            silu, up = producer(silu_value), producer(up_value)
            if not isinstance(silu, nn.SiluOp) or not isinstance(up, nn.MatmulOp):
                continue
            gate = producer(silu.input)
            if not isinstance(gate, nn.MatmulOp) or gate.lhs != up.lhs:
                continue
            if not (
                feeds_only(silu_value, op)
                and feeds_only(up_value, op)
                and feeds_only(silu.input, silu)
            ):
                continue
            w_shape = shape_of(up.rhs)
            if len(w_shape) != 2 or shape_of(gate.rhs) != w_shape:
                continue
            if op.result.type != up.result.type:
                continue
            n = w_shape[1]
            w_type = up.rhs.type
            assert isinstance(w_type, TensorType) and isinstance(up.result.type, TensorType)
            weights = nn.ConcatOp([up.rhs, gate.rhs], 1, with_last_dim(w_type, 2 * n))
            cat = nn.MatmulOp(up.lhs, weights.result, with_last_dim(up.result.type, 2 * n))
            weights.result.name_hint, cat.result.name_hint = "up_gate_w", "up_gate"
            rewriter.replace(op, [weights, cat, SwigluOp(cat.result)])
            rewriter.erase(silu)
            rewriter.erase(gate)
            rewriter.erase(up)
            return


@dataclass(frozen=True)
class FuseSwigluDualMatmulPass(ModulePass):
    name = "fuse-swiglu-dual-matmul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseDualMatmulSwiglu()).rewrite_module(op)
