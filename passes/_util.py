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

# nn unary op -> the fused epilogue activation it is (``nn.gelu`` depends on ``approximate``).
_ACTIVATIONS: dict[type[Operation], str] = {
    nn.ReluOp: "relu",
    nn.SiluOp: "silu",
    nn.SigmoidOp: "sigmoid",
    nn.TanhOp: "tanh",
}


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


def located_at(new: Operation, root: Operation) -> Operation:
    """``new`` (a fused op replacing the group rooted at ``root``) with ``root``'s location, so
    that errors and remarks about it point into the source."""
    new.location = root.location
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
