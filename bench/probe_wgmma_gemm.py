"""Probe: a whole f16 GEMM on Hopper `wgmma`, through OpenCL C whose PTX is patched to sm_90a.

    python3 -m fusec.bench.probe_wgmma_gemm [--size 4096] [--variants BN,BK,S,ACC,WAIT[,FLAG...] ...]

`probe_wgmma` showed that NVIDIA's OpenCL driver takes back its own PTX retargeted to sm_90a
and runs `wgmma` from it. This probe asks what a GEMM built that way reaches: ``C = A @ B.T``
(A M x K and B N x K row-major, f16 or, with a flag, bf16 or f32 read as tf32, both K-major
as `wgmma` reads them without transposes; C f16, f32 accumulation), one work-group per 128 x BN block of C with two consumer warpgroups
(each a 64 x BN `wgmma.m64n{BN}k16` accumulator), K in steps of BK elements through S stages
of __local memory filled by 16-byte ``cp.async``, blocks visited in groups of 8 block rows.

Without flags (the first design): every thread copies, a work-group barrier per step,
refill distance S - 2, and the stages in the 8 x 16-byte core-matrix layout without swizzle
(chunk ``i`` at byte ``16 i``). That is 3x slower than it should be: a `cp.async` writes
__local memory per global line it reads, and the 16-byte pieces of one row of A or B sit
128 bytes apart in that layout, so in the same banks. The fast design (flags
``sw128,cst,cstin``, S=4): the 128-byte swizzled layout (descriptor layout type 1: chunk ``c``
of row ``r`` at ``128 r + 16 (c ^ r % 8)``, one warp reading 4 whole rows), and C staged
through __local rows (in the stage buffers, once both warpgroups' `wgmma`s are done) so that
it leaves as whole 512-byte rows. A producer warpgroup with mbarriers (``ws``) was no faster.
`FLAGS` lists the switches, ablations among them; results in bench/README.md.

Each variant runs in its own process (a fault ends the OpenCL context), is checked against
numpy on the first and last 128 rows of C, and timed by profiling events (median of 10 after
2 warm-ups); torch's ``a @ b`` of the same size in f16 is timed in the parent for scale.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

FENCE = "// FENCE_PROXY_ASYNC"
STEP = re.compile(r"^[ \t]*// WGMMA_STEP (.*)$", re.M)
WAIT0 = re.compile(r"^[ \t]*// WGMMA_WAIT0 .*$", re.M)
INIT = re.compile(r"^[ \t]*// WGMMA_INIT.*$", re.M)
DONE = re.compile(r"^[ \t]*// WGMMA_DONE (.*)$", re.M)

FLAGS = {
    "noload": "no copies in the K loop (the product is then not checked)",
    "nofence": "no proxy fence per step",
    "nobar": "no work-group barrier per step (sync mode; races, for timing only)",
    "sametile": "every step copies the K = 0 tile (always in L2; product not checked)",
    "far": "sync mode: refill distance S - 1 (needs WAIT 0) instead of S - 2",
    "sw128": "128-byte swizzled layout (descriptor layout type 1), rows read as whole lines",
    "ws": "warp-specialized: producer warps copy, two consumer warpgroups mma, mbarriers",
    "p1": "ws with 1 producer warp (default 4, a warpgroup)", "p2": "ws with 2 producer warps",
    "persist": "ws, one work-group per multiprocessor looping over tiles (loads of the next "
               "tile overlap the epilogue)",
    "cst": "C staged through __local rows, written as whole 16-byte row pieces",
    "cstin": "with cst: the staging rows in the stage buffers, after a barrier of the 256 "
             "consumer threads (so S=4 fits)",
    "nostore": "C not written (ablation; product not checked)",
    "rows8": "sw128 layout filled as without swizzle: a warp reads 8 rows x 64 B",
    "bf16": "bf16 A and B (`wgmma ... .f32.bf16.bf16`); C still f16",
    "tf32": "f32 A and B read as tf32 (`wgmma m64nNk8 .f32.tf32.tf32`, BK=32 for sw128); "
            "C still f16",
    "samek": "with noload: every wgmma reads the same k16 slice of slot 0 (as probe_wgmma's "
             "throughput loop does)",
}


@dataclass(frozen=True)
class Variant:
    """One kernel: BN x BK tiles, S stages, accumulators in C or PTX, `wgmma.wait_group`
    WAIT per step, and ablation or design flags (`FLAGS`)."""

    bn: int
    bk: int
    stages: int
    acc: str = "ptx"
    wait: int = 1
    flags: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Variant:
        bn, bk, stages, acc, wait, *flags = text.split(",")
        unknown = [f for f in flags if f not in FLAGS]
        if unknown:
            raise SystemExit(f"unknown flag(s) {unknown}; known: {sorted(FLAGS)}")
        v = cls(int(bn), int(bk), int(stages), acc, int(wait), tuple(flags))
        if "bf16" in v.flags and "tf32" in v.flags:
            raise SystemExit("bf16 or tf32, not both")
        if v.swizzle and v.bk * v.elem_bytes != 128:
            raise SystemExit("sw128 needs BK x element size = 128 bytes (BK=64 for 16-bit "
                             "inputs, 32 for tf32)")
        if v.ws and v.acc != "ptx":
            raise SystemExit("ws needs ACC=ptx")
        if "far" in v.flags and (v.ws or v.wait != 0):
            raise SystemExit("far is for sync mode with WAIT 0")
        if "samek" in v.flags and v.loads:
            raise SystemExit("samek needs noload")
        if "cstin" in v.flags and "cst" not in v.flags:
            raise SystemExit("cstin needs cst")
        if "rows8" in v.flags and not v.swizzle:
            raise SystemExit("rows8 needs sw128")
        if "persist" in v.flags and not v.ws:
            raise SystemExit("persist needs ws")
        if v.smem_bytes > 232448:
            raise SystemExit(f"{v.smem_bytes} bytes of __local: over the 227 KiB a block may have")
        return v

    @property
    def elem_bytes(self) -> int:
        return 4 if "tf32" in self.flags else 2

    @property
    def dtype(self) -> str:
        return "tf32" if "tf32" in self.flags else "bf16" if "bf16" in self.flags else "f16"

    @property
    def k_inst(self) -> int:
        """K of one `wgmma`: 32 bytes of each row (16 elements of 16 bits, 8 of tf32)."""
        return 32 // self.elem_bytes

    @property
    def row_bytes(self) -> int:
        return self.bk * self.elem_bytes

    @property
    def swizzle(self) -> bool:
        return "sw128" in self.flags

    @property
    def ws(self) -> bool:
        return "ws" in self.flags

    @property
    def producer_threads(self) -> int:
        return 32 * (1 if "p1" in self.flags else 2 if "p2" in self.flags else 4)

    @property
    def threads(self) -> int:
        return 256 + (self.producer_threads if self.ws else 0)

    @property
    def loads(self) -> bool:
        return "noload" not in self.flags

    @property
    def k_step_units(self) -> int:
        """Descriptor start-address step (16-byte units) between the k16 slices of a stage:
        two core matrices (256 B) without swizzle, 32 B inside a swizzled 128-byte row."""
        return 2 if self.swizzle else 16

    @property
    def desc_fields(self) -> int:
        if self.swizzle:  # LBO unused for K-major swizzled tiles (1), SBO = 8 rows x 128 B
            return (1 << 16) | ((1024 >> 4) << 32) | (1 << 62)
        ch = self.row_bytes // 16
        return ((128 >> 4) << 16) | (((ch * 128) >> 4) << 32)

    @property
    def staging_offset(self) -> int:
        """Byte offset of the `cst` staging rows: after the stages and 1 KiB of mbarriers,
        or (`cstin`) at the start of the stages, which all have been read by then."""
        if "cstin" in self.flags:
            return 0
        return self.stages * (128 + self.bn) * self.row_bytes + 1024

    @property
    def smem_bytes(self) -> int:
        staging = 128 * (self.bn * 2 + 16) if "cst" in self.flags else 0
        if "cstin" in self.flags:
            return max(self.stages * (128 + self.bn) * self.row_bytes + 1024, staging)
        return self.staging_offset + staging

    def label(self) -> str:
        kib = self.stages * (128 + self.bn) * self.row_bytes // 1024
        return (f"{self.dtype} BM=128 BN={self.bn} BK={self.bk} S={self.stages} ({kib} KiB) acc={self.acc}"
                f" wait={self.wait} threads={self.threads}"
                + "".join(f" {f}" for f in self.flags))


def load_function(v: Variant, nthreads: int) -> str:
    """OpenCL C `load_stage`: thread `t` of `nthreads` issues its 16-byte `cp.async` copies
    of the A (128 x BK) and B (BN x BK) tiles at K tile `kt` into the stage at `slot`.

    No swizzle: chunk `idx` lands at byte 16 idx (core matrix after core matrix, conflict
    free), so 8 consecutive threads take 8 rows' same 16 bytes: a warp reads 8 rows x 64 B.
    sw128: thread `idx` takes row idx / 8, chunk idx % 8, so a warp reads 4 whole 128-byte
    rows, and writes chunk c of row r to r * 128 + 16 (c ^ r % 8), conflict free too."""
    ch = v.row_bytes // 16
    a_stage = 128 * v.row_bytes
    per_chunk = 16 // v.elem_bytes
    kt = "0" if "sametile" in v.flags else "kt"

    def part(rows: int, base: str, offset: int) -> str:
        if v.swizzle and "rows8" in v.flags:
            where = ("int r = (idx / (8 * CH)) * 8 + (idx & 7), c = (idx >> 3) % CH;\n"
                     f"        uint dst = slot + {offset} + r * 128 + ((c ^ (r & 7)) << 4);")
        elif v.swizzle:
            where = ("int r = idx >> 3, c = idx & 7;\n"
                     f"        uint dst = slot + {offset} + r * 128 + ((c ^ (r & 7)) << 4);")
        else:
            where = ("int r = (idx / (8 * CH)) * 8 + (idx & 7), c = (idx >> 3) % CH;\n"
                     f"        uint dst = slot + {offset} + idx * 16;")
        return f"""
    #pragma unroll
    for (int i = 0; i < {rows * ch // nthreads}; ++i) {{
        int idx = t + i * {nthreads};
        {where}
        ulong g = {base} + ((ulong)r * K + {kt} * {v.bk} + c * {per_chunk}) * {v.elem_bytes};
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(g) : "memory");
    }}"""

    return (f"inline void load_stage(ulong a_glob, ulong b_glob, int K, int kt, uint slot, int t) {{"
            f"{part(128, 'a_glob', 0)}{part(v.bn, 'b_glob', a_stage)}\n}}\n")


def kernel_source(v: Variant) -> str:
    """OpenCL C of one variant. ``acc="c"``: the accumulators are OpenCL C floats tied
    (``"+f"``) to the step comment; ``acc="ptx"``: they are PTX registers the patch declares
    (``%acc<n>``), handed out to C floats only after ``wgmma.wait_group 0``."""
    bn, bk, stages = v.bn, v.bk, v.stages
    ch = v.row_bytes // 16
    a_stage, b_stage = 128 * v.row_bytes, bn * v.row_bytes
    n_acc = bn // 2
    accs = [f"d{i}" for i in range(n_acc)]
    outs = ", ".join(f'"+f"({a})' for a in accs)
    names = ", ".join(f"%{i}" for i in range(n_acc))
    zeros = ", ".join(f"{a} = 0.0f" for a in accs)
    if v.acc == "c":
        init = f"float {zeros};"
        step = (f'asm volatile("// WGMMA_STEP {names}, %{n_acc}, %{n_acc + 1}" '
                f': {outs} : "l"(da), "l"(db) : "memory");')
        done = f'asm volatile("// WGMMA_WAIT0 {names}" : {outs} :: "memory");'
    else:
        init = 'asm volatile("// WGMMA_INIT" ::: "memory");'
        step = 'asm volatile("// WGMMA_STEP %0, %1" :: "l"(da), "l"(db) : "memory");'
        done = (f"float {', '.join(accs)};\n        "
                f'asm volatile("// WGMMA_DONE {names}" : '
                f'{outs.replace(chr(43), chr(61))} :: "memory");')
    slot_bytes = "0" if "samek" in v.flags else "slot * STAGE_BYTES"
    descriptors = f"""uint sa = sbase + {slot_bytes} + wg * {64 * v.row_bytes};
            uint sb = sbase + {slot_bytes} + {a_stage};
            ulong da = (((ulong)sa >> 4) & 0x3FFFUL) | {v.desc_fields}UL;
            ulong db = (((ulong)sb >> 4) & 0x3FFFUL) | {v.desc_fields}UL;"""
    lane_text = """int lane = tid & 31, warp = (tid >> 5) & 3;"""
    if "cst" in v.flags:
        # each warpgroup's 64 x BN tile goes through __local rows of BN * 2 + 16 bytes (the
        # 16 bytes of padding make the half2 writes of 8 rows x 4 lanes conflict free), then
        # out as 16-byte stores, one warp per BN * 2 contiguous bytes of a row of C
        row_bytes = bn * 2 + 16
        per_row = bn // 8
        rows_per_pass = 128 // per_row
        stores = ['asm volatile("bar.sync 1, 256;" ::: "memory");' if "cstin" in v.flags
                  else "/* staging rows of their own */",
                  f"__local uchar *stg = (__local uchar *)smem + {v.staging_offset} "
                  f"+ wg * {64 * row_bytes};",
                  "int lr = warp * 16 + (lane >> 2), q4 = (lane & 3) * 4;"]
        for j in range(bn // 8):
            for h in range(2):
                stores.append(
                    f"vstore_half2((float2)(d{4 * j + 2 * h}, d{4 * j + 2 * h + 1}), 0, "
                    f"(__local half *)(stg + (lr + {8 * h}) * {row_bytes} + {16 * j} + q4));")
        stores += [
            'asm volatile("bar.sync 1, 256;" ::: "memory");',
            "int t128 = tid & 127;",
            "#pragma unroll",
            f"for (int i = 0; i < {64 // rows_per_pass}; ++i) {{",
            f"    int r = i * {rows_per_pass} + t128 / {per_row}, chunk = t128 % {per_row};",
            f"    uint4 val = *(__local uint4 *)(stg + r * {row_bytes} + chunk * 16);",
            f"    *(__global uint4 *)(C + (size_t)(bm * 128 + wg * 64 + r) * N "
            f"+ bn * {bn} + chunk * 8) = val;",
            "}",
            'asm volatile("bar.sync 1, 256;" ::: "memory");',
        ]
    else:
        stores = ["int row0 = bm * 128 + wg * 64 + warp * 16 + (lane >> 2);",
                  f"int col0 = bn * {bn} + 2 * (lane & 3);"]
        for j in range(bn // 8):
            col = f"col0 + {8 * j}"
            stores.append(
                f"vstore_half2((float2)(d{4 * j}, d{4 * j + 1}), 0, C + row0 * N + {col});")
            stores.append(f"vstore_half2((float2)(d{4 * j + 2}, d{4 * j + 3}), 0, "
                          f"C + (row0 + 8) * N + {col});")
    if "nostore" in v.flags:  # kept behind a test that fails at run time: stores the
        # compiler could drop would let ptxas drop the wgmmas too (their results unused)
        stores = ["if (K < 0) {", *stores, "}"]
    store_text = "\n        ".join(stores)
    final_release = ""
    if v.ws and "persist" in v.flags:  # the tile's last slot, free once `done` waited
        final_release = ('asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" '
                         f':: "r"(bars + 8 * ({stages} + (it - 1) % {stages})) : "memory");')
    epilogue = f"""{done}
        {final_release}
        {lane_text}
        {store_text}"""
    tile_coords = f"""int first_m = (tile / in_group) * 8;
        int group_m = min(num_m - first_m, 8);
        int bm = first_m + (tile % in_group) % group_m;
        int bn = (tile % in_group) / group_m;
        ulong a_glob = (ulong)(A + (size_t)bm * 128 * K);
        ulong b_glob = (ulong)(B + (size_t)bn * {bn} * K);"""
    head = f"""
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define CH {ch}
#define STAGE_BYTES {a_stage + b_stage}

{load_function(v, v.producer_threads if v.ws else 256)}
__kernel __attribute__((reqd_work_group_size({v.threads}, 1, 1)))
void wgmma_gemm(__global const {"float" if v.dtype == "tf32" else "half"} *A,
                __global const {"float" if v.dtype == "tf32" else "half"} *B, __global half *C,
                int M, int N, int K) {{
    __local uint4 smem[{v.smem_bytes // 16}] __attribute__((aligned(1024)));
    int tid = get_local_id(0);
    int pid = get_group_id(0);
    int num_m = M / 128, num_n = N / {bn};
    int in_group = 8 * num_n;
    uint sbase = (uint)(size_t)smem;
    int ktiles = K / {bk};
"""
    if not v.ws:
        far = "far" in v.flags
        dist = stages - 1 if far else stages - 2
        bar = "" if "nobar" in v.flags else "barrier(CLK_LOCAL_MEM_FENCE);"
        return head + f"""    int wg = tid >> 7;
    int tile = pid;
    {{
        {tile_coords}
        for (int s = 0; s < {dist}; ++s) {{
            if (s < ktiles) load_stage(a_glob, b_glob, K, s, sbase + s * STAGE_BYTES, tid);
            asm volatile("cp.async.commit_group;" ::: "memory");
        }}
        {init}
        #pragma unroll 1
        for (int kt = 0; kt < ktiles; ++kt) {{
            asm volatile("cp.async.wait_group {dist - 1};" ::: "memory");
            asm volatile("{FENCE}" ::: "memory");
            {bar}
            int nk = kt + {dist};
            if ({int(v.loads)} && nk < ktiles) load_stage(a_glob, b_glob, K, nk, sbase + (nk % {stages}) * STAGE_BYTES, tid);
            asm volatile("cp.async.commit_group;" ::: "memory");
            int slot = kt % {stages};
            {descriptors}
            {step}
        }}
        {epilogue}
    }}
}}
"""
    pt = v.producer_threads
    # mbarriers after the stages: full[s] (producers' copies landed, PT arrivals, each the
    # completion of one producer thread's cp.async), empty[s] (the 256 consumer threads,
    # each after its warpgroup's wgmma group reading slot s is done). Tiles are visited
    # tile = group id, group id + groups, ... (one tile per group unless `persist` launches
    # one group per multiprocessor); `it` counts K steps over all of a group's tiles, so the
    # slot is it % S and the phase (it / S) & 1 across tile boundaries.
    wait_asm = ('asm volatile("{{ .reg .pred P1; {lab}: '
                'mbarrier.try_wait.parity.shared.b64 P1, [%0], %1; @!P1 bra {lab}; }}" '
                ':: "r"({addr}), "r"({parity}) : "memory");')
    release = ('asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" '
               f':: "r"(bars + 8 * ({stages} + (it - 1) % {stages})) : "memory");')
    # one tile per group unless `persist`: a loop around the consumer's tile (even one that
    # runs once) made ptxas serialize the wgmmas (C7514) with WAIT 1
    tile_loop = ("#pragma unroll 1\n        for (int tile = pid; tile < ntiles; tile += groups) {"
                 if "persist" in v.flags else "{ int tile = pid;")
    return head + f"""    uint bars = sbase + {stages} * STAGE_BYTES;
    int groups = get_num_groups(0), ntiles = num_m * num_n;
    if (tid == 0) {{
        for (int s = 0; s < {stages}; ++s) {{
            asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(bars + 8 * s), "r"({pt}) : "memory");
            asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(bars + 8 * ({stages} + s)), "r"(256) : "memory");
        }}
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    uint it = 0;
    if (tid >= 256) {{
        int t = tid - 256;
        #pragma unroll 1
        for (int tile = pid; tile < ntiles; tile += groups) {{
            {tile_coords}
            #pragma unroll 1
            for (int kt = 0; kt < ktiles; ++kt, ++it) {{
                uint slot = it % {stages};
                if (it >= {stages}) {{
                    uint parity = ((it / {stages}) - 1) & 1;
                    {wait_asm.format(lab="WAIT_EMPTY", addr=f"bars + 8 * ({stages} + slot)", parity="parity")}
                }}
                if ({int(v.loads)}) load_stage(a_glob, b_glob, K, kt, sbase + slot * STAGE_BYTES, t);
                asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(bars + 8 * slot) : "memory");
            }}
        }}
        asm volatile("cp.async.wait_all;" ::: "memory");
    }} else {{
        int wg = tid >> 7;
        {tile_loop}
            {tile_coords}
            {init}
            #pragma unroll 1
            for (int kt = 0; kt < ktiles; ++kt, ++it) {{
                uint slot = it % {stages};
                uint parity = (it / {stages}) & 1;
                {wait_asm.format(lab="WAIT_FULL", addr="bars + 8 * slot", parity="parity")}
                asm volatile("{FENCE}" ::: "memory");
                {descriptors}
                {step}
                // every consumer thread arrives: a lane-0 branch or predicate here, with a
                // wgmma group still in flight, made ptxas serialize the wgmmas (C7514)
                if (kt > 0) {release}
            }}
            {epilogue}
        }}
    }}
}}
"""


def patch(ptx: str, v: Variant) -> str:
    """The comments of `kernel_source` replaced by real PTX; `.target` raised to sm_90a."""
    from fusec.bench.probe_wgmma import retarget

    n_acc = v.bn // 2
    ptx_accs = [f"%acc{i}" for i in range(n_acc)]
    if v.acc == "ptx":
        entry = ptx.index(".entry wgmma_gemm")
        first_reg = ptx.index(".reg", entry)
        ptx = ptx[:first_reg] + f".reg .f32 %acc<{n_acc}>;\n\t" + ptx[first_reg:]
        ptx, inits = INIT.subn(
            "\n".join(f"mov.f32 {a}, 0f00000000;" for a in ptx_accs), ptx)

        def done(match):
            outs = [r.strip() for r in match.group(1).split(",")]
            return "wgmma.wait_group.sync.aligned 0;\n" + "\n".join(
                f"mov.f32 {o}, {a};" for o, a in zip(outs, ptx_accs, strict=True))

        ptx, dones = DONE.subn(done, ptx)
        if inits != 1 or dones != 1:
            raise RuntimeError(f"found {inits} init and {dones} done comments")
    if FENCE not in ptx:
        raise RuntimeError("fence comment missing")
    ptx = ptx.replace(FENCE, "// no fence" if "nofence" in v.flags
                      else "fence.proxy.async.shared::cta;")

    def step(match):
        regs = [r.strip() for r in match.group(1).split(",")]
        if v.acc == "ptx":
            d, (da, db) = "{" + ", ".join(ptx_accs) + "}", regs
        else:
            d = "{" + ", ".join(regs[:n_acc]) + "}"
            da, db = regs[n_acc], regs[n_acc + 1]
        lines = ["{ .reg .pred p; .reg .u32 one; .reg .b64 xa, xb;",
                 "mov.u32 one, 1; setp.ne.u32 p, one, 0;", "wgmma.fence.sync.aligned;"]
        kind = {"f16": "f32.f16.f16", "bf16": "f32.bf16.bf16", "tf32": "f32.tf32.tf32"}[v.dtype]
        trans = "" if v.dtype == "tf32" else ", 0, 0"  # tf32 has no transpose immediates
        for j in range(v.bk // v.k_inst):
            off = 0 if "samek" in v.flags else v.k_step_units * j
            lines.append(f"add.s64 xa, {da}, {off}; add.s64 xb, {db}, {off};")
            lines.append(f"wgmma.mma_async.sync.aligned.m64n{v.bn}k{v.k_inst}.{kind} "
                         f"{d}, xa, xb, p, 1, 1{trans};")
        lines += ["wgmma.commit_group.sync.aligned;",
                  f"wgmma.wait_group.sync.aligned {v.wait}; }}"]
        return "\n".join(lines)

    ptx, steps = STEP.subn(step, ptx)
    ptx, waits = WAIT0.subn("wgmma.wait_group.sync.aligned 0;", ptx)
    if steps < 1 or (v.acc == "c" and waits < 1):
        raise RuntimeError(f"found {steps} step and {waits} wait comments")
    return retarget(ptx)


def run_variant(size: int, v: Variant, ptx_dir: str | None) -> None:
    """Build, check and time one variant (`FLAGS` says what each flag changes)."""
    import pyopencl as cl

    from fusec.bench.probe_wgmma import build_binary, build_source, nvidia_device, ptx_of

    device = nvidia_device()
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    label = v.label()
    program = build_source(ctx, device, kernel_source(v))
    ptx = ptx_of(program, device).rstrip("\0")
    patched = patch(ptx, v)
    if ptx_dir:
        tag = "_".join([str(v.bn), str(v.bk), str(v.stages), v.acc, str(v.wait), *v.flags])
        for name, text in ((f"gemm_{tag}.cl.ptx", ptx), (f"gemm_{tag}.sm90a.ptx", patched)):
            with open(f"{ptx_dir}/{name}", "w") as handle:
                handle.write(text)
    prog = build_binary(ctx, device, patched, label)
    rng = np.random.default_rng(1)
    m = n = k = size
    a, a32 = inputs(rng, (m, k), v.dtype)
    bt, bt32 = inputs(rng, (n, k), v.dtype)
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bt)
    c_buf = cl.Buffer(ctx, mf.READ_WRITE, m * n * 2)
    groups = (m // 128) * (n // v.bn)
    if "persist" in v.flags:
        groups = min(groups, device.max_compute_units)
    kern = prog.wgmma_gemm
    args = (a_buf, b_buf, c_buf, np.int32(m), np.int32(n), np.int32(k))
    nt = v.threads
    kern(queue, (groups * nt,), (nt,), *args).wait()
    c = np.empty((m, n), dtype=np.float16)
    cl.enqueue_copy(queue, c, c_buf)
    rows = np.unique(np.r_[0:128, m - 128:m, 0:m:7])  # every block row, warp and lane row
    want = a32[rows] @ bt32.T
    err = float(np.abs(c[rows].astype(np.float32) - want).max() / np.abs(want).max())
    times = []
    for i in range(12):
        event = kern(queue, (groups * nt,), (nt,), *args)
        event.wait()
        if i >= 2:
            times.append((event.profile.end - event.profile.start) * 1e-6)
    ms = statistics.median(times)
    checked = v.loads and "sametile" not in v.flags and "nostore" not in v.flags
    verdict = ("ok" if err < 1e-2 else "WRONG") if checked else "not checked: ablation"
    print(f"  [{label}] {ms:.3f} ms (min {min(times):.3f}), "
          f"{2 * m * n * k / ms / 1e9:.0f} TFLOP/s, "
          f"max err / max|C| {err:.1e} ({verdict})", flush=True)


def inputs(rng, shape, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(the array the kernel reads, its values as float32 for the reference): f16; bf16 as
    uint16 bit patterns rounded to nearest even; tf32 as float32 (the tensor cores read its
    top 19 bits, so the check's tolerance covers the rest)."""
    x = rng.uniform(-1, 1, size=shape).astype(np.float32)
    if dtype == "f16":
        h = x.astype(np.float16)
        return h, h.astype(np.float32)
    if dtype == "bf16":
        bits = x.view(np.uint32)
        bf = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        return bf, (bf.astype(np.uint32) << 16).view(np.float32)
    return x, x


def torch_ms(size: int, dtype: str = "f16") -> str:
    try:
        import torch
    except ImportError:
        return "torch not available"
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[dtype]
    a = torch.randn(size, size, device="cuda", dtype=tdt)
    b = torch.randn(size, size, device="cuda", dtype=tdt)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        a @ b
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    ms = statistics.median(times)
    label = "f32 a @ b, allow_tf32" if dtype == "tf32" else f"{dtype} a @ b"
    return f"  [torch {label}] {ms:.3f} ms, {2 * size ** 3 / ms / 1e9:.0f} TFLOP/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--variants", nargs="*",
                        default=["256,64,4,ptx,1,sw128,cst,cstin",
                                 "256,64,4,ptx,1,sw128,cst,cstin,bf16",
                                 "256,32,4,ptx,1,sw128,cst,cstin,tf32", "256,64,4,ptx,1"],
                        help="BN,BK,STAGES,ACC,WAIT[,FLAG...] (ACC c or ptx; WAIT: wgmma "
                             "groups left in flight after each step, 1 or 0; FLAGs: "
                             + "; ".join(f"{k}: {d}" for k, d in FLAGS.items()) + ")")
    parser.add_argument("--ptx-dir", default=None, help="write each variant's PTX here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=12.0)
    args = parser.parse_args()
    if args.one:
        run_variant(args.size, Variant.parse(args.one), args.ptx_dir)
        return
    dtypes = sorted({Variant.parse(v).dtype for v in args.variants})  # refuse a bad list
    print(f"== wgmma GEMM {args.size}^3, C = A @ B.T, f32 accumulation, C in f16", flush=True)
    for dtype in dtypes:
        print(torch_ms(args.size, dtype), flush=True)
    for variant in args.variants:
        began = time.time()
        cmd = [sys.executable, "-m", "fusec.bench.probe_wgmma_gemm", "--size", str(args.size),
               "--one", variant] + (["--ptx-dir", args.ptx_dir] if args.ptx_dir else [])
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            out = (done.stdout + done.stderr).strip()
            lines = [ln for ln in out.splitlines()
                     if "noinline" not in ln and "CompilerWarning" not in ln
                     and "lambda: self" not in ln]
            print("\n".join(lines[-25:]) if done.returncode == 0 or lines else
                  f"  [{variant}] exit {done.returncode}", flush=True)
            if done.returncode != 0:
                print(f"  [{variant}] exit {done.returncode}", flush=True)
        except subprocess.TimeoutExpired:
            print(f"  [{variant}] timed out after {args.timeout} s", flush=True)
        print(f"  ({variant}: {time.time() - began:.1f} s)", flush=True)
    for dtype in dtypes:
        print(torch_ms(args.size, dtype), flush=True)


if __name__ == "__main__":
    main()
