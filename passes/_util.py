"""Use-def and shape questions that fusion patterns ask before they absorb an op.

A fusion may absorb a producer into its consumer only when nothing else reads the producer's
result. In SSA a ``func.return`` operand is a use like any other, so ``feeds_only`` protects graph
outputs without a separate check: a returned intermediate has a second use (or its only use is
the return) and is never absorbed.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.utils.exceptions import PassFailedException

from fusec.dialects import nn
from fusec.dialects.common import int_prop, normalize_axis, shape_of, str_prop
from fusec.dialects.locations import Places, add_places, location_of_places

# nn unary op -> the fused epilogue activation it is (``nn.gelu`` depends on ``approximate``).
_ACTIVATIONS: dict[type[Operation], str] = {
    nn.ReluOp: "relu",
    nn.SiluOp: "silu",
    nn.SigmoidOp: "sigmoid",
    nn.TanhOp: "tanh",
}

ACTIVATION_OPS: tuple[type[Operation], ...] = (nn.GeluOp, *_ACTIVATIONS)
"""The classes of the ops `activation_of` names (the roots of a pattern matched on one)."""


class OpPassFailure(PassFailedException):
    """A pass failure about one op. ``fusec-opt`` prints it at the op's ``file:line:col``::

        model.mlir:12:5: error: unfuse: 'math.sin' in a fused body has no nn equivalent ...
    """

    def __init__(self, pass_name: str, op: Operation, message: str):
        super().__init__(f"{pass_name}: {message}")
        self.op = op


def activation_of(op: Operation) -> str | None:
    """The name (``fused.ACTIVATIONS``) of the activation ``op`` applies, or None."""
    if isinstance(op, nn.GeluOp):
        return "gelu_tanh" if str_prop(op, "approximate") == "tanh" else "gelu"
    return _ACTIVATIONS.get(type(op))


def is_returned(value: SSAValue) -> bool:
    """Whether a ``func.return`` reads ``value`` (it is a graph output)."""
    return any(isinstance(use.operation, func.ReturnOp) for use in value.uses)


def producer(value: SSAValue) -> Operation | None:
    """The op defining ``value``; None for a block argument."""
    return value.owner if isinstance(value, OpResult) else None


def feeds_only(value: SSAValue, user: Operation) -> bool:
    """``value`` is read exactly once, by ``user``, in ``user``'s block: safe to absorb.

    False for a value with a second consumer, one that is returned, or one that ``user`` reads
    twice (each of those needs the value materialised).
    """
    owner = producer(value)
    return (
        owner is not None
        and owner.parent is user.parent
        and value.has_one_use()
        and value.get_user_of_unique_use() is user
    )



def is_last_axis(op: Operation, rank: int, prop: str = "axis") -> bool:
    """Whether ``op``'s axis property names the last of ``rank`` dimensions."""
    return rank > 0 and normalize_axis(int_prop(op, prop), rank) == rank - 1


def why_shared(value: SSAValue, user: Operation, what: str) -> str:
    """Why ``feeds_only(value, user)`` is False, as a remark says it: ``what`` names the value
    (``the matmul result``)."""
    owner = producer(value)
    uses = value.uses.get_length()
    if owner is None:
        return f"{what} is a function argument"
    if owner.parent is not user.parent:
        return f"{what} is defined in another block"
    if is_returned(value):
        return f"{what} is returned by the function"
    if uses > 1 and all(use.operation is user for use in value.uses):
        return f"{what} is read {uses} times by the same op"
    return f"{what} has {uses} uses"


GROUP_WALK_LIMIT = 1024
"""`located_at` gives up listing a group's ops past this many (a fused op computes its roots
from its operands, so the walk ends at them; this bounds a walk that would not, so that no
rewrite can make a pass quadratic)."""


def located_at(new: Operation, *roots: Operation) -> Operation:
    """``new`` (a fused op replacing the group rooted at ``roots``) with MLIR's fused location
    of the group: the first root's location first (errors and remarks name it), then those of
    the other ops ``new`` computes, found from the roots back to ``new``'s operands (through the
    new ops not yet inserted that make them, e.g. a concatenation of weights), in source order.
    When that walk does not end at ``new``'s operands (``new`` is a helper that computes none
    of the group, such as that concatenation), the first root's location alone."""
    # Sets of id()s: IR objects hash in Python, and this runs once per fusion.
    block = roots[0].parent
    boundary: set[int] = set()
    fresh = list(new.operands)
    while fresh:  # an operand made by another new op stands for that op's operands
        value = fresh.pop()
        if id(value) not in boundary:
            boundary.add(id(value))
            if isinstance(value, OpResult) and value.op.parent is None:
                fresh.extend(value.op.operands)
    seen = {id(root) for root in roots}
    group: list[Operation] = []
    pending = [v for root in roots for v in root.operands]
    while pending:
        value = pending.pop()
        if id(value) in boundary:
            continue
        op = value.op if isinstance(value, OpResult) else None
        if op is None or op.parent is not block or len(seen) > GROUP_WALK_LIMIT:
            group = []  # past the group: an input new does not read
            break
        if id(op) not in seen:
            seen.add(id(op))
            group.append(op)
            pending.extend(op.operands)
    if not group and len(roots) == 1:
        new.location = roots[0].location
        return new
    places: Places = {}
    for root in roots:
        add_places(places, root.location)
    others: Places = {}
    for op in group:
        add_places(others, op.location)
    for key in sorted(others):
        places.setdefault(key, others[key])
    new.location = location_of_places(places)
    return new


def first_shared(*checks: tuple[SSAValue, Operation, str]) -> str | None:
    """The remark for the first ``(value, user, what)`` whose value ``user`` may not absorb
    (`feeds_only` is False), or None when every one may be absorbed."""
    for value, user, what in checks:
        if not feeds_only(value, user):
            return why_shared(value, user, what)
    return None


def discard(op: Operation) -> None:
    """Drops a fused op that was built but will not be inserted: building it registered it as a
    user of its operands, which would make them look shared to the next pattern."""
    op.drop_all_references()
