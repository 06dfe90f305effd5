"""Merges matmuls that read the same input into one matmul of concatenated weights.

``matmul(x, w_1), ..., matmul(x, w_n) -> narrow_i(matmul(x, concat(w_1, ..., w_n)))``, so ``x``
is read once (QKV projections, gate/up pairs, a router beside an expert).

Preconditions: two or more ``nn.matmul`` ops in one block with the same ``x`` (their left
operand) and 2-D weights (``[K, N_i]``; ``K`` is ``x``'s last dimension). Projections with a
bias (``fused.matmul_bias_act`` without activation, a 1-D bias ``[N_i]``: Qwen2's q, k and v)
merge likewise among themselves, into one with the biases concatenated too. The merged matmul goes
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
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure

from fusec.dialects import nn
from fusec.dialects.common import str_prop
from fusec.dialects.fused import MatmulBiasActOp
from fusec.dialects.scalar_ops import splat_value
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


Projection = nn.MatmulOp | MatmulBiasActOp


def weight(mm: Projection) -> SSAValue:
    return mm.rhs if isinstance(mm, nn.MatmulOp) else mm.w


def operands_to_merge(mm: Projection) -> list[SSAValue]:
    """The weight and, for a biased projection, its bias: what the merged op concatenates."""
    return [mm.rhs] if isinstance(mm, nn.MatmulOp) else [mm.w, mm.bias]


@dataclass
class Group:
    """Matmuls of one input that can merge, and the op the merged matmul must precede."""

    matmuls: list[Projection]
    first_user: Operation | None
    ready_at: float  # where the last weight becomes available


def movable(op: Operation, candidates: list[Projection]) -> bool:
    """A weight's producer that may move up to the merged matmul: pure, no regions, and not
    reading any of the matmuls being merged (that would make a cycle)."""
    return (
        op.has_trait(Pure)
        and not op.regions
        and all(producer(v) not in candidates for v in op.operands)
    )


def weight_ready(w: SSAValue, pos: Positions, candidates: list[Projection]) -> float:
    """Where weight ``w`` can be available: where it is defined, or, when its producer can move
    (``concat`` of parameters, a transpose...), where the producer's operands are."""
    at = pos.defined_at(w)
    owner = producer(w)
    if owner is None or at == -math.inf or not movable(owner, candidates):
        return at
    return max((pos.defined_at(v) for v in owner.operands), default=-math.inf)


def groups_of(candidates: list[Projection], pos: Positions) -> list[Group]:
    """Greedy partition, in program order: a matmul joins the open group if every weight is
    (or can be moved to be) defined before the group's first user; otherwise it waits for the
    next round."""
    groups: list[Group] = []
    pending = sorted(candidates, key=pos.of_op)
    while len(pending) >= 2:
        group = Group([], None, -math.inf)
        waiting: list[Projection] = []
        for mm in pending:
            user = pos.first_use(mm)
            first = min(
                (u for u in (group.first_user, user) if u is not None),
                key=pos.of_op,
                default=None,
            )
            ready = max(group.ready_at, *(weight_ready(v, pos, candidates)
                                          for v in operands_to_merge(mm)))
            weight_from_group = any(producer(v) in group.matmuls for v in operands_to_merge(mm))
            if not weight_from_group and (first is None or ready < pos.of_op(first)):
                group.matmuls.append(mm)
                group.first_user, group.ready_at = first, ready
            else:
                waiting.append(mm)
        if len(group.matmuls) >= 2:
            groups.append(group)
        pending = waiting if len(waiting) < len(pending) else []
    return groups


def one_splat(values: list[SSAValue], t: TensorType) -> nn.ConstantOp | None:  # type: ignore
    """The splat constant of type ``t`` that ``values`` concatenated are, when each is a splat
    constant of one value (zero biases), else None."""
    owners = [producer(v) for v in values]
    if not all(isinstance(o, nn.ConstantOp) for o in owners):
        return None
    splats = {splat_value(o) for o in owners}  # type: ignore[arg-type]
    if len(splats) != 1 or None in splats:
        return None
    attr = owners[0].value  # type: ignore[union-attr]
    return nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [attr.get_values()[0]] * t.get_shape()[0]))


def merge(group: Group, pos: Positions) -> None:
    """Replaces the group's matmuls with narrows of one matmul of the concatenated weights."""
    first = group.matmuls[0]
    x, out_type = first.operands[0], first.result.type
    w_type = weight(first).type
    assert isinstance(out_type, TensorType) and isinstance(w_type, TensorType)
    widths = [shape_of(weight(mm))[1] for mm in group.matmuls]
    total = sum(widths)
    k = shape_of(weight(first))[0]
    weights = nn.ConcatOp(
        [weight(mm) for mm in group.matmuls], 1, TensorType(w_type.element_type, [k, total])
    )
    shape = list(out_type.get_shape())
    shape[-1] = total
    concats: list[Operation] = [weights]
    if isinstance(first, MatmulBiasActOp):
        bias_type = TensorType(first.bias.type.element_type, [total])  # type: ignore
        biases = one_splat([mm.bias for mm in group.matmuls], bias_type)  # type: ignore
        if biases is None:  # bound biases are concatenated once, at compile time (fold_params)
            biases = nn.ConcatOp([mm.bias for mm in group.matmuls], 0,  # type: ignore
                                 bias_type)
        concats.append(located_at(biases, first))
        biases.result.name_hint = "shared_b"
        merged: Operation = MatmulBiasActOp(x, weights.result, biases.result,
                                            TensorType(out_type.element_type, shape))
    else:
        merged = nn.MatmulOp(x, weights.result, TensorType(out_type.element_type, shape))
    weights.result.name_hint, merged.results[0].name_hint = "shared_w", "shared"
    axis = len(shape) - 1
    narrows: list[Operation] = []
    start = 0
    for mm, width in zip(group.matmuls, widths, strict=True):
        narrows.append(located_at(nn.NarrowOp(merged.results[0], axis, start, width), mm))
        narrows[-1].result.name_hint = mm.result.name_hint
        start += width
    located_at(weights, first)
    located_at(merged, first)
    new_ops: list[Operation] = [*concats, merged, *narrows]
    # Nothing reads the originals: the last of them is a valid place (every weight precedes it).
    anchor = group.first_user or group.matmuls[-1]
    for w in {v: None for mm in group.matmuls for v in operands_to_merge(mm)}:  # move up
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
        bias = producer(mm.bias) if isinstance(mm, MatmulBiasActOp) else None
        Rewriter.erase_op(mm)
        if isinstance(bias, nn.ConstantOp) and not bias.result.uses:
            Rewriter.erase_op(bias)


def mergeable(op: Operation, block: Block) -> bool:
    if op.parent is not block:
        return False
    if isinstance(op, nn.MatmulOp):
        return len(shape_of(op.rhs)) == 2
    return (isinstance(op, MatmulBiasActOp) and str_prop(op, "activation") == "none"
            and len(shape_of(op.w)) == 2 and shape_of(op.bias) == (shape_of(op.w)[1],))


def fuse_block(block: Block) -> None:
    pos = Positions(block)
    done: set[SSAValue] = set()
    for op in list(block.ops):
        if (not isinstance(op, nn.MatmulOp | MatmulBiasActOp) or op.parent is not block
                or op.operands[0] in done):
            continue
        x = op.operands[0]
        done.add(x)
        candidates = {u.operation for u in x.uses if u.index == 0}
        matmuls = [mm for mm in candidates if mergeable(mm, block)]
        groups = [group for kind in (nn.MatmulOp, MatmulBiasActOp)
                  for group in groups_of([mm for mm in matmuls if isinstance(mm, kind)], pos)]
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
        plain = [mm for mm in matmuls if isinstance(mm, nn.MatmulOp)]
        if op not in matmuls:
            missed(PASS, op, f"the weight {op.rhs.type} is not 2-D")
        elif len(plain) < 2 <= len(matmuls):
            missed(PASS, op, "no other matmul of its input has a 2-D weight and no bias (the "
                   "others add one)")
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
