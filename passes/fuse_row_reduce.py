"""Fuses reductions over the last axis with the elementwise ops around them into one
``fused.row_reduce``: reduce, then broadcast back over the row, in one kernel.

    f(x, reduce_<kind>(g(x)){axes = [-1], keepdims}) -> fused.row_reduce(x) {
        %v = g(x); %r = fused.reduce_value %v {kind}; f(x, %r) on scalars }

So a softmax written out (``exp(x - max(x)) / sum(exp(x - max(x)))``), centering (``x -
mean(x)``), a LayerNorm or RMSNorm written out, normalizing by a sum or a norm, and chains of
two reductions over the same axis are one kernel, with the elementwise prologue of each
reduction and the epilogue after them.

Members: the ``nn`` elementwise ops, single-result ``fused.elementwise`` (their bodies are
merged), and reductions over the last axis with ``keepdims`` (or of a rank-1 tensor):
``nn.reduce_sum|mean|max|min`` and ``fused.reduce`` (its prologue joins the body). Rules:
  * the region is grown like ``fuse-elementwise``'s, from its root (the last op, an
    elementwise op whose result is the row shape ``S``) up through producers all of whose users
    are in the region; so only the root's value leaves it, and a value something else reads
    (another op, ``func.return``) is materialised and ends the region;
  * every member's value broadcasts to ``S`` and every reduction reads a value whose last
    dimension is the row (``S[-1]``) and which broadcasts to ``S``; a region without a reduction
    is left to ``fuse-elementwise``;
  * reductions are of f32 values; other members may have any element type (casts from f16,
    bf16, i8 or i32 inputs in a prologue, a cast to any of them at the end: the kernel reads
    each input and stores the result in its own type); rows are at most ``max-row`` long
    (longer rows keep the split reduction plan of ``fuse-reductions`` and
    ``lower-to-kernels``);
  * a region stays within ``max-steps`` scalar steps (a reduction is one) and ``max-inputs``
    tensor inputs.

Before::

    %m = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    %d = nn.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
    %e = nn.exp %d : tensor<4x8xf32> -> tensor<4x8xf32>
    %s = nn.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    %y = nn.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>

After::

    %y = fused.row_reduce %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: f32):
      %m = fused.reduce_value %a {kind = "max"} : f32 -> f32
      %d = arith.subf %a, %m : f32
      %e = math.exp %d : f32
      %s = fused.reduce_value %e {kind = "sum"} : f32 -> f32
      %y = arith.divf %e, %s : f32
      fused.yield %y : f32
    }
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from fusec.dialects import fused, nn
from fusec.dialects.common import CAST_TYPES, bool_prop, broadcast_shapes, ints_prop, str_prop
from fusec.dialects.scalar_ops import element_type
from fusec.passes._elementwise import (
    BodyBuilder,
    Limits,
    dead_constants,
    fusible,
    steps,
    tensor_inputs,
)
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.fuse_elementwise import check_limits
from fusec.passes.remarks import may_fuse

AnyReduce = nn.ReduceOp | fused.ReduceOp


def reduced_input_shape(op: AnyReduce) -> tuple[int, ...]:
    """The shape a reduction folds: its input's, or its prologue's broadcast shape."""
    shape = broadcast_shapes(*(shape_of(v) for v in op.operands))
    assert shape is not None, "a verified reduction broadcasts"
    return shape


def row_reduction(op: Operation) -> bool:
    """``op`` reduces the last axis of an f32 value, keeping it (or reducing a rank-1 value)."""
    if not isinstance(op, AnyReduce) or element_type(op.results[0].type) != f32:
        return False
    shape = reduced_input_shape(op)
    if not shape:
        return False
    axes = tuple(sorted(a % len(shape) for a in ints_prop(op, "axes")))
    return axes == (len(shape) - 1,) and (bool_prop(op, "keepdims") or len(shape) == 1)


def kind_of(op: AnyReduce) -> str:
    return str_prop(op, "kind") if isinstance(op, fused.ReduceOp) else op.KIND


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    return broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)


class RowPlan:
    """A region grown from its root (reverse program order while growing)."""

    def __init__(self, root: Operation, limits: Limits):
        self.root = root
        self.limits = limits
        self.row = shape_of(root.results[0])
        self.members: list[Operation] = [root]
        self.steps = steps(root)
        self.inputs: dict[SSAValue, None] = dict.fromkeys(tensor_inputs(root))
        self.reductions = 0

    def admits(self, op: Operation) -> bool:
        if not broadcasts_to(shape_of(op.results[0]), self.row):
            return False
        if row_reduction(op):
            shape = reduced_input_shape(op)  # type: ignore[arg-type]
            if shape[-1] != self.row[-1] or not broadcasts_to(shape, self.row):
                return False
        cost = member_steps(op)
        new = {v for v in tensor_inputs(op) if v not in self.inputs}
        return self.limits.admit(self.steps + cost, len(self.inputs) - 1 + len(new))

    def add(self, op: Operation) -> None:
        self.members.append(op)
        self.steps += member_steps(op)
        self.reductions += 1 if row_reduction(op) else 0
        del self.inputs[op.results[0]]
        self.inputs.update(dict.fromkeys(tensor_inputs(op)))


def member_steps(op: Operation) -> int:
    """Scalar steps ``op`` adds to a row body: a reduction is one, plus its prologue."""
    if isinstance(op, nn.ReduceOp):
        return 1
    return steps(op) + (1 if isinstance(op, fused.ReduceOp) else 0)


def row_member(op: Operation) -> bool:
    return fusible(op) or row_reduction(op)


def plan_rows(ops: Sequence[Operation], limits: Limits, max_row: int) -> list[RowPlan]:
    """The row regions among ``ops`` (one block, program order): walked last to first, an op
    joins the region that holds all its users when it fits; an elementwise op of an f32 row
    shape no longer than ``max_row`` roots a new region otherwise. Regions with no reduction
    are dropped."""
    region_of: dict[Operation, RowPlan | None] = {}
    plans: list[RowPlan] = []
    for op in reversed(ops):
        if not row_member(op):
            continue
        users = [use.operation for use in op.results[0].uses]
        plan = region_of.get(users[0]) if users else None
        if plan is not None and all(region_of.get(u) is plan for u in users) and plan.admits(op):
            plan.add(op)
        elif fusible(op) and roots_row(op, max_row):
            plan = RowPlan(op, limits)
            plans.append(plan)
        else:
            plan = None
        region_of[op] = plan
    plans.reverse()
    for plan in plans:
        plan.members.reverse()
    return [p for p in plans if p.reductions]


def roots_row(op: Operation, max_row: int) -> bool:
    """``op`` may end a row region: its row is no longer than ``max_row`` (of any element
    type: a cast after the reductions, to f16, bf16, i8 or i32, is stored by the kernel)."""
    t = op.results[0].type
    return (
        isinstance(t, TensorType)
        and t.element_type in CAST_TYPES
        and t.get_num_dims() >= 1
        and t.get_shape()[-1] <= max_row
    )


def add_reduction(builder: BodyBuilder, op: AnyReduce) -> None:
    """Appends ``op``'s prologue (a ``fused.reduce``'s body, moved) and a ``fused.reduce_value``."""
    if isinstance(op, fused.ReduceOp):
        (value, *_) = builder.inline(op.body.block, [builder.scalar_of(v) for v in op.inputs])
    else:
        value = builder.scalar_of(op.input)
    reduce = fused.ReduceValueOp(value, kind_of(op))
    builder.ops.append(reduce)
    builder.scalar[op.results[0]] = reduce.result


def fuse_row(plan: RowPlan) -> fused.RowReduceOp:
    """Replaces the ops of ``plan`` by one ``fused.row_reduce`` where its root stood."""
    members = set(plan.members)
    inputs = [
        v for member in plan.members for v in tensor_inputs(member) if producer(v) not in members
    ]
    inputs = list(dict.fromkeys(inputs))
    builder = BodyBuilder(Block(arg_types=[element_type(v.type) for v in inputs]), inputs)
    for member in plan.members:
        if row_reduction(member):
            add_reduction(builder, member)  # type: ignore[arg-type]
        else:
            builder.add(member)
    block = builder.block
    block.add_ops(builder.ops)
    root = plan.root
    block.add_op(fused.YieldOp(builder.scalar[root.results[0]]))
    new = fused.RowReduceOp(builder.inputs, root.results[0].type, Region(block))
    located_at(new, root)
    Rewriter.insert_op(new, InsertPoint.before(root))
    root.results[0].replace_all_uses_with(new.result)
    for member in reversed(plan.members):
        Rewriter.erase_op(member)
    for const in dead_constants(builder.constants):
        Rewriter.erase_op(const)
    return new


@dataclass(frozen=True)
class FuseRowReducePass(ModulePass):
    name = "fuse-row-reduce"

    max_steps: int = 64
    """The most scalar steps (ops other than constants; a reduction is one) a region may hold."""

    max_inputs: int = 16
    """The most distinct tensor inputs a region may read."""

    max_row: int = 16384
    """The longest row (last dimension) fused; longer rows keep the split reduction plan."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limits = Limits(self.max_steps, self.max_inputs)
        check_limits(self.name, limits)
        if self.max_row < 1:
            raise PassFailedException(f"{self.name}: max-row ({self.max_row}) must be at least 1")
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            for block in fn.body.blocks:
                for plan in plan_rows(list(block.ops), limits, self.max_row):
                    what = f"fused.row_reduce of {len(plan.members)} ops"
                    if may_fuse(self.name, plan.root, what):
                        fuse_row(plan)
