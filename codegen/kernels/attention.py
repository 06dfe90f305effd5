"""Multi-head scaled dot-product attention with the heads packed in the last dimension.

``out[b, i, h*D:(h+1)*D] = sum_j softmax_j(scale * q_h[b, i] . k_h[b, j]) * v_h[b, j]`` where key
``j`` is visible to query ``i`` unless ``mask[b, j] == 0`` or (``causal``) ``j > i``. A query
that sees no key gets zeros. ``q: [B, S_q, H*D]``, ``k, v: [B, S_k, H*D]``, optional
``mask: [B, S_k]`` (any element type, 0 = masked), ``out: [B, S_q, H*D]`` contiguous.

q, k and v are read through `HeadsLayout`s, so that they may be views of one packed buffer:
with ``qkv: [B, S, 3*H*D]`` pass the same buffer three times with row stride ``3*H*D`` and
column offsets ``0``, ``H*D`` and ``2*H*D``.

Parameters in order: ``q``, ``k``, ``v``, ``mask`` (if `has_mask`), ``out``.

One work-group per (batch * head, block of `block_q` queries), one work-item per query. The
work-group walks the keys in tiles of `block_k`: it stages the tile's K and V rows (and the
mask) in local memory, each work-item scores its query against the tile (scores go to local
memory, one column per work-item) and folds the tile into its running output with an online
softmax (running max and sum; the output is rescaled when the max grows). Scores never leave
the chip. With ``causal``, tiles past the block's last query are skipped.

The query and the output accumulator are ``head_dim`` named scalars (the loops over the head
dimension are unrolled here, not left to the OpenCL compiler): a private array indexed in a
loop becomes gathers and scatters when Intel's CPU compiler vectorises across work-items
(measured 0.7 GFLOP/s), while scalars map to registers on a GPU and to SIMD lanes on a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    check_positive,
    float_literal,
    kernel_signature,
    round_up,
)

MASK_DTYPES = ("float", "double", "int", "uint", "char", "uchar", "short", "ushort", "long",
               "ulong")


def grouped_kv_heads(name: str, num_heads: int, kv_heads: int | None) -> tuple[int, str]:
    """The key/value heads of a grouped-query attention (None: one per query head) and the
    OpenCL expression of query head ``h``'s key/value head; a count that does not divide
    ``num_heads`` is a ValueError."""
    kv_heads = num_heads if kv_heads is None else kv_heads
    if kv_heads <= 0 or num_heads % kv_heads:
        raise ValueError(f"kernel '{name}': kv_heads {kv_heads} does not divide num_heads "
                         f"{num_heads}")
    return kv_heads, "h" if kv_heads == num_heads else f"(h / {num_heads // kv_heads})"


def attention_args(name: str, has_mask: bool, mask_dtype: str,
                   dtype: str, cache_position: bool = False,
                   out_dtype: str | None = None) -> tuple[KernelArg, ...]:
    """The parameters of an attention kernel (`attention`, `attention_tiled`): q, k, v of
    element type `dtype`, the cache position ``pos`` (an int) when `cache_position`, the mask
    of `mask_dtype` when `has_mask`, out of `out_dtype` (default `dtype`; f32 for 16-bit
    operands, `half.store_rounded`); a ValueError for a type neither takes."""
    if mask_dtype not in MASK_DTYPES:
        raise ValueError(f"kernel '{name}': mask_dtype '{mask_dtype}' is not one of "
                         f"{MASK_DTYPES}")
    storage = half.check_dtype(name, dtype)
    out_dtype = out_dtype or dtype
    if out_dtype != dtype and not (half.is_half(dtype) and out_dtype == "f32"):
        raise ValueError(f"kernel '{name}': a {dtype} attention stores {dtype} or (16-bit "
                         f"operands) f32, not '{out_dtype}'")
    return (
        KernelArg("q", "in", storage),
        KernelArg("k", "in", storage),
        KernelArg("v", "in", storage),
        *((KernelArg("pos", "in", "int"),) if cache_position else ()),
        *((KernelArg("mask", "in", mask_dtype),) if has_mask else ()),
        KernelArg("out", "out", half.STORAGE[out_dtype]),
    )


def header_flags(causal: bool, has_mask: bool, mask_dtype: str, dtype: str) -> str:
    """The options an attention kernel's first comment line lists after its sizes."""
    flags = ", causal" if causal else ""
    flags += f", mask ({mask_dtype})" if has_mask else ""
    return flags + (f", {dtype}" if dtype != "f32" else "")


@dataclass(frozen=True)
class HeadsLayout:
    """Where the elements of a ``[B, S, H*D]`` operand lie in its buffer: element
    ``(b, s, c)`` is at ``b * batch_stride + s * row_stride + column_offset + c``."""

    row_stride: int | None = None
    """Elements between consecutive sequence positions; default ``H*D`` (contiguous)."""
    column_offset: int = 0
    batch_stride: int | None = None
    """Elements between consecutive batches; default ``S * row_stride``."""

    def resolved(self, seq: int, width: int) -> tuple[int, int, int]:
        """(batch_stride, row_stride, column_offset) for `seq` positions of `width` columns."""
        row_stride = width if self.row_stride is None else self.row_stride
        batch_stride = seq * row_stride if self.batch_stride is None else self.batch_stride
        if row_stride < width or self.column_offset < 0 or batch_stride < 0:
            raise ValueError(f"layout {self} cannot hold rows of {width} elements")
        return batch_stride, row_stride, self.column_offset


CONTIGUOUS = HeadsLayout()

KEY_UNROLL = 4
"""Keys scored and accumulated together: each query element and accumulator is loaded once per
four keys (they spill on a CPU), and the four dot products are independent FMA chains."""


def _unrolled(count: int, line: str) -> str:
    """`line` once per ``i < count`` (``{i}`` in it is replaced), one per line."""
    return "".join(line.format(i=i) + "\n" for i in range(count))


def _unrolled_keys(count: int, keys: int, statement: str, indent: str) -> str:
    """One line per ``i < count`` holding `statement` for each key ``u < keys``."""
    return "".join(
        indent + " ".join(statement.format(i=i, u=u) for u in range(keys)) + "\n"
        for i in range(count))


def _chained_mads(keys: int) -> str:
    """``mad(p_3, v_row_3[{i}], ... mad(p_0, v_row_0[{i}], acc_{i}))`` over `keys` keys."""
    text = "acc_{i}"
    for u in range(keys):
        text = f"mad(p_{u}, v_row_{u}[{{i}}], {text})"
    return text


def attention(
    name: str,
    batch: int,
    seq_q: int,
    seq_k: int,
    num_heads: int,
    head_dim: int,
    scale: float,
    causal: bool = False,
    has_mask: bool = False,
    q_layout: HeadsLayout = CONTIGUOUS,
    k_layout: HeadsLayout = CONTIGUOUS,
    v_layout: HeadsLayout = CONTIGUOUS,
    mask_dtype: str = "float",
    block_q: int | None = None,
    block_k: int | None = None,
    dtype: str = "f32",
    kv_heads: int | None = None,
    cache_position: bool = False,
    window: int | None = None,
    out_dtype: str | None = None,
) -> KernelSource:
    """An attention kernel; see the module docstring for the operands and the algorithm.
    `dtype` is the element type of q, k, v and out: f32, or f16/bf16 read into float32
    registers and the output rounded once when stored. `kv_heads` (default `num_heads`, a
    divisor of it): k and v hold that many heads, query head ``h`` reads head
    ``h / (num_heads / kv_heads)``. With `cache_position` the kernel takes ``pos`` (one int in
    a buffer, after v): query ``i`` stands at position ``pos + i`` of a KV cache and sees keys
    ``[0, pos + i]`` (``nn.cache_attention``; `causal` is implied). With `window` (and
    `causal`) query ``i`` sees keys ``(i - window, i]`` only. `out_dtype` (default `dtype`,
    f32 for 16-bit operands) is out's type: the output rounded to `dtype`, then stored wider."""
    kv_heads = num_heads if kv_heads is None else kv_heads
    check_positive(name, batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=num_heads,
                   head_dim=head_dim, kv_heads=kv_heads)
    if num_heads % kv_heads:
        raise ValueError(f"kernel '{name}': kv_heads {kv_heads} does not divide num_heads "
                         f"{num_heads}")
    causal = causal or cache_position
    args = attention_args(name, has_mask, mask_dtype, dtype, cache_position, out_dtype)
    storage, out_storage = args[0].dtype, args[-1].dtype
    stored = out_dtype or dtype
    bq = block_q if block_q is not None else min(64, seq_q)
    bk = block_k if block_k is not None else min(seq_k, max(1, min(64, 2048 // head_dim)))
    check_positive(name, block_q=bq, block_k=bk)
    bk = round_up(bk, KEY_UNROLL)
    width = num_heads * head_dim
    q_at = q_layout.resolved(seq_q, width)
    k_at = k_layout.resolved(seq_k, kv_heads * head_dim)
    v_at = v_layout.resolved(seq_k, kv_heads * head_dim)
    offset = " + pos0" if cache_position else ""  # the first query's position
    kv_h = "kv_h" if kv_heads != num_heads else "h"  # the key and value head
    # the keys read into a tile: a cache's rows past the new tokens may hold anything (NaN)
    loaded = f"min({seq_k}, pos0 + {seq_q})" if cache_position else f"{seq_k}"
    d = head_dim
    visible = [f"key < {seq_k}"]
    if has_mask:
        visible.append("key_visible[key - k0]")
    if causal:
        visible.append(f"key <= query{offset}")
    if window is not None:
        if not causal or window <= 0:
            raise ValueError(f"kernel '{name}': a window ({window}) needs causal and a positive "
                             "size")
        visible.append(f"key > query{offset} - {window}")
    key_end = f"min({seq_k}, query0 + {bq}{offset})" if causal else f"{seq_k}"
    mask_load = (
        f"        for (int j = lid; j < {bk}; j += {bq}) {{\n"
        "            const int key = k0 + j;\n"
        f"            key_visible[j] = key < {seq_k} && mask[b * {seq_k} + key] != 0;\n"
        "        }\n"
    ) if has_mask else ""
    scale_literal = float_literal(scale)
    q_read = half.load(dtype, "q_head", "{i}")
    k_read = half.load(dtype, "k_head", f"key * {k_at[1]} + i")
    v_read = half.load(dtype, "v_head", f"key * {v_at[1]} + i")
    unroll = KEY_UNROLL
    score_line = (
        "            {{ const int key = k0 + j + {i};"
        f" const float score = ({' && '.join(visible)}) ? dot_{{i}} : -INFINITY;"
        " scores[j + {i}][lid] = score; tile_max = fmax(tile_max, score); }}"
    )
    body = f"""\
    const int lid = get_local_id(0);
    const int query0 = get_group_id(0) * {bq};
    const int query = query0 + lid;
    const int b = get_group_id(1) / {num_heads}, h = get_group_id(1) % {num_heads};
{f"    const int kv_h = h / {num_heads // kv_heads};{chr(10)}" if kv_heads != num_heads else ""}\
{"    const int pos0 = pos[0];" + chr(10) if cache_position else ""}\
    const int q_row = min(query, {seq_q - 1});
    __global const {storage} *q_head = q + b * {q_at[0]} + q_row * {q_at[1]} + {q_at[2]} + h * {d};
    __global const {storage} *k_head = k + b * {k_at[0]} + {k_at[2]} + {kv_h} * {d};
    __global const {storage} *v_head = v + b * {v_at[0]} + {v_at[2]} + {kv_h} * {d};
    __local float k_tile[{bk}][{d}], v_tile[{bk}][{d}];
    __local float scores[{bk}][{bq}];
{f"    __local int key_visible[{bk}];{chr(10)}" if has_mask else ""}\
{_unrolled(d, "    const float q_{i} = " + q_read + " * " + scale_literal + ";")}\
{_unrolled(d, "    float acc_{i} = 0.0f;")}\
    float running_max = -INFINITY, running_sum = 0.0f;
    for (int k0 = 0; k0 < {key_end}; k0 += {bk}) {{
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = lid; e < {bk * d}; e += {bq}) {{
            const int j = e / {d}, i = e % {d}, key = k0 + j;
            const bool inside = key < {loaded};
            k_tile[j][i] = inside ? {k_read} : 0.0f;
            v_tile[j][i] = inside ? {v_read} : 0.0f;
        }}
{mask_load}\
        barrier(CLK_LOCAL_MEM_FENCE);
        float tile_max = -INFINITY;
        for (int j = 0; j < {bk}; j += {unroll}) {{
{_unrolled(unroll, "            __local const float *k_row_{i} = k_tile[j + {i}];")}\
{_unrolled(unroll, "            float dot_{i} = 0.0f;")}\
{_unrolled_keys(d, unroll, "dot_{u} = mad(q_{i}, k_row_{u}[{i}], dot_{u});", "            ")}\
{_unrolled(unroll, score_line)}\
        }}
        if (tile_max > -INFINITY) {{
            const float new_max = fmax(running_max, tile_max);
            const float correction = exp(running_max - new_max);
            running_sum *= correction;
{_unrolled(d, "            acc_{i} *= correction;")}\
            for (int j = 0; j < {bk}; j += {unroll}) {{
{_unrolled(unroll, "                const float p_{i} = exp(scores[j + {i}][lid] - new_max);")}\
                running_sum += {" + ".join(f"p_{u}" for u in range(unroll))};
{_unrolled(unroll, "                __local const float *v_row_{i} = v_tile[j + {i}];")}\
{_unrolled(d, "                acc_{i} = " + _chained_mads(unroll) + ";")}\
            }}
            running_max = new_max;
        }}
    }}
    if (query < {seq_q}) {{
        const float inverse_sum = running_sum > 0.0f ? 1.0f / running_sum : 0.0f;
        __global {out_storage} *out_row = out + (b * {seq_q} + query) * {width} + h * {d};
{_unrolled(d, "        " + half.store_rounded(dtype, stored, "out_row", "{i}", "acc_{i} * inverse_sum") + ";")}\
    }}
"""
    groups_q = -(-seq_q // bq)
    attribute = f"__attribute__((reqd_work_group_size({bq}, 1, 1)))"
    flags = header_flags(causal, has_mask, mask_dtype, dtype)
    flags += f", {kv_heads} kv heads" if kv_heads != num_heads else ""
    flags += ", cache at pos" if cache_position else ""
    flags += f", window {window}" if window is not None else ""
    source = (
        f"// {name}: attention B={batch} S_q={seq_q} S_k={seq_k} H={num_heads} D={d}{flags},"
        f" {bq} queries x {bk} keys per tile\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (groups_q * bq, batch * num_heads), (bq, 1))
