"""Probe: a whole f16 GEMM on Hopper `wgmma`, through OpenCL C whose PTX is patched to sm_90a.

    python3 -m fusec.bench.probe_wgmma_gemm [--size 4096] [--variants BN,BK,S ...]

`probe_wgmma` showed that NVIDIA's OpenCL driver takes back its own PTX retargeted to sm_90a
and runs `wgmma` from it. This probe asks what a GEMM built that way reaches: ``C = A @ B.T``
(A M x K and B N x K row-major f16, both K-major as `wgmma` reads them without transposes; C
f16, f32 accumulation), one work-group of two warpgroups per 128 x BN block of C (each
warpgroup a 64 x BN `wgmma.m64n{BN}k16` accumulator), K in steps of BK elements through S
stages of __local memory filled by 16-byte ``cp.async`` (prefetch distance S - 2: a slot is
refilled only after both warpgroups' `wgmma` groups that read it are done, `wgmma.wait_group
1` after each step), the 8 x 16-byte core-matrix layout without swizzle (chunk ``i`` of a
stage lands at byte ``16 i``: bank-conflict free), blocks visited in groups of 8 block rows.

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

import numpy as np

FENCE = "// FENCE_PROXY_ASYNC"
STEP = re.compile(r"^[ \t]*// WGMMA_STEP (.*)$", re.M)
WAIT0 = re.compile(r"^[ \t]*// WGMMA_WAIT0 .*$", re.M)


def kernel_source(bn: int, bk: int, stages: int, acc: str = "c", loads: bool = True) -> str:
    """``acc="c"``: the accumulators are OpenCL C floats tied (``"+f"``) to the step comment;
    ``acc="ptx"``: they are PTX registers the patch declares (``%acc<n>``), which the OpenCL
    compiler never sees until the last comment hands them out after ``wgmma.wait_group 0``.
    ``loads=False`` (an ablation) issues no copies inside the K loop: the tensor cores then
    read whatever the stages hold, so the product is wrong and only the time means something."""
    ch = bk // 8  # 16-byte chunks per row of a stage
    a_stage, b_stage = 128 * bk * 2, bn * bk * 2
    n_acc = bn // 2
    accs = [f"d{i}" for i in range(n_acc)]
    outs = ", ".join(f'"+f"({a})' for a in accs)
    names = ", ".join(f"%{i}" for i in range(n_acc))
    lbo, sbo = 128, ch * 128
    fields = ((lbo >> 4) << 16) | ((sbo >> 4) << 32)
    stores = []
    for j in range(bn // 8):
        col = f"col0 + {8 * j}"
        stores.append(f"vstore_half2((float2)(d{4 * j}, d{4 * j + 1}), 0, C + row0 * N + {col});")
        stores.append(
            f"vstore_half2((float2)(d{4 * j + 2}, d{4 * j + 3}), 0, C + (row0 + 8) * N + {col});")
    store_text = "\n    ".join(stores)
    zeros = ", ".join(f"{a} = 0.0f" for a in accs)
    if acc == "c":
        init = f"float {zeros};"
        step = (f'asm volatile("// WGMMA_STEP {names}, %{n_acc}, %{n_acc + 1}" '
                f': {outs} : "l"(da), "l"(db) : "memory");')
        done = f'asm volatile("// WGMMA_WAIT0 {names}" : {outs} :: "memory");'
    else:
        init = 'asm volatile("// WGMMA_INIT" ::: "memory");'
        step = 'asm volatile("// WGMMA_STEP %0, %1" :: "l"(da), "l"(db) : "memory");'
        done = (f"float {', '.join(accs)};\n    "
                f'asm volatile("// WGMMA_DONE {names}" : '
                f'{outs.replace(chr(43), chr(61))} :: "memory");')
    return f"""
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define CH {ch}
#define STAGE_BYTES {a_stage + b_stage}

inline void load_stage(ulong a_glob, ulong b_glob, int K, int kt, uint slot_addr, int tid) {{
    for (int i = 0; i < {128 * ch // 256}; ++i) {{
        int idx = tid + i * 256;
        int r = (idx / (8 * CH)) * 8 + (idx & 7);
        int c = (idx >> 3) % CH;
        ulong g = a_glob + ((ulong)r * K + kt * {bk} + c * 8) * 2;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                     :: "r"(slot_addr + idx * 16), "l"(g) : "memory");
    }}
    for (int i = 0; i < {bn * ch // 256}; ++i) {{
        int idx = tid + i * 256;
        int r = (idx / (8 * CH)) * 8 + (idx & 7);
        int c = (idx >> 3) % CH;
        ulong g = b_glob + ((ulong)r * K + kt * {bk} + c * 8) * 2;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                     :: "r"(slot_addr + {a_stage} + idx * 16), "l"(g) : "memory");
    }}
}}

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void wgmma_gemm(__global const half *A, __global const half *B, __global half *C,
                int M, int N, int K) {{
    __local uint4 smem[{stages * (a_stage + b_stage) // 16}] __attribute__((aligned(1024)));
    int tid = get_local_id(0);
    int wg = tid >> 7;
    int pid = get_group_id(0);
    int num_m = M / 128, num_n = N / {bn};
    int in_group = 8 * num_n;
    int first_m = (pid / in_group) * 8;
    int group_m = min(num_m - first_m, 8);
    int bm = first_m + (pid % in_group) % group_m;
    int bn = (pid % in_group) / group_m;
    uint sbase = (uint)(size_t)smem;
    ulong a_glob = (ulong)(A + (size_t)bm * 128 * K);
    ulong b_glob = (ulong)(B + (size_t)bn * {bn} * K);
    int ktiles = K / {bk};
    for (int s = 0; s < {stages - 2}; ++s) {{
        if (s < ktiles) load_stage(a_glob, b_glob, K, s, sbase + s * STAGE_BYTES, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }}
    {init}
    #pragma unroll 1
    for (int kt = 0; kt < ktiles; ++kt) {{
        asm volatile("cp.async.wait_group {stages - 3};" ::: "memory");
        asm volatile("{FENCE}" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        int nk = kt + {stages - 2};
        if ({int(loads)} && nk < ktiles) load_stage(a_glob, b_glob, K, nk, sbase + (nk % {stages}) * STAGE_BYTES, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
        uint sa = sbase + (kt % {stages}) * STAGE_BYTES + wg * {64 * ch * 16};
        uint sb = sbase + (kt % {stages}) * STAGE_BYTES + {a_stage};
        ulong da = (((ulong)sa >> 4) & 0x3FFFUL) | {fields}UL;
        ulong db = (((ulong)sb >> 4) & 0x3FFFUL) | {fields}UL;
        {step}
    }}
    {done}
    int lane = tid & 31, warp = (tid >> 5) & 3;
    int row0 = bm * 128 + wg * 64 + warp * 16 + (lane >> 2);
    int col0 = bn * {bn} + 2 * (lane & 3);
    {store_text}
}}
"""


INIT = re.compile(r"^[ \t]*// WGMMA_INIT.*$", re.M)
DONE = re.compile(r"^[ \t]*// WGMMA_DONE (.*)$", re.M)


def patch(ptx: str, bn: int, bk: int, acc: str = "c", wait: int = 1, fence: bool = True) -> str:
    from fusec.bench.probe_wgmma import retarget

    n_acc = bn // 2
    ptx_accs = [f"%acc{i}" for i in range(n_acc)]
    if acc == "ptx":
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
    ptx = ptx.replace(FENCE, "fence.proxy.async.shared::cta;" if fence else "// no fence")

    def step(match):
        regs = [r.strip() for r in match.group(1).split(",")]
        if acc == "ptx":
            d, (da, db) = "{" + ", ".join(ptx_accs) + "}", regs
        else:
            d = "{" + ", ".join(regs[:n_acc]) + "}"
            da, db = regs[n_acc], regs[n_acc + 1]
        lines = ["{ .reg .pred p; .reg .u32 one; .reg .b64 xa, xb;",
                 "mov.u32 one, 1; setp.ne.u32 p, one, 0;", "wgmma.fence.sync.aligned;"]
        for j in range(bk // 16):  # 16 elements of K = 2 core matrices = 256 bytes = 16 units
            lines.append(f"add.s64 xa, {da}, {16 * j}; add.s64 xb, {db}, {16 * j};")
            lines.append(f"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.f16.f16 "
                         f"{d}, xa, xb, p, 1, 1, 0, 0;")
        lines += ["wgmma.commit_group.sync.aligned;", f"wgmma.wait_group.sync.aligned {wait}; }}"]
        return "\n".join(lines)

    ptx, steps = STEP.subn(step, ptx)
    ptx, waits = WAIT0.subn("wgmma.wait_group.sync.aligned 0;", ptx)
    if steps < 1 or (acc == "c" and waits < 1):
        raise RuntimeError(f"found {steps} step and {waits} wait comments")
    return retarget(ptx)


def run_variant(size: int, bn: int, bk: int, stages: int, acc: str, wait: int,
                ptx_dir: str | None, flags: tuple[str, ...] = ()) -> None:
    """Build, check and time one variant; `flags` are ablations: ``noload`` (no copies in
    the K loop; the product is then not checked) and ``nofence`` (no proxy fence per step)."""
    import pyopencl as cl

    from fusec.bench.probe_wgmma import build_binary, build_source, nvidia_device, ptx_of

    device = nvidia_device()
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    label = (f"BM=128 BN={bn} BK={bk} S={stages} ({stages * (128 + bn) * bk * 2 // 1024} KiB)"
             f" acc={acc} wait={wait}" + "".join(f" {f}" for f in flags))
    loads = "noload" not in flags
    program = build_source(ctx, device, kernel_source(bn, bk, stages, acc, loads))
    ptx = ptx_of(program, device).rstrip("\0")
    patched = patch(ptx, bn, bk, acc, wait, fence="nofence" not in flags)
    if ptx_dir:
        tag = f"{bn}_{bk}_{stages}_{acc}_{wait}"
        for name, text in ((f"gemm_{tag}.cl.ptx", ptx), (f"gemm_{tag}.sm90a.ptx", patched)):
            with open(f"{ptx_dir}/{name}", "w") as handle:
                handle.write(text)
    prog = build_binary(ctx, device, patched, label)
    rng = np.random.default_rng(1)
    m = n = k = size
    a = rng.uniform(-1, 1, size=(m, k)).astype(np.float16)
    bt = rng.uniform(-1, 1, size=(n, k)).astype(np.float16)
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bt)
    c_buf = cl.Buffer(ctx, mf.READ_WRITE, m * n * 2)
    groups = (m // 128) * (n // bn)
    kern = prog.wgmma_gemm
    args = (a_buf, b_buf, c_buf, np.int32(m), np.int32(n), np.int32(k))
    kern(queue, (groups * 256,), (256,), *args).wait()
    c = np.empty((m, n), dtype=np.float16)
    cl.enqueue_copy(queue, c, c_buf)
    rows = np.r_[0:128, m - 128:m]
    want = a[rows].astype(np.float32) @ bt.astype(np.float32).T
    err = float(np.abs(c[rows].astype(np.float32) - want).max() / np.abs(want).max())
    times = []
    for i in range(12):
        event = kern(queue, (groups * 256,), (256,), *args)
        event.wait()
        if i >= 2:
            times.append((event.profile.end - event.profile.start) * 1e-6)
    ms = statistics.median(times)
    verdict = ("ok" if err < 1e-2 else "WRONG") if loads else "not checked: ablation"
    print(f"  [{label}] {ms:.3f} ms, {2 * m * n * k / ms / 1e9:.0f} TFLOP/s, "
          f"max err / max|C| {err:.1e} ({verdict})", flush=True)


def torch_ms(size: int) -> str:
    try:
        import torch
    except ImportError:
        return "torch not available"
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
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
    return f"  [torch f16 a @ b] {ms:.3f} ms, {2 * size ** 3 / ms / 1e9:.0f} TFLOP/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--variants", nargs="*",
                        default=["256,64,4,ptx,1", "256,32,4,ptx,1", "128,64,3,ptx,1",
                                 "256,64,4,c,0", "256,64,4,c,1"],
                        help="BN,BK,STAGES,ACC,WAIT[,FLAG...] (ACC c or ptx; WAIT: wgmma "
                             "groups left in flight after each step, 1 or 0; FLAGs, ablations: "
                             "noload, nofence)")
    parser.add_argument("--ptx-dir", default=None, help="write each variant's PTX here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=12.0)
    args = parser.parse_args()
    if args.one:
        bn, bk, stages, acc, wait, *flags = args.one.split(",")
        run_variant(args.size, int(bn), int(bk), int(stages), acc, int(wait), args.ptx_dir,
                    tuple(flags))
        return
    print(f"== wgmma f16 GEMM {args.size}^3, C = A @ B.T, f32 accumulation", flush=True)
    for variant in args.variants:
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
    print(torch_ms(args.size), flush=True)


if __name__ == "__main__":
    main()
