"""What the elementwise fusions share: which ops fuse, what a region costs, how regions are
planned, and how a scalar body is built by moving ops.

A region is a set of fusible ops (``nn`` elementwise ops and ``fused.elementwise``) in one block,
grown from a root (any fusible op) up through producers: a producer joins when every user of its
value is in the region (its one user, perhaps reading it twice; or several users that all joined
the same region, a diamond). A value with a user outside the region (another region, a
non-fusible op, ``func.return``) is materialised. So only the root's value leaves the region,
and the fused op can stand where the root stood. Splat ``nn.constant`` operands are not inputs:
they become ``arith.constant`` in the body.

Costs, checked against ``Limits``:
  * steps: scalar ops in the body, not counting constants and the yield (``nn.add`` is 1 step,
    ``nn.sigmoid`` 4, ``nn.gelu`` 5; a ``fused.elementwise`` costs its body);
  * inputs: distinct tensor operands of the fused op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from fusec.dialects import fused
from fusec.dialects.common import broadcast_shapes
from fusec.dialects.op_kinds import OpKind, op_kind
from fusec.dialects.scalar_ops import (
    build_scalar,
    element_type,
    scalar_attr,
    splat_value,
    step_count,
)
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed


@dataclass(frozen=True)
class Limits:
    """The most a region may hold: scalar steps in its body and distinct tensor inputs."""

    max_steps: int
    max_inputs: int

    def admit(self, steps: int, inputs: int) -> bool:
        return steps <= self.max_steps and inputs <= self.max_inputs


def fusible(op: Operation) -> bool:
    """``op`` is of the elementwise kind (it computes each element from the same element of its
    broadcast operands) and has one result (a multi-result ``fused.elementwise`` is left as
    it is, and so is one that reads its inputs through index maps)."""
    return (
        op_kind(op) is OpKind.ELEMENTWISE
        and len(op.results) == 1
        and getattr(op, "indexing_maps", None) is None
    )


def sole_user(value: SSAValue) -> Operation | None:
    """The one op that reads ``value`` (perhaps several times), in ``value``'s block; else None.

    A returned value has ``func.return`` as a user, so it never has a fusible sole user.
    """
    users = {id(use.operation): use.operation for use in value.uses}
    if len(users) != 1:
        return None
    (user,) = users.values()
    owner = producer(value)
    return user if owner is not None and user.parent is owner.parent else None


def is_splat_constant(value: SSAValue) -> bool:
    owner = producer(value)
    return owner is not None and splat_value(owner) is not None


def tensor_inputs(op: Operation) -> list[SSAValue]:
    """The operands of ``op`` that a region over it reads from memory (not splat constants)."""
    return [v for v in op.operands if not is_splat_constant(v)]


# (op name, properties, element types) -> steps, for nn ops
_STEPS: dict[tuple[object, ...], int] = {}


def steps(op: Operation) -> int:
    """The scalar steps ``op`` adds to a region body."""
    if isinstance(
        op, fused.ElementwiseOp | fused.ReduceOp | fused.RowReduceOp | fused.MatmulEpilogueOp
    ):
        return step_count(list(op.body.block.ops))
    types = tuple(element_type(v.type) for v in (*op.operands, *op.results))
    key = (op.name, tuple(sorted(op.properties.items())), types)
    if key not in _STEPS:
        placeholders = Block(arg_types=list(types[: len(op.operands)])).args
        _STEPS[key] = step_count(build_scalar(op, list(placeholders))[0])
    return _STEPS[key]


# --- planning ------------------------------------------------------------------------------------


class RegionPlan:
    """A region grown from its root up through producers whose only user is in the region."""

    def __init__(self, root: Operation):
        self.root = root
        self.members: list[Operation] = [root]  # reverse program order while growing
        self.steps = steps(root)
        self.inputs: dict[SSAValue, None] = dict.fromkeys(tensor_inputs(root))

    def inputs_with(self, op: Operation) -> int:
        """How many inputs the region has once ``op`` (whose result is an input) joins."""
        new = {v for v in tensor_inputs(op) if v not in self.inputs}
        return len(self.inputs) - 1 + len(new)

    def admits(self, op: Operation, limits: Limits) -> bool:
        return limits.admit(self.steps + steps(op), self.inputs_with(op))

    def add(self, op: Operation) -> None:
        self.members.append(op)
        self.steps += steps(op)
        del self.inputs[op.results[0]]
        self.inputs.update(dict.fromkeys(tensor_inputs(op)))


def plan_regions(
    ops: Sequence[Operation], limits: Limits, pass_name: str = "fuse-elementwise"
) -> list[RegionPlan]:
    """The regions of two or more ops among ``ops`` (one block's ops, in program order).

    Walks the ops last to first, so each op is seen after its users: an op joins the region that
    holds all its users when the region stays within ``limits``, else it roots a region of its
    own (a missed remark says why, when a user of it was in a region).

    Deterministic: the same program always gives the same cut. Linear in the number of ops.
    """
    region_of: dict[Operation, RegionPlan] = {}
    plans: list[RegionPlan] = []
    remarks: list[tuple[Operation, str]] = []
    for op in reversed(ops):
        if not fusible(op):
            continue
        users = [use.operation for use in op.results[0].uses]
        user_plans = [region_of.get(u) for u in users]
        plan = next((p for p in user_plans if p is not None), None)
        reason = None
        if plan is not None and any(p is not plan for p in user_plans):
            other = next(u for u, p in zip(users, user_plans, strict=True) if p is not plan)
            reason = (
                "its result is returned by the function"
                if isinstance(other, func.ReturnOp)
                else f"its result is also read by {other.name}, outside its user's region"
            )
        elif plan is not None and not plan.admits(op, limits):
            total, inputs = plan.steps + steps(op), plan.inputs_with(op)
            reason = (
                f"its user's region would have {total} steps, over max-steps={limits.max_steps}"
                if total > limits.max_steps
                else f"its user's region would read {inputs} inputs, "
                f"over max-inputs={limits.max_inputs}"
            )
        if plan is not None and reason is None:
            plan.add(op)
        else:
            if reason is not None:
                remarks.append((op, reason))
            plan = RegionPlan(op)
            plans.append(plan)
        region_of[op] = plan
    for op, reason in reversed(remarks):
        missed(pass_name, op, reason)
    plans.reverse()
    for plan in plans:
        plan.members.reverse()
    return [p for p in plans if len(p.members) > 1]


# --- building bodies ------------------------------------------------------------------------------


class BodyBuilder:
    """Builds scalar ops for a body ``block`` whose arguments stand for ``inputs``.

    ``scalar_of`` gives the scalar standing for a tensor value: a block argument (a new input if
    needed) or an ``arith.constant`` for a splat constant. ``add`` appends the scalar form of a
    fusible op, MOVING the body ops of a ``fused.elementwise`` (never cloning them). New ops are
    collected in ``ops``, in program order, for the caller to place.
    """

    def __init__(self, block: Block, inputs: Sequence[SSAValue] = ()):
        self.block = block
        self.inputs = list(inputs)
        self.scalar: dict[SSAValue, SSAValue] = dict(zip(self.inputs, block.args, strict=True))
        self.ops: list[Operation] = []
        self.constants: list[Operation] = []  # the nn.constant ops read

    def scalar_of(self, value: SSAValue) -> SSAValue:
        if value in self.scalar:
            return self.scalar[value]
        elem = element_type(value.type)
        owner = producer(value)
        constant = splat_value(owner) if owner is not None else None
        if owner is not None and constant is not None:
            const = arith.ConstantOp(scalar_attr(constant, elem))
            self.ops.append(const)
            self.constants.append(owner)
            scalar = const.result
        else:
            self.inputs.append(value)
            scalar = self.block.insert_arg(elem, len(self.block.args))
        self.scalar[value] = scalar
        return scalar

    def inline(self, body: Block, operands: Sequence[SSAValue]) -> list[SSAValue]:
        """Moves the ops of a region body (a ``fused.elementwise``'s or a ``fused.reduce``'s
        prologue) into the new body, its arguments replaced by ``operands``; returns the
        scalars its ``fused.yield`` yields."""
        for arg, scalar in zip(body.args, operands, strict=True):
            arg.replace_all_uses_with(scalar)
        term = body.last_op
        assert isinstance(term, fused.YieldOp)
        for body_op in list(body.ops):
            if body_op is not term:
                body_op.detach()
                self.ops.append(body_op)
        return list(term.values)

    def add(self, op: Operation) -> SSAValue:
        """Appends the scalar form of the fusible ``op``; returns the scalar of its result."""
        operands = [self.scalar_of(v) for v in op.operands]
        if isinstance(op, fused.ElementwiseOp):
            (value, *_) = self.inline(op.body.block, operands)
        else:
            new_ops, value = build_scalar(op, operands)
            self.ops.extend(new_ops)
        self.scalar[op.results[0]] = value
        return value


def dead_constants(constants: Sequence[Operation]) -> list[Operation]:
    """The splat constants among ``constants`` that fusion left without users."""
    return [c for c in dict.fromkeys(constants) if c.parent is not None and not c.results[0].uses]


def fuse_region(plan: RegionPlan) -> fused.ElementwiseOp:
    """Replaces the ops of ``plan`` by one ``fused.elementwise`` where its root stood."""
    members = set(plan.members)
    inputs = [
        v for member in plan.members for v in tensor_inputs(member) if producer(v) not in members
    ]
    inputs = list(dict.fromkeys(inputs))  # block arguments made at once: Block.insert_arg copies
    builder = BodyBuilder(Block(arg_types=[element_type(v.type) for v in inputs]), inputs)
    values = [builder.add(member) for member in plan.members]
    block = builder.block
    block.add_ops(builder.ops)
    block.add_op(fused.YieldOp(values[-1]))
    root = plan.root
    new = located_at(fused.ElementwiseOp(builder.inputs, root.results[0].type, Region(block)),
                     root)
    replace_region(new, root, plan.members, builder.constants)
    return new


def replace_region(new: fused.ElementwiseOp, root: Operation, members: Sequence[Operation],
                   constants: Sequence[Operation]) -> None:
    """Puts ``new`` in place of the region ``members`` ending at ``root``: inserted before
    ``root``, its uses moved to ``new``, the members and the constants only they read erased."""
    Rewriter.insert_op(new, InsertPoint.before(root))
    root.results[0].replace_all_uses_with(new.result)
    for member in reversed(members):
        Rewriter.erase_op(member)
    for const in dead_constants(constants):
        Rewriter.erase_op(const)


def fuse_regions(
    ops: Sequence[Operation], limits: Limits, pass_name: str = "fuse-elementwise"
) -> list[fused.ElementwiseOp]:
    """Plans the regions among ``ops`` (one block, program order) and fuses each one (that
    the rewrite limit lets through)."""
    return [
        fuse_region(plan)
        for plan in plan_regions(ops, limits, pass_name)
        if may_fuse(pass_name, plan.root, f"fused.elementwise of {len(plan.members)} ops")
    ]


def broadcast_shape(values: Sequence[SSAValue]) -> tuple[int, ...] | None:
    return broadcast_shapes(*(shape_of(v) for v in values))
