"""Fuses per-plane normalization of images (per image and channel of NCHW) into one
``fused.image_normalize``: subtract the plane's mean, divide by ``sqrt(variance + eps)``, then
an optional per-plane gain and bias, clamp and gamma, in one kernel.

The core is matched at the op that divides the centred input by the standard deviation::

    (x - m) / sqrt(v + eps)        (x - m) * rsqrt(v + eps)       (x - m) * (1 / sqrt(v + eps))
    (x - m) / pow(v + eps, 0.5)    (x - m) * pow(v + eps, -0.5)   (eps may be absent: 0)

where ``m`` is the mean of ``x`` over its last two axes (``reduce_mean``, ``reduce_sum / n``,
``reduce_sum * (1/n)``, or two nested one-axis reductions, all with ``keepdims``) and ``v`` is
its variance: ``mean(t * t)`` or ``mean(pow(t, 2))`` with ``t = x - m`` (``variance =
"centered"``), or ``mean(x * x) - m * m`` (``"moments"``; the kernel computes it the same way,
so the fused and unfused programs round alike). Then, each only if the value before it has no
other use: ``* gain``, ``+ bias`` (operands holding one value per plane: ``[C, 1, 1]``, ``[1, C,
1, 1]``, ``[N, C, 1, 1]`` or a scalar), ``max``/``min`` with constant bounds (the clamp), and
``pow`` with a constant exponent (the gamma), the clamp and the gamma in either order
(``nn.relu`` is ``max(y, 0)``).

Guards (each a located missed remark at the core op, or at the epilogue op it stops before):
  * the statistics reduce the last two axes (a reduction over the last axis alone is a row
    normalization, left to ``fuse-row-reduce`` without a remark; NHWC, reducing axes 1 and 2,
    is not fused);
  * the mean and the variance reduce the same axes; the variance is of the same input and
    mean; ``eps`` is a constant >= 0;
  * the input is f32; a plane has at most ``max-plane`` elements (larger planes keep the
    split reductions of ``fuse-reductions``);
  * every intermediate (the mean, the centred input, the variance, ...) is read only inside
    the normalization (a returned mean stays, and so do its ops);
  * the epilogue: a gain or bias that varies within a plane, a bound or exponent that is not a
    constant, or crossed bounds (``max(min(y, hi), lo)`` with ``lo > hi``) end it there.

Before::

    %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x8x8xf32> -> tensor<2x3x1x1xf32>
    %d = nn.sub %x, %mu : tensor<2x3x8x8xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x8x8xf32>
    %sq = nn.mul %d, %d : tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
    %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x8x8xf32> -> tensor<2x3x1x1xf32>
    %ve = nn.add %var, %eps : tensor<2x3x1x1xf32>, tensor<f32> -> tensor<2x3x1x1xf32>
    %rs = nn.rsqrt %ve : tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
    %n = nn.mul %d, %rs : tensor<2x3x8x8xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x8x8xf32>
    %y = nn.mul %n, %g : tensor<2x3x8x8xf32>, tensor<3x1x1xf32> -> tensor<2x3x8x8xf32>

After::

    %y = fused.image_normalize %x gain %g : tensor<2x3x8x8xf32> gain tensor<3x1x1xf32> -> tensor<2x3x8x8xf32>
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from fusec.dialects import fused, nn
from fusec.dialects.common import bool_prop, broadcast_shapes, element_of, ints_prop
from fusec.dialects.image_normalize import per_plane
from fusec.dialects.scalar_ops import splat_value
from fusec.passes._util import is_returned, located_at, producer, shape_of
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-image-normalize"


class NotFused(Exception):
    """A guard stopped the candidate; the message is the remark's reason."""


# --- constants and plane statistics ---------------------------------------------------------


def constant(value: SSAValue, against: tuple[int, ...]) -> float | None:
    """The value of a splat float ``nn.constant`` that broadcasts into ``against`` without
    changing it (a scalar for the op reading it), else None."""
    op = producer(value)
    if op is None or broadcast_shapes(shape_of(value), against) != against:
        return None
    v = splat_value(op)
    return float(v) if isinstance(v, float) else None


@dataclass
class Mean:
    """A mean over ``axes`` of ``of`` (keepdims), computed by ``ops``."""

    of: SSAValue
    axes: tuple[int, ...]
    value: SSAValue
    ops: list[Operation]

    def same_as(self, other: Mean) -> bool:
        return self.value is other.value or (self.of is other.of and self.axes == other.axes)


Reduction = tuple[SSAValue, tuple[int, ...], list[Operation]]


def reduction(value: SSAValue, kind: type[nn.ReduceOp]) -> Reduction | None:
    """``value`` is a keepdims reduction of ``kind`` (or two nested ones, the inner one read
    only by the outer): its input, the axes and the ops."""
    op = producer(value)
    if not isinstance(op, kind) or not bool_prop(op, "keepdims"):
        return None
    rank = len(shape_of(op.input))
    axes = {a % rank for a in ints_prop(op, "axes")}
    ops: list[Operation] = [op]
    inner = producer(op.input)
    if (isinstance(inner, kind) and bool_prop(inner, "keepdims") and inner.result.has_one_use()
            and not axes & {a % rank for a in ints_prop(inner, "axes")}):
        axes |= {a % rank for a in ints_prop(inner, "axes")}
        ops.insert(0, inner)
        source = inner.input
    else:
        source = op.input
    return source, tuple(sorted(axes)), ops


def as_mean(value: SSAValue) -> Mean | None:
    """``value`` as a mean: ``reduce_mean``, ``reduce_sum / n``, ``reduce_sum * (1/n)``."""
    found = reduction(value, nn.ReduceMeanOp)
    if found is not None:
        return Mean(found[0], found[1], value, found[2])
    op = producer(value)
    if isinstance(op, nn.DivOp):
        candidates = [(op.lhs, op.rhs, False)]
    elif isinstance(op, nn.MulOp):
        candidates = [(op.lhs, op.rhs, True), (op.rhs, op.lhs, True)]
    else:
        return None
    for total, scale, reciprocal in candidates:
        found = reduction(total, nn.ReduceSumOp)
        if found is None:
            continue
        source, axes, ops = found
        count = math.prod(shape_of(source)[a] for a in axes)
        c = constant(scale, shape_of(total))
        if c is None or count == 0:
            continue
        if (abs(c * count - 1) <= 2e-7) if reciprocal else c == count:
            return Mean(source, axes, value, [*ops, op])
    return None


def as_square(value: SSAValue) -> tuple[SSAValue, Operation] | None:
    """``value`` is ``t * t`` or ``pow(t, 2)``: ``t`` and the op."""
    op = producer(value)
    if isinstance(op, nn.MulOp) and op.lhs is op.rhs:
        return op.lhs, op
    if isinstance(op, nn.PowOp) and constant(op.rhs, shape_of(op.lhs)) == 2.0:
        return op.lhs, op
    return None


def as_centred(value: SSAValue) -> tuple[SSAValue, Mean, Operation] | None:
    """``value`` is ``x - mean(x)``: ``x``, the mean and the subtraction."""
    op = producer(value)
    if not isinstance(op, nn.SubOp):
        return None
    mean = as_mean(op.rhs)
    if mean is None or mean.of is not op.lhs:
        return None
    return op.lhs, mean, op


def as_std(value: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """``value`` is ``sqrt(e)`` or ``pow(e, 0.5)``."""
    op = producer(value)
    if isinstance(op, nn.SqrtOp):
        return op.input, [op]
    if isinstance(op, nn.PowOp) and constant(op.rhs, shape_of(op.lhs)) == 0.5:
        return op.lhs, [op]
    return None


def as_inverse_std(value: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """``value`` is ``rsqrt(e)``, ``pow(e, -0.5)`` or ``1 / std``."""
    op = producer(value)
    if isinstance(op, nn.RsqrtOp):
        return op.input, [op]
    if isinstance(op, nn.PowOp) and constant(op.rhs, shape_of(op.lhs)) == -0.5:
        return op.lhs, [op]
    if isinstance(op, nn.DivOp) and constant(op.lhs, shape_of(op.rhs)) == 1.0:
        std = as_std(op.rhs)
        if std is not None:
            return std[0], [*std[1], op]
    return None


# --- the core -------------------------------------------------------------------------------


@dataclass
class Match:
    """What one ``fused.image_normalize`` replaces."""

    x: SSAValue
    core: Operation
    eps: float
    variance: str
    absorbed: dict[Operation, str]
    """Every op replaced (but the last), with what its value is, for remarks."""
    end: Operation
    gain: SSAValue | None = None
    bias: SSAValue | None = None
    clamp_min: float | None = None
    clamp_max: float | None = None
    gamma: float | None = None
    gamma_first: bool = False
    epilogue: list[Operation] = field(default_factory=list)


def match_core(op: Operation, max_plane: int) -> Match | None:
    """The normalization whose division (or product by the inverse) is ``op``; None when
    ``op`` is no such division; `NotFused` when a guard stops it."""
    if isinstance(op, nn.DivOp):
        pairs = [(op.lhs, as_std(op.rhs))]
    elif isinstance(op, nn.MulOp):
        pairs = [(op.lhs, as_inverse_std(op.rhs)), (op.rhs, as_inverse_std(op.lhs))]
    else:
        return None
    for centred_value, divisor in pairs:
        centred = as_centred(centred_value)
        if centred is not None and divisor is not None:
            return finish_core(op, centred, divisor, max_plane)
    return None


def finish_core(op: Operation, centred: tuple[SSAValue, Mean, Operation],
                divisor: tuple[SSAValue, list[Operation]], max_plane: int) -> Match | None:
    x, mean, sub = centred
    shape = shape_of(x)
    rank = len(shape)
    if mean.axes == (rank - 1,):
        return None  # a row normalization: fuse-row-reduce's
    if mean.axes != (rank - 2, rank - 1):
        raise NotFused(f"the mean reduces axes {list(mean.axes)}, not the last two (the "
                       "plane); other layouts (NHWC) are not fused")
    absorbed: dict[Operation, str] = {sub: "the centred input"}
    absorbed.update(dict.fromkeys(mean.ops, "the mean"))
    var_eps, std_ops = divisor
    absorbed.update(dict.fromkeys(std_ops, "the standard deviation"))
    eps_op = producer(var_eps)
    var, eps = var_eps, 0.0
    if isinstance(eps_op, nn.AddOp):
        for v, e in ((eps_op.lhs, eps_op.rhs), (eps_op.rhs, eps_op.lhs)):
            c = constant(e, shape_of(v))
            if c is not None:
                var, eps = v, c
                absorbed[eps_op] = "the variance plus eps"
                break
        else:
            if shape_of(eps_op.lhs) != shape_of(eps_op.rhs):
                raise NotFused("eps is not a constant")
    variance = match_variance(var, x, mean, absorbed)
    if element_of(x) != f32:
        raise NotFused(f"the input is {element_of(x)}, not f32")
    plane = shape[-2] * shape[-1]
    if plane > max_plane:
        raise NotFused(f"a plane has {plane} elements, more than max-plane ({max_plane})")
    if not (eps >= 0 and math.isfinite(eps)):
        raise NotFused(f"eps ({eps:g}) is negative or not finite")
    return Match(x, op, eps, variance, absorbed, op)


def match_variance(var: SSAValue, x: SSAValue, mean: Mean, absorbed: dict[Operation, str]) -> str:
    """How ``var`` is the variance of ``x`` about ``mean`` (adding its ops to ``absorbed``)."""
    centered = as_mean(var)
    if centered is not None:
        square = as_square(centered.of)
        if square is not None:
            t = as_centred(square[0])
            if t is not None and t[0] is x and t[1].same_as(mean):
                check_axes(centered, mean)
                absorbed.update(dict.fromkeys(centered.ops, "the variance"))
                absorbed[square[1]] = "the squared centred input"
                absorbed[t[2]] = "the centred input"
                absorbed.update(dict.fromkeys(t[1].ops, "the mean"))
                return "centered"
    op = producer(var)
    if isinstance(op, nn.SubOp):
        mean_square = as_mean(op.lhs)
        mean_2 = as_square(op.rhs)
        if mean_square is not None and mean_2 is not None:
            x_2 = as_square(mean_square.of)
            m = as_mean(mean_2[0])
            if x_2 is not None and x_2[0] is x and m is not None and m.same_as(mean):
                check_axes(mean_square, mean)
                absorbed[op] = "the variance"
                absorbed.update(dict.fromkeys(mean_square.ops, "the mean of squares"))
                absorbed[x_2[1]] = "the squared input"
                absorbed[mean_2[1]] = "the squared mean"
                absorbed.update(dict.fromkeys(m.ops, "the mean"))
                return "moments"
    raise NotFused("the divisor is not sqrt(variance + eps) of the same input and mean")


def check_axes(stat: Mean, mean: Mean) -> None:
    if stat.axes != mean.axes:
        raise NotFused(f"the mean reduces axes {list(mean.axes)} and the variance "
                       f"{list(stat.axes)}")


def check_private(match: Match) -> None:
    """Every absorbed value is read only by absorbed ops."""
    inside = {*match.absorbed, match.end}
    for op, what in match.absorbed.items():
        readers = {use.operation for use in op.results[0].uses}
        outside = [r for r in readers if r not in inside]
        if outside:
            where = ("is returned by the function" if is_returned(op.results[0])
                     else f"is also read by {outside[0].name}")
            raise NotFused(f"{what} {where}")


# --- the epilogue ---------------------------------------------------------------------------


def sole_user(value: SSAValue) -> Operation | None:
    """The one op reading ``value`` (twice only as ``value * value``, the gamma 2)."""
    users = {use.operation for use in value.uses}
    if len(users) != 1:
        return None
    user = next(iter(users))
    twice = isinstance(user, nn.MulOp) and user.lhs is user.rhs
    return user if value.uses.get_length() == 1 or twice else None


def extend(match: Match) -> None:
    """Grows ``match`` through the gain, bias, clamp and gamma after its core."""
    x_shape = shape_of(match.x)
    stage = 0  # 0: gain next; 1: bias next; 2: clamp or gamma
    while True:
        value = match.end.results[0]
        user = sole_user(value)
        if user is None:
            note_shared(value)
            return
        if user.parent is not match.end.parent:
            return
        if isinstance(user, nn.ReluOp):  # max(y, 0)
            if not take_bound(match, user, True, 0.0):
                return
            stage = 2
            match.absorbed[match.end] = "the normalized value"
            match.epilogue.append(user)
            match.end = user
            continue
        if not isinstance(user, nn.BinaryOp):
            return
        if user.lhs is user.rhs:
            # y * y is gamma 2 (canonicalize-nn's form of pow(y, 2))
            if not isinstance(user, nn.MulOp) or not take_gamma(match, user, 2.0):
                return
            stage = 2
            match.absorbed[match.end] = "the normalized value"
            match.epilogue.append(user)
            match.end = user
            continue
        other = user.rhs if user.lhs is value else user.lhs
        if isinstance(user, nn.MulOp | nn.AddOp):
            slot = 0 if isinstance(user, nn.MulOp) else 1
            if stage > slot:
                return
            if not per_plane(shape_of(other), x_shape):
                what = "gain" if slot == 0 else "bias"
                missed(PASS, user, f"the {what} ({other.type}) varies within a plane")
                return
            if slot == 0:
                match.gain = other
            else:
                match.bias = other
            stage = slot + 1
        elif isinstance(user, nn.MaxOp | nn.MinOp):
            if not take_bound(match, user, isinstance(user, nn.MaxOp), constant(other, x_shape)):
                return
            stage = 2
        elif isinstance(user, nn.PowOp) and user.lhs is value:
            if not take_gamma(match, user, constant(other, x_shape)):
                return
            stage = 2
        else:
            return
        match.absorbed[match.end] = "the normalized value"
        match.epilogue.append(user)
        match.end = user


def take_gamma(match: Match, user: Operation, c: float | None) -> bool:
    """Adds the gamma ``c`` of ``user`` (None: not a constant), unless there is one already."""
    if match.gamma is not None:
        return False
    if c is None:
        missed(PASS, user, "the exponent (gamma) is not a constant")
        return False
    match.gamma = c
    match.gamma_first = match.clamp_min is None and match.clamp_max is None
    return True


def take_bound(match: Match, user: Operation, lower: bool, c: float | None) -> bool:
    """Adds the clamp bound ``c`` of ``user`` (nn.max or nn.relu: the lower, nn.min: the
    upper; None: not a constant); the bounds must be next to each other (not split around the
    gamma)."""
    if (match.clamp_min if lower else match.clamp_max) is not None:
        return False
    started = match.clamp_min is not None or match.clamp_max is not None
    if started and not isinstance(match.epilogue[-1], nn.MaxOp | nn.MinOp | nn.ReluOp):
        return False
    name = "lower" if lower else "upper"
    if c is None or math.isnan(c):
        missed(PASS, user, f"the {name} clamp bound is not a constant (or is NaN)")
        return False
    low, high = (c, match.clamp_max) if lower else (match.clamp_min, c)
    if low is not None and high is not None and low > high:
        missed(PASS, user, f"the clamp bounds are crossed (lower {low:g} > upper {high:g})")
        return False
    if lower:
        match.clamp_min = c
    else:
        match.clamp_max = c
    return True


def note_shared(value: SSAValue) -> None:
    """The remark when the epilogue stops because ``value`` has several uses."""
    users = [use.operation for use in value.uses]
    for user in users:
        if isinstance(user, nn.MulOp | nn.AddOp | nn.MaxOp | nn.MinOp | nn.PowOp | nn.ReluOp):
            where = ", and it is returned" if is_returned(value) else ""
            missed(PASS, user, f"the normalized value it reads has {len(users)} uses{where}")
            return


# --- the rewrite ----------------------------------------------------------------------------


def rewrite(match: Match) -> fused.ImageNormalizeOp:
    clamped = match.clamp_min is not None or match.clamp_max is not None
    new = fused.ImageNormalizeOp(
        match.x, match.gain, match.bias, match.eps, match.variance, match.clamp_min,
        match.clamp_max, match.gamma, match.gamma_first and clamped)
    end = match.end
    located_at(new, end)
    Rewriter.insert_op(new, InsertPoint.before(end))
    end.results[0].replace_all_uses_with(new.result)
    block = end.parent
    assert isinstance(block, Block)
    order = {op: i for i, op in enumerate(block.ops)}
    doomed = sorted({*match.absorbed, end}, key=order.__getitem__, reverse=True)
    constants = [v.owner for op in doomed for v in op.operands
                 if isinstance(producer(v), nn.ConstantOp)]
    for op in doomed:
        Rewriter.erase_op(op)
    for const in dict.fromkeys(constants):
        assert isinstance(const, Operation)
        if const.parent is not None and not const.results[0].uses:
            Rewriter.erase_op(const)
    return new


def candidates(module: ModuleOp) -> Iterable[Block]:
    for fn in [f for f in module.walk() if isinstance(f, func.FuncOp)]:
        yield from fn.body.blocks


@dataclass(frozen=True)
class FuseImageNormalizePass(ModulePass):
    name = "fuse-image-normalize"

    max_plane: int = 16384
    """The largest plane (H * W) fused: one work-item (CPU) or work-group (GPU) per plane."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_plane < 1:
            raise PassFailedException(
                f"{self.name}: max-plane ({self.max_plane}) must be at least 1")
        for block in candidates(op):
            for candidate in list(block.ops):
                if candidate.parent is None:
                    continue
                try:
                    match = match_core(candidate, self.max_plane)
                    if match is None:
                        continue
                    check_private(match)
                except NotFused as reason:
                    missed(PASS, candidate, str(reason))
                    continue
                extend(match)
                what = f"fused.image_normalize of {len(match.absorbed) + 1} ops"
                if may_fuse(PASS, candidate, what):
                    rewrite(match)
