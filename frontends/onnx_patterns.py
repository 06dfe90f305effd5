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
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import region_dce

from fusec.dialects import nn
from fusec.dialects.common import shape_of
from fusec.frontends.onnx_mask import constant_array, key_mask_layout

TOLERANCE = 1e-5


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
    found = splat_of(value)
    return found is not None and math.isclose(found, expected, rel_tol=TOLERANCE)


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


def heads_source(value: SSAValue, perm: list[int]) -> tuple[SSAValue, int, int] | None:
    """``x`` (``[B, S, H*D]``) when ``value`` is ``transpose(reshape(x, [B, S, H, D]), perm)``,
    with ``H`` and ``D``."""
    transpose = single(value, nn.TransposeOp)
    if transpose is None:
        return None
    inner = transpose.operands[0]
    if perm_of(transpose) == [0, 1, 3, 2] and perm == [0, 2, 3, 1]:  # k: two transposes
        first = single(inner, nn.TransposeOp)
        if first is None or perm_of(first) != [0, 2, 1, 3]:
            return None
        transpose, inner = first, first.operands[0]
    elif perm_of(transpose) != perm:
        return None
    reshape = single(inner, nn.ReshapeOp)
    if reshape is None:
        return None
    x = reshape.operands[0]
    split = shape_of(reshape.results[0])
    if len(split) != 4 or len(shape_of(x)) != 3:
        return None
    b, s, h, d = split
    if shape_of(x) != (b, s, h * d):
        return None
    return x, h, d


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


def additive_mask(value: SSAValue, batch: int, keys: int,
                  params: Mapping[str, np.ndarray]) -> tuple[SSAValue | None, bool] | None:
    """The key mask and causality of an additive attention mask: HF's ``(1 - mask) * -big``
    (`key_mask`), or ``where(cond, 0, -big)`` with ``cond`` any spelling of a key mask and/or
    a causal triangle (`onnx_mask.key_mask_layout`)."""
    mask = key_mask(value, batch, keys)
    if mask is not None:
        return mask, False
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
    return layout.source, layout.causal


def is_lower_triangular(value: SSAValue, size: int, params: Mapping[str, np.ndarray]) -> bool:
    """``value`` is a constant ``[1, 1, S, S]`` (or ``[S, S]``) boolean lower triangle."""
    shape = shape_of(value)
    if shape[-2:] != (size, size) or any(d != 1 for d in shape[:-2]):
        return False
    data = constant_array(value, params)
    if data is None:
        return False
    return bool((data.reshape(size, size).astype(bool) == np.tri(size, dtype=bool)).all())


def packed_heads(value: SSAValue, perm: list[int]) -> tuple[SSAValue, int, int,
                                                             list[Operation]] | None:
    """``value`` (heads-first: ``[B, H, S, D]``, or ``[B, H, D, S]`` for k) as
    ``[B, S, H*D]``: the ``x`` it was split from when it was (`heads_source`), else new ops
    that pack it back, e.g. after a rotary embedding applied in the heads-first layout.
    Returns the packed value, ``H``, ``D`` and the new ops (empty when none are needed)."""
    found = heads_source(value, perm)
    if found is not None:
        return (*found, [])
    shape = shape_of(value)
    if len(shape) != 4:
        return None
    to_tokens = [0, 2, 1, 3] if perm == [0, 2, 1, 3] else [0, 3, 1, 2]
    source = value
    inner = single(value, nn.TransposeOp)
    if perm != [0, 2, 1, 3] and inner is not None and perm_of(inner) == [0, 1, 3, 2]:
        source, to_tokens = inner.operands[0], [0, 2, 1, 3]  # k^T of a heads-first k
    b, h, s, d = shape_of(source) if to_tokens == [0, 2, 1, 3] else (
        shape[0], shape[1], shape[3], shape[2])
    elem = value.type.element_type  # type: ignore[attr-defined]
    transpose = nn.TransposeOp(source, to_tokens, TensorType(elem, [b, s, h, d]))
    reshape = nn.ReshapeOp(transpose.result, TensorType(elem, [b, s, h * d]))
    return reshape.result, h, d, [transpose, reshape]


@dataclass
class ExportedAttention(RewritePattern):
    """The attention subgraph (see the module docstring) -> ``nn.attention``."""

    params: Mapping[str, np.ndarray]
    """The weights of the module's arguments, where a causal mask may be."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.ReshapeOp):
            return
        out = single(op.input, nn.TransposeOp)
        if out is None or perm_of(out) != [0, 2, 1, 3]:
            return
        context = single(out.operands[0], nn.MatmulOp)
        if context is None:
            return
        softmax = single(context.operands[0], nn.SoftmaxOp)
        if softmax is None or softmax.axis.value.data % 4 != 3:  # type: ignore[attr-defined]
            return
        v_src = packed_heads(context.operands[1], [0, 2, 1, 3])
        if v_src is None:
            return
        v, heads, dim, new_ops = v_src
        scores = softmax.operands[0]
        batch = shape_of(scores)[0]
        keys = shape_of(scores)[3]
        mask: SSAValue | None = None
        causal = False
        add = single(scores, nn.AddOp)
        if add is not None:
            found = None
            for s, m in ((add.operands[0], add.operands[1]), (add.operands[1], add.operands[0])):
                if shape_of(s) == shape_of(scores):
                    found = additive_mask(m, batch, keys, self.params)
                    if found is not None:
                        scores = s
                        break
            if found is None:
                return
            mask, causal = found
        where = single(scores, nn.WhereOp)
        if where is not None:
            big = splat_of(where.operands[2])
            if big is None or big > BIG_NEGATIVE or not is_lower_triangular(
                    where.operands[0], keys, self.params) or shape_of(scores)[2] != keys:
                return
            causal, scores = True, where.operands[1]
        scale = 1.0
        div = single(scores, nn.DivOp)
        mul = single(scores, nn.MulOp)
        if div is not None and splat_of(div.operands[1]) not in (None, 0.0):
            scale, scores = 1.0 / splat_of(div.operands[1]), div.operands[0]  # type: ignore
        elif mul is not None:
            for s, c in ((mul.operands[0], mul.operands[1]), (mul.operands[1], mul.operands[0])):
                if splat_of(c) is not None and splat_of(c) > 0:  # type: ignore[operator]
                    scale, scores = splat_of(c), s  # type: ignore[assignment]
                    break
        product = single(scores, nn.MatmulOp)
        if product is None or scale <= 0:
            return
        q_src = packed_heads(product.operands[0], [0, 2, 1, 3])
        k_src = packed_heads(product.operands[1], [0, 2, 3, 1])
        if q_src is None or k_src is None:
            return
        q, k = q_src[0], k_src[0]
        if (q_src[1], q_src[2]) != (heads, dim) or (k_src[1], k_src[2]) != (heads, dim):
            return
        out_shape = shape_of(op.result)
        if shape_of(k) != shape_of(v) or out_shape[-1:] != shape_of(q)[-1:] or \
                math.prod(out_shape) != math.prod(shape_of(q)):
            return
        default = 1.0 / math.sqrt(dim)
        attention = nn.AttentionOp(
            q, k, v, heads, dim, mask=mask,
            scale=None if math.isclose(scale, default, rel_tol=1e-6) else scale,
            causal=causal,
        )
        ops: list[Operation] = [*q_src[3], *k_src[3], *new_ops, attention]
        if out_shape != shape_of(q):  # the context merged with the batch: [B*S, H*D]
            ops.append(nn.ReshapeOp(attention.result, op.result.type))
        rewriter.replace(op, ops, [ops[-1].results[0]])


def canonicalize(module: ModuleOp, params: dict[str, np.ndarray]) -> None:
    """Applies the patterns above to ``module`` in place, then removes what they left dead:
    ops, and weight arguments nothing reads any more (from ``params`` too)."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier([ErfGelu(), TanhGelu(), Silu(), DecomposedRmsNorm(),
                                     ExportedAttention(params)]),
        apply_recursively=True,
    ).rewrite_module(module)
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
