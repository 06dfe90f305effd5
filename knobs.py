"""The switches that change code generation, declared once, as Triton declares its knobs.

Each `Knob` has a name, a default and what it does; `KNOBS` lists them all (docs/knobs.md is
generated from it). A stage reads a knob where it decides, with ``knobs.value("attention_mma")``,
and gets, in this order:

1. the value set for the compile in progress: ``fusec.compile(..., knobs={"attention_mma":
   False})``, ``fusec-run``/``fusec-opt --knob attention_mma=false``, or `overridden` (what tests
   and benchmarks use: ``with knobs.overridden(attention_mma=False): ...``);
2. the environment, for experiments: ``FUSEC_KNOB_ATTENTION_MMA=0`` (``1``/``0``,
   ``true``/``false``, ``on``/``off``);
3. the default.

A knob changes the generated OpenCL C, so the caches of built programs, which key on the
source, see it; anything a knob decides is read while compiling and kept in the plan (a bound
weight's layout, say), never read again at run time. It lives at the root of the package so that
every stage may read it (README, layout table); it imports nothing of fusec.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass


class KnobError(ValueError):
    """An unknown knob, or a value that is not of its type; the message is one line."""


@dataclass(frozen=True)
class Knob:
    """One switch: its name (also its environment variable, `env`), default and documentation."""

    name: str
    default: bool
    doc: str
    """What it does (the first paragraph), then the measurements behind its default."""
    where: str
    """The module that reads it."""

    @property
    def env(self) -> str:
        return "FUSEC_KNOB_" + self.name.upper()

    @property
    def summary(self) -> str:
        return " ".join(self.doc.split("\n\n")[0].split())


KNOBS: dict[str, Knob] = {k.name: k for k in (
    Knob("skinny_gemm", True, """\
On a GPU, a product of at most 8 rows (a decode step's projections) sharing one B is
`gemm_skinny`: one launch reading B once across the whole GPU, instead of a tiled kernel split
along K and a second launch adding the parts. Off, such products are tiled and split as before.

On an H200 (2026-12-02) a GPT-2 small decode step (f16, batch 1) spent 0.033 ms in each split
768-column projection before this kernel (bench/results/h200-2026-12-02-s9-decode.log).""",
         "fusec.lowering.template_ops"),
    Knob("wgmma_layer_gemms", True, """\
Hopper `wgmma` GEMMs also for the layers' products: those with an epilogue, a batch of products
sharing one B (one product of `batch * M` rows), and a bound B that the kernel reads K-major,
stored transposed when it is bound (`common.BOUND_B_PANELS`). Off, such products keep the
`mma.sync` kernels (and a bound B its layout).

On an H200 (2026-11-26, bench/results/h200-2026-11-26-s6-layer-gemms.log) the f16 BERT-base
layer at batch 32 went from 0.40 to 0.26 ms of kernel time and the Llama block from 0.34 to 0.27
(torch.compile f16: 0.31-0.34 and 0.25-0.29); the f32 rows are unchanged.
tests/runtime/test_wgmma_gpu.py checks it on the GPU (78 passed there).""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_narrow_blocks", True, """\
A `wgmma` product too small to fill the device with 128 x 256 blocks of C runs in 128 x 128
blocks (`gemm_wgmma.block_n_for`: the width whose waves of work-groups finish first on the
device's compute units), and products whose N is a multiple of 128 but not of 256 take the
kernel at all. Off, every `wgmma` product runs in 128 x 256 blocks and N must be a multiple of
256.

At 2048 rows (GPT-2 small, batch 16) a 768-column product is 48 blocks of 256 on the H200's 132
units and 96 of 128: 0.0115 ms against 0.0148 in 256 (2026-12-03, session 22,
bench/results/h200-2026-12-03-s22-blocks-f16.log, f16; 768 x 3072: 0.0221 against 0.0377); at
batch 1 every 128-row product of GPT-2 small 0.62x its time in 256.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_192_blocks", True, """\
A `wgmma` product may also run in 128 x 192 blocks of C (``wgmma`` ``m64n192``), where its N is
a multiple of 192 and those blocks finish first (`gemm_wgmma.block_n_for`, each width weighted
by `gemm_wgmma.BLOCK_COSTS`): BERT-base at batch 32 (4096 rows), whose 768-column products are
96 blocks of 256 on the H200's 132 units (a wave 73% full) and 128 of 192 (97%). Off, 256 or
128.

On the H200 (2026-12-03, session 22, bench/results/h200-2026-12-03-s22-blocks-f16.log) BERT-base's
products took 0.0133, 0.0391 and 0.0329 ms in 192-wide blocks against 0.0176, 0.0443 and 0.0472
in 256 (4096 x 768 x 768, x 3072 x 768, x 768 x 3072), GPT-2 small's at batch 16 alike; through
the torch backend (...-s22-b192-bert.log, f16, batch 32, the two in the same turns) BERT-base's
GEMMs took 1.398 ms of kernels a call with it against 1.583 without, the call 2.013 ms against
2.201: on.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_64_blocks", True, """\
A `wgmma` product may also run in blocks 64 columns wide (``wgmma`` ``m64n64``) where one wave
of them holds it and they finish first (`gemm_wgmma.block_n_for`, weighted by
`gemm_wgmma.BLOCK_COSTS`): a batch-1 model's 128-row products, whose 128-wide blocks leave
most of the device's units idle (GPT-2 small's 768-column ones: 12 work-groups of 64 rows on
the H200's 132 units; in 64-wide blocks, 24). Off, 128 is the narrowest.

On the H200 (2026-12-04, session 24, f16; bench/results/h200-2026-12-04-s24-blocks64_*) GPT-2
small's batch-1 products took 0.0085-0.0096 ms in 64-wide blocks against 0.0101-0.0104 in
128 (OpenCL's times, each with about 5.5 us of an empty kernel), 768 x 3072 in 6 parts 0.0162
against 0.0177; through the torch backend, the two in the same turns, GPT-2 small at batch 1
took **0.436 ms a call against 0.541** (reduce-overhead 0.546). The wgmma GPU tests passed
with it on (201).""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_resident_waves", True, """\
`gemm_wgmma.block_n_for` counts a product whose blocks all run at once, several a unit
(`gemm_wgmma.resident_blocks`: 128 x 64 blocks two a unit on Hopper, by their shared memory),
as one wave: the Llama-style model's gate and up product at batch 1 (128 x 11264 x 2048) then
runs as 176 blocks 64 wide where 88 blocks of 128 leave 44 of the H200's 132 units idle. Off,
each unit counts one block at a time, as before.

On the H200 (2026-12-04, session 25, f16; bench/results/h200-2026-12-04-s25-resident_*) each
product it moves to 64-wide blocks was faster so (OpenCL's times): 128 x 11264 x 2048 0.0244
ms against 0.0268, GPT-2 small's 2048 x 768 x 768 at batch 16 0.0127 against 0.0138 and
2048 x 768 x 3072 0.0284 against 0.0306, BERT-base's 512 x 3072 x 768 at batch 1 0.0127
against 0.0138. Through the torch backend, the two in the same turns: the Llama-style model at
batch 1 0.3153 ms of kernels a call against 0.3282 (reduce-overhead's 0.3178), GPT-2 small at
batch 16 1.3465 against 1.3733 (its call 1.447 ms against 1.520).""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_persistent", False, """\
A `wgmma` product of more blocks than the device runs at once (BERT-base's and GPT-2's at
batch 16-32: 2-4 waves) runs in persistent work-groups, as many as run at once
(`gemm_wgmma.persistent_groups_for`), each taking its blocks in turn and copying its next
block's first stages of A and B while it stores the one before: a block's first copies no
longer wait on memory with the tensor cores idle. Off, a work-group a block.

Off: on the H200 (2026-12-04, session 25, f16; bench/results/h200-2026-12-04-s25-persistent_*)
the batch-32 products ran slower so in blocks 256 and 192 wide (the Llama-style model's
4096 x 2048 x 5632 0.1728 ms against 0.1304, BERT-base's 4096 x 3072 x 768 in 192 0.0488
against 0.0436) and at most 4% faster in 128 (0.0418 against 0.0437); the wgmma GPU tests
passed with it on. Not yet known why the wide blocks lose: not spills nor serialized
``wgmma``s (`bench/wgmma_blocks.py --resources`: 198 registers a thread, no local bytes, no
warning from ptxas).""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_deep_stages", False, """\
A `wgmma` product's 128 x 128 blocks turn through 6 stages of K, not 4
(`gemm_wgmma.stages_for`): each step's copies are issued 4 steps before its ``wgmma``s, not 2.
Other blocks keep 4.

Off: on the H200 (2026-12-04, session 25, f16; bench/results/h200-2026-12-04-s25-wgmma_deep_*)
128 x 128 blocks in 6 stages were faster (the Llama-style model's 4096 x 2560 x 2048 product
0.0730 ms against 0.0788) and 192-wide ones in 5 were not, so only 128 x 128 blocks deepen
(`gemm_wgmma.DEEP_STAGES`); but the Llama-style model at batch 32, whose QKV products are 128
wide, took 2.6872 ms of kernels a call against 2.7089 and its calls 2.936 against 2.881 (the
host's noise): not a gain worth a default yet.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("ffma_b_k_major", False, """\
A float32 product on the FFMA kernel (`gemm_ffma_pipelined`, no TF32) whose B is bound and
shared by the batch reads it `[N, K]` (K-major: `common.BOUND_B_PANELS`), as PyTorch's
`nn.Linear` holds its weight, so that the torch backend holds such a weight once
(`fusec.compiler.torch_weights`) rather than a transposed copy beside PyTorch's. Its tile is
copied into local memory as A's is, padded by four floats after each group of four rows
(`gemm_ffma_pipelined`). Off, B is stored `[K, N]`, and the backend holds a transposed copy of
each such weight.

Off: slower. On the H200 (`bench/results/h200-2026-12-03-s19-f32_bert-kmajor-padded.log`,
`...-f32_llama-kmajor-padded.log`), BERT-base f32 at B=32 took 19.18 ms of kernels a call on
against 17.07 off, the Llama-style model 37.04 against 32.40, though its weights were held once
(BERT: 413 MiB held once, 14.6 copied). The tile swizzled by the row instead of padded (each
read's offset then depending on the lane) was slower still: 22.6 and 38.0 ms
(`...-f32_bert-kmajor-swizzled.log`). With the default tiles the K-major kernel needs 168
registers and spills 28 bytes (161 and none row-major: `...-s19-ffma-sweep.log`).""",
         "fusec.codegen.kernels.gemm"),
    Knob("ffma_fill_waves", True, """\
A float32 product on the FFMA kernel (`gemm_ffma_pipelined`) whose 128x64 blocks would fill
less than 0.8 of the work-group slots of the waves they take (3 a compute unit) runs in 64x64
blocks (`gemm_ffma_pipelined.default_tiles`): GPT-2 small's 2048-row products at batch 16 but
the 3072-column one. Off, every product takes 128x64 blocks.

Measured per kernel on the H200 against cuBLAS at the shapes of GPT-2 and BERT
(`bench/results/h200-2026-12-03-s19-ffma-sweep.log`): 2048x768x768 0.066 ms against 0.090,
2048x768x3072 0.236 against 0.324, 2048x2304x768 0.181 against 0.198 (cuBLAS 0.075, 0.235,
0.191); where the blocks fill their waves the 128x64 ones were faster (2048x3072x768 0.229
against 0.238, 4096x768x3072 0.438 against 0.461). In the whole model (GPT-2 small f32, B=16,
S=128, same turns: `...-s20-f32_gpt2-b16-fill-waves.log`): 9.17 ms a call against 10.72 off,
Inductor 9.14; its products 8.34 ms of kernels against 9.94.""",
         "fusec.codegen.kernels.gemm_ffma_pipelined"),
    Knob("gpu_half_vectors", True, """\
A GPU's 16-bit elementwise kernel whose accesses along its innermost dimension all start at
16-byte multiples (`lowering.kernel_builder.aligned_by`: that dimension, each buffer's rows
and each access's offset multiples of 8 elements) runs 8 lanes a work-item, each vector read
and written as one ``uint4`` and converted in registers (`codegen.kernels.half`'s
``fusec_load_half8``). Off, a GPU keeps 16-bit kernels scalar (``vload_half8`` compiles into
8 two-byte loads on NVIDIA's OpenCL: `fusec.bench.probe_half_moves`).

On the H200 (2026-12-04, session 26, bench/results/h200-2026-12-04-s26-half_vectors_*.log,
the two in the same turns, f16): GPT-2 small at batch 16 took 1.2438 ms of kernels a call
against 1.3132 off (its 12 moves of the keys and values into `[B, H, S, D]` 0.0388 ms against
0.0961, the position embeddings' add 0.0022 against 0.0079), its call 1.290 against 1.366; the
Llama-style model at batch 32 the same (2.6769 and 2.6812: its rotary embedding reads a concat
through clamped index maps, which stays scalar); BERT-base at batch 32 2.0612 and 2.0586 (its
one such kernel 0.0049 ms against 0.0156). The same numbers either way; the GPU tests of the
lowering and the backend, misaligned inputs on every launch path among them, passed (82).""",
         "fusec.lowering.lower_to_kernels"),
    Knob("wgmma_b_as_held", True, """\
A weight the torch backend binds as the tensor it is (not folded into another: GPT-2's `Conv1D`
weights, `[K, N]`) keeps that layout where every product reading it can read it so: a `wgmma`
product of f16 or bf16 reads such a B MN-major (`gemm_wgmma`'s `b_rows`), so the backend can
hold the weight once (`fusec.compiler.torch_weights`). Off, it is stored transposed, `[N, K]`,
as every other bound B of a `wgmma` product is (`common.BOUND_B_PANELS`): fusec's copy
beside PyTorch's. It costs no time: on the H200 (2026-12-04, session 26,
bench/results/h200-2026-12-04-s26-b_as_held_gpt2_b16.log, the two in the same turns) GPT-2
small's products at batch 16 in f16 took 0.9571 ms a call read as held and 0.9555 transposed.""",
         "fusec.compiler.torch_weights"),
    Knob("wgmma_short_blocks", True, """\
A `wgmma` product whose blocks of 128 rows would occupy at most half of the device's units
(a batch-1 model's 128-row products: GPT-2 small's 768-column ones are 6 blocks on the H200's
132 units) runs in blocks of 64 rows, one warpgroup each (`gemm_wgmma.block_m_for`): twice
the blocks, each half the work. Off, every block is 128 rows high.

On the H200 (2026-12-03, session 17; bench/results/h200-2026-12-03-s17-short-blocks.log,
`python -m fusec.bench.split_k_sweep`, kernel time) the batch-1 products of K 768 took
0.0094-0.0099 ms whole in 64-row blocks against 0.0113-0.0118 in 128-row ones (GPT-2 small's
four, BERT-base's at S=512 the same: 0.0115 against 0.0111), 128 x 768 x 3072 0.0162 in 8
parts against 0.0176; GPT-2 small f16 at batch 1 through the torch backend, the two in the same
turns: 0.632 ms of kernels against 0.665 (...-s17-gpt2-b1-short.json), and 0.601 against 0.696
with `wgmma_sum_parts` on (...-s17-sum-parts.log); the wall time the same (1.47 and 1.47 ms;
1.09 and 1.12). Both models with both knobs on, in one run (...-s17-b1-knobs.log): GPT-2 small
0.607 ms of kernels against 0.709 in 128-row blocks, BERT-base 0.527 against 0.600 (wall 0.672
against 0.715 ms).""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_split_k", True, """\
A `wgmma` product of whole tiles with too few outputs to fill the device (a batch-1 model's
128-row products) is split along K into parts at least 512 deep (`template_ops.whole_tile_split`):
each part's work-groups write float32 partial products and a second launch adds them and
applies the epilogue. Off, such products run whole: fewer work-groups than the device has
units, but one launch. With `wgmma_sum_parts` on (the default in session 17 only) such products
are split in the kernel instead and this knob changes nothing.

A batch-1 GPT-2 small's 128 x 768 x 3072 product is 6 blocks of 128 x 128 on the H200's 132
units; in 6 parts, 36. On the H200 (2026-12-02, bench/results/h200-2026-12-02-s13-models.log
(d) and (e), two runs) GPT-2 small f16 at batch 1 through the torch backend took 1.27 ms of
kernels and 2.13 ms a call without it, 1.08 and 1.97 with it (12 more launches, 111). In one
run, the two timed in the same turns (2026-12-02, session 14,
bench/results/h200-2026-12-02-s14-models-splitk-b1.json), a call took 2.69 ms without it and
2.80 with it for GPT-2 small, 2.15 and 2.24 for BERT-base: off then. At batch 1 a call was
bound by the host's enqueue (about 8-10 us a launch on the GPU machine), which the extra
launches add to. Since the torch backend replays its launches as a CUDA graph (session 15) the
host no longer decides: on the H200 (2026-12-03, session 16,
bench/results/h200-2026-12-03-s16-gpt2-b1.json, the same turns) GPT-2 small f16 at batch 1 took
0.663 ms of kernels and 1.250 ms a call with it, 0.840 and 1.335 without: on. Only the
products of K at least 1024 split (parts at least 512 deep): in bench/split_k_sweep.py the
products of K 768 took longer in any split than whole.""",
         "fusec.lowering.template_ops"),
    Knob("wgmma_sum_parts", False, """\
A `wgmma` product whose blocks would occupy at most half of the device's units (a batch-1
model's 128-row products) is split along K in the kernel itself (`gemm_wgmma.parts_for`: up to
4 parts, each at least 2 steps of K, all work-groups on the units at once): each part's
work-group writes its float32 block to a scratch buffer and counts itself; the last of a
block's to arrive adds the parts in a fixed order and applies the epilogue. One launch, the
epilogue kept in it, the sum the same whichever part arrives last. Such products are then not
split into two launches (the knob `wgmma_split_k`). Off, they are split so or run whole.

On the H200 (2026-12-03, session 17), with 64-row blocks (`wgmma_short_blocks`), through the
torch backend at batch 1 in f16, the two timed in the same turns
(bench/results/h200-2026-12-03-s17-b1-knobs.log): GPT-2 small 0.607 ms of kernels against
0.637 without it (its GEMMs 0.436 against 0.446 plus the split sums), BERT-base 0.527 against
0.544; the wall time 1.437 against 1.340 ms for GPT-2 (a call there is bound by the host, at
twice its kernel time, and moves by that much between runners) and 0.672 against 0.673 for
BERT: on. Alone, in the sweep of single products with the weights in L2
(`python -m fusec.bench.split_k_sweep`, ...-s17-sum-parts.log), it gained nothing: 128 x 768 x
768 took 0.0099-0.0103 ms in 2-4 parts against 0.0094 whole, by OpenCL's events, which count
about 5.5 us of any kernel (bench/probe_kernel_floor.py, ...-s17-event-floor.log). These
figures were taken before the parts' writes were fenced GPU-wide (``fence.acq_rel.gpu``; OpenCL's
``mem_fence`` had compiled to ``membar.cta``, which does not order them for another unit).

With the GPU-wide fence (2026-12-03, session 18, bench/results/h200-2026-12-03-s18-b1-knobs.log,
the same turns) it costs more than it gains: BERT-base 0.567 ms of kernels against 0.545
without it (its GEMMs 0.395 against 0.354 plus 0.020 of split sums), GPT-2 small 0.644 against
0.640; the wall 0.942 against 0.917 ms and 0.989 against 0.895: off since.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_swiglu_epilogue", True, """\
A `wgmma` product whose only reader is a `fused.swiglu` (and whose B is bound) computes it in
its epilogue (`gemm_wgmma` with `swiglu`; `fusec.codegen.swiglu_epilogue`): one launch instead of
the GEMM and the `swiglu` kernel, and no `[M, N]` C in global memory. Off, such products and
their `swiglu` launch are planned as before.

On an H200 (2026-11-26, bench/results/h200-2026-11-26-s6-swiglu-epilogue.log; profile_kernels,
median of 20) the f16 Llama block at batch 32: gate/up GEMM 0.0466 + swiglu 0.0320 ms -> 0.0483
ms in one launch, kernels 0.274 -> 0.243 ms (bf16: 0.0534 + 0.0323 -> 0.0501, 0.280 -> 0.246);
fusec-bench kernel time 0.271 -> 0.241 ms f16 (torch.compile f16 0.25-0.28), 0.279 -> 0.244
bf16.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("cuda_dependent_launch", True, """\
Where the torch backend replays a partition's kernels from a CUDA graph on a Hopper GPU or
later, they may be dependent launches (programmatic dependent launch: ``cuLaunchKernelEx`` with
programmatic stream serialization, recorded as programmatic edges,
`cuda_driver.CudaDriver.launch_dependent`): a kernel's work-groups may start while the kernel
before it runs, and each first waits for that kernel to finish and its writes to be visible
(``griddepcontrol.wait``, then ``griddepcontrol.launch_dependents``, added to every entry of the
program's PTX), so the gap between two kernels (the launch, the work-groups' start) overlaps
the kernel before. The first call records the graph with plain launches and times replays of
it; where the partition's kernels are short (`cuda_launch.short_kernels`: 10 us on average) it
records and times the graph with dependent launches too and keeps them where they are 2% faster
(`cuda_launch.prefers_dependent`). Without graphs the launches are plain. Off, each kernel starts after the one before it has finished.

On the H200, Hugging Face models at `sdpa`, f16, the two in the same turns: at batch 1 GPT-2
small took 0.580 ms a call with them against 0.625 (session 20), 0.556 against 0.644 (session
21) and 0.552 against 0.635 (session 22, bench/results/h200-2026-12-03-s22-decision-gpt2-b1.log;
reduce-overhead 0.545), BERT-base 0.526 against 0.583 and 0.531 against 0.597. At batch 32 they
cost: BERT-base 2.36 against 2.08 (session 20), 2.262 against 2.142 and 2.072 against 1.963
(session 22, where the first call's 10 timed replays had found them 3% faster, 2.006 against
2.071: `...-s22-decision-bert-b32.log`), the Llama-style model 3.48 against 2.89 (session 20).
Hence the rule of short kernels (GPT-2's at batch 1 about 5 us a kernel, BERT-base's at batch 32
about 22, the Llama-style model's 66), which keeps batch 32 as it is off: on. Without graphs
(session 21's rule there, every kernel in one wave) BERT-base at batch 32 was 1.10x slower, so
they are not used there.""",
         "fusec.runtime.cuda_launch"),
    Knob("wgmma_split_tf32", True, """\
A float32 product without TF32 (PyTorch's default) takes the ``wgmma`` kernel on a Hopper GPU,
each step three products on the TF32 tensor cores, ``A B + A B_lo + A_lo B``, the low parts
``x - tf32(x)`` made in local memory, and each step's accumulators added into float32 sums by
the ALUs (`gemm_wgmma._split_tf32_step`; the tensor cores add rounding toward zero, which
unpromoted made the product off by 0.7-2.3e-5 of max |C| at K 768 to 3072). Both operands are
read K-major: an ``nn.Linear`` weight where PyTorch holds it; a bound B held ``[K, N]`` (GPT-2's
``Conv1D``) is transposed each call into a buffer of the call's, not stored twice
(`templates.reads_bound_b_as_is`). Its results are close to float32's own rounding, not equal
to the FFMA kernel's. Off, such products take the FFMA kernel (`gemm_ffma_pipelined`).

On the H200 (session 21, `bench/results/h200-2026-12-03-s21-split-tf32-sweep.log`, each product
against cuBLAS's float32 without TF32 in the same process): 0.53-0.63x cuBLAS's time at the
BERT and Llama-style shapes, max error 8e-7 to 1.0e-6 of max |C| from float64 (cuBLAS 0.5-2.6e-6,
plain TF32 8e-4). Whole models, f32, the knob flipped in the same turns
(`...-s21-split-tf32-*.log`): BERT-base B=32 10.73 ms a call against 17.16 off (Inductor 17.55),
the Llama-style model 17.16 against 32.35 (Inductor 31.66), GPT-2 small B=16 5.79 against 9.19
(Inductor 9.18); each within 3e-5 of eager (Inductor 8e-6 to 2e-5).""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_split_tf32_b_rows", False, """\
A float32 product in split TF32 (the knob `wgmma_split_tf32`) whose B is stored ``[K, N]`` (a
weight held so, GPT-2's ``Conv1D``, or a computed B) reads it as it is: each stage copies B's
rows as they lie and the step's pass, which makes the low parts, writes B's tile K-major into
local memory of its own (`gemm_wgmma._split_tf32_step`; 224 KiB of local memory in all at
128-row blocks). Off, such a B is transposed by a launch of its own each call into a buffer
of the call's (GPT-2 small f32 B=16 on the H200: 6.07 ms a call, against 5.79 with its weights
stored transposed once). Checked in the CPU emulation of the kernel. On the H200 (2026-12-03,
session 23, GPT-2 small f32 B=16, the knob flipped in the same turns:
`bench/results/h200-2026-12-03-s23-pending_gpt2_b16_f32.json`) it was slower: 6.72 ms a call
against 6.25 off (kernels 6.71 against 6.20), so it stays off.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("wgmma_prefetch_b", True, """\
With dependent launches (the knob `cuda_dependent_launch`), a ``wgmma`` product's work-groups
ask L2 for their block's panel of B (``prefetch.global.L2``, `gemm_wgmma._prefetch_b`) before
they wait for the kernel before them: a weight, read from memory while that kernel runs
rather than after it. Off (or without dependent launches), the kernel waits first. Only a
product whose work-groups all run at once (at most one a compute unit: `gemm_plan`) does so.

On the H200 (2026-12-03, session 20, f16, batch 1, dependent launches on, the two in the same
turns: `bench/results/h200-2026-12-03-s20-b1_*-prefetch.log`): BERT-base 0.545 ms a call
against 0.568 without, GPT-2 small 0.598 against 0.597.""",
         "fusec.codegen.kernels.gemm_wgmma"),
    Knob("cuda_graph_new_outputs", True, """\
Where the torch backend replays a partition's launches as a CUDA graph and its outputs come to
at least 8 MiB (`cuda_launch.RETARGET_MIN_BYTES`), each call allocates the block its outputs
lie in and points the graph's kernel nodes that read or write an output at it before the
replay (`cuda_launch.CudaLaunches.retargets`): no copy of the outputs a call, and no block of
the graph's own held between calls. Off (and below that size), the graph writes a block of its
own that each call copies into a new one.

On the H200 (2026-12-03, session 20, Hugging Face at `sdpa`): GPT-2 small at B=16 held 341.2
MiB in f16 against eager's 373.4 (416 against 406 before), 680.4 in f32 against 745.1 (830
before): its keys and values, 75 and 150 MiB, no longer held twice
(`bench/results/h200-2026-12-03-s20-gpt2_b16_*`).""",
         "fusec.runtime.cuda_launch"),
    Knob("cuda_graph_own_blocks", True, """\
Where the torch backend replays a partition's launches as a CUDA graph and its outputs come to
less than 8 MiB (`cuda_launch.RETARGET_MIN_BYTES`), a call's outputs are views of the block
the graph wrote them in, where no tensor over that block is still alive: two graphs, each
with a block of its own, take turns in a loop ``y = f(x)``, and a third graph's block is
copied where a caller holds both (`cuda_launch.BlockGraph`). Off, each call copies the
graph's block into a new one (an allocation and a copy a call, which at batch 1, where the
host decides, is part of the call's wall time).

On the H200 (2026-12-04, session 24, bench/results/h200-2026-12-04-s24-ownblocks-*, GPT-2 small
at batch 1 in f16, the knob on and off in two processes, each against reduce-overhead in its
own): 0.5387 ms a call against reduce-overhead's 0.5411 on (0.996), 0.5558 against 0.5472 off
(1.016); the host's steps a call with it on: the outputs' views 0.025 ms, the replay 0.060.""",
         "fusec.runtime.cuda_launch"),
    Knob("row_groups_fill_units", True, """\
A row kernel on a GPU (LayerNorm, RMSNorm, softmax: `common.default_rows_per_group`) puts
fewer rows side by side in a work-group where its rows would otherwise make fewer work-groups
than the device has compute units: a batch-1 model's 128 rows of 768 are 128 work-groups of
one row, not 32 of four, on the H200's 132 units. Off, a work-group always holds 256
work-items' worth of rows.

On the H200 (2026-12-03, session 18, bench/results/h200-2026-12-03-s18-b1-graph-bounds.log,
torch backend, f16, batch 1, the two in the same turns): BERT-base's 25 LayerNorms took 0.0707
ms of kernels with it against 0.0791 without, GPT-2 small's 0.0676 against 0.0741; the calls
0.596 against 0.682 ms (BERT) and 0.702 against 0.707 (GPT-2): on.""",
         "fusec.codegen.kernels.common"),
    Knob("row_warp_shuffles", True, """\
A row kernel on an NVIDIA GPU (LayerNorm, RMSNorm, softmax, `fused.row_reduce`) whose rows are
whole warps combines its work-items' partial sums and maxima by ``shfl.sync`` butterflies
within each warp and one exchange of the warps' values through local memory
(`common.RowCombine`): one barrier a reduction, none for a row of one warp, where the tree in
local memory takes one a step (six for a 768-wide row of 64 work-items). Off, the tree.

On the H200 (2026-12-03, session 22, bench/results/h200-2026-12-03-s22-rows-*.log, f16, the two
in the same turns): BERT-base's 25 LayerNorms at batch 32 took 0.167 ms of kernels a call with
it against 0.196 without (the call 2.141 ms against 2.165), GPT-2 small's at batch 1 0.062
against 0.065 (0.651 ms a call against 0.684); `bench/norm_sweep.py` (...-s22-rows-sweep.log)
had the shuffles as fast or faster at every layout of 32 to 256 work-items a row at 2048 and
4096 rows (9.5 against 10.0 us at 4096 x 768 in 32 a row, 13.1 against 16.8 in 256), even at
128 rows (launch-bound, 6-8 us either way): on.""",
         "fusec.codegen.kernels.common"),
    Knob("attention_mma", True, """\
16-bit attention on an NVIDIA device with tensor cores (whose `mma.sync` probe built that type)
takes the flash-attention-2 kernel on tensor cores (`attention_mma.why_not`); off, the
register-tiled kernel (`attention_tiled`) runs there.

On an H200 (2026-11-26, bench/results/h200-2026-11-26-s6-attention-mma.log; B=32 S=128 H=12
D=64, q/k/v packed, median kernel time) f16 causal 0.078 ms tiled -> 0.033 ms with this kernel
without `attention_mma_ldmatrix` and `attention_mma_async_copy`, 0.024 with both (torch SDPA f16
0.028-0.030), masked 0.086 -> 0.034 -> 0.027 (SDPA 0.063-0.077), bf16 alike. `profile_kernels`
(call 2): the f16 Llama block's attention launch 0.078 -> 0.031 -> 0.023 ms, kernel sum 0.243 ->
0.197 -> 0.189; the f16 BERT layer's 0.088 -> 0.034 -> 0.027 ms, sum 0.262 -> 0.210 -> 0.201.""",
         "fusec.codegen.kernels.attention_mma"),
    Knob("attention_mma_ldmatrix", True, """\
The tensor-core attention reads its K and V fragments by `ldmatrix.x4` (V `.trans`), two mma
tiles' B fragments an instruction, rather than by 32-bit (K) and 16-bit (V) reads of local
memory.

On since measured on an H200 (bench/results/h200-2026-11-26-s6-attention-mma.log, call 2; B=32
S=128 H=12 D=64, f16, median kernel time): causal 0.032 ms with neither this nor
`attention_mma_async_copy`, 0.031 ldmatrix, 0.026 cp.async, 0.024 both (SDPA 0.030); masked
0.035, 0.032, 0.030, 0.027 (SDPA 0.077).""",
         "fusec.codegen.kernels.attention_mma"),
    Knob("attention_mma_async_copy", True, """\
The tensor-core attention copies K and V into local memory by 16-byte `cp.async` copies, two
tiles deep (the next tile's copies in flight while this one is computed), where the layouts
allow 16-byte reads and the two stages fit `attention_mma.ASYNC_LOCAL_LIMIT`; else through
registers, one tile at a time.

On since measured with `attention_mma_ldmatrix` (its figures there).""",
         "fusec.codegen.kernels.attention_mma"),
    Knob("gram_split_on_gpu", True, """\
On a GPU, `fused.centered_gram` lowers to the slice-split Gram (`gram_slices` + `gram_combine`)
instead of `column_mean` + the 16 x 16 tiled `centered_gram` (kept for the CPU, and for a GPU
with this off).

Measured on an H200 (2026-11-26, bench/results/h200-2026-11-26-s6-gram-split.log): 4096 x 256 in
0.034 ms of kernel time against 0.157 with the tiled pair, torch.compile 0.12-0.21 in the same
runs. To measure again: `python3 -m fusec.bench.gram_split_sweep` (the kernels alone, several
slice lengths) and `sh bench/gpu.sh gram` (the rows with this off and on).""",
         "fusec.lowering.column_stats_ops"),
    Knob("attention_cpu_vectors", True, """\
f32 attention on a CPU OpenCL device takes the kernel register-tiled over explicit `float8`
vectors (`codegen/kernels/attention_cpu.py`: K transposed into local memory, scores and `P V`
computed as the CPU GEMM computes a product, the softmax on vectors), where `attention_cpu.why_not`
allows; off, the one-query-per-work-item kernel (`attention.attention`) runs there, as before.

Measured on Intel's CPU OpenCL, 2 shared cores of an AMD EPYC (AVX2), 2026-12-02 (load average
about 7, fastest of 30 launches): B=1 S=128 H=12 D=64, q/k/v packed, int mask, 2.3-4.4 ms ->
1.0-1.1 ms. See docs/performance.md for the 12-layer BERT-base.""",
         "fusec.codegen.kernels.attention_cpu"),
)}
"""Every knob, by name."""

_overrides: contextvars.ContextVar[Mapping[str, bool] | None] = contextvars.ContextVar(
    "fusec_knobs", default=None
)
"""The settings of the compile in progress (None: none)."""

_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")


def knob(name: str) -> Knob:
    """The knob called `name`; `KnobError` naming the known ones otherwise."""
    try:
        return KNOBS[name]
    except KeyError:
        raise KnobError(f"unknown knob '{name}' (known: {', '.join(sorted(KNOBS))})") from None


def parse(name: str, text: str) -> bool:
    """The value of knob `name` written as text (``true``, ``0``, ``off``, ...)."""
    knob(name)
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise KnobError(f"knob '{name}' takes true or false (1/0, on/off), not '{text}'")


def parse_assignments(items: list[str] | tuple[str, ...]) -> dict[str, bool]:
    """``["NAME=VALUE", ...]`` (the ``--knob`` options of the tools) as a mapping."""
    values: dict[str, bool] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep:
            raise KnobError(f"--knob takes NAME=VALUE, not '{item}'")
        values[name.strip()] = parse(name.strip(), text)
    return values


def checked(values: Mapping[str, object]) -> dict[str, bool]:
    """`values` with every name known and every value a bool (text is parsed)."""
    out: dict[str, bool] = {}
    for name, v in values.items():
        knob(name)
        if isinstance(v, str):
            out[name] = parse(name, v)
        elif isinstance(v, bool):
            out[name] = v
        else:
            raise KnobError(f"knob '{name}' takes true or false, not {v!r}")
    return out


def value(name: str) -> bool:
    """The knob's value now: the compile's setting, else the environment, else the default."""
    k = knob(name)
    overrides = _overrides.get() or {}
    if name in overrides:
        return overrides[name]
    text = os.environ.get(k.env)
    if text is not None and text.strip():
        try:
            return parse(name, text)
        except KnobError as e:
            raise KnobError(f"{k.env}: {e}") from None
    return k.default


def values() -> dict[str, bool]:
    """Every knob's value now."""
    return {name: value(name) for name in KNOBS}


@contextlib.contextmanager
def overridden(settings: Mapping[str, object] | None = None, /, **kwargs: object) -> Iterator[None]:
    """Within the block (and the threads it starts with its context), the given knobs have the
    given values; e.g. ``with overridden(attention_mma=False): fusec.compile(...)``."""
    merged = {**(_overrides.get() or {}), **checked({**(settings or {}), **kwargs})}
    token = _overrides.set(merged)
    try:
        yield
    finally:
        _overrides.reset(token)
