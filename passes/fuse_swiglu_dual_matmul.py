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
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.fused import SwigluOp
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import first_shared, located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-swiglu-dual-matmul"


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
            if not isinstance(gate, nn.MatmulOp):
                missed(PASS, op, "the silu's input is not a matmul")
                continue
            if gate.lhs != up.lhs:
                missed(PASS, op, "the gate and up matmuls read different inputs")
                continue
            shared = first_shared(
                (silu_value, op, "the silu result"),
                (up_value, op, "the up matmul result"),
                (silu.input, silu, "the gate matmul result"),
            )
            if shared is not None:
                missed(PASS, op, shared)
                continue
            w_shape = shape_of(up.rhs)
            if len(w_shape) != 2 or shape_of(gate.rhs) != w_shape:
                missed(PASS, op, "the gate and up weights are not 2-D of one shape")
                continue
            if op.result.type != up.result.type:
                missed(PASS, op, "the mul's result type differs from the matmuls'")
                continue
            if not may_fuse(PASS, op, "concat + nn.matmul + fused.swiglu"):
                return
            n = w_shape[1]
            w_type = up.rhs.type
            assert isinstance(w_type, TensorType) and isinstance(up.result.type, TensorType)
            weights = nn.ConcatOp([up.rhs, gate.rhs], 1, with_last_dim(w_type, 2 * n))
            cat = nn.MatmulOp(up.lhs, weights.result, with_last_dim(up.result.type, 2 * n))
            weights.result.name_hint, cat.result.name_hint = "up_gate_w", "up_gate"
            swiglu = located_at(SwigluOp(cat.result), op)
            rewriter.replace(op, [located_at(weights, op), located_at(cat, op), swiglu])
            rewriter.erase(silu)
            rewriter.erase(gate)
            rewriter.erase(up)
            return


@dataclass(frozen=True)
class FuseSwigluDualMatmulPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseDualMatmulSwiglu(), (nn.MulOp,))
