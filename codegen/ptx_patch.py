"""Hopper-only PTX from OpenCL C: the comments codegen writes, rewritten into instructions.

NVIDIA's OpenCL compiler writes ``.target sm_90`` whatever it is asked, and ptxas refuses
``wgmma`` for plain sm_90, so `gemm_wgmma` cannot write ``wgmma`` as inline PTX. It writes PTX
comments that carry their operands instead (the compiler puts the real register names in):

- ``// FUSEC_WGMMA_INIT <n>``: the kernel's ``n`` float32 accumulators, declared here as PTX
  registers ``%acc<n>`` of the entry and zeroed (never OpenCL C floats: a C float tied to the
  asm makes ptxas serialize the ``wgmma``s, C7514); ``// FUSEC_WGMMA_INIT <n> promoted``
  declares as many sums ``%accsum<n>`` beside them, zeroed too, for ``FUSEC_WGMMA_PROMOTE``;
- ``// FUSEC_WGMMA_STEP <shape.types> <slices> <step_a> <step_b> <trans_b> <wait> %rdA, %rdB``:
  ``wgmma.fence``, `slices` ``wgmma.mma_async`` whose descriptors advance by `step_a` and
  `step_b` 16-byte units each (B read MN-major where `trans_b` is 1: 16-bit types only), a
  commit and ``wgmma.wait_group <wait>``;
- ``// FUSEC_WGMMA_PROMOTE`` (a promoted entry only): ``wgmma.wait_group 0``, each accumulator
  added into its sum by the ALUs (rounded to nearest), and the next ``wgmma`` told to start
  the accumulators afresh (its scale-d predicate ``%accon`` false until it has run). The
  tensor cores add into an accumulator rounding toward zero, which over a long K biases a
  float32 product by about ``2^-24`` of it a step; promoted every few steps it is not;
- ``// FUSEC_WGMMA_DONE <n> %f1, ..., %fn``: ``wgmma.wait_group 0`` and the accumulators (in a
  promoted entry: the sums, the accumulators added) moved into the C floats. Where the steps
  lie in a loop (a conditional branch after the last step back to a label before it), a
  ``wgmma.wait_group 0`` is also put right after that branch, where the loop is left: the
  compiler may place other instructions between the loop and the comment (values it computes
  again there), and with those inside the last ``wgmma``s' pipeline ptxas serialized every
  ``wgmma`` of the kernel (C7514; the H200's 128 x 256 kernel of the Llama-style model's
  4096 x 2560 x 2048 product, session 26);
- ``// FUSEC_FENCE_PROXY_ASYNC``: ``fence.proxy.async.shared::cta`` (``cp.async`` writes seen by
  the ``wgmma`` reads);
- ``// FUSEC_FENCE_GPU``: ``fence.acq_rel.gpu`` (a work-group's global writes seen by the other
  work-groups before its count, `gemm_wgmma`'s parts summed in the kernel: OpenCL's
  ``mem_fence(CLK_GLOBAL_MEM_FENCE)`` compiles to ``membar.cta`` there, which does not order
  them for another unit).

`patch` rewrites them and raises ``.target sm_90`` to ``sm_90a``; the runtime builds the
result as a program binary (`fusec.runtime.program_cache`). A pure text function, so it is
tested on the CPU against PTX that NVIDIA's compiler wrote. It lives in codegen, beside the
kernels whose comments it reads, so that the device probe (`gemm_wgmma.probe_wgmma`) and the
runtime both use it. `PATCH_VERSION` keys the cached patched binaries: bump it whenever the
output of `patch` changes.
"""

from __future__ import annotations

import re

PATCH_VERSION = 5

MARK = "FUSEC_WGMMA_STEP"
"""A source holding this needs `patch` before it can run."""

FENCE = "// FUSEC_FENCE_PROXY_ASYNC"
FENCE_GPU = "// FUSEC_FENCE_GPU"
INIT = re.compile(r"^[ \t]*// FUSEC_WGMMA_INIT (\d+)( promoted)?[ \t]*$", re.M)
PROMOTE = re.compile(r"^[ \t]*// FUSEC_WGMMA_PROMOTE[ \t]*$", re.M)
STEP = re.compile(r"^[ \t]*// FUSEC_WGMMA_STEP (\S+) (\d+) (\d+) (\d+) ([01]) (\d+) (.*)$", re.M)
DONE = re.compile(r"^[ \t]*// FUSEC_WGMMA_DONE (\d+) (.*)$", re.M)
BRANCH = re.compile(r"^[ \t]*@!?%p\d+[ \t]+bra(?:\.uni)?[ \t]+(\$?[\w$]+);[ \t]*$", re.M)
"""A conditional branch and its label."""
WAIT_ALL = "\twgmma.wait_group.sync.aligned 0;"
"""The wait for every ``wgmma`` put where the K loop is left (`_wait_where_the_loop_ends`)."""
ENTRY = re.compile(r"^(?:\.visible[ \t]+|\.weak[ \t]+)?\.entry[ \t]", re.M)
KINDS = ("f32.f16.f16", "f32.bf16.bf16", "f32.tf32.tf32")
SHAPE = re.compile(r"m64n(\d+)k(8|16)\.(.*)")


class PtxPatchError(ValueError):
    """The PTX does not hold the comments `patch` expects (in the form it expects)."""


def needs_patch(source: str) -> bool:
    """Whether an OpenCL C source (or its PTX) holds `wgmma` comments."""
    return MARK in source


def patch(ptx: str) -> str:
    """The PTX with every comment of the module docstring rewritten, and sm_90a as target.
    Trailing NUL bytes (the driver's binary ends in some) are dropped."""
    ptx = ptx.rstrip("\0")
    starts = [m.start() for m in ENTRY.finditer(ptx)]
    if not starts:
        raise PtxPatchError("no .entry in the PTX")
    bounds = list(zip(starts, [*starts[1:], len(ptx)], strict=True))
    parts = [ptx[:starts[0]]] + [_patch_entry(ptx[a:b]) for a, b in bounds]
    out = "".join(parts)
    if FENCE in out:
        out = out.replace(FENCE, "fence.proxy.async.shared::cta;")
    if FENCE_GPU in out:
        out = out.replace(FENCE_GPU, "fence.acq_rel.gpu;")
    for pattern in (INIT, PROMOTE, STEP, DONE):
        if pattern.search(out):
            raise PtxPatchError("a wgmma comment outside any .entry")
    return retarget(out)


def retarget(ptx: str) -> str:
    """``.target sm_90`` -> ``.target sm_90a``; ``.version`` raised to 8.0 if lower."""
    out, count = re.subn(r"\.target\s+sm_90\b(?!a)", ".target sm_90a", ptx)
    if count != 1:
        raise PtxPatchError(f"expected one `.target sm_90` line, found {count}")

    def version(match: re.Match[str]) -> str:
        major, minor = int(match.group(1)), int(match.group(2))
        return match.group(0) if (major, minor) >= (8, 0) else ".version 8.0"

    return re.sub(r"\.version\s+(\d+)\.(\d+)", version, out, count=1)


def _wait_where_the_loop_ends(text: str) -> str:
    """`text` with `WAIT_ALL` after the loop around its steps (the first conditional branch
    after the last step, before the done comment, to a label before that step), where there is
    such a loop (see the module docstring)."""
    last_step = list(STEP.finditer(text))[-1]
    done = DONE.search(text)
    if done is None or done.start() < last_step.end():
        return text
    for branch in BRANCH.finditer(text, last_step.end(), done.start()):
        label = re.search(rf"^{re.escape(branch.group(1))}:", text, re.M)
        if label is not None and label.start() < last_step.start():
            return text[:branch.end()] + "\n" + WAIT_ALL + text[branch.end():]
    return text


def _patch_entry(text: str) -> str:
    inits = INIT.findall(text)
    steps, dones = STEP.findall(text), DONE.findall(text)
    promotes = PROMOTE.findall(text)
    if not inits:
        if steps or dones or promotes:
            raise PtxPatchError("wgmma steps without a FUSEC_WGMMA_INIT in their entry")
        return text
    n, promoted = int(inits[0][0]), bool(inits[0][1])
    if len(inits) != 1 or len(dones) != 1 or not steps:
        raise PtxPatchError(f"an entry needs one init, one done and some steps; found "
                            f"{len(inits)}, {len(dones)} and {len(steps)}")
    if promotes and not promoted:
        raise PtxPatchError("FUSEC_WGMMA_PROMOTE in an entry whose init is not promoted")
    text = _wait_where_the_loop_ends(text)
    accs = [f"%acc{i}" for i in range(n)]
    sums = [f"%accsum{i}" for i in range(n)]
    first_reg = text.find(".reg")
    if first_reg < 0:
        raise PtxPatchError("no .reg declaration in the entry")
    declared = f".reg .f32 %acc<{n}>;\n\t"
    if promoted:
        declared += f".reg .f32 %accsum<{n}>;\n\t.reg .pred %accon;\n\t"
    text = text[:first_reg] + declared + text[first_reg:]
    zeroed = [f"mov.f32 {a}, 0f00000000;" for a in accs + (sums if promoted else [])]
    if promoted:
        zeroed.append("{ .reg .u32 one; mov.u32 one, 1; setp.ne.u32 %accon, one, 0; }")
    text = INIT.sub(lambda m: "\n".join(zeroed), text)
    text = PROMOTE.sub(lambda m: "\n".join(
        ["wgmma.wait_group.sync.aligned 0;"]
        + [f"add.f32 {s}, {s}, {a};" for s, a in zip(sums, accs, strict=True)]
        + ["{ .reg .u32 zero; mov.u32 zero, 0; setp.ne.u32 %accon, zero, 0; }"]), text)

    def done(match: re.Match[str]) -> str:
        outs = [r.strip() for r in match.group(2).split(",")]
        if int(match.group(1)) != n or len(outs) != n:
            raise PtxPatchError(f"done names {len(outs)} registers for {n} accumulators")
        if promoted:
            return "wgmma.wait_group.sync.aligned 0;\n" + "\n".join(
                f"add.f32 {o}, {s}, {a};" for o, s, a in zip(outs, sums, accs, strict=True))
        return "wgmma.wait_group.sync.aligned 0;\n" + "\n".join(
            f"mov.f32 {o}, {a};" for o, a in zip(outs, accs, strict=True))

    def step(match: re.Match[str]) -> str:
        instruction = match.group(1)
        slices, step_a, step_b, trans_b, wait = (int(match.group(i)) for i in range(2, 7))
        shape = SHAPE.fullmatch(instruction)
        if shape is None or shape.group(3) not in KINDS:
            raise PtxPatchError(f"unknown wgmma instruction '{instruction}'")
        if int(shape.group(1)) // 2 != n:
            raise PtxPatchError(f"'{instruction}' needs {int(shape.group(1)) // 2} "
                                f"accumulators, the entry declares {n}")
        regs = [r.strip() for r in match.group(7).split(",")]
        if len(regs) != 2 or wait not in (0, 1):
            raise PtxPatchError(f"a step needs two descriptors and wait 0 or 1: {match.group(0)}")
        da, db = regs
        d = "{" + ", ".join(accs) + "}"
        tf32 = shape.group(3) == "f32.tf32.tf32"
        if tf32 and trans_b:
            raise PtxPatchError("wgmma reads tf32 B only K-major")
        trans = "" if tf32 else f", 0, {trans_b}"  # tf32 has no transpose immediates
        lines = ["{ .reg .pred p; .reg .u32 one; .reg .b64 xa, xb;",
                 "mov.u32 one, 1; setp.ne.u32 p, one, 0;", "wgmma.fence.sync.aligned;"]
        for j in range(slices):
            # in a promoted entry the first wgmma after a promotion starts afresh (%accon)
            scale = "%accon" if promoted and j == 0 else "p"
            lines.append(f"add.s64 xa, {da}, {step_a * j}; add.s64 xb, {db}, {step_b * j};")
            lines.append(f"wgmma.mma_async.sync.aligned.{instruction} {d}, xa, xb, {scale}, 1, 1"
                         f"{trans};")
            if promoted and j == 0:
                lines.append("mov.pred %accon, p;")
        lines += ["wgmma.commit_group.sync.aligned;", f"wgmma.wait_group.sync.aligned {wait}; }}"]
        return "\n".join(lines)

    text = DONE.sub(done, text)
    return STEP.sub(step, text)
