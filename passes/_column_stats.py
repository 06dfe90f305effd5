"""Matchers shared by the column-statistics fusions (``fuse-centered-gram``,
``fuse-power-step-normalize``, ``fuse-explained-variance``): scalar constants, column means
and column sums in the ways people write them, and the clean-up of the ops a fusion replaced.

A matcher returns what it found, ``None`` when the value is not of that kind at all (not a
candidate: no remark), or a `Missed` reason when it is one but breaks a guard (a remark).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from fusec.dialects import nn
from fusec.dialects.common import ints_prop
from fusec.dialects.scalar_ops import splat_value
from fusec.passes._util import is_returned, producer, shape_of


@dataclass(frozen=True)
class Missed:
    """A guard's reason, as the remark says it."""

    reason: str


@dataclass
class Found:
    """A matched value: ``value`` (what the pattern computes on) and the ops matched."""

    value: SSAValue
    ops: list[Operation] = field(default_factory=list)


def splat(value: SSAValue) -> float | None:
    """The float of a splat ``nn.constant`` (any shape), else None."""
    owner = producer(value)
    if owner is None:
        return None
    v = splat_value(owner)
    return float(v) if isinstance(v, float) else None


def with_scalar(op: Operation) -> tuple[SSAValue, float, bool] | None:
    """For a binary ``op`` one of whose operands is a splat constant that does not widen the
    result (the result has the other operand's type): ``(other, constant, constant_is_lhs)``."""
    if not isinstance(op, nn.BinaryOp):
        return None
    for other, const, is_lhs in ((op.lhs, op.rhs, False), (op.rhs, op.lhs, True)):
        c = splat(const)
        if c is not None and other.type == op.result.type:
            return other, c, is_lhs
    return None


def is_f32_matrix(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and t.element_type == f32 and t.get_num_dims() == 2


def type_reason(value: SSAValue, what: str) -> Missed | None:
    """A guard on ``value`` being a rank-2 f32 tensor."""
    t = value.type
    assert isinstance(t, TensorType)
    if t.element_type != f32:
        return Missed(f"{what} is {t}; the kernel computes on f32 only")
    if t.get_num_dims() != 2:
        return Missed(f"{what} is {t}; the kernel takes a matrix (rank 2)")
    return None


def over_rows(op: nn.ReduceOp) -> Missed | None:
    """A guard on a reduction being over axis 0 of a matrix."""
    rank = len(shape_of(op.input))
    axes = sorted({a % rank for a in ints_prop(op, "axes")}) if rank else []
    if axes != [0]:
        return Missed(f"the {op.name.removeprefix('nn.')} is over axes {list(axes)}, not the "
                      "rows (axis 0)")
    return None


def near(a: float, b: float) -> bool:
    """Equal up to float32 rounding of a constant."""
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=0.0)


def column_mean(value: SSAValue) -> Found | Missed | None:
    """``mean(x, 0)`` as ``reduce_mean(x, [0])``, ``reduce_sum(x, [0]) / n`` or
    ``reduce_sum(x, [0]) * (1 / n)`` (either operand order), keepdims or not; ``Found.value``
    is ``x``."""
    op = producer(value)
    if isinstance(op, nn.ReduceMeanOp):
        return over_rows(op) or Found(op.input, [op])
    scaled = with_scalar(op) if isinstance(op, nn.DivOp | nn.MulOp) else None
    if scaled is None:
        return None
    other, c, is_lhs = scaled
    total = producer(other)
    if not isinstance(total, nn.ReduceSumOp) or (is_lhs and isinstance(op, nn.DivOp)):
        return None
    if (bad := over_rows(total)) is not None:
        return bad
    n = shape_of(total.input)[0]
    if isinstance(op, nn.DivOp) and not near(c, n):
        return Missed(f"the column sum is divided by {c:g}, not the row count {n}")
    if isinstance(op, nn.MulOp) and not near(c * n, 1.0):
        return Missed(f"the column sum is multiplied by {c:g}, not 1/{n} (the row count's "
                      "reciprocal)")
    assert op is not None
    return Found(total.input, [op, total])


def centered(value: SSAValue) -> Found | Missed | None:
    """``x - mean(x, 0)``; ``Found.value`` is ``x``."""
    op = producer(value)
    if not isinstance(op, nn.SubOp):
        return None
    mean = column_mean(op.rhs)
    if not isinstance(mean, Found):
        return mean
    if mean.value is not op.lhs:
        return Missed("the subtracted column mean is of another tensor")
    if op.result.type != op.lhs.type:
        return Missed("the centering broadcasts its input to a larger shape")
    return Found(op.lhs, [op, *mean.ops])


def sum_of_squares(value: SSAValue) -> Found | Missed | None:
    """``sum(y^2, 0)`` as ``reduce_sum(y * y, [0])``, ``reduce_sum(pow(y, 2), [0])`` or
    ``reduce_mean(y * y, [0]) * m`` (m the row count); ``Found.value`` is ``y``."""
    op = producer(value)
    ops: list[Operation] = []
    times: float | None = None
    if isinstance(op, nn.MulOp) and (scaled := with_scalar(op)) is not None:
        other, times, _ = scaled
        ops.append(op)
        op = producer(other)
        if not isinstance(op, nn.ReduceMeanOp):
            return None
    elif not isinstance(op, nn.ReduceSumOp):
        return None
    assert isinstance(op, nn.ReduceOp)
    square = producer(op.input)
    if isinstance(square, nn.MulOp) and square.lhs is square.rhs:
        y = square.lhs
    elif isinstance(square, nn.PowOp) and splat(square.rhs) == 2.0:
        y = square.lhs
    else:
        return None
    if (bad := over_rows(op)) is not None:
        return bad
    m = shape_of(op.input)[0]
    if times is not None and not near(times, m):
        return Missed(f"the mean of squares is multiplied by {times:g}, not the row count {m}")
    return Found(y, [*ops, op, square])


def outside_uses(value: SSAValue, inside: Sequence[Operation], what: str) -> Missed | None:
    """A guard on ``value`` being read only by the ops ``inside`` the pattern."""
    if is_returned(value):
        return Missed(f"{what} is returned by the function")
    ids = {id(op) for op in inside}
    outside = [u.operation for u in value.uses if id(u.operation) not in ids]
    if outside:
        return Missed(f"{what} is also read by '{outside[0].name}' outside the pattern")
    return None


def erase_dead(rewriter: PatternRewriter, ops: Sequence[Operation]) -> None:
    """Erases those of ``ops`` (and the constants they read) that nothing reads any more."""
    pending = list(dict.fromkeys(ops))
    changed = True
    while changed:
        changed = False
        for op in list(pending):
            if op.parent is None:
                pending.remove(op)
                continue
            if all(not r.uses for r in op.results):
                operands = [producer(v) for v in op.operands]
                rewriter.erase(op)
                pending.remove(op)
                pending.extend(o for o in operands if isinstance(o, nn.ConstantOp)
                               and o not in pending)
                changed = True
