"""Attention over a KV cache split along the keys ("flash-decoding"): two launches.

A decode step has one query row per sequence and head, too few rows to fill a GPU when each
row is one work-item walking every cached key (`attention` with ``cache_position``). Here the
valid keys of each row are cut into `splits` chunks of `chunk` keys, one work-group per (row,
chunk), and a second kernel combines the chunks' partial results.

`cache_attention_split` (parameters ``q``, ``k``, ``v``, ``pos``, ``partial``, ``stats``): the
work-group of (batch ``b``, head ``h``, query ``i``, chunk ``c``) scores its keys
``[c * chunk, min((c + 1) * chunk, pos + i + 1))`` (kv head ``h / (H / KV)``), one key per
work-item at a time, the scores in local memory; a tree gives their max ``m`` and the sum ``l``
of ``exp(score - m)``; then the work-items share the ``head_dim`` columns ``d``, each summing
``exp(score - m) * v[key, d]`` into ``partial[row, c, d]`` and ``stats[row, c] = (m, l)`` (``m = -inf``, ``l = 0`` for a chunk
with no valid key). Rows are ``(b * S + i) * H + h``.

`cache_attention_combine` (parameters ``partial``, ``stats``, ``out``): one work-item per
output element ``(row, d)``: ``M = max_c m_c``, ``out = sum_c exp(m_c - M) partial[c, d] /
sum_c exp(m_c - M) l_c`` (zeros for a row with no valid key), rounded to the output type.
"""

from __future__ import annotations

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    check_positive,
    float_literal,
    kernel_signature,
)


def cache_attention_split(name: str, batch: int, seq_q: int, seq_k: int, num_heads: int,
                          kv_heads: int, head_dim: int, scale: float, splits: int,
                          q_row_stride: int | None = None, q_offset: int = 0,
                          dtype: str = "f32", group: int = 64) -> KernelSource:
    """The first launch: each (row, chunk)'s partial output and its (max, sum)."""
    check_positive(name, batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=num_heads,
                   kv_heads=kv_heads, head_dim=head_dim, splits=splits, group=group)
    if num_heads % kv_heads:
        raise ValueError(f"kernel '{name}': kv_heads {kv_heads} does not divide num_heads "
                         f"{num_heads}")
    storage = half.check_dtype(name, dtype)
    args = (KernelArg("q", "in", storage), KernelArg("k", "in", storage),
            KernelArg("v", "in", storage), KernelArg("pos", "in", "int"),
            KernelArg("partial", "out", "float"), KernelArg("stats", "out", "float"))
    chunk = -(-seq_k // splits)
    width, kv_width, d = num_heads * head_dim, kv_heads * head_dim, head_dim
    q_stride = width if q_row_stride is None else q_row_stride
    load_k = half.load(dtype, "k_head", "key * " + str(kv_width) + " + e")
    load_v = half.load(dtype, "v_head", "key * " + str(kv_width) + " + e")
    load_q = half.load(dtype, "q_row", "e")
    score = _score(dtype, d, kv_width, load_k)
    body = f"""\
    const int lid = get_local_id(0);
    const int c = get_group_id(0);
    const int row = get_group_id(1);
    const int h = row % {num_heads}, i = (row / {num_heads}) % {seq_q};
    const int b = row / {num_heads * seq_q};
    const int first = c * {chunk};
    const int end = min(min(first + {chunk}, pos[0] + i + 1), {seq_k});
    const int count = max(end - first, 0);
    __global const {storage} *q_row = q + (b * {seq_q} + i) * {q_stride} + {q_offset} + h * {d};
    __global const {storage} *k_head = k + b * {seq_k * kv_width} + (h / {num_heads // kv_heads}) * {d};
    __global const {storage} *v_head = v + b * {seq_k * kv_width} + (h / {num_heads // kv_heads}) * {d};
    __local float q_local[{d}];
    __local float scores[{chunk}];
    __local float tree[{group}];
    for (int e = lid; e < {d}; e += {group}) q_local[e] = {load_q} * {float_literal(scale)};
    barrier(CLK_LOCAL_MEM_FENCE);
    float top = -INFINITY;
    for (int j = lid; j < count; j += {group}) {{
        const int key = first + j;
        float dot = 0.0f;
{score}
        scores[j] = dot;
        top = fmax(top, dot);
    }}
    tree[lid] = top;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_size = {group // 2}; half_size > 0; half_size >>= 1) {{
        if (lid < half_size) tree[lid] = fmax(tree[lid], tree[lid + half_size]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    const float m = tree[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float total = 0.0f;
    for (int j = lid; j < count; j += {group}) {{
        const float p = exp(scores[j] - m);
        scores[j] = p;
        total += p;
    }}
    tree[lid] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_size = {group // 2}; half_size > 0; half_size >>= 1) {{
        if (lid < half_size) tree[lid] += tree[lid + half_size];
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    for (int e = lid; e < {d}; e += {group}) {{
        float acc = 0.0f;
        for (int j = 0; j < count; ++j) {{
            const int key = first + j;
            acc = mad(scores[j], {load_v}, acc);
        }}
        partial[(row * {splits} + c) * {d} + e] = acc;
    }}
    if (lid == 0) {{
        stats[(row * {splits} + c) * 2] = m;
        stats[(row * {splits} + c) * 2 + 1] = tree[0];
    }}
"""
    rows = batch * seq_q * num_heads
    attribute = f"__attribute__((reqd_work_group_size({group}, 1, 1)))"
    source = (
        f"// {name}: cache attention, keys split: B={batch} S_q={seq_q} T={seq_k} "
        f"H={num_heads} KV={kv_heads} D={d}, {splits} chunks of {chunk}"
        f"{', ' + dtype if dtype != 'f32' else ''}\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (splits * group, rows), (group, 1))


def cache_attention_combine(name: str, rows: int, head_dim: int, splits: int,
                            dtype: str = "f32") -> KernelSource:
    """The second launch: the chunks of each row combined into ``out`` ``[rows, head_dim]``
    (the ``[B, S, H*D]`` output, rows ``(b * S + i) * H + h``)."""
    check_positive(name, rows=rows, head_dim=head_dim, splits=splits)
    storage = half.check_dtype(name, dtype)
    args = (KernelArg("partial", "in", "float"), KernelArg("stats", "in", "float"),
            KernelArg("out", "out", storage))
    total = rows * head_dim
    store = half.store(dtype, "out", "gid", "l > 0.0f ? acc / l : 0.0f")
    source = (
        f"// {name}: cache attention, {splits} key chunks combined for {rows} rows of "
        f"{head_dim}\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{kernel_signature(name, args)}\n{{\n"
        "    const int gid = get_global_id(0);\n"
        f"    if (gid >= {total}) return;\n"
        f"    const int row = gid / {head_dim}, d = gid % {head_dim};\n"
        f"    __global const float *s = stats + row * {2 * splits};\n"
        "    float top = -INFINITY;\n"
        f"    for (int c = 0; c < {splits}; ++c) top = fmax(top, s[2 * c]);\n"
        "    float acc = 0.0f, l = 0.0f;\n"
        f"    for (int c = 0; c < {splits}; ++c) {{\n"
        "        if (s[2 * c + 1] == 0.0f) continue;\n"
        "        const float w = exp(s[2 * c] - top);\n"
        f"        acc = mad(w, partial[(row * {splits} + c) * {head_dim} + d], acc);\n"
        "        l = mad(w, s[2 * c + 1], l);\n"
        "    }\n"
        f"    {store};\n"
        "}\n"
    )
    return KernelSource(name, source, args, (total,), None)


def _score(dtype: str, d: int, kv_width: int, load_k: str) -> str:
    """The statement adding a key's ``q . k`` into ``dot``, in order of ``e``: its row of
    ``k`` read 8 elements at a time where ``head_dim`` allows (a work-item's key is a row of
    its own, so one 16-byte load of f16 rather than 8 scattered ones), else one at a time."""
    if d % 8:
        return f"        for (int e = 0; e < {d}; ++e) dot = mad(q_local[e], {load_k}, dot);"
    row = half.vload(dtype, 8, f"(key * {kv_width} + e) / 8", "k_head")
    steps = " ".join(f"dot = mad(q_local[e + {t}], kk.s{t}, dot);" for t in range(8))
    return (f"        for (int e = 0; e < {d}; e += 8) {{\n"
            f"            const float8 kk = {row};\n"
            f"            {steps}\n"
            f"        }}")
