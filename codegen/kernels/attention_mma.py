"""Multi-head attention on tensor cores for f16 and bf16: flash-attention-2 on ``mma.sync``.

Same operands, parameters and results as `fusec.codegen.kernels.attention.attention` (see its
module docstring): ``q: [B, S_q, H*D]``, ``k, v: [B, S_k, H*D]`` of one 16-bit type read
through `HeadsLayout`s, optional ``mask: [B, S_k]`` (any element type, 0 = masked),
``out: [B, S_q, H*D]`` contiguous in the same type; key ``j`` is visible to query ``i`` unless
masked or (``causal``) ``j > i``; a query that sees no key gets zeros. ``head_dim`` must be a
multiple of 16 (one mma depth); other head dimensions keep `attention_tiled`.

One work-group of ``warps`` warps (32 work-items each) per (batch * head, block of
``16 * warps`` queries); warp ``w`` owns 16 query rows, and lane ``(g, t) = (lane / 4,
lane % 4)`` of it rows ``g`` and ``g + 8`` (the mma fragment layouts: `gemm_mma`'s docstring).
The warp's Q rows stay in registers as A fragments (``D / 16`` of them) for the whole kernel.
Keys are walked in tiles of ``block_k``; each tile's K and V rows are copied into local memory
(16-byte reads where the layouts allow; rows padded by 8 elements, so that the fragment reads of
a warp fall on distinct banks), and then, with f32 accumulation throughout:

- ``S = Q K^T``: ``mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}`` per 8 keys and 16 head
  columns; the B fragment (``B[k][n] = K[key n][column k]``) is a pair of adjacent elements of
  a K row, one 32-bit read of local memory.
- Online softmax on the accumulators in registers (``native_exp2``): scores scaled by
  ``scale * log2(e)``, invisible ones set to -inf; the row max is combined over the 4 lanes
  of a row with butterfly shuffles (``shfl.sync.bfly``); when it grows, the running sum and the
  output accumulators of the row are rescaled by ``exp2(old - new)``. ``P = exp2(S - max)``; each
  lane keeps the partial sum of its own columns, combined over the row's lanes at the end.
- ``O += P V``: the accumulators of two adjacent 8-key tiles are the A fragment of one 16-key
  slice, packed to 16 bits (``cvt.rn.f16x2.f32`` / ``cvt.rn.bf16x2.f32``: both need sm_80 and
  PTX 7.0, as the m16n8k16 products do, so a device whose probe built those builds these); V's
  B fragment (``B[k][n] = V[key k][column n]``) is two elements of one column in adjacent
  rows, read from local memory and packed.

By default (the knobs `attention_mma_ldmatrix`, `attention_mma_async_copy`: `fusec.knobs`) the B
fragments come from ``ldmatrix.x4`` (V through ``.trans``: the pairs of one column in adjacent rows
are what it delivers), and K and V are copied by ``cp.async`` two tiles deep
(`gemm_mma_pipelined`'s helpers), the next tile in flight while this one is computed.

With ``causal``, tiles past the block's last query are not visited, a warp skips the tiles past
its own last query, and the blocks with the most keys are launched first.

``mma="emulated"`` replaces ``mma.sync`` by `gemm_mma`'s emulation, ``ldmatrix`` and
``cp.async`` by `gemm_mma_pipelined`'s, the shuffles by an exchange through local memory and
the packing by plain OpenCL C rounding (all behind
barriers, so the warp skip is left out): the kernel then runs on any OpenCL device (the CPU in
CI); the real instructions are checked on the GPU machine (`FUSEC_TEST_MMA=ptx`).
"""

from __future__ import annotations

import math

from fusec import knobs
from fusec.codegen.kernels import half
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
)
from fusec.codegen.kernels.gemm_mma import MMAS, _emulation, _ptx_helpers
from fusec.codegen.kernels.gemm_mma_pipelined import _emulated_copies, _ptx_copies

WARPS = 4
BLOCK_K = 64
ASYNC_LOCAL_LIMIT = 49152
"""Bytes the two stages may take: the 48 KiB of local memory every device with ``mma.sync``
m16n8k16 (sm_80 and newer) gives a work-group."""
PAD = 8
"""Elements of padding after each K and V row in local memory."""
SCRATCH = 16 * 16 + 16 * 8
"""Floats of local memory per warp for the emulated ``mma.sync`` (`gemm_mma._emulation`)."""


def _tile_bytes(head_dim: int, block_k: int) -> int:
    """Bytes of one stage: a K and a V tile."""
    return 2 * 2 * block_k * (head_dim + PAD)


def _stages(head_dim: int, block_k: int, async_copy: bool, aligned: bool) -> int:
    """Stages of K and V tiles in local memory: 2 with `cp.async` copies where they fit."""
    return (2 if async_copy and aligned
            and 2 * _tile_bytes(head_dim, block_k) <= ASYNC_LOCAL_LIMIT else 1)


def local_bytes(head_dim: int, has_mask: bool, warps: int = WARPS, block_k: int = BLOCK_K,
                mma: str = "ptx", stages: int = 1) -> int:
    """Bytes of local memory the kernel declares (at most `ASYNC_LOCAL_LIMIT` more with two
    stages: `why_not` checks the device against that)."""
    total = stages * _tile_bytes(head_dim, block_k) + (4 * block_k if has_mask else 0)
    if mma == "emulated":
        total += 4 * warps * (SCRATCH + 32 + 32)
    return total


def why_not(device: DeviceInfo | None, dtype: str, head_dim: int, has_mask: bool) -> str | None:
    """None where attention on `dtype` operands takes this kernel on `device`, else why not."""
    if not knobs.value("attention_mma"):
        return "the knob attention_mma is off"
    if device is None or device.is_cpu:
        return "not a GPU"
    if dtype not in ("f16", "bf16"):
        return f"{dtype} operands"
    if dtype not in device.tensor_cores:
        return f"the device has no {dtype} mma.sync"
    if head_dim % 16:
        return f"head_dim {head_dim} is not a multiple of 16"
    if (local_bytes(head_dim, has_mask) > device.local_mem_size
            or 32 * WARPS > device.max_work_group_size):
        return "the tiles do not fit the device"
    return None


def _helpers(name: str, dtype: str, mma: str, copies: bool) -> str:
    """``<name>_mma`` (`gemm_mma`), ``<name>_max4`` / ``<name>_sum4`` (a value combined over
    the 4 lanes of a row), ``<name>_pack(lo, hi)`` (two floats as one register of 16-bit
    pairs, ``lo`` in the low half)."""
    spec = MMAS[dtype]
    if mma == "emulated":
        exchange = (
            f"float {name}_xor(__local float *x, const int lane, const float v, const int m) {{\n"
            "    barrier(CLK_LOCAL_MEM_FENCE);\n"
            "    x[lane] = v;\n"
            "    barrier(CLK_LOCAL_MEM_FENCE);\n"
            "    return x[lane ^ m];\n"
            "}\n")
        lead, args = "__local float *x, const int lane, ", "x, lane, "
        if dtype == "f16":
            pack = ("    ushort2 h;\n"
                    "    vstore_half2_rte((float2)(lo, hi), 0, (__private half *)&h);\n"
                    "    return as_uint(h);\n")
        else:
            pack = ("    return (uint)fusec_float_to_bf16(lo)"
                    " | ((uint)fusec_float_to_bf16(hi) << 16);\n")
        return (_emulation(name, spec) + (_emulated_copies(name) if copies else "") + exchange
                + f"inline float {name}_max4({lead}float v) {{\n"
                f"    v = fmax(v, {name}_xor({args}v, 1));\n"
                f"    return fmax(v, {name}_xor({args}v, 2));\n}}\n"
                + f"inline float {name}_sum4({lead}float v) {{\n"
                f"    v += {name}_xor({args}v, 1);\n"
                f"    return v + {name}_xor({args}v, 2);\n}}\n"
                + f"inline uint {name}_pack(const float lo, const float hi) {{\n{pack}}}\n")
    shuffle = ('    asm volatile("shfl.sync.bfly.b32 %0, %1, {m}, 0x1f, 0xffffffff;" '
               ': "=f"(o) : "f"(v));\n')
    return (
        _ptx_helpers(name, spec) + (_ptx_copies(name, 3) if copies else "")
        + f"inline float {name}_max4(float v) {{\n    float o;\n"
        + shuffle.format(m=1) + "    v = fmax(v, o);\n"
        + shuffle.format(m=2) + "    return fmax(v, o);\n}\n"
        + f"inline float {name}_sum4(float v) {{\n    float o;\n"
        + shuffle.format(m=1) + "    v += o;\n"
        + shuffle.format(m=2) + "    return v + o;\n}\n"
        + f"inline uint {name}_pack(const float lo, const float hi) {{\n    uint r;\n"
        f'    asm("cvt.rn.{dtype}x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));\n'
        "    return r;\n}\n")


def _aligned(*offsets: int) -> bool:
    return all(o % 8 == 0 for o in offsets)


def attention_mma(
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
    dtype: str = "f16",
    warps: int = WARPS,
    block_k: int = BLOCK_K,
    mma: str = "ptx",
    ldmatrix: bool | None = None,
    async_copy: bool | None = None,
    kv_heads: int | None = None,
    out_dtype: str | None = None,
) -> KernelSource:
    """The tensor-core attention kernel; see the module docstring. ``mma`` is ``"ptx"`` (the
    instructions) or ``"emulated"`` (the test double, any device); `ldmatrix` and
    `async_copy` default to the knobs `attention_mma_ldmatrix` and `attention_mma_async_copy`.
    `out_dtype` ``"f32"`` stores the output rounded to `dtype` in a float32 buffer."""
    ldmatrix = knobs.value("attention_mma_ldmatrix") if ldmatrix is None else ldmatrix
    async_copy = knobs.value("attention_mma_async_copy") if async_copy is None else async_copy
    check_positive(name, batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=num_heads,
                   head_dim=head_dim, warps=warps, block_k=block_k)
    if dtype not in ("f16", "bf16"):
        raise ValueError(f"kernel '{name}': tensor-core attention takes f16 or bf16, "
                         f"not '{dtype}'")
    if head_dim % 16 or block_k % 16:
        raise ValueError(f"kernel '{name}': head_dim ({head_dim}) and block_k ({block_k}) "
                         "must be multiples of 16")
    if mma not in ("ptx", "emulated"):
        raise ValueError(f"kernel '{name}': mma must be 'ptx' or 'emulated', got '{mma}'")
    args = attention_args(name, has_mask, mask_dtype, dtype, out_dtype=out_dtype)
    stored = out_dtype or dtype
    d, bk, threads, bq = head_dim, block_k, 32 * warps, 16 * warps
    stride = d + PAD
    width = num_heads * d
    q_at = q_layout.resolved(seq_q, width)
    kv_heads, kv_h = grouped_kv_heads(name, num_heads, kv_heads)
    k_at = k_layout.resolved(seq_k, kv_heads * d)
    v_at = v_layout.resolved(seq_k, kv_heads * d)
    groups_q = -(-seq_q // bq)
    emulated = mma == "emulated"
    block = f"{groups_q - 1} - (int)get_group_id(0)" if causal else "(int)get_group_id(0)"
    key_end = f"min({seq_k}, query0 + {bq})" if causal else f"{seq_k}"
    mma_lead = "mma_scratch + warp * " + str(SCRATCH) + ", lane, " if emulated else ""
    row_lead = "xch + warp * 32, lane, " if emulated else ""
    ldsm_lead = "kv, ldsm_xch + warp * 32, lane, " if emulated else ""
    copy_lead = "kv, " if emulated else ""
    stages = _stages(d, bk, async_copy, _aligned(*k_at, *v_at))
    stage_elems = 2 * bk * stride

    def address(offset: str) -> str:
        """The shared-memory address of element `offset` of ``kv`` (bytes from ``kv`` in the
        emulation, whose helpers take ``kv`` itself)."""
        return f"(uint)(2 * ({offset}))" if emulated else f"(uint)(size_t)(kv + {offset})"

    def copies(which: str, at: tuple[int, int, int], start: str, offset: str) -> str:
        """cp.async of rows start.. of K or V into ``kv`` at `offset` (zeros past key_end)."""
        chunks = d // 8
        return (
            f"            for (int e = lid; e < {bk * chunks}; e += {threads}) {{\n"
            f"                const int j = e / {chunks}, c = (e % {chunks}) * 8,"
            f" key = {start} + j;\n"
            f"                {name}_cp16({copy_lead}{address(f'{offset} + j * {stride} + c')},\n"
            f"                    {which}_head + min(key, {seq_k - 1}) * {at[1]} + c,"
            " key < key_end ? 16u : 0u);\n"
            "            }\n")

    def staging(which: str, at: tuple[int, int, int]) -> str:
        """Copy rows k0.. of K or V into `which`_tile (zeros past key_end)."""
        vec = 8 if _aligned(*at) else 1
        chunks = d // vec
        if vec == 8:
            read = f"vload8(0, {which}_head + key * {at[1]} + c)"
            zero, store = "(ushort8)(0)", f"vstore8(value, 0, {which}_tile + j * {stride} + c)"
            kind = "ushort8"
        else:
            read, zero, kind = f"{which}_head[key * {at[1]} + c]", "0", "ushort"
            store = f"{which}_tile[j * {stride} + c] = value"
        return (
            f"        for (int e = lid; e < {bk * chunks}; e += {threads}) {{\n"
            f"            const int j = e / {chunks}, c = (e % {chunks}) * {vec}, key = k0 + j;\n"
            f"            const {kind} value = key < key_end ? {read} : {zero};\n"
            f"            {store};\n"
            "        }\n")

    visible = [f"key < {seq_k}"]
    if has_mask:
        visible.append("key_visible[key - k0]")
    mask_decl = f"    __local int key_visible[{bk}];\n" if has_mask else ""
    mask_load = (
        f"        for (int j = lid; j < {bk}; j += {threads}) {{\n"
        "            const int key = k0 + j;\n"
        f"            key_visible[j] = key < {seq_k} && mask[b * {seq_k} + key] != 0;\n"
        "        }\n") if has_mask else ""
    causal_check = " && key <= query" if causal else ""
    scratch_decl = (f"    __local float mma_scratch[{warps * SCRATCH}];\n"
                    f"    __local float xch[{warps * 32}];\n"
                    f"    __local uint ldsm_xch[{warps * 32}];\n") if emulated else ""
    if stages == 2:
        loop_head = f"""\
{copies("k", k_at, "0", "0")}{copies("v", v_at, "0", str(bk * stride))}\
    {name}_commit();
    for (int k0 = 0, it = 0; k0 < key_end; k0 += {bk}, ++it) {{
        const int k_off = (it & 1) * {stage_elems}, v_off = k_off + {bk * stride};
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + {bk} < key_end) {{
            const int next = {stage_elems} - k_off;
{copies("k", k_at, f"(k0 + {bk})", "next")}\
{copies("v", v_at, f"(k0 + {bk})", f"next + {bk * stride}")}\
        }}
        {name}_commit();
        {name}_wait();
{mask_load}\
        barrier(CLK_LOCAL_MEM_FENCE);
        __local ushort *k_tile = kv + k_off, *v_tile = kv + v_off;
"""
    else:
        loop_head = f"""\
    for (int k0 = 0; k0 < key_end; k0 += {bk}) {{
        const int k_off = 0, v_off = {bk * stride};
        __local ushort *k_tile = kv + k_off, *v_tile = kv + v_off;
        barrier(CLK_LOCAL_MEM_FENCE);
{staging("k", k_at)}{staging("v", v_at)}{mask_load}\
        barrier(CLK_LOCAL_MEM_FENCE);
"""
    k_lanes = address(f"k_off + (8 * j + 8 * (lane >> 4) + (lane & 7)) * {stride}"
                      " + 8 * ((lane >> 3) & 1)")
    v_lanes = address(f"v_off + (16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1)) * {stride}"
                      " + 8 * (lane >> 4)")
    if ldmatrix:
        scores = f"""\
            #pragma unroll
            for (int j = 0; j < {bk // 8}; j += 2) {{
                s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
                s[j + 1][0] = s[j + 1][1] = s[j + 1][2] = s[j + 1][3] = 0.0f;
                /* matrices: keys 8 j (+8 for lanes 16..31), columns +8 for lanes 8..15, 24..31 */
                const uint k_at = {k_lanes};
                #pragma unroll
                for (int kk = 0; kk < {d // 16}; ++kk) {{
                    uint b0, b1, b2, b3;
                    {name}_ldsm({ldsm_lead}k_at + 32 * kk, &b0, &b1, &b2, &b3);
                    {name}_mma({mma_lead}qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3], b0, b1,
                               &s[j][0], &s[j][1], &s[j][2], &s[j][3]);
                    {name}_mma({mma_lead}qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3], b2, b3,
                               &s[j + 1][0], &s[j + 1][1], &s[j + 1][2], &s[j + 1][3]);
                }}
            }}
"""
        products = f"""\
                /* matrices: keys 16 kk (+8 for lanes 8..15, 24..31), columns +8 for lanes 16..31 */
                const uint v_at = {v_lanes};
                #pragma unroll
                for (int n = 0; n < {d // 8}; n += 2) {{
                    uint b0, b1, b2, b3;
                    {name}_ldsm_t({ldsm_lead}v_at + 16 * n, &b0, &b1, &b2, &b3);
                    {name}_mma({mma_lead}a0, a1, a2, a3, b0, b1,
                               &o[n][0], &o[n][1], &o[n][2], &o[n][3]);
                    {name}_mma({mma_lead}a0, a1, a2, a3, b2, b3,
                               &o[n + 1][0], &o[n + 1][1], &o[n + 1][2], &o[n + 1][3]);
                }}
"""
    else:
        scores = f"""\
            #pragma unroll
            for (int j = 0; j < {bk // 8}; ++j) {{
                s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
                __local const ushort *kr = k_tile + (8 * j + g) * {stride} + 2 * t;
                #pragma unroll
                for (int kk = 0; kk < {d // 16}; ++kk) {{
                    const uint b0 = *(__local const uint *)(kr + 16 * kk);
                    const uint b1 = *(__local const uint *)(kr + 16 * kk + 8);
                    {name}_mma({mma_lead}qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3], b0, b1,
                               &s[j][0], &s[j][1], &s[j][2], &s[j][3]);
                }}
            }}
"""
        products = f"""\
                __local const ushort *vr = v_tile + (16 * kk + 2 * t) * {stride} + g;
                #pragma unroll
                for (int n = 0; n < {d // 8}; ++n) {{
                    const uint b0 = (uint)vr[8 * n] | ((uint)vr[8 * n + {stride}] << 16);
                    const uint b1 = (uint)vr[8 * n + {8 * stride}]
                                    | ((uint)vr[8 * n + {9 * stride}] << 16);
                    {name}_mma({mma_lead}a0, a1, a2, a3, b0, b1,
                               &o[n][0], &o[n][1], &o[n][2], &o[n][3]);
                }}
"""
    q_pairs = all(x % 2 == 0 for x in q_at)  # each A register one 32-bit read
    q_read = "*(__global const uint *)p" if q_pairs else "((uint)p[0] | ((uint)p[1] << 16))"
    # A warp whose rows all lie before the tile's first key skips it (no barrier inside on the
    # GPU; the emulation's helpers hold barriers, so every work-item runs every tile there).
    skip_open = ("        if (!causal_skip) {\n" if causal and not emulated else
                 "        {\n")
    skip_decl = (f"        const bool causal_skip = k0 > query0 + {16} * warp + 15;\n"
                 if causal and not emulated else "")
    log2e_scale = float_literal(scale * math.log2(math.e))
    pair = [half.round_to(dtype, "o[n][{%s}] * inverse_{r}" % x) if stored != dtype
            else "o[n][{%s}] * inverse_{r}" % x for x in ("lo", "hi")]
    out_store = half.vstore(stored, 2, f"(float2)({pair[0]}, {pair[1]})",
                            f"(row_{{r}} * {width} + col) / 2", "out_head")
    body = f"""\
    const int lid = get_local_id(0), lane = lid & 31, warp = lid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int query0 = ({block}) * {bq};
    const int b = get_group_id(1) / {num_heads}, h = get_group_id(1) % {num_heads};
    __global const ushort *q_head = (__global const ushort *)q
        + b * {q_at[0]} + {q_at[2]} + h * {d};
    __global const ushort *k_head = (__global const ushort *)k
        + b * {k_at[0]} + {k_at[2]} + {kv_h} * {d};
    __global const ushort *v_head = (__global const ushort *)v
        + b * {v_at[0]} + {v_at[2]} + {kv_h} * {d};
    __global {half.STORAGE[stored]} *out_head = out + b * {seq_q * width} + h * {d};
    __local ushort kv[{stages * stage_elems}] __attribute__((aligned(16)));
{mask_decl}{scratch_decl}\
    const int query_0 = query0 + {16} * warp + g, query_1 = query_0 + 8;
    /* the warp's Q rows as A fragments: qf[kk] covers head columns 16 kk .. 16 kk + 15 */
    uint qf[{d // 16}][4];
    #pragma unroll
    for (int kk = 0; kk < {d // 16}; ++kk) {{
        #pragma unroll
        for (int i = 0; i < 4; ++i) {{
            const int query = (i & 1) ? query_1 : query_0;
            const int c = 16 * kk + 2 * t + ((i & 2) ? 8 : 0);
            __global const ushort *p = q_head + query * {q_at[1]} + c;
            qf[kk][i] = query < {seq_q} ? {q_read} : 0u;
        }}
    }}
    float o[{d // 8}][4];
    #pragma unroll
    for (int n = 0; n < {d // 8}; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float max_0 = -INFINITY, max_1 = -INFINITY, sum_0 = 0.0f, sum_1 = 0.0f;
    const int key_end = {key_end};
{loop_head}{skip_decl}{skip_open}\
            float s[{bk // 8}][4];
{scores}\
            float tile_max_0 = -INFINITY, tile_max_1 = -INFINITY;
            #pragma unroll
            for (int j = 0; j < {bk // 8}; ++j) {{
                #pragma unroll
                for (int i = 0; i < 4; ++i) {{
                    const int key = k0 + 8 * j + 2 * t + (i & 1);
                    const int query = (i & 2) ? query_1 : query_0;
                    s[j][i] = ({" && ".join(visible)}{causal_check})
                        ? s[j][i] * {log2e_scale} : -INFINITY;
                }}
                tile_max_0 = fmax(tile_max_0, fmax(s[j][0], s[j][1]));
                tile_max_1 = fmax(tile_max_1, fmax(s[j][2], s[j][3]));
            }}
            tile_max_0 = {name}_max4({row_lead}tile_max_0);
            tile_max_1 = {name}_max4({row_lead}tile_max_1);
            const float new_0 = fmax(max_0, tile_max_0), new_1 = fmax(max_1, tile_max_1);
            const float base_0 = new_0 == -INFINITY ? 0.0f : new_0;
            const float base_1 = new_1 == -INFINITY ? 0.0f : new_1;
            const float correction_0 = native_exp2(max_0 - base_0);
            const float correction_1 = native_exp2(max_1 - base_1);
            max_0 = new_0;
            max_1 = new_1;
            sum_0 *= correction_0;
            sum_1 *= correction_1;
            #pragma unroll
            for (int n = 0; n < {d // 8}; ++n) {{
                o[n][0] *= correction_0; o[n][1] *= correction_0;
                o[n][2] *= correction_1; o[n][3] *= correction_1;
            }}
            #pragma unroll
            for (int j = 0; j < {bk // 8}; ++j) {{
                s[j][0] = native_exp2(s[j][0] - base_0); s[j][1] = native_exp2(s[j][1] - base_0);
                s[j][2] = native_exp2(s[j][2] - base_1); s[j][3] = native_exp2(s[j][3] - base_1);
                sum_0 += s[j][0] + s[j][1];
                sum_1 += s[j][2] + s[j][3];
            }}
            #pragma unroll
            for (int kk = 0; kk < {bk // 16}; ++kk) {{
                const uint a0 = {name}_pack(s[2 * kk][0], s[2 * kk][1]);
                const uint a1 = {name}_pack(s[2 * kk][2], s[2 * kk][3]);
                const uint a2 = {name}_pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
                const uint a3 = {name}_pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
{products}\
            }}
        }}
    }}
    sum_0 = {name}_sum4({row_lead}sum_0);
    sum_1 = {name}_sum4({row_lead}sum_1);
    const float inverse_0 = sum_0 > 0.0f ? 1.0f / sum_0 : 0.0f;
    const float inverse_1 = sum_1 > 0.0f ? 1.0f / sum_1 : 0.0f;
    const int row_0 = query_0, row_1 = query_1;
    #pragma unroll
    for (int n = 0; n < {d // 8}; ++n) {{
        const int col = 8 * n + 2 * t;
        if (query_0 < {seq_q}) {out_store.format(lo=0, hi=1, r=0)};
        if (query_1 < {seq_q}) {out_store.format(lo=2, hi=3, r=1)};
    }}
"""
    attribute = f"__attribute__((reqd_work_group_size({threads}, 1, 1)))"
    flags = header_flags(causal, has_mask, mask_dtype, dtype)
    helpers = half.HELPERS + (half.bf16_vector_helper(2) if dtype == "bf16" else "")
    if emulated:  # unrolled, the emulation's calls make the CPU compiler take seconds more
        body = body.replace("#pragma unroll\n", "\n")
    source = (
        f"// {name}: tensor-core attention B={batch} S_q={seq_q} S_k={seq_k} H={num_heads}"
        f" D={d}{flags}, {bq} queries x {bk} keys per tile, {warps} warps"
        f"{', ldmatrix' if ldmatrix else ''}{', cp.async x2' if stages == 2 else ''}"
        f" ({MMAS[dtype].instruction}{', emulated' if emulated else ''})\n"
        f"{helpers}{_helpers(name, dtype, mma, ldmatrix or stages == 2)}"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (groups_q * threads, batch * num_heads),
                        (threads, 1))
