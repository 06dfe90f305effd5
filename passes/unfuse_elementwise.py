"""Turns every ``fused.elementwise`` and ``fused.reduce`` back into ``nn`` ops.

    fused.elementwise(x, y) { f(g(x, y)) } -> nn.f(nn.g(x, y))
    fused.reduce(x) { f(x) } {kind, axes}  -> nn.reduce_<kind>(nn.f(x)) {axes}

The inverse of ``fuse-elementwise`` and ``fuse-reductions``, written once on top of each op's
``decompose()`` (``fusec.dialects.scalar_ops``): every step gets the broadcast shape of its
operands and the element type of its scalar op, composite forms (gelu, silu, sigmoid, relu...)
come back as one ``nn`` op, and scalar constants become rank-0 ``nn.constant``. A body op with
no ``nn`` equivalent (``math.sin``...) fails the pass, naming the op.

Before::

    %r = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.subf %x, %y : f32
      %e = math.exp %s : f32
      fused.yield %e : f32
    }

After::

    %s = nn.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %r = nn.exp %s : tensor<4x8xf32> -> tensor<4x8xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import fused
from fusec.dialects.scalar_ops import ScalarOpError
from fusec.passes._util import OpPassFailure


class UnfuseRegion(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: fused.ElementwiseOp | fused.ReduceOp, rewriter: PatternRewriter
    ) -> None:
        try:
            new_ops, values = op.decompose()
        except ScalarOpError as e:
            raise OpPassFailure("unfuse-elementwise", e.op, str(e)) from None
        rewriter.replace(op, new_ops, values)


@dataclass(frozen=True)
class UnfuseElementwisePass(ModulePass):
    name = "unfuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(UnfuseRegion(), apply_recursively=False).rewrite_module(op)
