"""The converters of opset 23's fused attention ops: ``Attention`` (23, 24, 25) and
``RotaryEmbedding`` (23).

``Attention`` becomes one ``nn.attention`` when the op asks for what it computes: no mask or
a bool key mask (``[B|1, 1, 1, T]`` after broadcasting), causal without a past (or a single
query), the value heads as wide as the query heads, no softcap, no ``qk_matmul_output``, no
``nonpad_kv_seqlen`` and no window. Anything else is written out as the reference computes it
on ``[B, H, S, D]`` heads (``attention_math``): scores, softcap, the additive and bool masks,
the causal frontier offset by the past (or per batch by ``nonpad_kv_seqlen``), the window,
softmax, zeros for a query that sees no key, the product with v. The import's attention
recognition (`onnx_patterns`) may then still find an ``nn.attention`` in it. The key/value
cache is concatenated (``present_key``, ``present_value``).

``RotaryEmbedding`` is written as the elementwise ops the exporters write for it (narrows of
the two halves, or gathers of the even and odd features when interleaved, products with the
cos/sin caches, a concat), which the elementwise fusion computes in one kernel with its
neighbours (`passes/fuse_elementwise.py`): fusec has no rotary op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import i1
from xdsl.ir import SSAValue

from fusec.dialects import nn
from fusec.dialects.common import broadcast_shapes
from fusec.frontends.onnx_import import (
    ONNX_TYPES,
    Importer,
    Value,
    element_of,
    shape_of,
)
from fusec.frontends.onnx_ops import (
    attribute,
    broadcast,
    expand,
    matmul,
    narrow,
    reshape,
    splat,
    take,
    tensor_type,
    where,
)


def transpose(imp: Importer, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    shape = shape_of(x)
    t = tensor_type(element_of(x), [shape[p] for p in perm])
    return imp.emit(nn.TransposeOp(x, list(perm), t))


def heads_first(imp: Importer, x: SSAValue, heads: int, what: str) -> SSAValue:
    """``[B, S, heads*D]`` -> ``[B, heads, S, D]``."""
    b, s, hidden = shape_of(x)
    if heads <= 0 or hidden % heads:
        raise imp.error(f"{what} of width {hidden} does not split into {heads} heads")
    return transpose(imp, reshape(imp, x, (b, s, heads, hidden // heads)), (0, 2, 1, 3))


def heads_packed(imp: Importer, x: SSAValue) -> SSAValue:
    """``[B, H, S, D]`` -> ``[B, S, H*D]``."""
    b, h, s, d = shape_of(x)
    return reshape(imp, transpose(imp, x, (0, 2, 1, 3)), (b, s, h * d))


def concat(imp: Importer, parts: Sequence[SSAValue], axis: int) -> SSAValue:
    shape = list(shape_of(parts[0]))
    shape[axis] = sum(shape_of(p)[axis] for p in parts)
    return imp.emit(nn.ConcatOp(list(parts), axis, tensor_type(element_of(parts[0]), shape)))


def repeat_heads(imp: Importer, x: SSAValue, heads: int) -> SSAValue:
    """``[B, KV, T, D]`` -> ``[B, heads, T, D]``, query head ``h`` reading key head
    ``h // (heads / KV)``."""
    b, kv, t, d = shape_of(x)
    grown = expand(imp, reshape(imp, x, (b, kv, 1, t, d)), (b, kv, heads // kv, t, d))
    return reshape(imp, grown, (b, heads, t, d))


# --- Attention -----------------------------------------------------------------------------------


@dataclass
class AttentionNode:
    """One Attention node's operands as ``[B, H, S, D]`` heads, and its attributes."""

    q: SSAValue  # [B, H, S, D]
    k: SSAValue  # [B, KV, T, D], the past concatenated
    v: SSAValue  # [B, KV, T, Dv]
    packed_input: tuple[SSAValue, SSAValue, SSAValue] | None  # q, k, v given as [B, S, hidden]
    past: int  # keys from past_key
    mask: SSAValue | None
    nonpad: SSAValue | None  # [B] valid keys per batch (opset 24)
    scale: float
    causal: bool
    softcap: float
    mode: int  # qk_matmul_output_mode
    window: tuple[int, int]  # left, right (opset 25); -1 is unbounded
    softmax_type: object | None


def attention_operands(imp: Importer, node: object, args: list[Value | None]) -> AttentionNode:
    q, k, v = (imp.tensor(a) for a in args[:3])  # type: ignore[arg-type]
    given = (q, k, v)
    arg = [args[i] if len(args) > i else None for i in range(7)]
    ranks = {len(shape_of(t)) for t in (q, k, v)}
    if ranks == {3}:
        q_heads = int(attribute(node, "q_num_heads", 0))  # type: ignore[arg-type]
        kv_heads = int(attribute(node, "kv_num_heads", 0))  # type: ignore[arg-type]
        if not q_heads or not kv_heads:
            raise imp.error("3-D q, k and v need the q_num_heads and kv_num_heads attributes")
        q = heads_first(imp, q, q_heads, "q")
        k, v = heads_first(imp, k, kv_heads, "k"), heads_first(imp, v, kv_heads, "v")
    elif ranks != {4}:
        listed = ", ".join(str(list(shape_of(t))) for t in (q, k, v))
        raise imp.error(f"q, k and v must all be 3-D or all 4-D, not {listed}")
    past = 0
    if (arg[4] is None) != (arg[5] is None):
        raise imp.error("past_key and past_value must be given together")
    if arg[4] is not None:
        past_k, past_v = imp.tensor(arg[4]), imp.tensor(arg[5])  # type: ignore[arg-type]
        past = shape_of(past_k)[2]
        k, v = concat(imp, [past_k, k], 2), concat(imp, [past_v, v], 2)
    (b, heads, _, dim), (_, kv, _, _) = shape_of(q), shape_of(k)
    if heads % kv or shape_of(v)[1] != kv or shape_of(k)[0] != b or shape_of(k)[3] != dim:
        raise imp.error(f"q {list(shape_of(q))}, k {list(shape_of(k))} and v "
                        f"{list(shape_of(v))} (as heads) do not fit together")
    if arg[6] is not None and past:
        raise imp.error("nonpad_kv_seqlen cannot be combined with past_key and past_value")
    mode = int(attribute(node, "qk_matmul_output_mode", 0))  # type: ignore[arg-type]
    if mode not in (0, 1, 2, 3):
        raise imp.error(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    scale = attribute(node, "scale")
    precision = attribute(node, "softmax_precision")
    softmax_type = None
    if precision is not None:
        if int(precision) not in ONNX_TYPES:  # type: ignore[arg-type]
            raise imp.error(f"softmax_precision {precision} is not a type fusec computes in")
        softmax_type = ONNX_TYPES[int(precision)][1]  # type: ignore[arg-type]
    mask = None if arg[3] is None else imp.tensor(arg[3])  # type: ignore[arg-type]
    nonpad = None if arg[6] is None else imp.tensor(arg[6])  # type: ignore[arg-type]
    return AttentionNode(
        q=q, k=k, v=v, packed_input=given if ranks == {3} else None, past=past, mask=mask,
        nonpad=nonpad,
        scale=1.0 / math.sqrt(dim) if scale is None else float(scale),  # type: ignore[arg-type]
        causal=bool(attribute(node, "is_causal", 0)),
        softcap=float(attribute(node, "softcap", 0.0)),  # type: ignore[arg-type]
        mode=mode,
        window=(int(attribute(node, "left_window_size", -1)),  # type: ignore[arg-type]
                int(attribute(node, "right_window_size", -1))),  # type: ignore[arg-type]
        softmax_type=softmax_type,
    )


def key_mask(imp: Importer, a: AttentionNode) -> SSAValue | None:
    """A bool mask that hides keys alone (``[B|1, 1, 1, T]`` once its rank is 4) as
    ``nn.attention``'s ``[B, T]`` key mask; else None."""
    if a.mask is None or element_of(a.mask) != i1:
        return None
    b, t = shape_of(a.q)[0], shape_of(a.k)[2]
    shape = (1,) * (4 - len(shape_of(a.mask))) + tuple(shape_of(a.mask))
    if len(shape) != 4 or shape[1:] != (1, 1, t) or shape[0] not in (1, b):
        return None
    return expand(imp, reshape(imp, a.mask, (shape[0], t)), (b, t))


def as_one_op(imp: Importer, node: object, a: AttentionNode) -> SSAValue | None:
    """The attention as one ``nn.attention`` on packed heads (`module docstring`), or None."""
    (b, heads, seq, dim), (_, kv, _, _) = shape_of(a.q), shape_of(a.k)
    wants_scores = len(node.output) > 3 and bool(node.output[3])  # type: ignore[attr-defined]
    if (wants_scores or a.softcap > 0 or a.nonpad is not None or a.window != (-1, -1)
            or shape_of(a.v)[3] != dim or a.scale <= 0):
        return None
    mask = key_mask(imp, a)
    if a.mask is not None and mask is None:
        return None
    causal = a.causal
    if causal and a.past:  # the frontier offset by the past: only a single query sees all keys
        if seq != 1:
            return None
        causal = False
    q = a.packed_input[0] if a.packed_input is not None else heads_packed(imp, a.q)
    if a.packed_input is not None and not a.past:
        k, v = a.packed_input[1:]
    else:  # with a past, k and v are the concatenations
        k, v = heads_packed(imp, a.k), heads_packed(imp, a.v)
    out = imp.emit(nn.AttentionOp(q, k, v, heads, dim, mask, a.scale, causal, kv))
    if a.packed_input is not None:
        return out
    return transpose(imp, reshape(imp, out, (b, seq, heads, dim)), (0, 2, 1, 3))


def visible_keys(imp: Importer, a: AttentionNode) -> SSAValue | None:
    """Which keys each query sees by position ([Sq, T], or [B, 1, Sq, T] with
    ``nonpad_kv_seqlen``): the causal frontier and the window, at the offset of the past
    (``j <= i + offset``), and the keys before ``nonpad_kv_seqlen``; None for all."""
    seq, keys = shape_of(a.q)[2], shape_of(a.k)[2]
    rows, cols = np.arange(seq)[:, None], np.arange(keys)[None, :]
    if a.nonpad is None:
        diff = rows + a.past - cols  # query position minus key position
        shown = np.ones((seq, keys), bool)
        if a.causal:
            shown &= diff >= 0
        if a.window[0] >= 0:
            shown &= diff <= a.window[0]
        if a.window[1] >= 0:
            shown &= -diff <= a.window[1]
        return None if shown.all() else imp.tensor(shown)
    # per batch: offset[b] = nonpad[b] - seq; j <= i + offset[b] is j - i + seq <= nonpad[b]
    b = shape_of(a.q)[0]
    lengths = reshape(imp, a.nonpad, (b, 1, 1, 1))
    out = tensor_type(i1, (b, 1, seq, keys))
    shown = imp.emit(nn.CmpOp(imp.tensor(np.broadcast_to(cols, (seq, keys)).astype(np.int64)),
                              lengths, "lt", out))
    ahead = (cols - rows + seq).astype(np.int64)  # key position minus query position, + seq
    if a.causal:
        frontier = imp.emit(nn.CmpOp(imp.tensor(ahead), lengths, "le", out))
        shown = where(imp, shown, frontier, splat(imp, False, i1), out.get_shape())
    if a.window[0] >= 0:  # i + offset - j <= left: nonpad <= j - i + seq + left
        near = imp.emit(nn.CmpOp(lengths, imp.tensor(ahead + a.window[0]), "le", out))
        shown = where(imp, shown, near, splat(imp, False, i1), out.get_shape())
    if a.window[1] >= 0:  # j - i - offset <= right: j - i + seq - right <= nonpad
        near = imp.emit(nn.CmpOp(imp.tensor(ahead - a.window[1]), lengths, "le", out))
        shown = where(imp, shown, near, splat(imp, False, i1), out.get_shape())
    return shown


def padded_mask(imp: Importer, a: AttentionNode, mask: SSAValue) -> SSAValue:
    """A mask shorter than the keys padded with hidden keys (False, or -inf)."""
    keys, shape = shape_of(a.k)[2], list(shape_of(mask))
    if shape[-1] == keys:
        return mask
    if shape[-1] > keys:
        raise imp.error(f"attn_mask {shape} has more keys than the {keys} of k")
    pad = splat(imp, False if element_of(mask) == i1 else -math.inf, element_of(mask),
                [*shape[:-1], keys - shape[-1]])
    return concat(imp, [mask, pad], len(shape) - 1)


def attention_math(imp: Importer, a: AttentionNode) -> tuple[SSAValue, SSAValue]:
    """softmax(q kᵀ · scale [softcapped] + bias) v on ``[B, H, S, D]``, and the
    ``qk_matmul_output`` the node's mode asks for, as the ONNX reference computes them."""
    elem = element_of(a.q)
    heads = shape_of(a.q)[1]
    k, v = a.k, a.v
    if shape_of(k)[1] != heads:
        k, v = repeat_heads(imp, k, heads), repeat_heads(imp, v, heads)
    scores = matmul(imp, a.q, transpose(imp, k, (0, 1, 3, 2)))
    scores = imp.emit(nn.MulOp(scores, splat(imp, a.scale, elem), scores.type))
    if a.softcap > 0:
        cap = splat(imp, a.softcap, elem)
        scores = imp.emit(nn.MulOp(imp.emit(nn.TanhOp(imp.emit(nn.DivOp(
            scores, cap, scores.type)))), cap, scores.type))
    qk_output = scores
    minus_inf = splat(imp, -math.inf, elem)
    bias: SSAValue = splat(imp, 0.0, elem)
    shown = visible_keys(imp, a)
    if a.mask is not None:
        mask = padded_mask(imp, a, a.mask)
        if element_of(mask) == i1:
            shown = mask if shown is None else where(imp, shown, mask, splat(imp, False, i1))
        else:
            bias = mask if element_of(mask) == elem else imp.emit(
                nn.CastOp(mask, tensor_type(elem, shape_of(mask))))
    if shown is not None:
        bias = where(imp, shown, bias, minus_inf)
    biased = scores if shape_of(bias) == () else imp.emit(nn.AddOp(
        scores, bias, tensor_type(elem, broadcast(imp, scores, bias))))
    if a.mode == 2:
        qk_output = biased
    soft = biased
    if a.softmax_type is not None and a.softmax_type != elem:
        soft = imp.emit(nn.CastOp(soft, tensor_type(a.softmax_type, shape_of(soft))))
    weights = imp.emit(nn.SoftmaxOp(soft, len(shape_of(soft)) - 1))
    if weights is not soft and element_of(weights) != elem:
        weights = imp.emit(nn.CastOp(weights, tensor_type(elem, shape_of(weights))))
    if shape_of(bias) != ():  # a query whose every key the bias hides gets zeros
        row = [*shape_of(bias)[:-1], 1]
        row_max = imp.emit(nn.REDUCE_OPS["max"](bias, [len(row) - 1], tensor_type(elem, row),
                                                True))
        hidden = imp.emit(nn.CmpOp(row_max, minus_inf, "eq", tensor_type(i1, row)))
        weights = where(imp, hidden, splat(imp, 0.0, elem), weights, shape_of(weights))
    if a.mode == 3:
        qk_output = weights
    return matmul(imp, weights, v), qk_output


def convert_attention(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """Attention (opsets 23 to 25): see the module docstring."""
    a = attention_operands(imp, node, args)
    out = as_one_op(imp, node, a)
    scores: SSAValue | None = None
    if out is None:
        out, scores = attention_math(imp, a)
        if a.packed_input is not None:
            out = heads_packed(imp, out)
    results: list[Value] = [out, a.k, a.v]
    if scores is not None:
        results.append(scores)
    return results


# --- RotaryEmbedding -----------------------------------------------------------------------------


def convert_rotary_embedding(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """RotaryEmbedding (opset 23) on ``[B, H, S, D]`` or ``[B, S, H*D]`` (``num_heads``):
    the first ``rotary_embedding_dim`` features of each head (all without it) rotated in
    pairs (the two halves, or neighbours when ``interleaved``) by the cos/sin caches, at
    ``position_ids`` (a gather of the caches) or given per batch and position."""
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    cos, sin = imp.tensor(args[1]), imp.tensor(args[2])  # type: ignore[arg-type]
    positions = args[3] if len(args) > 3 else None
    elem, shape = element_of(x), shape_of(x)
    if len(shape) == 3:
        heads = int(attribute(node, "num_heads", 0))  # type: ignore[arg-type]
        if heads <= 0 or shape[2] % heads:
            raise imp.error(f"a 3-D input of width {shape[2]} needs num_heads dividing it")
        rows = reshape(imp, x, (shape[0], shape[1], heads, shape[2] // heads))  # [B, S, H, D]
        head_axis = 2
    elif len(shape) == 4:
        rows, head_axis = x, 1  # [B, H, S, D]
    else:
        raise imp.error(f"the input must be 3-D or 4-D, not {list(shape)}")
    dim = shape_of(rows)[3]
    rotated = int(attribute(node, "rotary_embedding_dim", 0)) or dim  # type: ignore[arg-type]
    if rotated % 2 or rotated > dim:
        raise imp.error(f"rotary_embedding_dim {rotated} must be even and at most the head "
                        f"size {dim}")
    half = rotated // 2
    if positions is not None:
        ids = imp.tensor(positions)
        table = shape_of(cos)
        cos, sin = (imp.emit(nn.GatherOp(c, ids, 0, tensor_type(
            element_of(c), [*shape_of(ids), *table[1:]]))) for c in (cos, sin))
    b, s = shape[0], shape[1] if len(shape) == 3 else shape[2]
    for c in (cos, sin):
        if broadcast_shapes(shape_of(c), (b, s, half)) != (b, s, half):
            raise imp.error(f"the cos/sin cache {list(shape_of(c))} must give [{b}, {s}, {half}]"
                            " (batch, position, rotary_embedding_dim / 2)")
    cos, sin = (reshape(imp, expand(imp, c, (b, s, half)),
                        (b, s, 1, half) if head_axis == 2 else (b, 1, s, half))
                for c in (cos, sin))
    if element_of(cos) != elem:
        cos, sin = (imp.emit(nn.CastOp(c, tensor_type(elem, shape_of(c)))) for c in (cos, sin))
    part = narrow(imp, rows, 3, 0, rotated)
    if attribute(node, "interleaved", 0):
        x1, x2 = take(imp, part, 3, range(0, rotated, 2)), take(imp, part, 3, range(1, rotated, 2))
    else:
        x1, x2 = narrow(imp, part, 3, 0, half), narrow(imp, part, 3, half, half)
    out_t = tensor_type(elem, shape_of(x1))

    def mul(p: SSAValue, q: SSAValue) -> SSAValue:
        return imp.emit(nn.MulOp(p, q, out_t))

    real = imp.emit(nn.SubOp(mul(cos, x1), mul(sin, x2), out_t))
    imag = imp.emit(nn.AddOp(mul(sin, x1), mul(cos, x2), out_t))
    if attribute(node, "interleaved", 0):
        pairs = [reshape(imp, t, (*shape_of(t), 1)) for t in (real, imag)]
        turned = reshape(imp, concat(imp, pairs, 4), shape_of(part))
    else:
        turned = concat(imp, [real, imag], 3)
    if rotated < dim:
        turned = concat(imp, [turned, narrow(imp, rows, 3, rotated, dim - rotated)], 3)
    return [reshape(imp, turned, shape)]
