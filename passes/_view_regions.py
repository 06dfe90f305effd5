"""Regions across injective ops: transposes, narrows and concats that feed or follow elementwise
arithmetic become index maps of one ``fused.elementwise``'s loads (``fuse-elementwise`` plans
these after its plain regions, see ``_elementwise.py``)::

    %t = nn.transpose %x {perm = array<i64: 1, 0>}     %r = fused.elementwise %x
    %e = nn.exp %t                                ->     {indexing_maps = [(d0, d1) -> (d0, d1)]}
    %r = nn.transpose %e {perm = array<i64: 1, 0>}         { math.exp }

A region is grown from a root up through producers whose users are all in it, as a plain
region is, but each member carries the index map of its result over the root's iteration space
(the root's: the identity; see ``dialects/index_maps.py``). A member gives each operand a map:
an elementwise op its broadcast, a transpose its permutation, a narrow its start added, a
concat each piece's start subtracted. A producer that computes joins only when every use of
it in the region gives it the same map (else it would be computed once per map: it stays
outside, materialised, with a missed remark); a view may be read through several maps (it
computes nothing: each reader composes its own map through it). An operand from outside is an
input of the fused op with its map, so one tensor may be read through several (``x[i]``,
``x[i + h]``, ``x[i - h]`` in a rotary embedding). A concat becomes a select between its
pieces on the position along its axis (``fused.index``); the piece not selected is computed
too, with its reads clamped into bounds, and dropped, so a concat does not join a region that
divides integers (a division by zero there would trap).

Only regions that hold an injective op and an elementwise op, or two transposes and narrows
or more, are made: a plain elementwise region is ``_elementwise``'s, and one view alone stays
as it is (a narrow read in place by attention costs nothing); a chain of them (a narrow then a
transpose: the value heads of a packed projection, put out head-major for a KV cache) is one
copy through the composed map instead of one copy per view, unless it moves weights only
(folded at compile time). Concats alone stay copy kernels, one per piece, each read once.
Reshapes and gathers, injective too, have no index map of this form and stay boundaries (a
reshape of a region's input is a free view already).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import Block, Operation, Region, SSAValue

from fusec.dialects import fused, nn
from fusec.dialects.bound_inputs import known_at_compile_time
from fusec.dialects.common import int_prop, ints_prop
from fusec.dialects.index_maps import (
    IndexMap,
    compose_broadcast,
    identity_map,
    shifted,
    through_transpose,
    to_affine,
)
from fusec.dialects.op_kinds import OpKind, op_kind
from fusec.dialects.scalar_ops import build_scalar, element_type, scalar_attr, splat_value
from fusec.passes._elementwise import (
    Limits,
    fusible,
    is_splat_constant,
    replace_region,
    steps,
)
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed

INTEGER_DIVISIONS = ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui")


def concat_starts(op: nn.ConcatOp) -> list[int]:
    """Where each piece starts along the axis, and the end."""
    axis = int_prop(op, "axis") % len(shape_of(op.result))
    starts = [0]
    for v in op.inputs:
        starts.append(starts[-1] + shape_of(v)[axis])
    return starts


def operand_maps(op: Operation, m: IndexMap) -> list[IndexMap] | None:
    """The map of each operand of ``op`` given the map ``m`` of its result; None when ``op``
    has no index-map form."""
    if isinstance(op, nn.TransposeOp):
        return [through_transpose(m, ints_prop(op, "perm"))]
    if isinstance(op, nn.NarrowOp):
        axis = int_prop(op, "axis") % len(m)
        return [shifted(m, axis, int_prop(op, "start"))]
    if isinstance(op, nn.ConcatOp):
        axis = int_prop(op, "axis") % len(m)
        return [shifted(m, axis, -start) for start in concat_starts(op)[:-1]]
    if fusible(op):
        out = shape_of(op.results[0])
        return [compose_broadcast(m, shape_of(v), out) for v in op.operands]
    return None


def is_view(op: Operation) -> bool:
    """An injective op with an index-map form."""
    return op_kind(op) is OpKind.INJECTIVE and isinstance(
        op, nn.TransposeOp | nn.NarrowOp | nn.ConcatOp
    )


def candidate(op: Operation) -> bool:
    """An op a view region may hold: elementwise (one result, no maps of its own) or a view,
    with a non-empty result."""
    if not (fusible(op) or is_view(op)) or len(op.results) != 1:
        return False
    return 0 not in shape_of(op.results[0])


def view_steps(op: Operation) -> int:
    """A transpose or narrow is free; a concat of n pieces is n - 1 compares and selects."""
    if isinstance(op, nn.ConcatOp):
        return 2 * (len(op.inputs) - 1)
    return 0 if is_view(op) else steps(op)


def divides_integers(op: Operation) -> bool:
    if isinstance(op, nn.DivOp):
        return isinstance(element_type(op.result.type), IntegerType)
    if isinstance(op, fused.ElementwiseOp):
        return any(o.name in INTEGER_DIVISIONS for o in op.body.block.ops)
    return False


class ViewPlan:
    """A region over the root's iteration space. ``maps`` holds the maps each member's result
    is read through: one for an op that computes, any number for a view (it computes nothing,
    so each reader composes its own map through it)."""

    def __init__(self, root: Operation):
        self.root = root
        self.members: list[Operation] = [root]  # reverse program order while growing
        result = root.results[0]
        self.maps: dict[SSAValue, list[IndexMap]] = {}
        self.operand_maps: dict[tuple[Operation, IndexMap], list[IndexMap]] = {}
        self.steps = 0
        self.inputs: dict[tuple[SSAValue, IndexMap], None] = {}
        self._take(root, [identity_map(len(shape_of(result)))])

    def _take(self, op: Operation, maps: list[IndexMap]) -> None:
        self.maps[op.results[0]] = maps
        for m in maps:
            self.steps += view_steps(op)
            operand_maps_ = operand_maps(op, m)
            assert operand_maps_ is not None
            self.operand_maps[(op, m)] = operand_maps_
            for v, om in zip(op.operands, operand_maps_, strict=True):
                if not is_splat_constant(v):
                    self.inputs[(v, om)] = None

    def maps_of_use(self, user: Operation, index: int) -> list[IndexMap]:
        """The maps through which ``user``'s operand ``index`` is read."""
        return [self.operand_maps[(user, m)][index] for m in self.maps[user.results[0]]]

    def admits(self, op: Operation, maps: list[IndexMap], limits: Limits) -> bool:
        added: set[tuple[SSAValue, IndexMap]] = set()
        for m in maps:
            new = operand_maps(op, m)
            assert new is not None
            added |= {
                (v, om) for v, om in zip(op.operands, new, strict=True)
                if not is_splat_constant(v) and (v, om) not in self.inputs
            }
        inputs = len(self.inputs) - len(maps) + len(added)
        return limits.admit(self.steps + len(maps) * view_steps(op), inputs)

    def add(self, op: Operation, maps: list[IndexMap]) -> None:
        self.members.append(op)
        for m in maps:
            del self.inputs[(op.results[0], m)]
        self._take(op, maps)

    def worth_building(self) -> bool:
        """A region of a view and arithmetic, or of two views or more (a chain of data
        movement: one copy through the composed map instead of a copy per view)."""
        views = sum(1 for o in self.members if is_view(o))
        if 0 < views < len(self.members):
            return True
        # Data movement alone: transposes and narrows (each element read once; a concat's
        # region reads every piece at every element, its copy kernels each piece once), not on
        # weights, whose movement is folded once at compile time (`fold_params`).
        return (views >= 2 and not any(isinstance(o, nn.ConcatOp) for o in self.members)
                and not all(known_at_compile_time(v) for v, _ in self.inputs))

    def blocked(self) -> str | None:
        """Why the region may not be built, or None."""
        if any(isinstance(o, nn.ConcatOp) for o in self.members) and any(
            divides_integers(o) for o in self.members
        ):
            return "a concat's discarded piece would divide integers (a zero divisor traps)"
        return None


def plan_view_regions(
    ops: Sequence[Operation], limits: Limits, pass_name: str
) -> list[ViewPlan]:
    """The view regions among ``ops`` (one block, program order): walked last to first, an op
    joins the region of all its users when the region stays within ``limits`` and, unless it
    is a view, they all read it through one map."""
    region_of: dict[Operation, ViewPlan] = {}
    plans: list[ViewPlan] = []
    remarks: list[tuple[Operation, str]] = []
    for op in reversed(ops):
        if not candidate(op):
            continue
        uses = list(op.results[0].uses)
        user_plans = [region_of.get(use.operation) for use in uses]
        plan = user_plans[0] if user_plans and all(
            p is user_plans[0] for p in user_plans) else None
        reason = None
        maps: list[IndexMap] = []
        if plan is not None:
            maps = list(dict.fromkeys(
                m for use in uses for m in plan.maps_of_use(use.operation, use.index)))
            if len(maps) > 1 and not is_view(op):
                reason = (
                    f"its result is read through {len(maps)} different index maps in its "
                    "users' region (it would be computed once per map)"
                )
            elif not plan.admits(op, maps, limits):
                reason = "its users' region would exceed max-steps or max-inputs"
        if plan is not None and reason is None:
            plan.add(op, maps)
        else:
            if reason is not None and plan is not None and any(
                is_view(o) for o in [op, *plan.members]
            ):
                remarks.append((op, reason))
            plan = ViewPlan(op)
            plans.append(plan)
        region_of[op] = plan
    for op, reason in reversed(remarks):
        missed(pass_name, op, reason)
    plans.reverse()
    built: list[ViewPlan] = []
    for plan in plans:
        if not plan.worth_building():
            continue
        why = plan.blocked()
        if why is not None:
            missed(pass_name, plan.root, why)
            continue
        plan.members.reverse()
        built.append(plan)
    return built


class ViewBodyBuilder:
    """The scalar body of a view region: a block argument per (input, map) pair, a scalar per
    (member result, map)."""

    def __init__(self, plan: ViewPlan):
        self.plan = plan
        members = set(plan.members)
        # Read from the operands now: an earlier region's rewrite may have replaced a value.
        self.keys = list(dict.fromkeys(  # in program order of their first reader
            (v, om)
            for op in plan.members
            for m in plan.maps[op.results[0]]
            for v, om in zip(op.operands, plan.operand_maps[(op, m)], strict=True)
            if producer(v) not in members and not is_splat_constant(v)
        ))
        self.block = Block(arg_types=[element_type(v.type) for v, _ in self.keys])
        self.scalar: dict[tuple[SSAValue, IndexMap], SSAValue] = dict(
            zip(self.keys, self.block.args, strict=True)
        )
        self.ops: list[Operation] = []
        self.constants: list[Operation] = []
        self.positions: dict[int, SSAValue] = {}

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def operand(self, v: SSAValue, m: IndexMap) -> SSAValue:
        if (v, m) in self.scalar:
            return self.scalar[(v, m)]
        owner = producer(v)
        constant = splat_value(owner) if owner is not None else None
        assert owner is not None and constant is not None, "an operand outside is an input"
        self.constants.append(owner)
        return self.emit(arith.ConstantOp(scalar_attr(constant, element_type(v.type))))

    def position(self, dim: int) -> SSAValue:
        if dim not in self.positions:
            self.positions[dim] = self.emit(fused.IndexOp(dim))
        return self.positions[dim]

    def add(self, op: Operation) -> None:
        for m in self.plan.maps[op.results[0]]:
            maps = self.plan.operand_maps[(op, m)]
            operands = [self.operand(v, om) for v, om in zip(op.operands, maps, strict=True)]
            if isinstance(op, nn.ConcatOp):
                value = self.select_piece(op, m, operands)
            elif is_view(op):
                (value,) = operands
            elif isinstance(op, fused.ElementwiseOp):
                value = self.inline(op.body.block, operands)
            else:
                new_ops, value = build_scalar(op, operands)
                self.ops.extend(new_ops)
            self.scalar[(op.results[0], m)] = value

    def inline(self, body: Block, operands: Sequence[SSAValue]) -> SSAValue:
        """Moves a ``fused.elementwise``'s body ops in; returns what it yields."""
        for arg, scalar in zip(body.args, operands, strict=True):
            arg.replace_all_uses_with(scalar)
        term = body.last_op
        assert isinstance(term, fused.YieldOp)
        for body_op in list(body.ops):
            if body_op is not term:
                body_op.detach()
                self.ops.append(body_op)
        return term.values[0]

    def select_piece(self, op: nn.ConcatOp, m: IndexMap, pieces: Sequence[SSAValue]) -> SSAValue:
        """``pieces[k]`` where the position along the axis is in piece ``k``."""
        axis = int_prop(op, "axis") % len(m)
        dim, offset = m[axis]
        starts = concat_starts(op)
        if dim is None:  # one fixed position: its piece
            k = max(i for i in range(len(pieces)) if starts[i] <= offset)
            return pieces[k]
        at = self.position(dim)
        value = pieces[-1]
        for k in range(len(pieces) - 2, -1, -1):
            bound = self.emit(arith.ConstantOp(IntegerAttr(starts[k + 1] - offset, IndexType())))
            before = self.emit(arith.CmpiOp(at, bound, "slt"))
            value = self.emit(arith.SelectOp(before, pieces[k], value))
        return value


def fuse_view_region(plan: ViewPlan) -> fused.ElementwiseOp:
    """Replaces the ops of ``plan`` by one ``fused.elementwise`` with index maps."""
    root = plan.root
    rank = len(shape_of(root.results[0]))
    builder = ViewBodyBuilder(plan)
    for member in plan.members:
        builder.add(member)
    block = builder.block
    block.add_ops(builder.ops)
    block.add_op(fused.YieldOp(builder.scalar[(root.results[0], identity_map(rank))]))
    maps = [to_affine(m, rank) for _, m in builder.keys]
    new = located_at(
        fused.ElementwiseOp(
            [v for v, _ in builder.keys], root.results[0].type, Region(block), maps
        ),
        root,
    )
    replace_region(new, root, plan.members, builder.constants)
    return new


def fuse_view_regions(
    ops: Sequence[Operation], limits: Limits, pass_name: str = "fuse-elementwise"
) -> list[fused.ElementwiseOp]:
    """Plans the view regions among ``ops`` (one block, program order) and fuses each."""
    return [
        fuse_view_region(plan)
        for plan in plan_view_regions(ops, limits, pass_name)
        if may_fuse(
            pass_name,
            plan.root,
            f"fused.elementwise of {len(plan.members)} ops, "
            f"{sum(1 for o in plan.members if is_view(o))} of them views read as index maps",
        )
    ]
