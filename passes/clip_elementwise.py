"""Splits every fused region that exceeds the limits into regions that fit.

    fused.elementwise { 40 steps } -> fused.elementwise { <= max-steps } ... (and nn ops)

For a backend that allows smaller kernels than the ones ``fuse-elementwise`` made (or regions
written by hand). A ``fused.elementwise`` or ``fused.reduce`` with more than ``max-steps`` scalar
steps or more than ``max-inputs`` tensor inputs is decomposed into ``nn`` ops, which are then
fused again under the limits, by the same deterministic rule as ``fuse-elementwise``; a
reduction takes back as much of its prologue as fits. An op that alone exceeds the limits (say
``nn.gelu`` under ``max-steps=2``) stays an ``nn`` op. Regions within the limits are untouched.

Before (``clip-elementwise{max-steps=2}``)::

    %r = fused.elementwise %a : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: f32):
      %0 = math.exp %x : f32
      %1 = math.log %0 : f32
      %2 = math.sqrt %1 : f32
      fused.yield %2 : f32
    }

After::

    %0 = nn.exp %a : tensor<8xf32> -> tensor<8xf32>
    %r = fused.elementwise %0 : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: f32):
      %1 = math.log %x : f32
      %2 = math.sqrt %1 : f32
      fused.yield %2 : f32
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from fusec.dialects import fused, nn
from fusec.dialects.scalar_ops import ScalarOpError
from fusec.passes._elementwise import Limits, fuse_regions, steps, tensor_inputs
from fusec.passes._util import OpPassFailure
from fusec.passes.fuse_elementwise import check_limits
from fusec.passes.fuse_reductions import absorb, absorbable, dead_constants
from fusec.passes.remarks import may_fuse


def exceeds(op: Operation, limits: Limits) -> bool:
    return isinstance(op, fused.ElementwiseOp | fused.ReduceOp) and not limits.admit(
        steps(op), len(set(tensor_inputs(op)))
    )


def clip(op: fused.ElementwiseOp | fused.ReduceOp, limits: Limits) -> None:
    """Decomposes ``op`` and fuses the pieces again under ``limits``."""
    try:
        new_ops, values = op.decompose()
    except ScalarOpError as e:
        raise OpPassFailure("clip-elementwise", e.op, str(e)) from None
    Rewriter.replace_op(op, new_ops, values)
    fuse_regions(new_ops, limits, "clip-elementwise")
    reduce = new_ops[-1] if new_ops else None
    while isinstance(reduce, nn.ReduceOp | fused.ReduceOp):
        prod = absorbable(reduce, limits)
        if prod is None or not may_fuse("clip-elementwise", reduce, "fused.reduce"):
            break
        new, constants = absorb(reduce, prod)
        Rewriter.replace_op(reduce, new)
        Rewriter.erase_op(prod)
        for const in dead_constants(constants):
            Rewriter.erase_op(const)
        reduce = new


@dataclass(frozen=True)
class ClipElementwisePass(ModulePass):
    name = "clip-elementwise"

    max_steps: int = 32
    """The most scalar steps (ops other than constants) a region body may hold."""

    max_inputs: int = 16
    """The most distinct tensor inputs a region may read."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limits = Limits(self.max_steps, self.max_inputs)
        check_limits(self.name, limits)
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            for block in fn.body.blocks:
                for region_op in [o for o in block.ops if exceeds(o, limits)]:
                    assert isinstance(region_op, fused.ElementwiseOp | fused.ReduceOp)
                    clip(region_op, limits)
