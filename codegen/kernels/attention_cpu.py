"""Attention for a CPU OpenCL device, register-tiled over explicit ``float8`` vectors: the two
products of attention computed as the register-tiled GEMM computes one (`gemm`'s CPU tiles).

Operands and semantics are `attention.attention`'s (``q: [B, S_q, H*D]``, ``k, v: [B, S_k,
KV*D]`` through `HeadsLayout`s, optional ``mask: [B, S_k]``, 0 = masked; ``causal``: key ``j``
visible to query ``i`` only when ``j <= i``; a query that sees no key gets zeros). f32 only.

One work-group per (batch * head, block of `BLOCK_Q` queries); each work-item owns `ROWS`
consecutive queries of the block. The work-group first copies the head's K transposed into
local memory (``kt[D][S_k']``, ``S_k'`` the keys rounded up to `KEY_CHUNK`, zero filled) and a
row of key biases (0 where the mask lets a key through, ``-INFINITY`` where not or past
``S_k``). Then each work-item, with no further barrier:

1. scores: for each chunk of `KEY_CHUNK` keys, ``ROWS x KEY_CHUNK`` accumulators in ``float8``
   registers (8 for 4 rows x 16 keys), one broadcast element of each query row against two
   ``float8`` rows of ``kt`` per step of D (q scaled as it is read, as `attention.attention`
   does), as the GEMM broadcasts A against a panel of B; the scores go to its rows of a local
   ``[BLOCK_Q, S_k']`` array;
2. softmax on ``float8``s of a row: the bias, the causal limit, the row's maximum, ``exp``
   and the sum (one vector ``exp`` per 8 scores);
3. ``P V``: for each chunk of 16 columns of the output, ``ROWS x 2`` ``float8`` accumulators,
   one broadcast probability of each row against two ``float8`` of V's row (read in place, rows
   are contiguous along D), then scaled by the inverse sum and stored.

The one-query-per-work-item kernel (`attention.attention`) leaves the vectorising to Intel's CPU
compiler, across 8 work-items, with the query and the 64 accumulators of each work-item spilled;
here the vectors are explicit and every step is a few loads for 8 FMAs. `why_not` says when a
shape does not take this kernel (16-bit types, a sliding window, a KV cache, D not a multiple
of 8, local memory too small); `codegen.templates` then keeps the one-query-per-item kernel.
"""

from __future__ import annotations

from fusec import knobs
from fusec.codegen.kernels.attention import (
    CONTIGUOUS,
    HeadsLayout,
    attention_args,
    grouped_kv_heads,
    header_flags,
)
from fusec.codegen.kernels.common import (
    DeviceInfo,
    KernelSource,
    check_positive,
    float_literal,
    kernel_signature,
    round_up,
)

ROWS = 4
"""Queries per work-item: 4 x 2 ``float8`` accumulators, two operand vectors and a broadcast,
11 of AVX2's 16 vector registers."""
KEY_CHUNK = 16
"""Keys scored together: two ``float8`` of a row of ``kt``."""
OUT_CHUNK = 16
"""Output columns accumulated together in ``P V`` (two ``float8``), when D is a multiple of 16;
else 8."""
BLOCK_Q = 64
"""Queries per work-group (at most; fewer when S_q is shorter)."""
LOCAL_BYTES_LIMIT = 1 << 17
"""At most this much local memory (and at most the device's): ``kt``, the biases and the scores
of the work-group's queries are 66 KiB at S=128 D=64."""


def block_q(seq_q: int) -> int:
    return min(BLOCK_Q, round_up(seq_q, ROWS))


def local_bytes(seq_q: int, seq_k: int, head_dim: int) -> int:
    keys = round_up(seq_k, KEY_CHUNK)
    return 4 * keys * (head_dim + 1 + block_q(seq_q))


def why_not(device: DeviceInfo | None, dtype: str, head_dim: int, seq_q: int, seq_k: int,
            window: int | None = None, cache_position: bool = False) -> str | None:
    """Why an attention does not take this kernel on ``device``, or None where it does."""
    if device is None or not device.is_cpu:
        return "not a CPU device"
    if not knobs.value("attention_cpu_vectors"):
        return "the knob attention_cpu_vectors is off"
    if dtype != "f32":
        return f"{dtype} q/k/v (the kernel is f32)"
    if window is not None or cache_position:
        return "a sliding window or a KV cache"
    if head_dim % 8:
        return f"head_dim {head_dim} is not a multiple of 8"
    needed = local_bytes(seq_q, seq_k, head_dim)
    if needed > min(LOCAL_BYTES_LIMIT, device.local_mem_size):
        return f"{needed} bytes of local memory needed"
    return None


def attention_cpu(
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
    dtype: str = "f32",
    kv_heads: int | None = None,
) -> KernelSource:
    """The kernel (see the module docstring); the parameters are `attention.attention`'s."""
    check_positive(name, batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=num_heads,
                   head_dim=head_dim)
    if dtype != "f32":
        raise ValueError(f"kernel '{name}': the CPU attention kernel is f32, not {dtype}")
    if head_dim % 8:
        raise ValueError(f"kernel '{name}': head_dim {head_dim} is not a multiple of 8")
    kv_heads, kv_head = grouped_kv_heads(name, num_heads, kv_heads)
    args = attention_args(name, has_mask, mask_dtype, dtype)
    d, rows, bq = head_dim, ROWS, block_q(seq_q)
    keys = round_up(seq_k, KEY_CHUNK)
    threads = bq // rows
    width = num_heads * d
    q_at = q_layout.resolved(seq_q, width)
    k_at = k_layout.resolved(seq_k, kv_heads * d)
    v_at = v_layout.resolved(seq_k, kv_heads * d)
    out_chunk = OUT_CHUNK if d % OUT_CHUNK == 0 else 8
    out_vectors = out_chunk // 8
    visible = f"key < {seq_k}" + (f" && mask[b * {seq_k} + key] != 0" if has_mask else "")
    # Keys past the block's last query are never visible under the causal limit.
    key_end = (f"min({keys}, (min({seq_q}, query_block + {bq}) + {KEY_CHUNK - 1}) / {KEY_CHUNK}"
               f" * {KEY_CHUNK})" if causal else f"{keys}")
    value_end = f"min({seq_k}, key_end)"
    r_range = range(rows)
    scale_literal = float_literal(scale)  # applied to q as it is read, as `attention` does
    lines = [
        "    const int lid = get_local_id(0);\n",
        f"    const int query_block = get_group_id(0) * {bq};\n",
        f"    const int query0 = query_block + lid * {rows};\n",
        f"    const int b = get_group_id(1) / {num_heads}, h = get_group_id(1) % {num_heads};\n",
        f"    __global const float *q_head = q + b * {q_at[0]} + {q_at[2]} + h * {d};\n",
        f"    __global const float *k_head = k + b * {k_at[0]} + {k_at[2]} + {kv_head} * {d};\n",
        f"    __global const float *v_head = v + b * {v_at[0]} + {v_at[2]} + {kv_head} * {d};\n",
        f"    __local float kt[{d * keys}];\n",
        f"    __local float key_bias[{keys}];\n",
        f"    __local float scores[{bq * keys}];\n",
        f"    const int key_end = {key_end};\n",
        f"    for (int e = lid; e < {keys * d}; e += {threads}) {{\n",
        f"        const int key = e / {d}, i = e % {d};\n",
        f"        kt[i * {keys} + key] = key < {seq_k} ? k_head[key * {k_at[1]} + i] : 0.0f;\n",
        "    }\n",
        f"    for (int key = lid; key < {keys}; key += {threads})\n",
        f"        key_bias[key] = ({visible}) ? 0.0f : -INFINITY;\n",
        "    barrier(CLK_LOCAL_MEM_FENCE);\n",
    ]
    for r in r_range:
        lines.append(f"    __global const float *q{r} = q_head + min(query0 + {r}, {seq_q - 1}) "
                     f"* {q_at[1]};\n")
        lines.append(f"    __local float *s{r} = scores + (lid * {rows} + {r}) * {keys};\n")
    # 1. scores
    lines.append(f"    for (int j0 = 0; j0 < key_end; j0 += {KEY_CHUNK}) {{\n")
    for r in r_range:
        lines.append(f"        float8 c{r}_0 = 0.0f, c{r}_1 = 0.0f;\n")
    lines += [
        f"        for (int i = 0; i < {d}; ++i) {{\n",
        f"            const float8 k0 = vload8(0, kt + i * {keys} + j0), "
        f"k1 = vload8(1, kt + i * {keys} + j0);\n",
    ]
    for r in r_range:
        lines.append(f"            const float8 a{r} = (float8)(q{r}[i] * {scale_literal}); "
                     f"c{r}_0 = mad(a{r}, k0, "
                     f"c{r}_0); c{r}_1 = mad(a{r}, k1, c{r}_1);\n")
    lines.append("        }\n")
    for r in r_range:
        lines.append(f"        vstore8(c{r}_0, 0, s{r} + j0); vstore8(c{r}_1, 1, s{r} + j0);\n")
    lines.append("    }\n")
    # 2. softmax of each row
    lines += ["    const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);\n",
              "    float " + ", ".join(f"inverse{r}" for r in r_range) + ";\n"]
    for r in r_range:
        causal_limit = (f" x = select(x, (float8)(-INFINITY), (int8)(j0) + lane > "
                        f"(int8)(query0 + {r}));" if causal else "")
        lines += [
            "    {\n",
            "        float8 top = (float8)(-INFINITY);\n",
            "        for (int j0 = 0; j0 < key_end; j0 += 8) {\n",
            f"            float8 x = vload8(0, s{r} + j0) + vload8(0, key_bias + j0);"
            f"{causal_limit}\n",
            f"            vstore8(x, 0, s{r} + j0); top = fmax(top, x);\n",
            "        }\n",
            "        top.lo = fmax(top.lo, top.hi); top.s01 = fmax(top.s01, top.s23);\n",
            "        const float row_max = fmax(top.s0, top.s1);\n",
            "        const float shift = row_max == -INFINITY ? 0.0f : row_max;\n",
            "        float8 total = 0.0f;\n",
            "        for (int j0 = 0; j0 < key_end; j0 += 8) {\n",
            f"            const float8 p = exp(vload8(0, s{r} + j0) - shift);\n",
            f"            vstore8(p, 0, s{r} + j0); total += p;\n",
            "        }\n",
            "        total.lo += total.hi; total.s01 += total.s23;\n",
            "        const float sum = total.s0 + total.s1;\n",
            f"        inverse{r} = sum > 0.0f ? 1.0f / sum : 0.0f;\n",
            "    }\n",
        ]
    # 3. P V
    lines += [
        f"    const int value_end = {value_end};\n",
        f"    for (int d0 = 0; d0 < {d}; d0 += {out_chunk}) {{\n",
    ]
    for r in r_range:
        accs = ", ".join(f"o{r}_{u} = 0.0f" for u in range(out_vectors))
        lines.append(f"        float8 {accs};\n")
    lines += [
        "        for (int j = 0; j < value_end; ++j) {\n",
        f"            __global const float *v_row = v_head + j * {v_at[1]} + d0;\n",
        "            " + " ".join(f"const float8 v{u} = vload8({u}, v_row);"
                              for u in range(out_vectors)) + "\n",
    ]
    for r in r_range:
        mads = " ".join(f"o{r}_{u} = mad(p{r}, v{u}, o{r}_{u});" for u in range(out_vectors))
        lines.append(f"            const float8 p{r} = (float8)(s{r}[j]); {mads}\n")
    lines.append("        }\n")
    for r in r_range:
        stores = " ".join(f"vstore8(o{r}_{u} * inverse{r}, {u}, row);"
                          for u in range(out_vectors))
        lines.append(f"        if (query0 + {r} < {seq_q}) {{ __global float *row = out + "
                     f"(b * {seq_q} + query0 + {r}) * {width} + h * {d} + d0; {stores} }}\n")
    lines.append("    }\n")
    groups_q = -(-seq_q // bq)
    attribute = f"__attribute__((reqd_work_group_size({threads}, 1, 1)))"
    flags = header_flags(causal, has_mask, mask_dtype, dtype)
    flags += f", {kv_heads} kv heads" if kv_heads != num_heads else ""
    source = (
        f"// {name}: attention B={batch} S_q={seq_q} S_k={seq_k} H={num_heads} D={d}{flags}, "
        f"CPU vectors: {bq} queries per group, {rows} per work-item\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{''.join(lines)}}}\n"
    )
    return KernelSource(name, source, args, (groups_q * threads, batch * num_heads),
                        (threads, 1))
