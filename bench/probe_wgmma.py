"""Probe: can NVIDIA's OpenCL driver run Hopper `wgmma` from PTX that we patch and hand back?

    python3 -m fusec.bench.probe_wgmma [--iters 2000] [--groups 1056] [--ptx-dir DIR]

NVIDIA's OpenCL compiler writes `.target sm_90` even when asked for sm_90a, and ptxas refuses
`wgmma` for plain sm_90, so `wgmma` cannot be written as inline PTX in OpenCL C. This probe
tries the other door: an OpenCL program binary on NVIDIA is PTX text, so

1. `roundtrip`: build a trivial OpenCL C kernel, take its PTX, change `.target sm_90` to
   `.target sm_90a`, load the text back with clCreateProgramWithBinary, run and check it
   (and the unpatched PTX as a control);
2. `m64n8k16`: OpenCL C whose inline asm is only a PTX comment naming its operands
   (`// WGMMA %0, ...`); the compiler puts the real register names into the comment, the
   probe replaces the comment by `wgmma.fence; wgmma.mma_async...; commit; wait` and loads the
   patched PTX as sm_90a. One warpgroup multiplies a 64x16 by a 16x8 f16 tile held in
   __local memory (core-matrix layout, no swizzle); the result is checked against numpy, for
   both readings of the descriptor's LBO/SBO fields;
3. `throughput`: one warpgroup per work-group runs a loop of `wgmma m64n256k16` (f16, bf16)
   or `m64n256k8` (tf32) from a tile in __local memory, no global loads, over many
   work-groups: TFLOP/s of the tensor-core part alone (checked: the result must be
   ITERS*4 * A@B for small-integer inputs), and torch's 4096 matmul of the same dtype
   in the same process for scale.

Everything (PTX headers, driver build logs, errors) is printed; a stage that fails prints why
and the probe goes on. Only pyopencl and numpy are needed (torch optional).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import traceback

import numpy as np
import pyopencl as cl

TRIVIAL_SRC = """
__kernel void scale_add(__global const float *a, __global float *c) {
    int i = get_global_id(0);
    c[i] = a[i] * 2.0f + 1.0f;
}
"""


def log(*parts) -> None:
    print(*parts, flush=True)


def nvidia_device():
    for platform in cl.get_platforms():
        if "NVIDIA" in platform.name:
            return platform.get_devices()[0]
    raise SystemExit("no NVIDIA OpenCL platform")


def ptx_of(program, device) -> str:
    index = program.get_info(cl.program_info.DEVICES).index(device)
    return program.get_info(cl.program_info.BINARIES)[index].decode()


def build_log(program, device) -> str:
    try:
        return program.get_build_info(device, cl.program_build_info.LOG)
    except cl.Error as error:  # noqa: BLE001 - the probe reports whatever the driver says
        return f"(no build log: {error})"


def build_source(ctx, device, source: str, options: str = ""):
    program = cl.Program(ctx, source)
    try:
        program.build(options=options, devices=[device])
    finally:
        log_text = build_log(program, device)
        if log_text.strip():
            log("  source build log:", log_text.strip()[:2000])
    return program


def build_binary(ctx, device, ptx: str, label: str):
    """clCreateProgramWithBinary on PTX text; prints the driver's build log either way."""
    program = cl.Program(ctx, [device], [ptx.encode()])
    try:
        program.build(devices=[device])
    except cl.Error as error:
        log(f"  [{label}] binary build FAILED: {error}")
        log(f"  [{label}] driver build log:\n{build_log(program, device)}")
        raise
    text = build_log(program, device).strip()
    log(f"  [{label}] binary build ok; driver build log: {text[:2000]!r}")
    return program


def retarget(ptx: str) -> str:
    """`.target sm_90` -> `.target sm_90a`; `.version` raised to 8.0 if lower."""
    out, count = re.subn(r"\.target\s+sm_90\b(?!a)", ".target sm_90a", ptx)
    if count != 1:
        raise RuntimeError(f"expected one `.target sm_90` line, found {count}")

    def version(match):
        major, minor = int(match.group(1)), int(match.group(2))
        return match.group(0) if (major, minor) >= (8, 0) else ".version 8.0"

    return re.sub(r"\.version\s+(\d+)\.(\d+)", version, out, count=1)


def header(ptx: str) -> str:
    return "\n".join(line for line in ptx.splitlines()[:40] if line.startswith("."))


def save(ptx_dir: str | None, name: str, text: str) -> None:
    if ptx_dir:
        with open(os.path.join(ptx_dir, name), "w") as handle:
            handle.write(text)


# ---------------------------------------------------------------- stage 1: roundtrip


def stage_roundtrip(ctx, queue, device, ptx_dir) -> None:
    log("== stage 1: trivial kernel, PTX retargeted to sm_90a, loaded as a binary")
    program = build_source(ctx, device, TRIVIAL_SRC)
    ptx = ptx_of(program, device)
    save(ptx_dir, "roundtrip_sm90.ptx", ptx)
    log("  PTX header from the OpenCL compiler:\n" + header(ptx))
    a = np.arange(1024, dtype=np.float32)
    for label, text in (("control sm_90", ptx), ("patched sm_90a", retarget(ptx))):
        try:
            prog = build_binary(ctx, device, text, label)
        except cl.Error:
            continue
        mf = cl.mem_flags
        a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
        prog.scale_add(queue, a.shape, None, a_buf, c_buf)
        c = np.empty_like(a)
        cl.enqueue_copy(queue, c, c_buf)
        ok = np.array_equal(c, a * 2 + 1)
        log(f"  [{label}] ran: result {'CORRECT' if ok else 'WRONG'}")
        if label.startswith("patched"):
            back = ptx_of(prog, device)
            log(f"  [{label}] binary read back starts: {header(back)[:200]!r}")


# ---------------------------------------------------------------- shared-memory layouts

FENCE_COMMENT = "// FENCE_PROXY_ASYNC"


def core_matrix_layout(rows: int, k: int, elem_bytes: int, k_stride: int, row_stride: int):
    """Byte offset of element (r, c) of a rows x k K-major tile stored as 8 x 16-byte core
    matrices: core matrix (r//8, c//per) sits at (r//8)*row_stride + (c//per)*k_stride."""
    per = 16 // elem_bytes
    r = np.arange(rows)[:, None]
    c = np.arange(k)[None, :]
    return (r // 8) * row_stride + (c // per) * k_stride + (r % 8) * 16 + (c % per) * elem_bytes


def pack(tile: np.ndarray, elem_bytes: int, k_stride: int, row_stride: int) -> np.ndarray:
    """The tile's bytes in core-matrix layout, as a uint8 array."""
    rows, k = tile.shape
    offsets = core_matrix_layout(rows, k, elem_bytes, k_stride, row_stride)
    raw = np.ascontiguousarray(tile).view(np.uint8).reshape(rows, k, elem_bytes)
    out = np.zeros(int(offsets.max()) + elem_bytes, dtype=np.uint8)
    for b in range(elem_bytes):
        out[offsets + b] = raw[:, :, b]
    return out


def desc_fields(lbo: int, sbo: int) -> int:
    """Descriptor bits other than the start address: LBO>>4 at 16, SBO>>4 at 32, no swizzle."""
    return (((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32)


def accumulator_coords(n: int):
    """(row, col) of each f32 accumulator register of a 64 x n wgmma, thread-major:
    thread t, register 4*j + i -> warp w = t//32 rows 16w + lane//4 (+8 for i >= 2),
    column 8j + 2*(lane%4) + (i%2)."""
    rows = np.empty((128, n // 2), dtype=np.int64)
    cols = np.empty((128, n // 2), dtype=np.int64)
    for t in range(128):
        w, lane = divmod(t, 32)
        for j in range(n // 8):
            for i in range(4):
                rows[t, 4 * j + i] = 16 * w + lane // 4 + (8 if i >= 2 else 0)
                cols[t, 4 * j + i] = 8 * j + 2 * (lane % 4) + (i % 2)
    return rows, cols


def kernel_source(n_acc: int, a_bytes: int, b_bytes: int, with_loop: bool) -> str:
    """OpenCL C: copy pre-packed A and B bytes into __local, fence comment, barrier, build
    descriptors, one asm comment `// WGMMA` naming the accumulators and descriptors."""
    accs = [f"d{i}" for i in range(n_acc)]
    decl = "float " + ", ".join(f"{a} = 0.0f" for a in accs) + ";"
    outs = ", ".join(f'"+f"({a})' for a in accs)
    names = ", ".join(f"%{i}" for i in range(n_acc))
    ins = f'"l"(desc_a), "l"(desc_b)' + (', "r"(iters)' if with_loop else "")
    extra = f", %{n_acc}, %{n_acc + 1}" + (f", %{n_acc + 2}" if with_loop else "")
    stores = "\n    ".join(f"out[base + {i}] = {a};" for i, a in enumerate(accs))
    return f"""
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void wgmma_probe(__global const uint *a_packed, __global const uint *b_packed,
                 __global float *out, ulong a_fields, ulong b_fields, uint iters) {{
    __local uint a_tile[{a_bytes // 4}] __attribute__((aligned(256)));
    __local uint b_tile[{b_bytes // 4}] __attribute__((aligned(256)));
    int t = get_local_id(0);
    for (int i = t; i < {a_bytes // 4}; i += 128) a_tile[i] = a_packed[i];
    for (int i = t; i < {b_bytes // 4}; i += 128) b_tile[i] = b_packed[i];
    asm volatile("{FENCE_COMMENT}" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong desc_a = ((((ulong)(size_t)a_tile) >> 4) & 0x3FFFUL) | a_fields;
    ulong desc_b = ((((ulong)(size_t)b_tile) >> 4) & 0x3FFFUL) | b_fields;
    {decl}
    asm volatile("// WGMMA {names}{extra}" : {outs} : {ins} : "memory");
    size_t base = (get_group_id(0) * 128 + t) * {n_acc};
    {stores}
}}
"""


WGMMA_LINE = re.compile(r"^[ \t]*// WGMMA (.*)$", re.M)


def patch_wgmma(ptx: str, instr: str, n_acc: int, with_loop: bool) -> str:
    """Replace the fence and wgmma comments by real PTX (one block each); retarget."""
    if ptx.count(FENCE_COMMENT) != 1:
        raise RuntimeError(f"fence comment found {ptx.count(FENCE_COMMENT)} times")
    ptx = ptx.replace(FENCE_COMMENT, "fence.proxy.async.shared::cta;")
    matches = WGMMA_LINE.findall(ptx)
    if len(matches) != 1:
        raise RuntimeError(f"WGMMA comment found {len(matches)} times")
    regs = [r.strip() for r in matches[0].split(",")]
    accs, da, db = regs[:n_acc], regs[n_acc], regs[n_acc + 1]
    d = "{" + ", ".join(accs) + "}"
    trans = "" if ".tf32" in instr else ", 0, 0"  # tf32 has no transpose immediates
    mma = f"wgmma.mma_async.sync.aligned.{instr} {d}, {da}, {db}, p, 1, 1{trans};"
    if not with_loop:
        body = (
            "{ .reg .pred p; .reg .u32 one; mov.u32 one, 1; setp.ne.u32 p, one, 0;\n"
            "wgmma.fence.sync.aligned;\n"
            f"{mma}\n"
            "wgmma.commit_group.sync.aligned;\n"
            "wgmma.wait_group.sync.aligned 0; }"
        )
    else:
        iters = regs[n_acc + 2]
        body = (
            "{ .reg .pred p; .reg .pred q; .reg .u32 it;\n"
            "mov.u32 it, 1; setp.ne.u32 p, it, 0; mov.u32 it, 0;\n"
            "wgmma.fence.sync.aligned;\n"
            "WGMMA_LOOP:\n"
            f"{mma}\n{mma}\n{mma}\n{mma}\n"
            "wgmma.commit_group.sync.aligned;\n"
            "wgmma.wait_group.sync.aligned 1;\n"
            f"add.u32 it, it, 1; setp.lt.u32 q, it, {iters}; @q bra WGMMA_LOOP;\n"
            "wgmma.wait_group.sync.aligned 0; }"
        )
    ptx = WGMMA_LINE.sub(lambda _m: body, ptx)
    return retarget(ptx)


# ---------------------------------------------------------------- stage 2: one wgmma


DTYPES = {
    # name: (instruction suffix without shape, k per instruction, element bytes, to_bits)
    "f16": (".f32.f16.f16", 16, 2, lambda x: x.astype(np.float16).view(np.uint16)),
    "bf16": (".f32.bf16.bf16", 16, 2,
             lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)),
    "tf32": (".f32.tf32.tf32", 8, 4, lambda x: x.astype(np.float32).view(np.uint32)),
}


def run_wgmma(ctx, queue, device, *, dtype, n, lbo_sbo, iters, groups, ptx_dir, rng, timed):
    """Build, patch, load and run `wgmma m64{n}k{K}` on random small-integer tiles; returns
    (correct, max abs error, best ms or None)."""
    suffix, k, eb, to_bits = DTYPES[dtype]
    with_loop = iters > 0
    n_acc = n // 2
    k_stride, row_stride = 128, 256  # K-adjacent core matrices 128 B apart, rows 256 B apart
    a = rng.integers(-3, 4, size=(64, k)).astype(np.float32)
    b = rng.integers(-3, 4, size=(k, n)).astype(np.float32)
    a_packed = pack(to_bits(a), eb, k_stride, row_stride)
    b_packed = pack(to_bits(b.T.copy()), eb, k_stride, row_stride)  # B as n x k, K-major
    a_bytes, b_bytes = a_packed.size, b_packed.size
    src = kernel_source(n_acc, a_bytes, b_bytes, with_loop)
    program = build_source(ctx, device, src)
    ptx = ptx_of(program, device)
    label = f"{dtype} m64n{n}k{k}" + (f" x{iters}x4" if with_loop else "")
    instr = f"m64n{n}k{k}{suffix}"
    patched = patch_wgmma(ptx, instr, n_acc, with_loop)
    save(ptx_dir, f"wgmma_{dtype}_n{n}_{'loop' if with_loop else 'one'}.ptx", patched)
    prog = build_binary(ctx, device, patched, label)
    lbo, sbo = lbo_sbo
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_packed.view(np.uint32))
    b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_packed.view(np.uint32))
    out = np.zeros(groups * 128 * n_acc, dtype=np.float32)
    o_buf = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    kern = prog.wgmma_probe
    args = (a_buf, b_buf, o_buf, np.uint64(desc_fields(lbo, sbo)),
            np.uint64(desc_fields(lbo, sbo)), np.uint32(iters))
    best = None
    reps = 5 if timed else 1
    for _ in range(reps):
        event = kern(queue, (groups * 128,), (128,), *args)
        event.wait()
        ms = (event.profile.end - event.profile.start) * 1e-6
        best = ms if best is None else min(best, ms)
    cl.enqueue_copy(queue, out, o_buf)
    rows, cols = accumulator_coords(n)
    want = (a @ b) * (iters * 4 if with_loop else 1)
    got = np.zeros((64, n), dtype=np.float32)
    first = out[: 128 * n_acc].reshape(128, n_acc)
    got[rows, cols] = first
    err = float(np.abs(got - want).max())
    correct = err == 0.0 and bool(np.all(out.reshape(groups, -1) == out[: 128 * n_acc]))
    same_set = np.array_equal(np.sort(got.ravel()), np.sort(want.ravel()))
    log(f"  [{label}] LBO={lbo} SBO={sbo}: {'CORRECT' if correct else 'WRONG'} "
        f"(max abs err {err:g}; same multiset of values: {same_set})")
    if not correct:
        log("    got[0:2, 0:8]  =", got[:2, :8].tolist())
        log("    want[0:2, 0:8] =", want[:2, :8].tolist())
    return correct, err, (best if timed else None)


def stage_one_wgmma(ctx, queue, device, ptx_dir, rng) -> tuple[int, int] | None:
    log("== stage 2: one wgmma.m64n8k16 f16 from __local memory, patched PTX as sm_90a")
    good, ran = None, False
    for lbo_sbo in ((128, 256), (256, 128)):
        try:
            ok, _err, _ms = run_wgmma(ctx, queue, device, dtype="f16", n=8, lbo_sbo=lbo_sbo,
                                      iters=0, groups=1, ptx_dir=ptx_dir, rng=rng, timed=False)
        except Exception:  # noqa: BLE001 - report and try the other reading
            log(traceback.format_exc())
            continue
        ran = True
        if ok:  # the other reading is tried only if this one failed: a fault ends the context
            return lbo_sbo, ran
    return good, ran


def torch_tflops(dtype: str, size: int = 4096) -> str:
    try:
        import torch
    except ImportError:
        return "torch not available"
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[dtype]
    a = torch.randn(size, size, device="cuda", dtype=tdt)
    b = torch.randn(size, size, device="cuda", dtype=tdt)
    for _ in range(3):
        torch.matmul(a, b)
    times = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, b)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    ms = min(times)
    return f"torch {dtype} matmul {size}: {ms:.3f} ms, {2 * size ** 3 / ms / 1e9:.0f} TFLOP/s"


def stage_throughput(ctx, queue, device, ptx_dir, rng, lbo_sbo, iters, groups) -> None:
    log(f"== stage 3: wgmma m64n256 loop from __local, {groups} work-groups of 128, "
        f"{iters} x 4 instructions each")
    for dtype in ("f16", "bf16", "tf32"):
        k = DTYPES[dtype][1]
        ctx = cl.Context([device])  # a fresh context each: a fault in one ends only that one
        queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        try:
            ok, _err, ms = run_wgmma(ctx, queue, device, dtype=dtype, n=256, lbo_sbo=lbo_sbo,
                                     iters=iters, groups=groups, ptx_dir=ptx_dir, rng=rng,
                                     timed=True)
            flop = 2.0 * 64 * 256 * k * 4 * iters * groups
            log(f"  [{dtype}] best of 5: {ms:.3f} ms -> {flop / ms / 1e9:.0f} TFLOP/s "
                f"(mma part only; result {'checked' if ok else 'WRONG'})")
        except Exception:  # noqa: BLE001
            log(traceback.format_exc())
        log("  " + torch_tflops(dtype))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--groups", type=int, default=132 * 8)
    parser.add_argument("--ptx-dir", default=None, help="write the PTX texts here")
    parser.add_argument("--stages", default="1,2,3")
    args = parser.parse_args()
    if args.ptx_dir:
        os.makedirs(args.ptx_dir, exist_ok=True)
    device = nvidia_device()
    log(f"device: {device.name}; driver {device.driver_version}; {device.version}")
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(0)
    stages = set(args.stages.split(","))
    start = time.time()
    if "1" in stages:
        try:
            stage_roundtrip(ctx, queue, device, args.ptx_dir)
        except Exception:  # noqa: BLE001
            log(traceback.format_exc())
    good, ran = (128, 256), True
    if "2" in stages:
        good, ran = stage_one_wgmma(ctx, queue, device, args.ptx_dir, rng)
        log(f"  descriptor reading (LBO, SBO) that gave the right product: {good}")
    if "3" in stages and ran:  # timed even if the numbers were wrong: the check says so
        stage_throughput(ctx, queue, device, args.ptx_dir, rng, good or (128, 256),
                         args.iters, args.groups)
    log(f"probe wall {time.time() - start:.1f} s")
    sys.exit(0)


if __name__ == "__main__":
    main()
