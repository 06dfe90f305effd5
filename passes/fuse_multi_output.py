"""Merges elementwise regions across a value that is also read elsewhere: the merged
``fused.elementwise`` returns that value too (seed 000's materialized stores), so one kernel
computes both and stores the intermediate.

    %t = P(x)          (read by C and by something else)
    %y = C(%t, z)   -> %y, %t = fused.elementwise(x, z) { P; C; yield y, t }

``fuse-elementwise`` ends a region at a value with a user outside it; this pass runs after it
and joins such a producer region ``P`` (a ``fused.elementwise``, perhaps multi-result, or one
``nn`` elementwise op) into a consumer region ``C`` that reads one of its results. The merged
op's results are ``C``'s, then those of ``P``'s that something other than ``C`` reads. So a
value with several elementwise consumers no longer splits the region either: ``P`` joins the
first consumer, then the merged op joins the next.

Preconditions: every result of ``P`` and ``C`` has one shape (the kernel's iteration space);
the merged op stands where ``C`` stood when every other reader of ``P``'s results comes after
``C``, else where ``P`` stood when every other input of ``C`` is defined before ``P``, else
nothing is merged; the merged body stays within ``max-steps`` scalar steps and ``max-inputs``
inputs (so the cuts of ``clip-elementwise`` stay). Deterministic: ops are visited in program
order, each consumer with its producers in operand order, until nothing merges. ``unfuse``
(or ``unfuse-elementwise``) gives back the ``nn`` ops, the intermediate included.

Before::

    %t = fused.elementwise %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> { mul }
    %y = nn.exp %t : tensor<8xf32> -> tensor<8xf32>
    func.return %y, %t : tensor<8xf32>, tensor<8xf32>

After::

    %y, %t = fused.elementwise %a, %b : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%x: f32, %z: f32):
      %m = arith.mulf %x, %z : f32
      %e = math.exp %m : f32
      fused.yield %e, %m : f32, f32
    }
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from fusec.dialects import fused
from fusec.dialects.op_kinds import OpKind, op_kind
from fusec.passes._elementwise import BodyBuilder, Limits, dead_constants, steps, tensor_inputs
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.fuse_elementwise import check_limits
from fusec.passes.remarks import may_fuse

PASS = "fuse-multi-output"


def region_like(op: Operation) -> bool:
    """An op of the elementwise kind: an elementwise ``nn`` op or a (perhaps multi-result)
    ``fused.elementwise``."""
    return op_kind(op) is OpKind.ELEMENTWISE


def add_all(builder: BodyBuilder, op: Operation) -> None:
    """Appends the scalar form of ``op``, binding the scalar of each of its results."""
    if isinstance(op, fused.ElementwiseOp) and len(op.results) > 1:
        operands = [builder.scalar_of(v) for v in op.operands]
        values = builder.inline(op.body.block, operands)
        for result, value in zip(op.results, values, strict=True):
            builder.scalar[result] = value
    else:
        builder.add(op)


def index_in_block(op: Operation) -> int:
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


@dataclass(frozen=True)
class Merge:
    producer: Operation
    consumer: Operation
    at_consumer: bool
    kept: tuple[SSAValue, ...]
    """Results of the producer that something other than the consumer reads."""


def plan_merge(p: Operation, c: Operation, limits: Limits) -> Merge | None:
    if p is c or p.parent is not c.parent or not region_like(p):
        return None
    shape = shape_of(c.results[0])
    if any(shape_of(r) != shape for r in (*p.results, *c.results)):
        return None
    outside = [u.operation for r in p.results for u in r.uses if u.operation is not c]
    kept = tuple(r for r in p.results if any(u.operation is not c for u in r.uses))
    inputs = dict.fromkeys(tensor_inputs(p))
    inputs.update(dict.fromkeys(v for v in tensor_inputs(c) if producer(v) is not p))
    if not limits.admit(steps(p) + steps(c), len(inputs)):
        return None
    c_index = index_in_block(c)
    if all(index_in_block(u) > c_index for u in outside if u.parent is c.parent) and all(
        u.parent is c.parent for u in outside
    ):
        return Merge(p, c, True, kept)
    p_index = index_in_block(p)
    for v in c.operands:
        owner = producer(v)
        if owner is not p and owner is not None and owner.parent is c.parent:
            if index_in_block(owner) > p_index:
                return None
    return Merge(p, c, False, kept)


def merge(m: Merge) -> fused.ElementwiseOp:
    p, c = m.producer, m.consumer
    builder = BodyBuilder(Block())
    add_all(builder, p)
    add_all(builder, c)
    block = builder.block
    block.add_ops(builder.ops)
    results = [*c.results, *m.kept]
    block.add_op(fused.YieldOp(*(builder.scalar[r] for r in results)))
    new = fused.ElementwiseOp(builder.inputs, [r.type for r in results], Region(block))
    located_at(new, c)
    Rewriter.insert_op(new, InsertPoint.before(c if m.at_consumer else p))
    for old, res in zip(results, new.results, strict=True):
        res.name_hint = old.name_hint
        old.replace_all_uses_with(res)
    Rewriter.erase_op(c)
    Rewriter.erase_op(p)
    for const in dead_constants(builder.constants):
        Rewriter.erase_op(const)
    return new


def merge_once(block: Block, limits: Limits) -> bool:
    for c in list(block.ops):
        if not region_like(c):
            continue
        for v in dict.fromkeys(c.operands):
            p = producer(v)
            if p is None:
                continue
            m = plan_merge(p, c, limits)
            if m is not None and may_fuse(PASS, c, "fused.elementwise storing an intermediate"):
                merge(m)
                return True
    return False


@dataclass(frozen=True)
class FuseMultiOutputPass(ModulePass):
    name = PASS

    max_steps: int = 32
    """The most scalar steps (ops other than constants) a merged body may hold."""

    max_inputs: int = 16
    """The most distinct tensor inputs a merged region may read."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limits = Limits(self.max_steps, self.max_inputs)
        check_limits(self.name, limits)
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            for block in fn.body.blocks:
                while merge_once(block, limits):
                    pass
