"""numpy semantics of every ``nn`` op and of the structured ``fused`` ops.

Each op has an implementation ``impl(op, args) -> array`` in ``NN_IMPLS`` or ``FUSED_IMPLS``,
keyed by op class. ``args`` are the operands' arrays in their declared dtypes. An
implementation computes in float64 (int64 for integers) and returns an array of the result's
shape; the executor (``reference.py``) rounds it to the declared element type. So every op's
result is its exact value rounded once, and a fused op's result is rounded once where its
decomposition rounds after every step: the two agree to a few ulps.

The kernels (``gelu``, ``layer_norm``, ``attention``...) are plain functions of arrays, shared
by the nn ops and the fused ops that contain them.

Integer conventions (signless integers are signed): ``nn.div`` truncates toward zero, as C does;
division by zero gives 0. ``nn.cast`` to ``i1`` is ``x != 0``; to an integer it truncates toward
zero and saturates to the type's range, NaN giving 0 (`saturate_to_int`); to bf16 from an
integer it rounds through float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from fusec.dialects import fused, nn
from fusec.dialects.common import bool_prop, float_prop, int_prop, ints_prop, str_prop
from fusec.dialects.locations import first_place
from fusec.dtypes import BF16_HOST, bf16_bits, bf16_to_f32, round_bf16
from fusec.errors import FusecRuntimeError, IndexOutOfRangeError, InputError
from fusec.reference.image_normalize import run_image_normalize
from numpy.typing import NDArray
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation

Array = NDArray[np.generic]
OpImpl = Callable[[Operation, Sequence[Array]], Array]


class UnsupportedOpError(FusecRuntimeError):
    """An op (or a type) the numpy reference has no semantics for."""


# --- types -------------------------------------------------------------------------------------


def numpy_dtype(t: Attribute) -> np.dtype[np.generic]:
    """The numpy dtype of an element type's host arrays (``f32 -> float32``, ``i1 -> bool``,
    ``bf16 -> uint16`` bit patterns, see `fusec.dtypes`)."""
    if isinstance(t, TensorType):
        t = t.element_type
    if isinstance(t, BFloat16Type):
        return BF16_HOST
    return compute_dtype(t)


def compute_dtype(t: Attribute) -> np.dtype[np.generic]:
    """The numpy dtype the reference holds values of element type ``t`` in: the host dtype,
    except bf16, held as float32 values that bf16 represents exactly."""
    if isinstance(t, TensorType):
        t = t.element_type
    if isinstance(t, BFloat16Type):
        return np.dtype(np.float32)
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            return np.dtype(f"int{width}")
    raise UnsupportedOpError(f"the numpy reference has no dtype for type {t}")


def round_to_type(x: object, t: Attribute) -> Array:
    """``x`` rounded to element type ``t``, in its `compute_dtype` (bf16: to nearest even)."""
    if isinstance(t, TensorType):
        t = t.element_type
    if isinstance(t, BFloat16Type):
        return round_bf16(x)
    return np.asarray(x).astype(compute_dtype(t), copy=False)


def to_host(x: Array, t: Attribute) -> Array:
    """A value held in its `compute_dtype` as the caller's host array (bf16: bit patterns)."""
    if isinstance(t, TensorType):
        t = t.element_type
    return bf16_bits(x) if isinstance(t, BFloat16Type) else x


def from_host(x: Array, t: Attribute) -> Array:
    """A caller's host array as the reference holds it (bf16 bit patterns decoded)."""
    if isinstance(t, TensorType):
        t = t.element_type
    return bf16_to_f32(x) if isinstance(t, BFloat16Type) else x


def location_prefix(op: Operation) -> str:
    """``file:line:col: `` of ``op`` where it has a location, else nothing."""
    place = first_place(op.location)
    return "" if place is None else f"{place}: "


WIDE_FLOAT: ContextVar[type[np.floating]] = ContextVar("fusec_reference_wide_float",
                                                        default=np.float64)
"""The float dtype `wide` computes in: float64, except within `computing_in`."""


@contextmanager
def computing_in(dtype: type[np.floating]) -> Iterator[None]:
    """Within it, the reference computes floats in ``dtype`` rather than float64: e.g. in
    float32, every step of an op rounded to float32 as a plain float32 kernel's are (the fuzz
    oracle's test of whether a kernel's difference is one of float32 range, `fuzz.oracle`)."""
    token = WIDE_FLOAT.set(dtype)
    try:
        yield
    finally:
        WIDE_FLOAT.reset(token)


def wide(x: Array) -> Array:
    """``x`` in float64 (floats; see `computing_in`) or int64 (integers); booleans stay
    booleans."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return x.astype(WIDE_FLOAT.get())
    if x.dtype.kind in "iu":
        return x.astype(np.int64)
    return x


def along(v: Array, axis: int, rank: int) -> Array:
    """A 1-D ``v`` shaped to broadcast along ``axis`` of a rank-``rank`` array."""
    shape = [1] * rank
    shape[axis % rank] = v.shape[0]
    return v.reshape(shape)


# --- kernels -----------------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x: Array) -> Array:
    """The error function, elementwise, in float64 (no scipy)."""
    return _erf(np.asarray(x, np.float64))


def sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def silu(x: Array) -> Array:
    return x * sigmoid(x)


def gelu(x: Array, approximate: str = "none") -> Array:
    """GELU: the erf form for ``"none"``, the tanh approximation for ``"tanh"``,
    ``0.5 x (1 + tanh(z))`` computed as ``x / (1 + exp(-2 z))``: the same value, without the
    cancellation of ``1 + tanh(z)`` for very negative ``z`` (to 0 in float64 below about -19)."""
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
        with np.errstate(over="ignore"):
            return x / (1.0 + np.exp(-2.0 * inner))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def maximum(a: Array, b: Array) -> Array:
    """IEEE 754-2019 ``maximum`` (MLIR's ``arith.maximumf``): NaN if either operand is NaN,
    and -0 < +0, so ``maximum(-0, +0)`` is +0 in either order. numpy's ``maximum`` returns its
    second operand for equal zeros, which makes a reduction's sign of zero depend on the order."""
    return _signed_zeros(np.maximum(a, b), a, b, negative=np.logical_and)


def minimum(a: Array, b: Array) -> Array:
    """IEEE 754-2019 ``minimum``: NaN if either operand is NaN, ``minimum(-0, +0)`` is -0."""
    return _signed_zeros(np.minimum(a, b), a, b, negative=np.logical_or)


def _signed_zeros(result: Array, a: Array, b: Array, negative: Callable[..., Array]) -> Array:
    """``result`` with each zero of two zero operands signed -0 where ``negative`` of their
    sign bits holds (both for maximum, either for minimum), else +0."""
    result = np.array(result)
    if result.dtype.kind != "f":
        return result
    both_zero = np.broadcast_to((a == 0) & (b == 0), result.shape)
    sign = np.broadcast_to(negative(np.signbit(a), np.signbit(b)), result.shape)
    result[both_zero] = np.where(sign[both_zero], -0.0, 0.0)
    return result


def relu(x: Array) -> Array:
    return maximum(x, np.zeros((), x.dtype))


def rsqrt(x: Array) -> Array:
    return 1.0 / np.sqrt(x)


def int_div(a: Array, b: Array) -> Array:
    """Integer division truncating toward zero (C); a zero divisor gives 0."""
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, (a - np.fmod(a, safe)) // safe)


def divide(a: Array, b: Array) -> Array:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return int_div(a, b)
    return a / b


def matmul(a: Array, b: Array) -> Array:
    """``a: [..., M, K] @ b: [K, N] | [..., K, N]``."""
    return np.matmul(a, b)


def layer_norm(x: Array, gamma: Array, beta: Array, axis: int = -1, eps: float = 1e-5) -> Array:
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over ``axis``; biased variance."""
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * along(gamma, axis, x.ndim) + along(beta, axis, x.ndim)


def rms_norm(x: Array, gamma: Array, axis: int = -1, eps: float = 1e-6) -> Array:
    """``x / sqrt(mean(x^2) + eps) * gamma`` over ``axis``."""
    ms = (x * x).mean(axis=axis, keepdims=True)
    return x / np.sqrt(ms + eps) * along(gamma, axis, x.ndim)


def softmax(x: Array, axis: int = -1) -> Array:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention(
    q: Array,
    k: Array,
    v: Array,
    mask: Array | None,
    num_heads: int,
    head_dim: int,
    scale: float,
    causal: bool = False,
    visible: Array | None = None,
    window: int | None = None,
) -> Array:
    """Multi-head attention, heads packed in the last dimension (see ``nn.attention``).

    ``q: [B, S, H*D]``, ``k, v: [B, Sk, H*D]``, ``mask: [B, Sk]`` (0 = masked). ``causal``
    hides key ``j > i`` from query ``i``; ``visible: [S, Sk]`` (if given) hides the keys that are
    False in query's row; ``window`` (with ``causal``) hides keys ``j <= i - window`` too. Hidden
    keys get weight 0; a query with no visible key yields zeros.
    """
    batch, seq, _ = q.shape
    keys = k.shape[1]

    def heads(t: Array) -> Array:  # [B, S, H*D] -> [B, H, S, D]
        return t.reshape(t.shape[0], t.shape[1], num_heads, head_dim).transpose(0, 2, 1, 3)

    scores = np.matmul(heads(q), heads(k).transpose(0, 1, 3, 2)) * scale  # [B, H, S, Sk]
    shown = np.ones((seq, keys), dtype=bool) if visible is None else visible
    visible = np.broadcast_to(shown[None, None], (batch, 1, seq, keys)).copy()
    if mask is not None:
        visible &= (mask != 0)[:, None, None, :]
    if causal:
        visible &= np.tril(np.ones((seq, keys), dtype=bool))[None, None]
    if window is not None:
        visible &= ~np.tril(np.ones((seq, keys), dtype=bool), -window)[None, None]
    hidden = np.where(visible, scores, -np.inf)
    row_max = hidden.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    weights = np.where(visible, np.exp(scores - row_max), 0.0)
    total = weights.sum(axis=-1, keepdims=True)
    weights = weights / np.where(total == 0, 1.0, total)
    out = np.matmul(weights, heads(v))  # [B, H, S, D]
    return out.transpose(0, 2, 1, 3).reshape(batch, seq, num_heads * head_dim)


def reduce(x: Array, kind: str, axes: Sequence[int], keepdims: bool) -> Array:
    """``kind`` (sum, mean, max, min) over ``axes``."""
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[kind]
    result = fn(x, axis=tuple(axes), keepdims=keepdims)
    if kind in ("max", "min") and x.dtype.kind == "f":
        # a zero result is signed as IEEE 754-2019 maximum/minimum fold it in any order:
        # max is +0 if any element is +0, min is -0 if any element is -0
        zero = (x == 0) & (np.signbit(x) == (kind == "min"))
        either = np.any(zero, axis=tuple(axes), keepdims=keepdims)
        result = np.array(result)
        result[result == 0] = -0.0 if kind == "max" else 0.0
        result[(result == 0) & either] = 0.0 if kind == "max" else -0.0
    return result


# Activation name (fused.ACTIVATIONS) -> kernel.
ACTIVATIONS: dict[str, Callable[[Array], Array]] = {
    "none": lambda x: x,
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": lambda x: gelu(x, "tanh"),
    "silu": silu,
    "sigmoid": sigmoid,
    "tanh": np.tanh,
}


def linear(x: Array, w: Array, b: Array) -> Array:
    return matmul(x, w) + b


# --- nn ops ------------------------------------------------------------------------------------

BINARY: dict[type[Operation], Callable[[Array, Array], Array]] = {
    nn.AddOp: np.add,
    nn.SubOp: np.subtract,
    nn.MulOp: np.multiply,
    nn.DivOp: divide,
    nn.MaxOp: maximum,
    nn.MinOp: minimum,
    nn.PowOp: np.power,
}

UNARY: dict[type[Operation], Callable[[Array], Array]] = {
    nn.ReluOp: relu,
    nn.SiluOp: silu,
    nn.SigmoidOp: sigmoid,
    nn.TanhOp: np.tanh,
    nn.ExpOp: np.exp,
    nn.LogOp: np.log,
    nn.SqrtOp: np.sqrt,
    nn.RsqrtOp: rsqrt,
    nn.NegOp: np.negative,
    nn.AbsOp: np.abs,
    nn.ErfOp: erf,
    nn.SinOp: np.sin,
    nn.CosOp: np.cos,
}

CMP: dict[str, Callable[[Array, Array], Array]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def binary_impl(fn: Callable[[Array, Array], Array]) -> OpImpl:
    return lambda op, args: fn(wide(args[0]), wide(args[1]))


def unary_impl(fn: Callable[[Array], Array]) -> OpImpl:
    return lambda op, args: fn(wide(args[0]))


def saturate_to_int(x: Array, dtype: np.dtype[np.generic]) -> Array:
    """``x`` (floats or integers) truncated toward zero and clamped to the range of the integer
    ``dtype``; NaN gives 0. What ``nn.cast`` to an integer type computes."""
    info = np.iinfo(dtype)  # type: ignore[type-var]
    x = wide(x)
    if x.dtype.kind == "f":
        x = np.where(np.isnan(x), 0.0, np.clip(np.trunc(x), info.min, info.max))
    else:
        x = np.clip(x, info.min, info.max)
    return x.astype(dtype)


def run_cast(op: Operation, args: Sequence[Array]) -> Array:
    target = compute_dtype(op.results[0].type)
    x = np.asarray(args[0])
    if target == np.bool_:
        return x != 0
    if target.kind in "iu" and x.dtype != np.bool_:
        return saturate_to_int(x, target)
    return x.astype(target)


def run_constant(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, nn.ConstantOp)
    value: DenseIntOrFPElementsAttr = op.value
    element = value.get_element_type()
    data = np.array(value.get_values())
    if compute_dtype(element) == np.bool_:
        data = data != 0
    return round_to_type(data, element).reshape(value.get_shape())


def run_narrow(op: Operation, args: Sequence[Array]) -> Array:
    x = args[0]
    start, length = int_prop(op, "start"), int_prop(op, "length")
    index = [slice(None)] * x.ndim
    index[int_prop(op, "axis")] = slice(start, start + length)
    return x[tuple(index)]


def run_gather(op: Operation, args: Sequence[Array]) -> Array:
    """``np.take`` along ``axis``; a negative index counts from the end, one outside
    ``[-dim, dim)`` is an `IndexOutOfRangeError` naming the first (row-major)."""
    data, indices = args
    axis = int_prop(op, "axis") % data.ndim
    dim = data.shape[axis]
    bad = (indices < -dim) | (indices >= dim)
    if bad.any():
        flat = int(np.argmax(bad.reshape(-1)))
        position = tuple(int(i) for i in np.unravel_index(flat, indices.shape))
        name = getattr(op.operands[1], "name_hint", None)
        is_argument = isinstance(op.operands[1], BlockArgument) and name
        raise IndexOutOfRangeError(
            indices=f"input '{name}'" if is_argument else "the indices", position=position,
            value=int(indices.reshape(-1)[flat]), dim=dim, axis=axis,
            place=first_place(op.location))
    return np.take(data, indices, axis=axis)


def repeated_heads(t: Array, num_heads: int, num_kv_heads: int, head_dim: int) -> Array:
    """``[B, T, KV*D] -> [B, T, H*D]``: each kv head once per query head of its group."""
    b, rows, _ = t.shape
    heads = t.reshape(b, rows, num_kv_heads, 1, head_dim)
    group = num_heads // num_kv_heads
    return np.broadcast_to(heads, (b, rows, num_kv_heads, group, head_dim)).reshape(
        b, rows, num_heads * head_dim)


def run_attention(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, nn.AttentionOp)
    q, k, v = (wide(a) for a in args[:3])
    mask = args[3] if op.mask is not None else None
    heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
    # rounded to q's type (the executor widens it to an f32 result: a cast the op stores)
    return round_to_type(attention(
        q,
        repeated_heads(k, heads, op.kv_heads(), dim),
        repeated_heads(v, heads, op.kv_heads(), dim),
        mask,
        int_prop(op, "num_heads"),
        int_prop(op, "head_dim"),
        op.scale_value(),
        bool_prop(op, "causal"),
        window=op.window_size(),
    ), op.q.type)


def cache_attention(q: Array, k_cache: Array, v_cache: Array, pos: int, num_heads: int,
                    num_kv_heads: int, head_dim: int, scale: float) -> Array:
    """``nn.cache_attention``: query ``i`` at position ``pos + i`` sees cache rows
    ``[0, pos + i]``; query head ``h`` reads kv head ``h // (num_heads // num_kv_heads)``."""
    seq = q.shape[1]

    def repeated(t: Array) -> Array:
        return repeated_heads(t, num_heads, num_kv_heads, head_dim)

    valid = pos + seq  # the rows past it are never read (they may hold anything)
    visible = np.arange(valid)[None, :] <= pos + np.arange(seq)[:, None]  # [S, pos + S]
    return attention(q, repeated(k_cache[:, :valid]), repeated(v_cache[:, :valid]), None,
                     num_heads, head_dim, scale, visible=visible)


def check_cache_position(op: Operation, pos: int, rows: int, length: int) -> None:
    """An InputError at ``op`` unless ``rows`` new rows at ``pos`` lie in a cache of
    ``length``."""
    if not 0 <= pos <= length - rows:
        raise InputError(f"{location_prefix(op)}'{op.name}' position {pos} is outside the cache: "
                         f"{rows} rows at it need 0 <= pos <= {length - rows}")


def run_cache_update(op: Operation, args: Sequence[Array]) -> Array:
    cache, update, pos = args
    axis = int_prop(op, "axis") % cache.ndim
    rows, length = update.shape[axis], cache.shape[axis]
    check_cache_position(op, int(pos), rows, length)
    out = np.array(cache)
    index = [slice(None)] * cache.ndim
    index[axis] = slice(int(pos), int(pos) + rows)
    out[tuple(index)] = update
    return out


def run_cache_attention(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, nn.CacheAttentionOp)
    q, k_cache, v_cache = (wide(a) for a in args[:3])
    pos = int(args[3])
    check_cache_position(op, pos, q.shape[1], k_cache.shape[1])
    return cache_attention(q, k_cache, v_cache, pos, int_prop(op, "num_heads"),
                           int_prop(op, "num_kv_heads"), int_prop(op, "head_dim"),
                           op.scale_value())


def run_argmax(op: Operation, args: Sequence[Array]) -> Array:
    return np.argmax(wide(args[0]), axis=int_prop(op, "axis")).astype(np.int32)


def run_reduce(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, nn.ReduceOp)
    return reduce(wide(args[0]), op.KIND, ints_prop(op, "axes"), bool_prop(op, "keepdims"))


NN_IMPLS: dict[type[Operation], OpImpl] = {
    **{cls: binary_impl(fn) for cls, fn in BINARY.items()},
    **{cls: unary_impl(fn) for cls, fn in UNARY.items()},
    nn.GeluOp: lambda op, a: gelu(wide(a[0]), str_prop(op, "approximate")),
    nn.CastOp: run_cast,
    nn.CmpOp: lambda op, a: CMP[str_prop(op, "predicate")](wide(a[0]), wide(a[1])),
    nn.WhereOp: lambda op, a: np.where(a[0], a[1], a[2]),
    nn.ConstantOp: run_constant,
    nn.MatmulOp: lambda op, a: matmul(wide(a[0]), wide(a[1])),
    nn.TransposeOp: lambda op, a: np.transpose(a[0], ints_prop(op, "perm")),
    nn.ReshapeOp: lambda op, a: np.reshape(a[0], op.results[0].type.get_shape()),  # type: ignore
    nn.NarrowOp: run_narrow,
    nn.ConcatOp: lambda op, a: np.concatenate(list(a), axis=int_prop(op, "axis")),
    nn.GatherOp: run_gather,
    nn.LayerNormOp: lambda op, a: layer_norm(
        *(wide(x) for x in a), int_prop(op, "axis"), float_prop(op, "eps")
    ),
    nn.RmsNormOp: lambda op, a: rms_norm(
        *(wide(x) for x in a), int_prop(op, "axis"), float_prop(op, "eps")
    ).reshape(op.results[0].type.get_shape()),  # type: ignore  # may flatten leading dims
    nn.SoftmaxOp: lambda op, a: softmax(wide(a[0]), int_prop(op, "axis")),
    **{cls: run_reduce for cls in nn.REDUCE_OPS.values()},
    nn.AttentionOp: run_attention,
    nn.CacheUpdateOp: run_cache_update,
    nn.CacheAttentionOp: run_cache_attention,
    nn.ArgmaxOp: run_argmax,
}


# --- structured fused ops ----------------------------------------------------------------------


def run_swiglu(op: Operation, args: Sequence[Array]) -> Array:
    cat = wide(args[0])
    half = cat.shape[-1] // 2
    first, second = cat[..., :half], cat[..., half:]
    up, gate = (second, first) if bool_prop(op, "gate_first") else (first, second)
    return up * silu(gate)


def attention_block(op: Operation, hidden: Array, mask: Array, weights: Sequence[Array]) -> Array:
    """``attention(split(hidden @ qkv_w + qkv_b), mask) @ out_w + out_b``, default scale."""
    qkv_w, qkv_b, out_w, out_b = weights
    heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
    h = heads * dim
    qkv = linear(hidden, qkv_w, qkv_b)
    q, k, v = qkv[..., :h], qkv[..., h : 2 * h], qkv[..., 2 * h :]
    attn = attention(q, k, v, mask, heads, dim, 1.0 / math.sqrt(dim))
    return linear(attn, out_w, out_b)


def run_attention_block(op: Operation, args: Sequence[Array]) -> Array:
    hidden, qkv_w, qkv_b, out_w, out_b = (wide(a) for a in args[:5])
    return attention_block(op, hidden, args[5], (qkv_w, qkv_b, out_w, out_b))


def run_transformer_layer(op: Operation, args: Sequence[Array]) -> Array:
    hidden, mask = wide(args[0]), args[1]
    qkv_w, qkv_b, out_w, out_b, ln1_g, ln1_b, fc1_w, fc1_b, fc2_w, fc2_b, ln2_g, ln2_b = (
        wide(a) for a in args[2:]
    )
    attn = attention_block(op, hidden, mask, (qkv_w, qkv_b, out_w, out_b))
    h1 = layer_norm(attn + hidden, ln1_g, ln1_b, -1, float_prop(op, "eps1"))
    act = ACTIVATIONS[str_prop(op, "activation")]
    ffn = linear(act(linear(h1, fc1_w, fc1_b)), fc2_w, fc2_b)
    return layer_norm(ffn + h1, ln2_g, ln2_b, -1, float_prop(op, "eps2"))


FUSED_IMPLS: dict[type[Operation], OpImpl] = {
    fused.MatmulBiasActOp: lambda op, a: ACTIVATIONS[str_prop(op, "activation")](
        linear(wide(a[0]), wide(a[1]), wide(a[2]))
    ),
    fused.ResidualLayerNormOp: lambda op, a: layer_norm(
        wide(a[0]) + wide(a[1]), wide(a[2]), wide(a[3]), -1, float_prop(op, "eps")
    ),
    fused.ResidualRmsNormOp: lambda op, a: rms_norm(
        wide(a[0]) + wide(a[1]), wide(a[2]), -1, float_prop(op, "eps")
    ),
    fused.SwigluOp: run_swiglu,
    fused.AttentionBlockOp: run_attention_block,
    fused.TransformerLayerOp: run_transformer_layer,
    fused.ImageNormalizeOp: run_image_normalize,
}
