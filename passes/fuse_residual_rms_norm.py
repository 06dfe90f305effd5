"""Folds the residual add into the RMS norm.

``rms_norm(add(x, r), g) -> fused.residual_rms_norm(x, r, g)``

Preconditions: the norm is over the last axis and keeps its input's shape; the add's only use
is the norm (a sum that the function returns or another op reads stays); ``x``, ``r`` and the
sum have one type (no broadcasting residual).

    %s = nn.add %x, %r : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
    %y = nn.rms_norm %s, %g : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  becomes
    %y = fused.residual_rms_norm %x, %r, %g
           : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from fusec.dialects import nn
from fusec.dialects.fused import ResidualRmsNormOp
from fusec.passes._residual_norm import FuseResidualNorm, eps_of
from fusec.passes._rooted import rewrite_roots


def build(x: SSAValue, residual: SSAValue, norm: Operation) -> Operation:
    assert isinstance(norm, nn.RmsNormOp)
    return ResidualRmsNormOp(x, residual, norm.gamma, eps_of(norm))


@dataclass(frozen=True)
class FuseResidualRmsNormPass(ModulePass):
    name = "fuse-residual-rms-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseResidualNorm(nn.RmsNormOp, build, self.name), (nn.RmsNormOp,))
