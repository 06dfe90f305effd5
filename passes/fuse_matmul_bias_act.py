"""Folds the bias add and the activation into the matmul's epilogue.

``act(add(matmul(x, w), b)) -> fused.matmul_bias_act(x, w, b){act}``

Two rewrites, each matched on the consumer:

- ``add(matmul(x, w), b)`` (either operand order) becomes ``fused.matmul_bias_act(x, w, b)``
  with no activation, when the matmul's only use is the add, the element type is a float, and
  ``b`` has rank <= 1 and broadcasts to the last dimension (``[]``, ``[1]`` or ``[N]``).
- ``act(fused.matmul_bias_act(x, w, b))`` takes the activation into the epilogue when the fused
  op has none, its only use is ``act``, and ``act`` is named in ``activations``. Any other
  activation (``nn.exp``, ``nn.tanh`` by default...) stays a separate op reading the fused result.

The bias may be defined anywhere before the add (after the matmul too): the fused op takes the
add's place, where every operand is already defined. ``nn.gelu{approximate = "tanh"}`` is the
activation ``gelu_tanh``.

    %m = nn.matmul %x, %w : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
    %a = nn.add %m, %b : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
    %y = nn.gelu %a : tensor<8x32xf32> -> tensor<8x32xf32>
  becomes
    %y = fused.matmul_bias_act %x, %w, %b {activation = "gelu"}
           : tensor<8x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.common import FLOAT_TYPES, str_prop
from fusec.dialects.fused import ACTIVATIONS, MatmulBiasActOp
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import (
    ACTIVATION_OPS,
    activation_of,
    feeds_only,
    located_at,
    producer,
    shape_of,
    why_shared,
)
from fusec.passes.remarks import may_fuse, missed


def bias_fits(bias_shape: tuple[int, ...], width: int) -> bool:
    """A bias of rank <= 1 that broadcasts to a last dimension of ``width``."""
    return len(bias_shape) == 0 or (len(bias_shape) == 1 and bias_shape[0] in (1, width))


PASS = "fuse-matmul-bias-act"


class FoldBiasAdd(RewritePattern):
    """``add(matmul(x, w), b) -> fused.matmul_bias_act(x, w, b)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.AddOp, rewriter: PatternRewriter) -> None:
        for mm_value, bias in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mm = producer(mm_value)
            if not isinstance(mm, nn.MatmulOp):
                continue
            if not feeds_only(mm_value, op):
                missed(PASS, op, why_shared(mm_value, op, "the matmul result"))
                continue
            mm_type = mm.result.type
            assert isinstance(mm_type, TensorType)
            if mm_type.element_type not in FLOAT_TYPES:
                missed(PASS, op, f"the matmul's element type {mm_type.element_type} is no float")
                continue
            if op.result.type != mm_type:
                missed(PASS, op, "the add broadcasts the matmul result to another shape")
                continue
            if not bias_fits(shape_of(bias), shape_of(mm_value)[-1]):
                missed(
                    PASS,
                    op,
                    f"the bias {bias.type} is not a vector over the last dimension "
                    f"({shape_of(mm_value)[-1]})",
                )
                continue
            if not may_fuse(PASS, op, "fused.matmul_bias_act"):
                return
            fused = MatmulBiasActOp(mm.lhs, mm.rhs, bias, op.result.type)
            rewriter.replace(op, located_at(fused, op))
            rewriter.erase(mm)
            return


@dataclass
class FoldActivation(RewritePattern):
    """``act(fused.matmul_bias_act(x, w, b)) -> fused.matmul_bias_act(x, w, b){act}``."""

    activations: frozenset[str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        act = activation_of(op)
        fused = producer(op.operands[0]) if act is not None else None
        if act is None or not isinstance(fused, MatmulBiasActOp):
            return
        if act not in self.activations:
            missed(
                PASS,
                op,
                f"activation {act} is not in activations={','.join(sorted(self.activations))}",
            )
            return
        if str_prop(fused, "activation") != "none":
            missed(PASS, op, f"the matmul already applies {str_prop(fused, 'activation')}")
            return
        if not feeds_only(fused.result, op):
            missed(PASS, op, why_shared(fused.result, op, "the matmul_bias_act result"))
            return
        if op.results[0].type != fused.result.type:
            missed(PASS, op, "the activation changes the type")
            return
        if not may_fuse(PASS, op, f"fused.matmul_bias_act{{activation={act}}}"):
            return
        new = MatmulBiasActOp(fused.x, fused.w, fused.bias, fused.result.type, activation=act)
        rewriter.replace(op, located_at(new, op))
        rewriter.erase(fused)


def check_activations(names: Sequence[str]) -> None:
    """Raises ``ValueError`` (a bad pass option) for a name that is not an epilogue activation."""
    known = [a for a in ACTIVATIONS if a != "none"]
    for name in names:
        if name not in known:
            raise ValueError(f"unknown activation '{name}' (known: {', '.join(known)})")


@dataclass(frozen=True)
class FuseMatmulBiasActPass(ModulePass):
    name = PASS

    activations: tuple[str, ...] = ("relu", "gelu", "silu")
    """Activations that may fold into the epilogue; others stay separate ops. The seed folded
    only gelu and silu because one of its backends dropped other epilogues; here every lowering
    of the fused op must handle every activation its verifier accepts, and relu is exact and
    free in an epilogue, so it folds by default. gelu_tanh, sigmoid and tanh are opt-in."""

    def __post_init__(self) -> None:
        check_activations(self.activations)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [FoldBiasAdd(), FoldActivation(frozenset(self.activations))]
        applier = GreedyRewritePatternApplier(patterns, dce_enabled=False)
        rewrite_roots(op, applier, (nn.AddOp, *ACTIVATION_OPS))
