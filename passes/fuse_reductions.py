"""Fuses the elementwise producer of a reduction into it, as the prologue of a ``fused.reduce``.

    reduce_<kind>(f(x, y)) {axes} -> fused.reduce(x, y) {kind, axes} { f(x, y) on scalars }

So ``sum((a - b) * (a - b))`` is one kernel. The producer is a ``fused.elementwise`` (run
``fuse-elementwise`` first to grow it) or a single ``nn`` elementwise op; an existing
``fused.reduce`` absorbs further producers the same way, one at a time, to a fixpoint.
Reductions over all elements and over given axes are both handled; ``keepdims`` is kept.

Preconditions: the reduction is the producer's only user (a returned value, or one another
kind of op reads, stays materialised), or every user of the producer is a sibling reduction of
the same shape (a row sum and a row max of ``exp(x)``): then each sibling computes the producer
again in its prologue (elementwise work instead of a tensor written and read back), and
``fuse-launches`` runs the siblings, which now read the same inputs, as one launch; the prologue
inputs broadcast to exactly the reduced shape (so the axes keep their meaning); the prologue
stays within ``max-steps`` scalar steps and ``max-inputs`` inputs.

A reduction of a plain tensor (no fusible producer) is left as ``nn.reduce_*``: a ``fused.reduce``
with an identity prologue would launch the same one kernel, and every backend must lower
``nn.reduce_*`` anyway (after ``unfuse-elementwise`` or ``clip-elementwise``).

Before::

    %d = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.subf %x, %y : f32
      %q = arith.mulf %s, %s : f32
      fused.yield %q : f32
    }
    %r = nn.reduce_sum %d {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>

After::

    %r = fused.reduce %a, %b {kind = "sum", axes = array<i64: 1>}
           : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = arith.subf %x, %y : f32
      %q = arith.mulf %s, %s : f32
      fused.yield %q : f32
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import fused, nn
from fusec.dialects.common import bool_prop, ints_prop, str_prop
from fusec.passes._elementwise import (
    BodyBuilder,
    Limits,
    broadcast_shape,
    dead_constants,
    fusible,
    sole_user,
    steps,
    tensor_inputs,
)
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import discard, located_at, producer, why_shared
from fusec.passes.fuse_elementwise import check_limits
from fusec.passes.remarks import may_fuse, missed

AnyReduce = nn.ReduceOp | fused.ReduceOp
PASS = "fuse-reductions"


def prologue_steps(op: AnyReduce) -> int:
    return steps(op) if isinstance(op, fused.ReduceOp) else 0


def sibling_reductions(value: SSAValue, op: AnyReduce) -> bool:
    """Every reader of ``value`` (two or more) is a reduction over the shape ``op`` reduces,
    in ``op``'s block (so a copy of the producer can go into each one's prologue)."""
    users = [use.operation for use in value.uses]
    shape = broadcast_shape(op.operands)
    return len(users) > 1 and all(
        isinstance(u, AnyReduce) and u.parent is op.parent and broadcast_shape(u.operands) == shape
        for u in users
    )


def absorbable(
    op: AnyReduce, limits: Limits, reasons: list[str] | None = None, siblings: bool = False
) -> Operation | None:
    """The first producer of ``op``'s inputs that can become (part of) its prologue; why each
    elementwise producer cannot is appended to ``reasons``. With ``siblings``, a producer that
    sibling reductions also read qualifies too (`sibling_reductions`: the caller absorbs a
    copy)."""
    shape = broadcast_shape(op.operands)
    reasons = [] if reasons is None else reasons
    for value in dict.fromkeys(op.operands):
        prod = producer(value)
        if prod is None or not fusible(prod):
            continue
        if sole_user(value) is not op and not (siblings and sibling_reductions(value, op)):
            reasons.append(why_shared(value, op, f"the {prod.name} result"))
            continue
        merged = [v for v in dict.fromkeys(op.operands) if v is not value]
        merged += [v for v in dict.fromkeys(tensor_inputs(prod)) if v not in merged]
        if broadcast_shape(merged) != shape:
            # the prologue would run over another shape than the one reduced
            reasons.append(f"the {prod.name} broadcasts its inputs to a larger shape")
            continue
        total = prologue_steps(op) + steps(prod)
        if total > limits.max_steps:
            reasons.append(
                f"the prologue would have {total} steps, over max-steps={limits.max_steps}"
            )
        elif len(merged) > limits.max_inputs:
            reasons.append(
                f"the reduction would read {len(merged)} inputs, "
                f"over max-inputs={limits.max_inputs}"
            )
        else:
            return prod
    return None


def absorb(
    op: AnyReduce, prod: Operation, absorbed: SSAValue | None = None
) -> tuple[fused.ReduceOp, list[Operation]]:
    """A ``fused.reduce`` computing ``op`` with ``prod`` moved into its prologue, and the splat
    constants this may leave unused. Takes ``op``'s body (if any) and ``prod``'s body ops.
    ``prod`` may be a detached copy of the producer of ``op``'s operand ``absorbed``."""
    absorbed = prod.results[0] if absorbed is None else absorbed
    if isinstance(op, fused.ReduceOp):
        region = op.detach_region(op.body)
        kind = str_prop(op, "kind")
    else:
        block = Block(arg_types=[op.input.type.element_type])  # type: ignore[union-attr]
        block.add_op(fused.YieldOp(block.args[0]))
        region = Region(block)
        kind = op.KIND
    block = region.block
    builder = BodyBuilder(block, op.operands)
    value = builder.add(prod)
    if builder.ops:
        block.insert_ops_before(builder.ops, block.first_op)  # type: ignore[arg-type]
    for index in reversed(range(len(op.operands))):
        if op.operands[index] is absorbed:
            block.args[index].replace_all_uses_with(value)
            block.erase_arg(block.args[index])
            del builder.inputs[index]
    new = fused.ReduceOp(
        builder.inputs,
        kind,
        ints_prop(op, "axes"),
        op.results[0].type,
        region,
        bool_prop(op, "keepdims"),
    )
    located_at(new, op)
    return new, builder.constants


class FuseIntoReduce(RewritePattern):
    def __init__(self, limits: Limits):
        self.limits = limits

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AnyReduce, rewriter: PatternRewriter) -> None:
        reasons: list[str] = []
        prod = absorbable(op, self.limits, reasons, siblings=True)
        if prod is None:
            for reason in reasons:
                missed(PASS, op, reason)
            return
        value = prod.results[0]
        shared = sole_user(value) is not op
        what = "fused.reduce"
        if shared:
            what += f" (a copy of the {prod.name} its sibling reductions also read)"
        if not may_fuse(PASS, op, what):
            return
        copy = prod.clone() if shared else prod
        new, constants = absorb(op, copy, value)
        rewriter.replace(op, new)
        if shared:
            discard(copy)
        if not value.uses:
            rewriter.erase(prod)
        for const in dead_constants(constants):
            rewriter.erase(const)


@dataclass(frozen=True)
class FuseReductionsPass(ModulePass):
    name = PASS

    max_steps: int = 32
    """The most scalar steps (ops other than constants) a prologue may hold."""

    max_inputs: int = 16
    """The most distinct tensor inputs a fused reduction may read."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limits = Limits(self.max_steps, self.max_inputs)
        check_limits(self.name, limits)
        rewrite_roots(op, FuseIntoReduce(limits), (nn.ReduceOp, fused.ReduceOp))
