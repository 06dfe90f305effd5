"""Multi-head attention for a GPU, with the scores and the output computed in register tiles.

Same operands, parameters and results as `fusec.codegen.kernels.attention.attention` (see its
module docstring): ``q: [B, S_q, H*D]``, ``k, v: [B, S_k, H*D]`` read through `HeadsLayout`s,
optional ``mask: [B, S_k]`` (0 = masked), ``out: [B, S_q, H*D]`` contiguous; key ``j`` is
visible to query ``i`` unless masked or (``causal``) ``j > i``; a query that sees no key gets
zeros.

One work-group of ``query_threads * key_threads`` work-items per (batch * head, block of
``4 * query_threads`` queries). The block's queries (scaled) are staged once in local memory;
the keys are walked in tiles of ``4 * key_threads``, each tile's K and V rows staged in local
memory. Work-item (``ty``, ``tx``) owns queries ``ty + query_threads * a`` and keys
``tx + key_threads * b`` (``a, b < 4``) of the score tile, a 4 x 4 block held in registers and
summed over the head dimension from float4 reads of local memory (two 16-byte reads per 16
FMAs, where the one-query-per-work-item kernel reads 4 bytes per FMA). The tile's row maxima
and row sums are combined across the ``key_threads`` work-items of a row through local memory;
the probabilities go to local memory, and the same work-item then accumulates its 4 queries'
output over ``head_dim`` columns split among the ``key_threads`` work-items of the row
(4 columns, float4, per work-item and per ``4 * key_threads`` columns), with an online softmax
(running max and sum per query, kept alike by every work-item of the row; the output is
rescaled when the max grows). With ``causal``, tiles past the block's last query are skipped,
and the blocks with the most keys are launched first. By default (``prefetch``) each work-item
reads its part of the next tile's K and V into registers while the current tile is computed.

On an H100 (`bench/results/h100-2026-11-25-s4-llama-attention-sweep.log`, B=32 S=128 H=12
D=64, q/k/v packed): causal 0.155 ms with one query per work-item, 0.091 ms tiled, 0.079 ms
tiled and prefetched (torch SDPA 0.076 ms); masked 0.182, 0.110, 0.087 ms (SDPA 0.108 ms).

Owning strided queries and keys (``ty + query_threads * a``) rather than adjacent ones keeps the
K reads of neighbouring work-items on different banks (K rows are padded by 4 floats).
"""

from __future__ import annotations

from dataclasses import dataclass

from fusec.codegen.kernels import half
from fusec.codegen.kernels.attention import (
    CONTIGUOUS,
    HeadsLayout,
    attention_args,
    grouped_kv_heads,
    header_flags,
)
from fusec.codegen.kernels.common import (
    KernelSource,
    check_positive,
    float_literal,
    kernel_signature,
    round_up,
)

ROWS = 4
"""Queries (and keys) of the score tile per work-item."""

CONFIGS = ((16, 8), (8, 8))
"""(query_threads, key_threads) tried in order by `tiled_attention_config`: 64 queries and 32
keys a tile, 128 work-items, then 32 x 32 with 64 work-items where local memory is short."""


def _widths(head_dim: int, key_threads: int) -> tuple[int, int, int]:
    """(row length of the Q and K tiles, K tile row stride, V tile row length) in floats."""
    dq = round_up(head_dim, 4)
    return dq, dq + 4, round_up(head_dim, 4 * key_threads)


def _stats_stride(key_threads: int) -> int:
    return key_threads + 1


def _p_stride(key_threads: int) -> int:
    return ROWS * key_threads + 8


def _sums_share_k_tile(query_threads: int, key_threads: int, head_dim: int) -> bool:
    _, ks, _ = _widths(head_dim, key_threads)
    return ROWS * key_threads * ks >= ROWS * query_threads * _stats_stride(key_threads)


def tiled_attention_local_bytes(head_dim: int, has_mask: bool, query_threads: int,
                                key_threads: int) -> int:
    """Bytes of local memory the kernel declares."""
    bq, bk = ROWS * query_threads, ROWS * key_threads
    dq, ks, dv = _widths(head_dim, key_threads)
    ss = _stats_stride(key_threads)
    floats = bq * dq + bk * ks + bk * dv + bq * _p_stride(key_threads) + bq * ss
    if not _sums_share_k_tile(query_threads, key_threads, head_dim):
        floats += bq * ss
    return 4 * floats + (4 * bk if has_mask else 0)


def tiled_attention_config(head_dim: int, has_mask: bool, local_mem_size: int,
                           max_work_group_size: int) -> tuple[int, int] | None:
    """The first of `CONFIGS` whose local memory and work-group fit the device, or None."""
    for query_threads, key_threads in CONFIGS:
        if (query_threads * key_threads <= max_work_group_size
                and tiled_attention_local_bytes(head_dim, has_mask, query_threads,
                                                key_threads) <= local_mem_size):
            return query_threads, key_threads
    return None


def _lines(indent: str, template: str, **ranges: int) -> str:
    """`template` formatted for every combination of the named ranges, one statement a line."""
    combos: list[dict[str, int]] = [{}]
    for key, count in ranges.items():
        combos = [{**c, key: i} for c in combos for i in range(count)]
    return "".join(indent + template.format(**c) + "\n" for c in combos)


@dataclass(frozen=True)
class _Staging:
    """How a key tile's K and V rows reach local memory: read and stored at the top of the
    tile's step, or (`prefetch`) read into registers a step ahead and stored at the top."""

    threads: int
    bk: int
    dq: int
    ks: int
    dv: int
    d: int
    seq_k: int
    k_stride: int
    v_stride: int
    prefetch: bool
    dtype: str = "f32"
    """The element type of K and V in global memory (f16/bf16 converted when read)."""

    def read(self, which: str, index: str) -> str:
        return half.load(self.dtype, f"{which}_head", index)

    def _counts(self) -> tuple[int, int]:
        return -(-self.bk * self.dq // self.threads), -(-self.bk * self.dv // self.threads)

    def _reads(self, start: str, indent: str) -> str:
        """Registers ``k_next_i`` and ``v_next_i`` := this work-item's K and V elements of the
        tile of keys from `start` (zero past the block's last key or the head dimension)."""
        nk, nv = self._counts()
        lines = []
        for which, count, width, stride in (("k", nk, self.dq, self.k_stride),
                                            ("v", nv, self.dv, self.v_stride)):
            for i in range(count):
                lines.append(
                    f"{indent}{{ const int e = lid + {self.threads * i}, j = e / {width},"
                    f" c = e % {width}, key = {start} + j;"
                    f" {which}_next_{i} = (e < {self.bk * width} && key < key_end && c < {self.d})"
                    f" ? {self.read(which, f'key * {stride} + c')} : 0.0f; }}\n")
        return "".join(lines)

    @property
    def before(self) -> str:
        if not self.prefetch:
            return ""
        nk, nv = self._counts()
        declare = "".join(f"    float k_next_{i};\n" for i in range(nk))
        declare += "".join(f"    float v_next_{i};\n" for i in range(nv))
        return declare + self._reads("0", "    ")

    @property
    def top(self) -> str:
        if not self.prefetch:
            return (
                f"        for (int e = lid; e < {self.bk * self.dq}; e += {self.threads}) {{\n"
                f"            const int j = e / {self.dq}, i = e % {self.dq}, key = k0 + j;\n"
                f"            k_tile[j * {self.ks} + i] = (key < {self.seq_k} && i < {self.d})"
                f" ? {self.read('k', f'key * {self.k_stride} + i')} : 0.0f;\n"
                "        }\n"
                f"        for (int e = lid; e < {self.bk * self.dv}; e += {self.threads}) {{\n"
                f"            const int j = e / {self.dv}, i = e % {self.dv}, key = k0 + j;\n"
                f"            v_tile[e] = (key < {self.seq_k} && i < {self.d})"
                f" ? {self.read('v', f'key * {self.v_stride} + i')} : 0.0f;\n"
                "        }\n")
        nk, nv = self._counts()
        lines = [
            f"        {{ const int e = lid + {self.threads * i};"
            f" if (e < {self.bk * self.dq}) k_tile[e / {self.dq} * {self.ks} + e % {self.dq}]"
            f" = k_next_{i}; }}\n" for i in range(nk)]
        lines += [
            f"        {{ const int e = lid + {self.threads * i};"
            f" if (e < {self.bk * self.dv}) v_tile[e] = v_next_{i}; }}\n" for i in range(nv)]
        return "".join(lines)

    @property
    def after(self) -> str:
        return self._reads(f"(k0 + {self.bk})", "        ") if self.prefetch else ""


def _softmax_row(a: int, tk: int, ss: int, ps: int, nv: int) -> str:
    """Query row `a` of a work-item: the tile's max over the row's work-items, the rescaled
    running max, sum and output, the probabilities to local memory and their partial sum."""
    sum_of_p = " + ".join(f"s_{a}_{b}" for b in range(ROWS))
    return (
        "        {\n"
        f"            float tile_max_{a} = -INFINITY;\n"
        f"            for (int t = 0; t < {tk}; ++t)\n"
        f"                tile_max_{a} = fmax(tile_max_{a}, tile_max_part[row_{a} * {ss} + t]);\n"
        f"            const float new_max = fmax(running_max_{a}, tile_max_{a});\n"
        "            const float base = new_max == -INFINITY ? 0.0f : new_max;\n"
        f"            const float correction = exp(running_max_{a} - base);\n"
        f"            running_max_{a} = new_max;\n"
        f"            running_sum_{a} *= correction;\n"
        + _lines("            ", f"acc_{a}_{{n}} *= correction;", n=nv)
        + _lines("            ", f"s_{a}_{{b}} = exp(s_{a}_{{b}} - base);", b=ROWS)
        + _lines("            ", f"p_tile[row_{a} * {ps} + tx + {tk} * {{b}}] = s_{a}_{{b}};",
                 b=ROWS)
        + f"            sum_part[row_{a} * {ss} + tx] = {sum_of_p};\n"
        "        }\n"
    )


def _output_row(a: int, tk: int, nv: int, seq_q: int, width: int, d: int,
                dtype: str = "f32", out_dtype: str | None = None) -> str:
    """The stores of query row `a`'s output columns (those below `d`), divided by its sum,
    rounded to `dtype` and stored as `out_dtype` (default `dtype`)."""
    stored = out_dtype or dtype
    stores = "".join(
        f"        if ({4 * n * tk} + 4 * tx + {c} < {d}) "
        + half.store_rounded(dtype, stored, "out_row", f"{4 * n * tk} + 4 * tx + {c}",
                     f"acc_{a}_{n}.{'xyzw'[c]} * inverse_sum") + ";\n"
        for n in range(nv) for c in range(4))
    return (
        f"    if (query_{a} < {seq_q}) {{\n"
        f"        const float inverse_sum = running_sum_{a} > 0.0f ? 1.0f / running_sum_{a}"
        " : 0.0f;\n"
        f"        __global {half.STORAGE[stored]} *out_row = out + (b * {seq_q} + query_{a})"
        f" * {width} + h * {d};\n"
        + stores + "    }\n"
    )


def attention_tiled(
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
    query_threads: int = 16,
    key_threads: int = 8,
    prefetch: bool = True,
    dtype: str = "f32",
    kv_heads: int | None = None,
    out_dtype: str | None = None,
) -> KernelSource:
    """A register-tiled attention kernel; see the module docstring. With `prefetch`, each
    work-item loads its part of the next key tile's K and V into registers while the current
    tile is computed, and stores it to local memory after the next barrier. `dtype`: the
    element type of q, k, v and out (f16/bf16 converted to float32 when read, the output
    rounded once when stored); `out_dtype` (f32 for 16-bit operands) stores that rounded
    output wider."""
    check_positive(name, batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=num_heads,
                   head_dim=head_dim, query_threads=query_threads, key_threads=key_threads)
    args = attention_args(name, has_mask, mask_dtype, dtype, out_dtype=out_dtype)
    storage = args[0].dtype
    d = head_dim
    tq, tk = query_threads, key_threads
    threads = tq * tk
    bq, bk = ROWS * tq, ROWS * tk
    dq, ks, dv = _widths(d, tk)
    ss, ps = _stats_stride(tk), _p_stride(tk)
    nv = dv // (4 * tk)
    width = num_heads * d
    q_at = q_layout.resolved(seq_q, width)
    kv_heads, kv_h = grouped_kv_heads(name, num_heads, kv_heads)
    k_at = k_layout.resolved(seq_k, kv_heads * d)
    v_at = v_layout.resolved(seq_k, kv_heads * d)
    groups_q = -(-seq_q // bq)
    share = _sums_share_k_tile(tq, tk, d)
    sums_decl = ("    __local float *sum_part = (__local float *)k_tile;"
                 "  // K is dead once the scores are summed\n" if share
                 else f"    __local float sum_part[{bq * ss}];\n")
    visible = [f"key_{{b}} < {seq_k}"]
    if has_mask:
        visible.append("key_visible[tx + {b_off}]")
    if causal:
        visible.append("key_{b} <= query_{a}")
    visible_expr = " && ".join(visible)
    mask_decl = f"    __local int key_visible[{bk}];\n" if has_mask else ""
    mask_load = (
        f"        for (int j = lid; j < {bk}; j += {threads}) {{\n"
        "            const int key = k0 + j;\n"
        f"            key_visible[j] = key < {seq_k} && mask[b * {seq_k} + key] != 0;\n"
        "        }\n"
    ) if has_mask else ""
    key_end = f"min({seq_k}, query0 + {bq})" if causal else f"{seq_k}"
    staging = _Staging(threads, bk, dq, ks, dv, d, seq_k, k_at[1], v_at[1], prefetch, dtype)
    block = f"{groups_q - 1} - (int)get_group_id(0)" if causal else "(int)get_group_id(0)"
    score_checks = "".join(
        f"        s_{a}_{b} = ({visible_expr.format(a=a, b=b, b_off=tk * b)})"
        f" ? s_{a}_{b} : -INFINITY;\n"
        for a in range(ROWS) for b in range(ROWS))
    comps = "xyzw"
    score_mads = "".join(
        f"            s_{a}_{b} = mad(q4_{a}.{c}, k4_{b}.{c}, s_{a}_{b});\n"
        for c in comps for a in range(ROWS) for b in range(ROWS))
    stats_sum = "".join(
        f"            running_sum_{a} += sum_part[row_{a} * {ss} + t];\n" for a in range(ROWS))
    pv_mads = "".join(
        f"            acc_{a}_{n} = mad((float4)(p4_{a}.{comps[u]}), v4_{u}_{n}, acc_{a}_{n});\n"
        for u in range(4) for a in range(ROWS) for n in range(nv))
    softmax_rows = "".join(_softmax_row(a, tk, ss, ps, nv) for a in range(ROWS))
    out_stores = "".join(_output_row(a, tk, nv, seq_q, width, d, dtype, out_dtype) for a in range(ROWS))
    q_read = half.load(dtype, "q_head", f"query * {q_at[1]} + i")
    body = f"""\
    const int lid = get_local_id(0);
    const int tx = lid % {tk}, ty = lid / {tk};
    const int query0 = ({block}) * {bq};
    const int b = get_group_id(1) / {num_heads}, h = get_group_id(1) % {num_heads};
    __global const {storage} *q_head = q + b * {q_at[0]} + {q_at[2]} + h * {d};
    __global const {storage} *k_head = k + b * {k_at[0]} + {k_at[2]} + {kv_h} * {d};
    __global const {storage} *v_head = v + b * {v_at[0]} + {v_at[2]} + {kv_h} * {d};
    __local float4 q_tile4[{bq * dq // 4}], k_tile4[{bk * ks // 4}], v_tile4[{bk * dv // 4}];
    __local float4 p_tile4[{bq * ps // 4}];
    __local float tile_max_part[{bq * ss}];
    __local float *q_tile = (__local float *)q_tile4, *k_tile = (__local float *)k_tile4;
    __local float *v_tile = (__local float *)v_tile4, *p_tile = (__local float *)p_tile4;
{sums_decl}{mask_decl}\
    for (int e = lid; e < {bq * dq}; e += {threads}) {{
        const int r = e / {dq}, i = e % {dq}, query = query0 + r;
        q_tile[e] = (query < {seq_q} && i < {d})
            ? {q_read} * {float_literal(scale)} : 0.0f;
    }}
{_lines("    ", f"const int row_{{a}} = ty + {tq} * {{a}}, query_{{a}} = query0 + row_{{a}};",
        a=ROWS)}\
{_lines("    ", "float running_max_{a} = -INFINITY, running_sum_{a} = 0.0f;", a=ROWS)}\
{_lines("    ", "float4 acc_{a}_{n} = (float4)(0.0f);", a=ROWS, n=nv)}\
    const int key_end = {key_end};
{staging.before}\
    for (int k0 = 0; k0 < key_end; k0 += {bk}) {{
        barrier(CLK_LOCAL_MEM_FENCE);
{staging.top}\
{mask_load}\
        barrier(CLK_LOCAL_MEM_FENCE);
{staging.after}\
{_lines("        ", "float s_{a}_{b} = 0.0f;", a=ROWS, b=ROWS)}\
        for (int i4 = 0; i4 < {dq // 4}; ++i4) {{
{_lines("            ", f"const float4 q4_{{a}} = q_tile4[row_{{a}} * {dq // 4} + i4];", a=ROWS)}\
{_lines("            ",
        f"const float4 k4_{{b}} = k_tile4[(tx + {tk} * {{b}}) * {ks // 4} + i4];", b=ROWS)}\
{score_mads}\
        }}
{_lines("        ", f"const int key_{{b}} = k0 + tx + {tk} * {{b}};", b=ROWS)}\
{score_checks}\
{_lines("        ", f"tile_max_part[row_{{a}} * {ss} + tx] = "
        "fmax(fmax(s_{a}_0, s_{a}_1), fmax(s_{a}_2, s_{a}_3));", a=ROWS)}\
        barrier(CLK_LOCAL_MEM_FENCE);
{softmax_rows}\
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = 0; t < {tk}; ++t) {{
{stats_sum}\
        }}
        for (int j4 = 0; j4 < {bk // 4}; ++j4) {{
{_lines("            ", f"const float4 p4_{{a}} = p_tile4[row_{{a}} * {ps // 4} + j4];", a=ROWS)}\
{_lines("            ",
        f"const float4 v4_{{u}}_{{n}} = v_tile4[(4 * j4 + {{u}}) * {dv // 4} + {{n}} * {tk} + tx];",
        u=4, n=nv)}\
{pv_mads}\
        }}
    }}
{out_stores}\
"""
    attribute = f"__attribute__((reqd_work_group_size({threads}, 1, 1)))"
    flags = header_flags(causal, has_mask, mask_dtype, dtype)
    source = (
        f"// {name}: register-tiled attention B={batch} S_q={seq_q} S_k={seq_k} H={num_heads}"
        f" D={d}{flags}, {bq} queries x {bk} keys per tile, {tq} x {tk} work-items of 4 x 4\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (groups_q * threads, batch * num_heads),
                        (threads, 1))
