"""Merges GEMMs that read the same input into one GEMM of concatenated column operands.

``matmul(x, w_1), ..., matmul(x, w_n) -> narrow_i(matmul(x, concat(w_1, ..., w_n)))``, so ``x``
is read once (QKV projections, gate/up pairs, a router beside an expert); likewise
``matmul_bias_act(x, w_i, b_i) -> narrow_i(matmul_bias_act(x, concat(w_i), concat(b_i)))``.

Which ops merge is declared, not listed here: a GEMM-kind op with ``COLUMN_OPERANDS``
(`fusec.dialects.op_kinds.column_operands`: ``nn.matmul``'s weight, ``fused.matmul_bias_act``'s
weight and bias) whose first operand is the shared input. Siblings merge when they are of one
op, with equal properties (the activation), 2-D weights (``[K, N_i]``; ``K`` is ``x``'s last
dimension) and every column operand as wide as its result's last axis (a scalar bias does not
split by columns). The merged op goes right before the first op that reads any of the
originals, so every column operand must be defined before that op, or be made by a pure op (a
``concat`` of parameters) that can move there; an op that cannot meet this joins a later group
instead (or stays). The originals' results may have any users, returns included: each is
replaced by a ``narrow`` of the merged result's last axis.

Options: ``epilogue-only`` merges only GEMMs that declare a column operand besides the weight
(a bias), ``plain-only`` only those that declare none; ``bound-only`` merges only where every column operand is known at compile time (an
``nn.constant``, an argument marked ``fusec.bound``, as ``fusec.compile`` and the PyTorch
backend mark bound weights, or a transpose, concat, narrow or reshape of those, as PyTorch's
``nn.Linear`` weights arrive: `fusec.dialects.bound_inputs`), so the concatenations are folded
once (``compiler/fold_params.py``) instead of copied at every call. ``default`` runs the pass with
``epilogue-only`` and ``bound-only`` right after ``fuse-matmul-bias-act`` (a QKV projection
with biases becomes one GEMM whose slices ``fuse-attention-block`` and the attention kernel read
in place), and again with ``plain-only`` after ``fuse-swiglu-dual-matmul`` (so a gate/up pair
becomes a SwiGLU first).

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

The GEMMs are siblings with no consumer in common, so this pass is a whole-block analysis
rather than a rewrite pattern: it numbers the ops of each block once, groups each input's GEMM
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
from fusec.dialects.bound_inputs import known_at_compile_time
from fusec.dialects.op_kinds import column_operands
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


@dataclass
class Group:
    """GEMMs of one input that can merge, and the op the merged GEMM must precede."""

    matmuls: list[Operation]
    first_user: Operation | None
    ready_at: float  # where the last column operand becomes available


def columns(op: Operation) -> list[SSAValue]:
    """The column operands of ``op`` (its weight first), in operand order."""
    names = column_operands(op)
    return [getattr(op, name) for name in operand_names(op) if name in names]


def operand_names(op: Operation) -> list[str]:
    return [name for name, _ in type(op).get_irdl_definition().operands]  # type: ignore


def signature(op: Operation) -> tuple[object, ...]:
    """What siblings must share to merge: the op, its properties, its result's element type."""
    props = tuple(sorted((k, str(v)) for k, v in op.properties.items()))
    return type(op), props, op.results[0].type.element_type  # type: ignore[attr-defined]


def movable(op: Operation, candidates: list[Operation]) -> bool:
    """A weight's producer that may move up to the merged matmul: pure, no regions, and not
    reading any of the matmuls being merged (that would make a cycle)."""
    return (
        op.has_trait(Pure)
        and not op.regions
        and all(producer(v) not in candidates for v in op.operands)
    )


def weight_ready(w: SSAValue, pos: Positions, candidates: list[Operation]) -> float:
    """Where weight ``w`` can be available: where it is defined, or, when its producer can move
    (``concat`` of parameters, a transpose...), where the producer's operands are."""
    at = pos.defined_at(w)
    owner = producer(w)
    if owner is None or at == -math.inf or not movable(owner, candidates):
        return at
    return max((pos.defined_at(v) for v in owner.operands), default=-math.inf)


def groups_of(candidates: list[Operation], pos: Positions) -> list[Group]:
    """Greedy partition, in program order: a GEMM joins the open group if every column operand
    is (or can be moved to be) defined before the group's first user; otherwise it waits for
    the next round."""
    groups: list[Group] = []
    pending = sorted(candidates, key=pos.of_op)
    while len(pending) >= 2:
        group = Group([], None, -math.inf)
        waiting: list[Operation] = []
        for mm in pending:
            user = pos.first_use(mm)
            first = min(
                (u for u in (group.first_user, user) if u is not None),
                key=pos.of_op,
                default=None,
            )
            ready = max([group.ready_at,
                         *(weight_ready(c, pos, candidates) for c in columns(mm))])
            from_group = any(producer(c) in group.matmuls for c in columns(mm))
            if not from_group and (first is None or ready < pos.of_op(first)):
                group.matmuls.append(mm)
                group.first_user, group.ready_at = first, ready
            else:
                waiting.append(mm)
        if len(group.matmuls) >= 2:
            groups.append(group)
        pending = waiting if len(waiting) < len(pending) else []
    return groups


def concatenated(values: list[SSAValue]) -> nn.ConcatOp:
    """``values`` joined along their last axis."""
    t = values[0].type
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    shape[-1] = sum(shape_of(v)[-1] for v in values)
    return nn.ConcatOp(values, len(shape) - 1, TensorType(t.element_type, shape))


def one_splat(values: list[SSAValue]) -> nn.ConstantOp | None:  # type: ignore[type-arg]
    """The splat constant that ``values`` concatenated along their last axis are, when each is
    a splat constant of one value (zero biases, as the importer leaves an exporter's), else
    None."""
    owners = [producer(v) for v in values]
    if not all(isinstance(o, nn.ConstantOp) for o in owners):
        return None
    splats = {splat_value(o) for o in owners}  # type: ignore[arg-type]
    if len(splats) != 1 or None in splats:
        return None
    first = values[0].type
    assert isinstance(first, TensorType)
    shape = list(first.get_shape())
    shape[-1] = sum(shape_of(v)[-1] for v in values)
    t = TensorType(first.element_type, shape)
    attr = owners[0].value  # type: ignore[union-attr]
    return nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        t, [attr.get_values()[0]] * math.prod(t.get_shape())))


def merge(group: Group, pos: Positions) -> None:
    """Replaces the group's GEMMs with narrows of one GEMM of the concatenated column
    operands."""
    first = group.matmuls[0]
    out_type = first.results[0].type
    assert isinstance(out_type, TensorType)
    widths = [shape_of(mm.results[0])[-1] for mm in group.matmuls]
    names = column_operands(first)
    joined: dict[str, Operation] = {}
    operands: list[SSAValue] = []
    for i, name in enumerate(operand_names(first)):
        if name in names:
            values = [mm.operands[i] for mm in group.matmuls]
            joined[name] = one_splat(values) or concatenated(values)
            operands.append(joined[name].result)
        else:
            operands.append(first.operands[i])
    shape = list(out_type.get_shape())
    shape[-1] = sum(widths)
    merged = type(first).create(
        operands=operands, result_types=[TensorType(out_type.element_type, shape)],
        properties=dict(first.properties), attributes=dict(first.attributes),
    )
    for name, concat in joined.items():
        concat.results[0].name_hint = f"shared_{name}"
    joined_ops: list[Operation] = list(joined.values())
    merged.results[0].name_hint = "shared"
    axis = len(shape) - 1
    narrows: list[Operation] = []
    start = 0
    for mm, width in zip(group.matmuls, widths, strict=True):
        narrows.append(located_at(nn.NarrowOp(merged.results[0], axis, start, width), mm))
        narrows[-1].results[0].name_hint = mm.results[0].name_hint
        start += width
    for concat in joined_ops:
        located_at(concat, first)
    located_at(merged, first)
    new_ops: list[Operation] = [*joined_ops, merged, *narrows]
    # Nothing reads the originals: the last of them is a valid place (every weight precedes it).
    anchor = group.first_user or group.matmuls[-1]
    for w in {c: None for mm in group.matmuls for c in columns(mm)}:  # defined too late: move
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
    replaced = {c: None for mm in group.matmuls for c in columns(mm)}
    for mm, narrow in zip(group.matmuls, narrows, strict=True):
        mm.results[0].replace_all_uses_with(narrow.results[0])
        Rewriter.erase_op(mm)
    for value in replaced:  # constants folded into one splat: nothing reads them any more
        owner = producer(value)
        if isinstance(owner, nn.ConstantOp) and not owner.result.uses:
            Rewriter.erase_op(owner)


@dataclass(frozen=True)
class Policy:
    epilogue_only: bool
    plain_only: bool
    bound_only: bool

    def takes(self, op: Operation) -> bool:
        """Whether the options let ``op`` merge at all (see the module docstring)."""
        cols = columns(op)
        if (self.epilogue_only and len(cols) < 2) or (self.plain_only and len(cols) > 1):
            return False
        return not self.bound_only or all(known_at_compile_time(c) for c in cols)


def splits_by_columns(op: Operation) -> bool:
    """``op`` declares column operands, and each is as wide as its result's last axis with a
    2-D weight (the first)."""
    cols = columns(op)
    if not cols or len(shape_of(cols[0])) != 2:
        return False
    width = shape_of(op.results[0])[-1]
    return all(shape_of(c) and shape_of(c)[-1] == width for c in cols)


def fuse_block(block: Block, policy: Policy) -> None:
    pos = Positions(block)
    done: set[SSAValue] = set()
    for op in list(block.ops):
        if op.parent is not block or not column_operands(op) or op.operands[0] in done:
            continue
        x = op.operands[0]
        done.add(x)
        candidates = {u.operation for u in x.uses
                      if u.index == 0 and u.operation.parent is block
                      and column_operands(u.operation) and policy.takes(u.operation)}
        kinds: dict[tuple[object, ...], list[Operation]] = {}
        for c in sorted(candidates, key=pos.of_op):
            kinds.setdefault(signature(c), []).append(c)
        for same in kinds.values():
            matmuls = [mm for mm in same if splits_by_columns(mm)]
            groups = groups_of(matmuls, pos)
            if len(same) >= 2:
                report_left_out(same, matmuls, groups, pos)
            elif len(candidates) >= 2:
                missed(PASS, same[0], "no other GEMM of its input is the same op with the same "
                       "properties (activation)")
            for group in groups:
                if may_fuse(PASS, group.matmuls[0], f"{len(group.matmuls)} matmuls into one"):
                    merge(group, pos)


def report_left_out(
    candidates: list[Operation], matmuls: list[Operation], groups: list[Group], pos: Positions
) -> None:
    """A remark for each GEMM of a shared input that no group took, in program order."""
    grouped = {mm for group in groups for mm in group.matmuls}
    for op in candidates:
        if op in grouped:
            continue
        if op not in matmuls and len(shape_of(columns(op)[0])) != 2:
            missed(PASS, op, f"the weight {columns(op)[0].type} is not 2-D")
        elif op not in matmuls:
            missed(PASS, op, "a column operand is not as wide as the result (a scalar bias)")
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

    epilogue_only: bool = False
    """Merge only GEMMs with a column operand besides the weight (a bias)."""

    plain_only: bool = False
    """Merge only GEMMs with no column operand besides the weight (plain matmuls)."""

    bound_only: bool = False
    """Merge only where every column operand is known at compile time."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        policy = Policy(self.epilogue_only, self.plain_only, self.bound_only)
        for block in blocks:
            fuse_block(block, policy)
