"""Fuses reductions over one axis with the elementwise ops around them into one
``fused.row_reduce``: reduce, then broadcast back over the row, in one kernel.

    f(x, reduce_<kind>(g(x)){axes = [a], keepdims}) -> fused.row_reduce(x) {axis = a} {
        %v = g(x); %r = fused.reduce_value %v {kind}; f(x, %r) on scalars }

So a softmax written out (``exp(x - max(x)) / sum(exp(x - max(x)))``), centering (``x -
mean(x)``), a LayerNorm or RMSNorm written out, normalizing by a sum or a norm, and chains of
two reductions over the same axis are one kernel, with the elementwise prologue of each
reduction and the epilogue after them. The axis may be the last (rows), a middle one (``x -
mean(x, 1)`` of a 3-d tensor) or the first (column statistics of a matrix: ``(x - mean(x, 0))
* rsqrt(var(x, 0) + eps)``); the op's ``axis`` says which (printed when not the last).

Members: the ``nn`` elementwise ops, single-result ``fused.elementwise`` (their bodies are
merged), and reductions over one axis with ``keepdims``, or without it when the axis is the
first of the reduced value (then numpy broadcasting puts the result where keepdims would):
``nn.reduce_sum|mean|max|min`` and ``fused.reduce`` (its prologue joins the body). Rules:
  * the region is grown like ``fuse-elementwise``'s, from its root (the last op, an
    elementwise op whose result is the row shape ``S``) up through producers all of whose users
    are in the region; so only the root's value leaves it, and a value something else reads
    (another op, ``func.return``) is materialised and ends the region;
  * every member's value broadcasts to ``S`` and every reduction reads a value which
    broadcasts to ``S`` and whose reduced dimension is the row (all of ``S`` on that axis);
    every reduction of a region is over the same axis of ``S`` (counted from the end); a
    region without a reduction is left to ``fuse-elementwise``;
  * reductions are of f32 values; other members may have any element type (casts from f16,
    bf16, i8 or i32 inputs in a prologue, a cast to any of them at the end: the kernel reads
    each input and stores the result in its own type); rows are at most ``max-row`` long
    (longer rows keep the split reduction plan of ``fuse-reductions`` and
    ``lower-to-kernels``), and a region's last dimension is at most ``max-row`` too;
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
from fusec.passes.remarks import may_fuse, missed

AnyReduce = nn.ReduceOp | fused.ReduceOp
PASS = "fuse-row-reduce"


def reduced_input_shape(op: AnyReduce) -> tuple[int, ...]:
    """The shape a reduction folds: its input's, or its prologue's broadcast shape."""
    shape = broadcast_shapes(*(shape_of(v) for v in op.operands))
    assert shape is not None, "a verified reduction broadcasts"
    return shape


def row_axis(op: Operation) -> int | None:
    """The axis (negative: counted from the end, so that it names the same axis of any shape
    the value broadcasts to) that ``op`` reduces, when it reduces one axis of an f32 value and
    keeps it, or drops the first axis (which broadcasting restores); else None."""
    if not isinstance(op, AnyReduce) or element_type(op.results[0].type) != f32:
        return None
    shape = reduced_input_shape(op)
    if not shape:
        return None
    axes = tuple(sorted(a % len(shape) for a in ints_prop(op, "axes")))
    if len(axes) != 1 or not (bool_prop(op, "keepdims") or axes == (0,)):
        return None
    return axes[0] - len(shape)


def row_reduction(op: Operation) -> bool:
    """``op`` reduces one axis of an f32 value that broadcasting keeps (see `row_axis`)."""
    return row_axis(op) is not None


def kind_of(op: AnyReduce) -> str:
    return str_prop(op, "kind") if isinstance(op, fused.ReduceOp) else op.KIND


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    return broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)


class RowPlan:
    """A region grown from its root (reverse program order while growing)."""

    def __init__(self, root: Operation, limits: Limits, max_row: int):
        self.root = root
        self.limits = limits
        self.max_row = max_row
        self.row = shape_of(root.results[0])
        self.axis: int | None = None
        """The reduced axis of ``row``, counted from the end (set by the first reduction)."""
        self.members: list[Operation] = [root]
        self.steps = steps(root)
        self.inputs: dict[SSAValue, None] = dict.fromkeys(tensor_inputs(root))
        self.reductions = 0

    def refusal(self, op: Operation) -> str | None:
        """Why the reduction ``op`` cannot join (as its remark says it), or None."""
        axis = row_axis(op)
        assert axis is not None
        shape = reduced_input_shape(op)  # type: ignore[arg-type]
        rank = len(self.row)
        if self.axis is not None and axis != self.axis:
            return (f"the reduction is over axis {rank + axis} and the row region's other "
                    f"reductions over axis {rank + self.axis}")
        if not broadcasts_to(shape, self.row) or shape[axis] != self.row[axis]:
            return (f"the reduced value {list(shape)} is not the row region's {list(self.row)} "
                    "along the reduced axis")
        if self.row[axis] > self.max_row:
            return f"the row ({self.row[axis]}) is longer than max-row={self.max_row}"
        return None

    def admits(self, op: Operation) -> bool:
        if not broadcasts_to(shape_of(op.results[0]), self.row):
            return False
        if row_reduction(op) and self.refusal(op) is not None:
            return False
        cost = member_steps(op)
        new = {v for v in tensor_inputs(op) if v not in self.inputs}
        return self.limits.admit(self.steps + cost, len(self.inputs) - 1 + len(new))

    def add(self, op: Operation) -> None:
        self.members.append(op)
        self.steps += member_steps(op)
        axis = row_axis(op)
        if axis is not None:
            self.reductions += 1
            self.axis = axis
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
        inside = plan is not None and all(region_of.get(u) is plan for u in users)
        if plan is not None and inside and plan.admits(op):
            plan.add(op)
        else:
            if plan is not None and inside and plan.axis is not None and row_reduction(op):
                why = plan.refusal(op) or "the row region is full (max-steps, max-inputs)"
                missed(PASS, op, why)
            if fusible(op) and roots_row(op, max_row):
                plan = RowPlan(op, limits, max_row)
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
    assert plan.axis is not None, "a planned region has a reduction"
    axis = -1 if plan.axis == -1 else len(plan.row) + plan.axis
    new = fused.RowReduceOp(builder.inputs, root.results[0].type, Region(block), axis)
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
    name = PASS

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
                    axis = "" if plan.axis == -1 else f" over axis {len(plan.row) + plan.axis}"
                    what = f"fused.row_reduce of {len(plan.members)} ops{axis}"
                    if may_fuse(self.name, plan.root, what):
                        fuse_row(plan)
