"""Fuses maximal groups of elementwise ops into one ``fused.elementwise`` with a scalar body.

    f(g(x, y), h(z)) -> fused.elementwise(x, y, z) { f(g(x, y), h(z)) on scalars }

Fusible: the ``nn`` elementwise ops (binary, unary, gelu, cast, cmp, where) and existing
``fused.elementwise`` ops, whose bodies are merged. Preconditions and rules:
  * a value joins its consumer's region only when that consumer is its only user (it may read
    it more than once), or when all its users are in that one region (a diamond such as
    ``where(c, exp(t), t)``); a value read by another region, by a non-elementwise op or by
    ``func.return`` is materialised and ends the region;
  * inputs may broadcast to the region's shape (scalars, ``[N]`` over ``[M, N]``, numpy rules);
    splat ``nn.constant`` operands become ``arith.constant`` in the body, not inputs;
  * a cast that changes the type keeps its real conversion (``arith.truncf``...) in the body;
  * transposes, narrows and concats that feed or follow the arithmetic are taken in as index
    maps of the region's loads (``passes/_view_regions.py``): ``exp(transpose(x))``, a rotary
    embedding written with narrow / neg / concat, a concat of two elementwise results are one
    kernel each;
  * a reshape of a narrow is a narrow of a reshape where that is one slice (the narrow is then
    an index map, or read in place), and two regions of one body over adjacent slices of one
    tensor (the rotary embeddings of a packed projection's query and key heads) are one
    region, each a narrow of it (``passes/_sibling_slices.py``);
  * ``matmul``, norms, softmax, attention, reductions, reshapes and every other op are
    boundaries; a region of one op is left alone;
  * a region never exceeds ``max-steps`` scalar steps or ``max-inputs`` tensor inputs: it is cut
    there, deterministically (ops are visited last to first and join their user's region while
    it fits; see ``passes/_elementwise.py``).

One analysis of each block, then one rewrite per region that moves the ops (linear time).

Before::

    %0 = nn.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %1 = nn.exp %0 : tensor<4x8xf32> -> tensor<4x8xf32>
    %2 = nn.mul %1, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>

After::

    %2 = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.subf %x, %y : f32
      %e = math.exp %s : f32
      %m = arith.mulf %e, %x : f32
      fused.yield %m : f32
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from fusec.passes._elementwise import Limits, fuse_regions
from fusec.passes._sibling_slices import join_sibling_slices, narrow_last
from fusec.passes._transposed_regions import recompute_transposed
from fusec.passes._view_regions import fuse_view_regions


def check_limits(pass_name: str, limits: Limits) -> None:
    if limits.max_steps < 1 or limits.max_inputs < 1:
        raise PassFailedException(
            f"{pass_name}: max-steps ({limits.max_steps}) and max-inputs ({limits.max_inputs}) "
            "must be at least 1"
        )


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    name = "fuse-elementwise"

    max_steps: int = 32
    """The most scalar steps (ops other than constants) a region body may hold."""

    max_inputs: int = 16
    """The most distinct tensor inputs a region may read."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limits = Limits(self.max_steps, self.max_inputs)
        check_limits(self.name, limits)
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            for block in fn.body.blocks:
                narrow_last(list(block.ops), self.name)
                fuse_regions(list(block.ops), limits, self.name)
                fuse_view_regions(list(block.ops), limits, self.name)
                recompute_transposed(list(block.ops), limits, self.name)
                join_sibling_slices(list(block.ops), self.name)
                narrow_last(list(block.ops), self.name)
