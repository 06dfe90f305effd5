"""Folds the residual add into the layer norm.

``layer_norm(add(x, r), g, b) -> fused.residual_layer_norm(x, r, g, b)``

Preconditions: the norm is over the last axis; the add's only use is the norm (a sum that the
function returns or another op reads stays, so later layers still see it); ``x``, ``r`` and the
sum have one type (no broadcasting residual).

    %s = nn.add %x, %r : tensor<2x4x32xf32>, tensor<2x4x32xf32> -> tensor<2x4x32xf32>
    %y = nn.layer_norm %s, %g, %b {eps = 1.0e-12 : f32}
           : tensor<2x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x4x32xf32>
  becomes
    %y = fused.residual_layer_norm %x, %r, %g, %b {eps = 1.0e-12 : f32}
           : (tensor<2x4x32xf32>, tensor<2x4x32xf32>, tensor<32xf32>, tensor<32xf32>)
           -> tensor<2x4x32xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from fusec.dialects import nn
from fusec.dialects.fused import ResidualLayerNormOp
from fusec.passes._residual_norm import FuseResidualNorm, eps_of
from fusec.passes._rooted import rewrite_roots


def build(x: SSAValue, residual: SSAValue, norm: Operation) -> Operation:
    assert isinstance(norm, nn.LayerNormOp)
    return ResidualLayerNormOp(x, residual, norm.gamma, norm.beta, eps_of(norm))


@dataclass(frozen=True)
class FuseResidualLayerNormPass(ModulePass):
    name = "fuse-residual-layer-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseResidualNorm(nn.LayerNormOp, build, self.name), (nn.LayerNormOp,))
