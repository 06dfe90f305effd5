"""Recognises the decompositions that exporters write and rewrites them into canonical ``nn`` ops,
so that imported models fuse as the hand-written examples do.

    0.5 * x * (1 + erf(x / sqrt(2)))           ->  nn.gelu(x)                  (any order)
    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))  ->  nn.gelu(x) {tanh}
    x * sigmoid(x)                             ->  nn.silu(x)
    w * (x / sqrt(mean(x^2, -1) + eps))        ->  nn.rms_norm(x, w) {eps}  (x * rsqrt, 1/sqrt)
    merge(softmax(split(q) @ split(k)^T / c [+ mask arithmetic]) @ split(v))
                                               ->  nn.attention(q, k, v, mask) {scale = 1/c}

The attention subgraph is what the exporters write for multi-head attention: each of q, k and
v (``[B, S, H*D]``) reshaped to ``[B, S, H, D]`` and transposed to heads-first (k to
``[B, H, D, S]``, directly or by a second transpose), the scores scaled by a division or a
multiplication by a constant, optionally a causal mask (``where(tril, scores, -big)`` with a
lower-triangular constant: ``causal``), optionally an additive mask: Hugging Face's
``(1 - cast(mask[:, None, None, :])) * -big`` or ``where(cond, 0, -big)`` with ``cond`` a key
mask and/or causal triangle however the exporter built it (`onnx_mask`); its ``mask`` becomes
the op's key mask (nonzero = attend), softmax over the keys, the product with v, transposed back
and reshaped to ``[B, S, H*D]`` (or ``[B*S, H*D]``). One difference: a query whose every key
is masked gets zeros from ``nn.attention`` where the export averages all values; such rows
carry no information.

Each rewrite is a pattern on the op that ends the decomposition, walking up through use-def; a
value that something outside the decomposition reads stays as it was (a fusion never absorbs a
value that something else reads).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import region_dce

from fusec.dialects import nn
from fusec.dialects.common import HALF_TYPES, element_of, shape_of
from fusec.frontends.onnx_heads import MAX_DEPTH, MAX_ELEMENTS, identities, packed_operand
from fusec.frontends.onnx_mask import (
    additive_key_mask,
    constant_additive_layout,
    constant_array,
    key_mask_layout,
)

TOLERANCE = 1e-5
ROUNDING = {Float16Type(): 2.0**-11, BFloat16Type(): 2.0**-8}
"""The relative error of rounding to each 16-bit type (its unit roundoff)."""


def splat_of(value: SSAValue) -> float | None:
    """The value of a splat ``nn.constant``, else None."""
    if not isinstance(value, OpResult) or not isinstance(value.op, nn.ConstantOp):
        return None
    attr = value.op.value
    if not attr.is_splat():
        return None
    values = attr.get_values()
    return float(values[0]) if values else None


def is_splat(value: SSAValue, expected: float) -> bool:
    """Whether ``value`` is a splat of ``expected``, as its element type holds it: within
    `TOLERANCE`, or within the type's rounding (`ROUNDING`), so that a 16-bit graph's
    ``0.044715`` (0.04470825 in f16) is recognised as an f32 one's is."""
    found = splat_of(value)
    if found is None:
        return False
    element = value.type.element_type if isinstance(value.type, TensorType) else None
    return math.isclose(found, expected, rel_tol=max(TOLERANCE, ROUNDING.get(element, 0.0)))


def producer(value: SSAValue, cls: type[Operation]) -> Operation | None:
    """The op of type ``cls`` defining ``value`` when this is its only use."""
    if isinstance(value, OpResult) and isinstance(value.op, cls) and value.has_one_use():
        return value.op
    return None


def factors(value: SSAValue, depth: int = 3) -> list[SSAValue]:
    """The factors of a product tree of single-use ``nn.mul`` ops."""
    op = producer(value, nn.MulOp)
    if op is None or depth == 0:
        return [value]
    return [*factors(op.operands[0], depth - 1), *factors(op.operands[1], depth - 1)]


def product_root_factors(op: nn.MulOp) -> list[SSAValue]:
    return [*factors(op.lhs), *factors(op.rhs)]


def erf_argument(value: SSAValue) -> SSAValue | None:
    """``x`` when ``value`` is ``1 + erf(x / sqrt 2)`` (or ``x * (1/sqrt 2)``)."""
    add = producer(value, nn.AddOp)
    if add is None:
        return None
    for erf_side, one_side in ((add.operands[0], add.operands[1]),
                               (add.operands[1], add.operands[0])):
        erf = producer(erf_side, nn.ErfOp)
        if erf is None or not is_splat(one_side, 1.0):
            continue
        inner = erf.operands[0]
        div = producer(inner, nn.DivOp)
        if div is not None and is_splat(div.operands[1], math.sqrt(2.0)):
            return div.operands[0]
        mul = producer(inner, nn.MulOp)
        if mul is not None:
            for a, b in ((mul.operands[0], mul.operands[1]), (mul.operands[1], mul.operands[0])):
                if is_splat(b, 1.0 / math.sqrt(2.0)):
                    return a
    return None


def commuted(op: Operation) -> tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue]]:
    a, b = op.operands[0], op.operands[1]
    return (a, b), (b, a)


def tanh_argument(value: SSAValue) -> SSAValue | None:
    """``x`` when ``value`` is ``1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))``."""
    add = producer(value, nn.AddOp)
    if add is None:
        return None
    for tanh_side, one_side in commuted(add):
        tanh = producer(tanh_side, nn.TanhOp)
        if tanh is None or not is_splat(one_side, 1.0):
            continue
        scaled = producer(tanh.operands[0], nn.MulOp)
        if scaled is None:
            continue
        for inner, c in commuted(scaled):
            inner_add = producer(inner, nn.AddOp)
            if inner_add is None or not is_splat(c, math.sqrt(2.0 / math.pi)):
                continue
            for x, cubic in commuted(inner_add):
                term = producer(cubic, nn.MulOp)
                if term is None:
                    continue
                for power, k in commuted(term):
                    pow_op = producer(power, nn.PowOp)
                    if (pow_op is not None and is_splat(k, 0.044715)
                            and pow_op.operands[0] is x and is_splat(pow_op.operands[1], 3.0)):
                        return x
    return None


class TanhGelu(RewritePattern):
    """``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`` -> ``nn.gelu {tanh}``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MulOp):
            return
        parts = product_root_factors(op)
        if len(parts) != 3:
            return
        for i, candidate in enumerate(parts):
            x = tanh_argument(candidate)
            rest = [p for j, p in enumerate(parts) if j != i]
            if x is None or not any(r is x for r in rest):
                continue
            other = rest[1] if rest[0] is x else rest[0]
            if is_splat(other, 0.5) and x.type == op.result.type:
                rewriter.replace(op, nn.GeluOp(x, "tanh"))
                return


class Silu(RewritePattern):
    """``x * sigmoid(x)`` -> ``nn.silu``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MulOp):
            return
        for x, s in commuted(op):
            sigmoid = producer(s, nn.SigmoidOp)
            if sigmoid is not None and sigmoid.operands[0] is x and x.type == op.result.type:
                rewriter.replace(op, nn.SiluOp(x))
                return


def inverse_rms(value: SSAValue, x: SSAValue) -> float | None:
    """``eps`` when ``value`` is ``1 / sqrt(mean(x * x, -1, keepdims) + eps)`` (or ``rsqrt``,
    or ``x^2`` by ``pow``)."""
    root: SSAValue | None = None
    div = producer(value, nn.DivOp)
    if div is not None and is_splat(div.operands[0], 1.0):
        sqrt = producer(div.operands[1], nn.SqrtOp)
        root = sqrt.operands[0] if sqrt is not None else None
    rsqrt = producer(value, nn.RsqrtOp)
    if rsqrt is not None:
        root = rsqrt.operands[0]
    add = producer(root, nn.AddOp) if root is not None else None
    if add is None:
        return None
    for mean_side, eps_side in commuted(add):
        eps = splat_of(eps_side)
        mean = producer(mean_side, nn.ReduceMeanOp)
        if eps is None or eps <= 0 or mean is None:
            continue
        rank = len(shape_of(x))
        axes = list(mean.axes.get_values())  # type: ignore[attr-defined]
        if [a % rank for a in axes] != [rank - 1] or not mean.keepdims.value.data:  # type: ignore
            continue
        square = mean.operands[0]
        mul = producer(square, nn.MulOp)
        if mul is not None and mul.operands[0] is x and mul.operands[1] is x:
            return eps
        power = producer(square, nn.PowOp)
        if power is not None and power.operands[0] is x and is_splat(power.operands[1], 2.0):
            return eps
    return None


class DecomposedRmsNorm(RewritePattern):
    """``w * (x * (1 / sqrt(mean(x^2) + eps)))`` over the last axis -> ``nn.rms_norm``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MulOp):
            return
        for w, normed in commuted(op):
            mul = producer(normed, nn.MulOp)
            if mul is None or len(shape_of(w)) != 1:
                continue
            for x, inverse in commuted(mul):
                if x.type != op.result.type or shape_of(w) != shape_of(x)[-1:]:
                    continue
                eps = inverse_rms(inverse, x)
                if eps is not None:
                    rewriter.replace(op, nn.RmsNormOp(x, w, -1, eps))
                    return


class ErfGelu(RewritePattern):
    """``0.5 * x * (1 + erf(x / sqrt 2))``, the three factors in any order -> ``nn.gelu``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MulOp):
            return
        parts = product_root_factors(op)
        if len(parts) != 3:
            return
        for i, candidate in enumerate(parts):
            x = erf_argument(candidate)
            if x is None:
                continue
            rest = [p for j, p in enumerate(parts) if j != i]
            if not any(r is x for r in rest):
                continue
            other = rest[1] if rest[0] is x else rest[0]
            if not is_splat(other, 0.5) or x.type != op.result.type:
                continue
            rewriter.replace(op, nn.GeluOp(x, "none"))
            return


BIG_NEGATIVE = -1e4
"""A mask constant at most this is "minus infinity" for a softmax."""


def single(value: SSAValue, cls: type[Operation]) -> Operation | None:
    return producer(value, cls)



def perm_of(op: Operation) -> list[int]:
    return list(op.perm.get_values())  # type: ignore[attr-defined]


def defined_by(value: SSAValue, cls: type[Operation]) -> Operation | None:
    """The op of type ``cls`` defining ``value``, however many uses it has."""
    if isinstance(value, OpResult) and isinstance(value.op, cls):
        return value.op
    return None


def key_mask(value: SSAValue, batch: int, keys: int) -> SSAValue | None:
    """``mask`` (``[B, S_k]``) when ``value`` is ``(1 - cast(reshape(mask))) * -big``. The
    chain may have other users (every layer adds the same mask): it is left to them."""
    mul = defined_by(value, nn.MulOp)
    if mul is None or shape_of(value) != (batch, 1, 1, keys):
        return None
    for a, c in ((mul.operands[0], mul.operands[1]), (mul.operands[1], mul.operands[0])):
        big = splat_of(c)
        sub = defined_by(a, nn.SubOp)
        if big is None or big > BIG_NEGATIVE or sub is None or not is_splat(sub.operands[0], 1.0):
            continue
        inner = sub.operands[1]
        cast = defined_by(inner, nn.CastOp)
        if cast is not None:
            inner = cast.operands[0]
        reshape = defined_by(inner, nn.ReshapeOp)
        if reshape is None:
            continue
        mask = reshape.operands[0]
        if shape_of(mask) == (batch, keys):
            return mask
    return None


def additive_mask(value: SSAValue, batch: int, keys: int, params: Mapping[str, np.ndarray]
                  ) -> tuple[SSAValue | None, bool, int | None, bool] | None:
    """The key mask, causality, sliding window and polarity (whether the key mask is nonzero at
    the keys hidden) of an additive attention mask: HF's ``(1 - mask) * -big`` (`key_mask`),
    ``where(cond, 0, -big)`` with ``cond`` any spelling of a key mask and/or a causal triangle,
    maybe a band (`onnx_mask.key_mask_layout`), or copies of ``where(key_mask, 0, -big)`` or
    ``where(padding_mask, -big, 0)`` spread over heads and queries
    (`onnx_mask.additive_key_mask`)."""
    mask = key_mask(value, batch, keys)
    if mask is not None:
        return mask, False, None, False
    constant = constant_additive_layout(value, keys, BIG_NEGATIVE, params)
    if constant is not None:
        return None, constant.causal, constant.window, False
    spread = additive_key_mask(value, batch, keys, BIG_NEGATIVE, params)
    if spread is not None:
        return spread.source, False, None, spread.hides_where_true
    where = defined_by(value, nn.WhereOp)
    if where is None or splat_of(where.operands[1]) != 0.0:
        return None
    big = splat_of(where.operands[2])
    if big is None or big > BIG_NEGATIVE:
        return None
    layout = key_mask_layout(where.operands[0], params)
    if layout is None or (layout.source is not None and shape_of(layout.source)[0] != batch):
        return None
    if shape_of(where.operands[0])[3] != keys:
        return None
    return layout.source, layout.causal, layout.window, False


def attended_keys(padding: SSAValue) -> list[Operation]:
    """``where(padding, 0, 1)`` in f32: the key mask, nonzero at the keys attended, of a
    padding mask (nonzero at the keys hidden), and its constants."""
    shape = shape_of(padding)
    ops: list[Operation] = [
        nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, []), [v]))
        for v in (0.0, 1.0)
    ]
    ops.append(nn.WhereOp(padding, ops[0].results[0], ops[1].results[0],
                          TensorType(f32, shape)))
    return ops


def is_lower_triangular(value: SSAValue, size: int, params: Mapping[str, np.ndarray]) -> bool:
    """``value`` is a constant ``[1, 1, S, S]`` (or ``[S, S]``) boolean lower triangle."""
    shape = shape_of(value)
    if shape[-2:] != (size, size) or any(d != 1 for d in shape[:-2]):
        return False
    data = constant_array(value, params)
    if data is None:
        return False
    return bool((data.reshape(size, size).astype(bool) == np.tri(size, dtype=bool)).all())


def nan_guarded(value: SSAValue) -> SSAValue:
    """``p`` when ``value`` is ``where(isnan(p), 0, p)`` (the exporters' guard for a query
    whose every key is masked, which ``nn.attention`` gives zeros too), else ``value``."""
    where = single(value, nn.WhereOp)
    if where is None or splat_of(where.operands[1]) != 0.0:
        return value
    p = where.operands[2]
    cmp = defined_by(where.operands[0], nn.CmpOp)
    if (cmp is None or cmp.predicate.data != "ne"  # type: ignore[attr-defined]
            or cmp.operands[0] is not p or cmp.operands[1] is not p):
        return value
    if not all(use.operation in (cmp, where) for use in p.uses):
        return value
    return p


def uncast(value: SSAValue) -> SSAValue:
    """``x`` when ``value`` is ``x`` (f16 or bf16) widened to f32 by a cast read by nothing
    else (an exporter computing the softmax of a half-precision model in f32)."""
    cast = single(value, nn.CastOp)
    if cast is not None and element_of(cast.operands[0]) in HALF_TYPES and \
            element_of(value) == f32:
        return cast.operands[0]
    return value


def narrowed(value: SSAValue) -> SSAValue:
    """``p`` when ``value`` is ``p`` (f32) narrowed to f16 or bf16 by a cast read by nothing
    else (Hugging Face's eager attention computes the softmax of a half-precision model in f32
    and casts the probabilities back before the product with v)."""
    cast = single(value, nn.CastOp)
    if cast is not None and element_of(value) in HALF_TYPES and \
            element_of(cast.operands[0]) == f32:
        return cast.operands[0]
    return value


class RoundTripCast(RewritePattern):
    """``cast(cast(x))`` back to ``x``'s type through a wider float type -> ``x``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.CastOp):
            return
        inner = defined_by(op.operands[0], nn.CastOp)
        if inner is None or inner.operands[0].type != op.result.type:
            return
        if element_of(op.result) in HALF_TYPES and element_of(inner.results[0]) == f32:
            rewriter.replace_op(op, [], [inner.operands[0]])


def unscaled(value: SSAValue) -> tuple[SSAValue, float]:
    """``x`` and ``c`` when ``value`` is ``x`` times or divided by positive splat constants
    (``c`` their product), each step read by nothing else."""
    scale = 1.0
    while True:
        div = single(value, nn.DivOp)
        mul = single(value, nn.MulOp)
        if div is not None and (splat_of(div.operands[1]) or 0.0) > 0 and \
                shape_of(div.operands[0]) == shape_of(value):
            scale, value = scale / splat_of(div.operands[1]), div.operands[0]  # type: ignore
            continue
        if mul is not None:
            for x, c in commuted(mul):
                if (splat_of(c) or 0.0) > 0 and shape_of(x) == shape_of(value):
                    scale, value = scale * splat_of(c), x  # type: ignore[operator]
                    break
            else:
                return value, scale
            continue
        return value, scale


@dataclass
class ExportedAttention(RewritePattern):
    """The attention subgraph (see the module docstring) -> ``nn.attention``."""

    params: Mapping[str, np.ndarray]
    """The weights of the module's arguments, where a causal mask may be."""

    origins: dict[Operation, str] = field(default_factory=dict)
    """The ONNX node of each op (an attention is named after its softmax's)."""

    missed: dict[Operation, str] = field(default_factory=dict)
    """Why each softmax that ends an attention-like subgraph was not rewritten."""

    attended: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Padding mask -> the key mask made of it (`attended_keys`), shared by every layer."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        softmax = self.candidate(op)
        if softmax is None:
            return
        reason = self.rewrite(op, softmax, rewriter)
        if reason is not None:
            self.missed[softmax] = reason

    def candidate(self, op: Operation) -> nn.SoftmaxOp | None:
        """The softmax of ``reshape(moved(softmax(...) @ v))``, where the copies ``moved``
        merge the heads back into ``[B, S, H*D]`` (checked on element identities,
        `merged_context`), else None."""
        context = merged_context(op)
        if context is None:
            return None
        value = narrowed(context.operands[0])
        probabilities = nan_guarded(value)
        softmax = single(probabilities, nn.SoftmaxOp) if probabilities is value \
            else defined_by(probabilities, nn.SoftmaxOp)
        return softmax  # type: ignore[return-value]

    def rewrite(self, op: Operation, softmax: nn.SoftmaxOp,
                rewriter: PatternRewriter) -> str | None:
        """Rewrites the attention ending at ``op``; else why not."""
        context = merged_context(op)
        assert context is not None
        if softmax.axis.value.data % 4 != 3:  # type: ignore[attr-defined]
            return "the softmax is not over the keys (the last axis)"
        scores = uncast(softmax.operands[0])
        batch, heads, _, keys = shape_of(scores)
        mask: SSAValue | None = None
        causal, window = False, None
        add = single(scores, nn.AddOp)
        if add is not None:
            found = None
            for s, m in commuted(add):
                if shape_of(s) == shape_of(scores):
                    found = additive_mask(m, batch, keys, self.params)
                    if found is not None:
                        scores = s
                        break
            if found is None:
                return ("the mask added to the scores is not a key mask and/or the causal "
                        "triangle or a band of it (checked on its values)")
            mask, causal, window, hides = found
            if hides and mask is not None:
                keep = self.attended.get(mask)
                if keep is None:
                    made = attended_keys(mask)
                    rewriter.insert(made, InsertPoint.at_start(mask.block)
                                    if isinstance(mask, BlockArgument)
                                    else InsertPoint.after(mask.owner))  # type: ignore
                    keep = self.attended[mask] = made[-1].results[0]
                mask = keep
        where = single(scores, nn.WhereOp)
        if where is not None:
            big = splat_of(where.operands[2])
            if big is None or big > BIG_NEGATIVE or not is_lower_triangular(
                    where.operands[0], keys, self.params) or shape_of(scores)[2] != keys:
                return "the Where on the scores is not the causal triangle"
            causal, scores = True, where.operands[1]
        scores, scale = unscaled(uncast(scores))
        product = single(scores, nn.MatmulOp)
        if product is None:
            return "the scores are not a MatMul of q and kT (times constants)"
        q4, q_scale = unscaled(product.operands[0])
        k4, k_scale = unscaled(product.operands[1])
        v4 = uncast(context.operands[1])
        scale *= q_scale * k_scale
        if not q4.type.element_type == k4.type.element_type == v4.type.element_type:  # type: ignore
            return "q, k and v differ in element type"
        q_shape, k_shape, v_shape = shape_of(q4), shape_of(k4), shape_of(v4)
        if len(q_shape) != 4 or len(k_shape) != 4 or len(v_shape) != 4:
            return "q, k and v are not [B, H, S, D] (e.g. heads merged with the batch)"
        dim = q_shape[3]
        if (k_shape != (batch, heads, dim, keys) or v_shape != (batch, heads, keys, dim)
                or q_shape[:2] != (batch, heads)):
            return "q, k and v do not have the heads and sizes of the scores"
        q, k, v = (packed_operand(q4, False), packed_operand(k4, True),
                   packed_operand(v4, False))
        out_shape = shape_of(op.result)
        if out_shape[-1:] != (heads * dim,) or math.prod(out_shape) != math.prod(q_shape):
            return "the context is not merged back into [B, S, H*D]"
        default = 1.0 / math.sqrt(dim)
        attention = nn.AttentionOp(
            q.value, k.value, v.value, heads, dim, mask=mask,
            scale=None if math.isclose(scale, default, rel_tol=1e-6) else scale,
            causal=causal, window=window,
        )
        if softmax in self.origins:
            self.origins[attention] = self.origins[softmax]
        ops: list[Operation] = [*q.ops, *k.ops, *v.ops, attention]
        result_type = op.result.type
        if element_of(attention.result) != element_of(op.result):  # softmax computed wider
            ops.append(nn.CastOp(attention.result, TensorType(element_of(op.result),
                                                              shape_of(attention.result))))
        if out_shape != shape_of(ops[-1].results[0]):  # the context merged with the batch
            ops.append(nn.ReshapeOp(ops[-1].results[0], result_type))
        rewriter.replace(op, ops, [ops[-1].results[0]])
        return None


def merged_context(op: Operation) -> nn.MatmulOp | None:
    """The heads-first context ``[B, H, S, D]`` MatMul that ``op``, a reshape ending a chain of
    single-use copies, merges back into the attention's ``[B, S, H*D]`` order (whatever
    transposes and reshapes the exporter wrote: ``[0, 2, 1, 3]`` then a reshape, or torch's
    ``(S, B, H, D)`` with one batch), else None."""
    if not isinstance(op, nn.ReshapeOp):
        return None
    chain: list[Operation] = [op]
    value = op.input
    while len(chain) < MAX_DEPTH:
        owner = single(value, nn.MatmulOp)
        if owner is not None:
            break
        owner = single(value, nn.ReshapeOp) or single(value, nn.TransposeOp)
        if owner is None:
            return None
        chain.append(owner)
        value = owner.operands[0]
    else:
        return None
    if len(shape_of(value)) != 4 or math.prod(shape_of(value)) > MAX_ELEMENTS:
        return None
    ids = identities(value, chain[::-1])
    merged = np.arange(ids.size).reshape(shape_of(value)).transpose(0, 2, 1, 3)
    return owner if np.array_equal(ids.reshape(-1), merged.reshape(-1)) else None


RECOGNISED = {"nn.attention": "attention", "nn.gelu": "GELU", "nn.silu": "SiLU",
              "nn.rms_norm": "RMSNorm", "nn.layer_norm": "LayerNorm"}
"""The canonical ops the report lists as recognised (or imported from an ONNX op of that
name)."""

LEFT_AS_WRITTEN = {
    "nn.softmax": "not part of a recognised attention (its result is not multiplied by v and "
                  "merged back into [B, S, H*D])",
    "nn.erf": "not part of a recognised GELU",
    "nn.tanh": "not part of a recognised tanh GELU",
    "nn.sigmoid": "not part of a recognised SiLU",
    "nn.reduce_mean": "not part of a recognised RMSNorm (a mean of squares over the last axis)",
}
"""Ops whose presence after import means a decomposition was not recognised, and why."""


def repeats_heads(value: SSAValue) -> bool:
    """``value`` is packed (a reshape or transpose or two) from a gather (`onnx_heads`)."""
    for _ in range(3):
        if not isinstance(value, OpResult):
            return False
        if isinstance(value.op, nn.GatherOp):
            return True
        if not isinstance(value.op, (nn.ReshapeOp, nn.TransposeOp)):
            return False
        value = value.op.operands[0]
    return False


def describe(op: Operation) -> str:
    if isinstance(op, nn.AttentionOp):
        parts = [f"{op.num_heads.value.data} heads of {op.head_dim.value.data}"]
        if op.mask is not None:
            parts.append("key mask")
        if op.causal.value.data:
            parts.append("causal")
        if op.window_size() is not None:
            parts.append(f"sliding window of {op.window_size()} keys")
        if repeats_heads(op.k):
            parts.append("key/value heads repeated (grouped-query)")
        return ", ".join(parts)
    if isinstance(op, nn.GeluOp):
        return str(op.approximate.data)  # type: ignore[attr-defined]
    return ""


def canonicalize(module: ModuleOp, params: dict[str, np.ndarray],
                 origins: dict[Operation, str] | None = None) -> list[str]:
    """Applies the patterns above to ``module`` in place, then removes what they left dead:
    ops, and weight arguments nothing reads any more (from ``params`` too). Returns the report:
    one line per canonical op (``recognised``, with the ONNX node it came from, ``origins``)
    and per op left as written that a recognised form would have absorbed, with why."""
    origins = origins if origins is not None else {}
    attention = ExportedAttention(params, origins)

    def replaced(old: Operation, new_results: object) -> None:
        for value in new_results:  # type: ignore[attr-defined]
            if isinstance(value, OpResult) and value.op not in origins and old in origins:
                origins[value.op] = origins[old]
                for operand in value.op.operands:  # the ops made with it (packing, casts)
                    if isinstance(operand, OpResult) and operand.op not in origins:
                        origins[operand.op] = origins[old]

    listener = PatternRewriterListener()
    listener.operation_replacement_handler.append(replaced)
    walker = PatternRewriteWalker(
        GreedyRewritePatternApplier([ErfGelu(), TanhGelu(), Silu(), DecomposedRmsNorm(),
                                     attention, RoundTripCast()]),
        apply_recursively=True,
    )
    walker.listener = listener
    walker.rewrite_module(module)
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        region_dce(fn.body)
        block = fn.body.block
        for arg in reversed(block.args):
            if not arg.uses and arg.name_hint in params:
                del params[arg.name_hint]
                block.erase_arg(arg)
        outputs = fn.function_type.outputs.data
        fn.function_type = func.FunctionType.from_lists([a.type for a in block.args], outputs)
    return report(module, origins, attention.missed)


def report(module: ModuleOp, origins: Mapping[Operation, str],
           missed: Mapping[Operation, str]) -> list[str]:
    lines: list[str] = []
    counts: dict[str, int] = {}
    left = 0
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        for op in fn.body.block.ops:
            node = origins.get(op, "?")
            if op.name in RECOGNISED:
                kind = RECOGNISED[op.name]
                counts[kind] = counts.get(kind, 0) + 1
                detail = describe(op)
                lines.append(f"recognised: {kind} at node '{node}'"
                             + (f" ({detail})" if detail else ""))
            elif op.name in LEFT_AS_WRITTEN:
                left += 1
                why = missed.get(op, LEFT_AS_WRITTEN[op.name])
                lines.append(f"left as written: {op.name[3:]} at node '{node}': {why}")
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "nothing"
    lines.append(f"summary: recognised {summary}; {left} left as written")
    return lines
