"""Merges matmuls that read the same input into one matmul of concatenated weights.

``matmul(x, w_1), ..., matmul(x, w_n) -> narrow_i(matmul(x, concat(w_1, ..., w_n)))``, so ``x``
is read once (QKV projections, gate/up pairs, a router beside an expert).

Preconditions: two or more ``nn.matmul`` ops in one block with the same ``x`` (their left
operand) and 2-D weights (``[K, N_i]``; ``K`` is ``x``'s last dimension). The merged matmul goes
right before the first op that reads any of the originals, so every weight must be defined before
that op, or be made by a pure op (a ``concat`` of parameters) that can move there; a matmul that
cannot meet this joins a later group instead (or stays). The originals' results may have any
users, returns included: each is replaced by a ``narrow`` of the merged result's last axis.

    %q = nn.matmul %x, %wq : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
    %k = nn.matmul %x, %wk : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  becomes
    %w = nn.concat %wq, %wk {axis = 1 : i64}
           : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x32xf32>
    %m = nn.matmul %x, %w : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
    %q = nn.narrow %m {axis = 1 : i64, start = 0 : i64, length = 16 : i64}
           : tensor<8x32xf32> -> tensor<8x16xf32>
    %k = nn.narrow %m {axis = 1 : i64, start = 16 : i64, length = 16 : i64}
           : tensor<8x32xf32> -> tensor<8x16xf32>

The matmuls are siblings with no consumer in common, so this pass is a whole-block analysis
rather than a rewrite pattern: it numbers the ops of each block once, groups each input's matmul
users (found through the input's use list), and rewrites every group once. Linear in the block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure

from fusec.dialects import nn
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-shared-input-matmul"


@dataclass
class Positions:
    """Program order within one block, kept valid across rewrites: ops inserted by a rewrite
    take a fractional position just before the op they were inserted in front of."""

    block: Block
    index: dict[Operation, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {op: float(i) for i, op in enumerate(self.block.ops)}

    def of_op(self, op: Operation) -> float:
        return self.index[op]

    def defined_at(self, value: SSAValue) -> float:
        """Where ``value`` becomes available: -inf for arguments and values from outside."""
        owner = producer(value)
        if owner is None or owner.parent is not self.block:
            return -math.inf
        return self.index[owner]

    def first_use(self, op: Operation) -> Operation | None:
        """The earliest op of the block reading a result of ``op``."""
        users = [self.ancestor_in_block(use.operation) for r in op.results for use in r.uses]
        users = [u for u in users if u is not None]
        return min(users, key=self.of_op, default=None)

    def ancestor_in_block(self, op: Operation) -> Operation | None:
        while op.parent is not self.block:
            parent = op.parent_op()
            if parent is None:
                return None
            op = parent
        return op

    def inserted(self, ops: list[Operation], before: Operation) -> None:
        at = self.index[before] - 0.5
        self.index.update((op, at) for op in ops)


@dataclass
class Group:
    """Matmuls of one input that can merge, and the op the merged matmul must precede."""

    matmuls: list[nn.MatmulOp]
    first_user: Operation | None
    ready_at: float  # where the last weight becomes available


def movable(op: Operation, candidates: list[nn.MatmulOp]) -> bool:
    """A weight's producer that may move up to the merged matmul: pure, no regions, and not
    reading any of the matmuls being merged (that would make a cycle)."""
    return (
        op.has_trait(Pure)
        and not op.regions
        and all(producer(v) not in candidates for v in op.operands)
    )


def weight_ready(w: SSAValue, pos: Positions, candidates: list[nn.MatmulOp]) -> float:
    """Where weight ``w`` can be available: where it is defined, or, when its producer can move
    (``concat`` of parameters, a transpose...), where the producer's operands are."""
    at = pos.defined_at(w)
    owner = producer(w)
    if owner is None or at == -math.inf or not movable(owner, candidates):
        return at
    return max((pos.defined_at(v) for v in owner.operands), default=-math.inf)


def groups_of(candidates: list[nn.MatmulOp], pos: Positions) -> list[Group]:
    """Greedy partition, in program order: a matmul joins the open group if every weight is
    (or can be moved to be) defined before the group's first user; otherwise it waits for the
    next round."""
    groups: list[Group] = []
    pending = sorted(candidates, key=pos.of_op)
    while len(pending) >= 2:
        group = Group([], None, -math.inf)
        waiting: list[nn.MatmulOp] = []
        for mm in pending:
            user = pos.first_use(mm)
            first = min(
                (u for u in (group.first_user, user) if u is not None),
                key=pos.of_op,
                default=None,
            )
            ready = max(group.ready_at, weight_ready(mm.rhs, pos, candidates))
            weight_from_group = producer(mm.rhs) in group.matmuls
            if not weight_from_group and (first is None or ready < pos.of_op(first)):
                group.matmuls.append(mm)
                group.first_user, group.ready_at = first, ready
            else:
                waiting.append(mm)
        if len(group.matmuls) >= 2:
            groups.append(group)
        pending = waiting if len(waiting) < len(pending) else []
    return groups


def merge(group: Group, pos: Positions) -> None:
    """Replaces the group's matmuls with narrows of one matmul of the concatenated weights."""
    first = group.matmuls[0]
    x, out_type = first.lhs, first.result.type
    w_type = first.rhs.type
    assert isinstance(out_type, TensorType) and isinstance(w_type, TensorType)
    widths = [shape_of(mm.rhs)[1] for mm in group.matmuls]
    total = sum(widths)
    k = shape_of(first.rhs)[0]
    weights = nn.ConcatOp(
        [mm.rhs for mm in group.matmuls], 1, TensorType(w_type.element_type, [k, total])
    )
    shape = list(out_type.get_shape())
    shape[-1] = total
    merged = nn.MatmulOp(x, weights.result, TensorType(out_type.element_type, shape))
    weights.result.name_hint, merged.result.name_hint = "shared_w", "shared"
    axis = len(shape) - 1
    narrows: list[Operation] = []
    start = 0
    for mm, width in zip(group.matmuls, widths, strict=True):
        narrows.append(located_at(nn.NarrowOp(merged.result, axis, start, width), mm))
        narrows[-1].result.name_hint = mm.result.name_hint
        start += width
    located_at(weights, first)
    located_at(merged, first)
    new_ops: list[Operation] = [weights, merged, *narrows]
    # Nothing reads the originals: the last of them is a valid place (every weight precedes it).
    anchor = group.first_user or group.matmuls[-1]
    for w in {mm.rhs: None for mm in group.matmuls}:  # weights defined too late move up
        owner = producer(w)
        if (
            owner is not None
            and owner.parent is pos.block
            and pos.defined_at(w) > pos.of_op(anchor)
        ):
            owner.detach()
            Rewriter.insert_op(owner, InsertPoint.before(anchor))
            pos.index[owner] = pos.of_op(anchor) - 0.75
    Rewriter.insert_op(new_ops, InsertPoint.before(anchor))
    pos.inserted(new_ops, anchor)
    for mm, narrow in zip(group.matmuls, narrows, strict=True):
        mm.result.replace_all_uses_with(narrow.results[0])
        Rewriter.erase_op(mm)


def mergeable(op: Operation, block: Block) -> bool:
    return isinstance(op, nn.MatmulOp) and op.parent is block and len(shape_of(op.rhs)) == 2


def fuse_block(block: Block) -> None:
    pos = Positions(block)
    done: set[SSAValue] = set()
    for op in list(block.ops):
        if not isinstance(op, nn.MatmulOp) or op.parent is not block or op.lhs in done:
            continue
        x = op.lhs
        done.add(x)
        candidates = {u.operation for u in x.uses if u.index == 0}
        matmuls = [mm for mm in candidates if mergeable(mm, block)]
        groups = groups_of(matmuls, pos)  # type: ignore[arg-type]
        if len(candidates) >= 2:
            report_left_out(candidates, matmuls, groups, pos)
        for group in groups:
            if may_fuse(PASS, group.matmuls[0], f"{len(group.matmuls)} matmuls into one"):
                merge(group, pos)


def report_left_out(
    candidates: set[Operation], matmuls: list[Operation], groups: list[Group], pos: Positions
) -> None:
    """A remark for each matmul of a shared input that no group took, in program order."""
    grouped = {mm for group in groups for mm in group.matmuls}
    in_block = sorted((op for op in candidates if op.parent is pos.block), key=pos.of_op)
    for op in in_block:
        if not isinstance(op, nn.MatmulOp) or op in grouped:
            continue
        if op not in matmuls:
            missed(PASS, op, f"the weight {op.rhs.type} is not 2-D")
        elif len(matmuls) < 2:
            missed(PASS, op, "no other matmul of its input has a 2-D weight")
        else:
            missed(
                PASS,
                op,
                "no other matmul of its input can merge with it: its weight is not available "
                "before their results are read",
            )


@dataclass(frozen=True)
class FuseSharedInputMatmulPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        for block in blocks:
            fuse_block(block)
