"""Hopper GEMM on ``wgmma``: ``out = lhs @ rhs_t.T`` with both operands K-major.

The kernel of bench/probe_wgmma_gemm.py's fastest variant (``256,64,4,ptx,1,sw128,cst,cstin``;
BK 32 for TF32), which ran at 0.84-0.95x torch's time on an H200 (bench/README.md, "Hopper
`wgmma` through patched PTX"): one work-group of two warpgroups (256 threads) per 128 x 256
block of C, each warpgroup a 64 x 256 ``wgmma`` accumulator (128 x 128 blocks of 64 x 128 where
a product has too few blocks of 256 to fill the device: `block_n_for`); K in steps of 128 bytes of a row
(64 16-bit elements, 32 float32 ones read as TF32) through 4 stages of ``__local`` memory in the
128-byte swizzled layout (chunk ``c`` of row ``r`` at ``128 r + 16 (c ^ r % 8)``), filled by
16-byte ``cp.async`` (a warp copies 4 whole rows), refill distance 2 and
``wgmma.wait_group 1`` per step; blocks are visited in groups of 8 block rows; C leaves through
``__local`` rows (in the stage buffers, once both warpgroups' ``wgmma``s are done) as whole
16-byte pieces of rows of C, in the operands' type (f16, bf16) or float32 for TF32.

The Hopper-only instructions are PTX comments that carry their operands (`ptx_patch`), so the
OpenCL C builds on any NVIDIA driver; `fusec.runtime.program_cache` patches the PTX before it
runs. A ``gemm`` template's B is row-major ``[K, N]``: the bf16 kernel reads it so
(MN-major, `b_rows`); for TF32, which ``wgmma`` reads only K-major, and f16, whose MN-major
kernel was slower (`ROW_MAJOR_B`), `fusec.codegen.program` launches `transpose` first, into
a ``[N, K]`` buffer of its own.

The template's epilogue (bias, activation, residual add: `templates.epilogue_of`) is applied to
the float32 accumulators in registers, before they are rounded to C's type and staged, as the
``mma.sync`` kernels apply it; its row is the flattened output row, so a batch of products
sharing one B is one product of ``batch * M`` rows. A B bound at compile time (a weight) that
the kernel reads K-major is stored transposed when it is bound (`BOUND_B_PANELS`), so such a
product has no transpose launch.

With `swiglu` (the knob `wgmma_swiglu_epilogue`: `fusec.knobs`) the kernel computes a
``fused.swiglu`` of its product instead: B's gate and up columns are paired (column ``2 j`` gate
``j``, ``2 j + 1`` up ``j``), so each lane holds gate ``j`` and up ``j`` in one accumulator pair
and stores ``up * silu(gate)``; C, its staging and its copy-out are half as wide
(`fusec.codegen.swiglu_epilogue` decides which products take it). A B read K-major holds the
two halves as they are and the kernel pairs their rows as it copies B's tiles (`halves`,
`b_row`); one read as it is is stored with its columns interleaved
(`fusec.codegen.plan.interleave_halves`).

Only whole tiles (`fits`): M (times the batch) a multiple of 128, N of 128, K of `block_k`,
one B for the batch, C in the operands' type; `gemm_plan` returns None for the rest, which
keep the ``mma.sync`` kernels. Whether a device runs it at all is `probe_wgmma`'s answer
(`DeviceInfo.wgmma`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from fusec import knobs
from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
    IDENTITY_EPILOGUE,
    DeviceInfo,
    Epilogue,
    KernelArg,
    KernelSource,
    Scratch,
    check_epilogue_names,
    kernel_signature,
)
from fusec.errors import error_line

BLOCK_M = 128
BLOCK_N = 256
"""The widest block of C's columns a work-group computes (the kernel's first form)."""
BLOCK_NS = (256, 192, 128, 64)
"""The block widths the kernel comes in, widest first: each warpgroup's accumulator is
``64 x block_n`` (``wgmma`` ``m64n<block_n>``). A product of few blocks takes a narrower one
when it fills the device's compute units better (`block_n_for`); 192 only with the knob
`wgmma_192_blocks`, 64 only with `wgmma_64_blocks` (`block_widths`)."""
BLOCK_COSTS = {256: 1.0, 192: 0.95, 128: 1.15, 64: 1.5}
"""How long a block of each width takes per column against a 256-wide one: `block_n_for`'s
weights. Fitted to `bench/wgmma_blocks.py` on the H200 (f16, session 22,
bench/results/h200-2026-12-03-s22-blocks-f16.log): in products of several waves a 192-wide
block took 0.88-0.96 of a 256-wide one's time a column (BERT-base's and GPT-2's, K 768 and
3072), a 128-wide one 0.94-1.03 at K 768 and 1.15-1.29 at K 2048-5632 (the Llama-style
model's; its A tile is read for half the columns). With these weights the rule picks the
fastest width of the 17 whole-model products timed but one (BERT-base's 512 x 768 x 3072 at
batch 1: 128 wide, 0.0206 ms against 192's 0.0188). 64's weight makes the rule take 64 only
where one wave of them holds the product (a batch-1 model's 128-row products): there they
were 0.85-0.93 of a 128-wide block's time in session 24 (the knob `wgmma_64_blocks`,
bench/results/h200-2026-12-04-s24-blocks64_sweep.log); the one product of two waves timed
(BERT-base's 512 x 3072 x 768 at batch 1) took 0.0117 ms in 64 against 0.0127 in 128, which
the rule leaves at 128 (no product of several waves has been timed in 64)."""
STAGES = 4
THREADS = 256
BLOCK_MS = (BLOCK_M, 64)
"""The block heights the kernel comes in: two warpgroups of 64 rows (`THREADS`), or one (128
threads) where a product has too few blocks of 128 rows to fill the device (`block_m_for`)."""
ROW_BYTES = 128
"""Bytes of one row of a stage: one 128-byte swizzle row."""
INSTRUCTIONS = {"f16": "k16.f32.f16.f16", "bf16": "k16.f32.bf16.bf16", "f32": "k8.f32.tf32.tf32"}
"""Each operand type's ``wgmma`` shape after ``m64n<block_n>`` (`instruction`) and types."""
DESCRIPTOR_FIELDS = (1 << 16) | ((1024 >> 4) << 32) | (1 << 62)
"""Descriptor bits besides the start address: LBO 1 (unused for K-major swizzled tiles), SBO
1024 bytes (8 rows of 128), layout type 1 (128-byte swizzle)."""
B_BLOCK_BYTES = 64 * ROW_BYTES
"""Row-major B (`b_rows`): the bytes of one 64-column block of a stage's B tile (64 rows of K,
each 128 bytes of 64 columns)."""
MN_DESCRIPTOR_FIELDS = ((B_BLOCK_BYTES >> 4) << 16) | ((1024 >> 4) << 32) | (1 << 62)
"""An MN-major swizzled B (CUTLASS's canonical ``((64, n), (8, k))`` layout): LBO the stride
between 64-column blocks, SBO between groups of 8 rows of K (1024 bytes), 128-byte swizzle."""
MN_MAJOR_B = ("f16", "bf16")
"""The types whose ``wgmma`` can read B as it is stored, ``[K, N]`` row-major (MN-major, the
transpose immediate set; `gemm_wgmma`'s `b_rows`). TF32 takes K-major operands only."""
ROW_MAJOR_B = ("bf16",)
"""The types whose products do read B so, without a transpose launch (`gemm_plan`). Not f16:
on the H200 its MN-major kernel took 0.234 ms at 4096^3 against 0.187 K-major (bf16: 0.192 and
0.190; bench/results/h200-2026-11-25-s4-wgmma-fusec-3.log), more than the transpose's 0.042."""
SWIGLU_TYPES = ("f16", "bf16")
"""The operand types whose products may take the SwiGLU epilogue."""
MAX_PARTS = 4
"""The most parts of K a product's blocks are summed from in the kernel (`parts_for`): the
last work-group of a block to finish reads the others' float32 partial blocks, one after
another, before it stores the block (`gemm_wgmma`'s `parts`)."""
MIN_PART_STEPS = 2
"""The fewest K steps of one part (`parts_for`): its stages' pipeline runs 2 ahead."""
RESERVED_NAMES = frozenset({
    "lhs", "rhs", "rhs_t", "out", "smem", "tid", "part", "pid", "num_m", "in_group", "sbase", "ktiles",
    "wg", "first_m", "group_m", "bm", "bn", "a_glob", "b_glob", "s", "kt", "nk", "slot", "sa",
    "sb", "da", "db", "lane", "warp", "stg", "lr", "q", "erow", "ecol", "t128", "i", "r",
    "chunk", "val", "at", "acc", "partials", "arrivals", "last_part", "partials4", "sum", "parts_in",
    "before", "npid", "nbm", "nbn", "na_glob", "nb_glob",
})
"""Identifiers the kernel body declares, besides the accumulators ``d<i>``: an epilogue
parameter may not take one."""
ACCUMULATORS = r"d\d+"
"""The accumulators' names (a regular expression), not to be taken by an epilogue parameter."""


def stage_bytes(block_n: int, block_m: int = BLOCK_M) -> int:
    """Bytes of one stage: the A tile's `block_m` rows and the B tile's `block_n` rows of 128
    bytes."""
    return (block_m + block_n) * ROW_BYTES


def threads_of(block_m: int) -> int:
    """The work-group size of a block `block_m` high: a warpgroup of 128 threads per 64 rows."""
    return 2 * block_m


def instruction(dtype: str, block_n: int) -> str:
    return f"m64n{block_n}{INSTRUCTIONS[dtype]}"


def element_bytes(dtype: str) -> int:
    return 4 if dtype == "f32" else 2


def block_k(dtype: str) -> int:
    """Elements of K per step: one 128-byte row."""
    return ROW_BYTES // element_bytes(dtype)


def fits(dtype: str, batch: int, m: int, n: int, k: int, block_n: int | None = None) -> bool:
    """Whether the product is whole tiles of the kernel (and a dtype it takes): of `block_n`
    columns, or of the narrowest block width where None."""
    block_n = block_n or block_widths()[-1]
    return (dtype in INSTRUCTIONS and batch == 1 and m % BLOCK_M == 0 and n % block_n == 0
            and k % block_k(dtype) == 0 and k > 0 and m > 0 and n > 0)


def block_widths() -> tuple[int, ...]:
    """The block widths products may take: `BLOCK_NS` (192 with the knob `wgmma_192_blocks`
    on, 64 with `wgmma_64_blocks`), or the widest alone with the knob `wgmma_narrow_blocks`
    off."""
    if not knobs.value("wgmma_narrow_blocks"):
        return BLOCK_NS[:1]
    return tuple(w for w in BLOCK_NS if (w != 192 or knobs.value("wgmma_192_blocks"))
                 and (w != 64 or knobs.value("wgmma_64_blocks")))


def block_cost(width: int) -> float:
    """How long a block `width` wide takes per column against a 256-wide one (`block_n_for`):
    `BLOCK_COSTS`."""
    return BLOCK_COSTS[width]


SHARED_BYTES_PER_UNIT = 228 * 1024
"""Shared memory of one of Hopper's units (H100, H200), of which the driver keeps 1 KiB a
work-group: how many work-groups of a block size one unit holds at once (`resident_blocks`)."""
THREADS_PER_UNIT = 2048
REGISTERS_PER_UNIT = 65536
REGISTERS_BESIDES_ACCUMULATORS = 64
"""A thread's registers besides its ``block_n / 2`` accumulators (an estimate, on the high side:
addresses, descriptors, the copy loop's and the epilogue's values)."""


def resident_blocks(block_m: int, block_n: int) -> int:
    """How many work-groups of `block_m` x `block_n` blocks one unit holds at once: by their
    `STAGES` stages of shared memory, their threads, and their registers (`block_n / 2`
    accumulators a thread and `REGISTERS_BESIDES_ACCUMULATORS`). 128 x 64 blocks (96 KiB of
    stages) two a unit; 128 x 128 (128 KiB) and wider, one."""
    shared = STAGES * stage_bytes(block_n, block_m) + 1024
    threads = threads_of(block_m)
    registers = threads * (block_n // 2 + REGISTERS_BESIDES_ACCUMULATORS)
    return max(1, min(SHARED_BYTES_PER_UNIT // shared, THREADS_PER_UNIT // threads,
                      REGISTERS_PER_UNIT // registers))


DEEP_STAGES = {128: 6}
"""The stages of K steps blocks of a width turn through with the knob `wgmma_deep_stages`
(`stages_for`), where more than `STAGES` were faster on the H200 (2026-12-04, session 25, f16,
bench/results/h200-2026-12-04-s25-wgmma_deep_stages_sweep_*.log): 128 x 128 blocks (32 KiB a
stage, 192 KiB in 6) took 0.1463 ms against 0.1704 for the Llama-style model's 4096 x 2048 x
5632, 0.0730 against 0.0788 for its 4096 x 2560 x 2048 and 0.0431 against 0.0477 for
BERT-base's 4096 x 768 x 3072; 128 x 192 blocks in 5 stages were no faster (0.0412 against
0.0399, 0.0413 against 0.0404) and 256-wide ones have no room for a fifth."""


def stages_for(block_m: int, block_n: int, split_tf32: bool = False) -> int:
    """The stages of a block's K steps the kernel turns through: `STAGES`, or with the knob
    `wgmma_deep_stages` `DEEP_STAGES` for 128 x 128 blocks (a unit's one work-group has the
    room), so that a step's copies are issued 4 steps before its ``wgmma``s, not 2. Split TF32
    keeps 4 (its low parts take the room)."""
    if (split_tf32 or not knobs.value("wgmma_deep_stages") or block_m != BLOCK_M
            or resident_blocks(block_m, block_n) != 1):
        return STAGES
    return DEEP_STAGES.get(block_n, STAGES)


def block_n_for(m: int, n: int, compute_units: int | None) -> int:
    """The block width (`block_widths`) a product of `m` x `n` runs in: the one whose blocks finish
    soonest on `compute_units` units (one work-group a unit: waves of work-groups, each as long
    as its width, the narrower weighted by `block_cost`), the widest on a tie or where
    the number of units is unknown. At 2048 rows a 768-column product is 48 blocks of 256 on
    the H200's 132 units, 96 of 128; at 4096 rows 96 blocks of 256 (a wave 73% full) or 128 of
    192 (97%: the knob `wgmma_192_blocks`); the Llama-style model's 2560-column one 3 waves of
    256 or 5 of 128 (``5 * 128 * 1.15 < 3 * 256``: 0.079 ms against 0.095 on the H200).

    With the knob `wgmma_resident_waves` a product whose blocks all run at once with
    `resident_blocks` of them a unit takes one wave, not several of one a unit: the Llama-style
    model's gate and up product at batch 1 (128 x 11264) is 88 blocks of 128 or 176 of 64, two
    of which a unit holds."""
    widths = [w for w in block_widths() if n % w == 0]
    if not widths:
        raise ValueError(f"{n} columns are not whole blocks of any of {block_widths()}")
    if compute_units is None or compute_units < 1:
        return widths[0]
    resident = knobs.value("wgmma_resident_waves")

    def finish(width: int) -> float:
        blocks = (m // BLOCK_M) * (n // width)
        at_once = compute_units * (resident_blocks(BLOCK_M, width) if resident else 1)
        waves = 1 if blocks <= at_once else -(-blocks // compute_units)
        return waves * width * block_cost(width)

    return min(widths, key=finish)


def block_m_for(m: int, n: int, block_n: int, compute_units: int | None) -> int:
    """The block height (`BLOCK_MS`) a product of `m` x `n` in blocks `block_n` wide runs in:
    with the knob `wgmma_short_blocks` on, 64 rows where blocks of 128 would occupy at most
    half of the device's `compute_units` (a batch-1 model's 128-row products: twice the
    blocks, each half the work); else 128."""
    if not knobs.value("wgmma_short_blocks") or not compute_units:
        return BLOCK_M
    return 64 if 2 * (m // BLOCK_M) * (n // block_n) <= compute_units else BLOCK_M


def parts_for(m: int, n: int, k: int, dtype: str, block_m: int, block_n: int,
              compute_units: int | None) -> int:
    """The parts of K a product of `m` x `n` x `k` in blocks of `block_m` x `block_n` is
    summed from in the kernel (`gemm_wgmma`'s `parts`), with the knob `wgmma_sum_parts` on:
    where its blocks would occupy at most half of the device's `compute_units`, the most parts
    (at most `MAX_PARTS`, each at least `MIN_PART_STEPS` whole steps of K) whose work-groups
    all fit on the units at once; else 1. GPT-2 small's 128 x 768 x 768 product at batch 1 is
    6 blocks of 128 x 128 on the H200's 132 units: 4 parts of 192, 24 work-groups."""
    if not knobs.value("wgmma_sum_parts") or not compute_units:
        return 1
    blocks = (m // block_m) * (n // block_n)
    if 2 * blocks > compute_units:
        return 1
    steps = k // block_k(dtype)
    fitting = [p for p in range(2, MAX_PARTS + 1)
               if steps % p == 0 and steps // p >= MIN_PART_STEPS and blocks * p <= compute_units]
    return max(fitting, default=1)


def staged_row_bytes(block_n: int, out_dtype: str, swiglu: bool) -> int:
    """Bytes of one row of a warpgroup's staged block of C (`_body`): its columns (half of
    them with `swiglu`) in C's type, padded so that the lanes' stores fall in distinct banks
    (16 bytes for 16-bit C, 32 for float32)."""
    ceb = element_bytes(out_dtype)
    return (block_n // 2 if swiglu else block_n) * ceb + (32 if ceb == 4 else 16)


def persists(block_m: int, block_n: int, out_dtype: str, swiglu: bool, split_k: int = 1,
             parts: int = 1, split_tf32: bool = False) -> bool:
    """Whether a product may run in persistent work-groups (`gemm_wgmma`'s
    `persistent_groups`): a whole product (not split along K, nor summed from parts, nor split
    TF32) whose warpgroups each stage their 64 rows of C within one stage, so that a
    work-group's next block's first steps are copied into the other stages while it stores.
    16-bit C does in every width; float32 C does not."""
    return (split_k == 1 and parts == 1 and not split_tf32
            and 64 * staged_row_bytes(block_n, out_dtype, swiglu)
            <= stage_bytes(block_n, block_m))


def persistent_groups_for(m: int, n: int, block_m: int, block_n: int, units: int | None,
                          out_dtype: str, swiglu: bool, split_k: int = 1, parts: int = 1,
                          split_tf32: bool = False) -> int:
    """The persistent work-groups a product runs in (`gemm_wgmma`'s `persistent_groups`), with
    the knob `wgmma_persistent`: as many as the device's `units` hold at once
    (`resident_blocks` a unit) where its blocks are more than that and it `persists`; else 0
    (a work-group a block)."""
    if not knobs.value("wgmma_persistent") or not units:
        return 0
    at_once = units * resident_blocks(block_m, block_n)
    if (m // block_m) * (n // block_n) <= at_once or not persists(
            block_m, block_n, out_dtype, swiglu, split_k, parts, split_tf32):
        return 0
    return at_once


def why_not(device_info: DeviceInfo | None, batch: int, m: int, n: int, k: int,
            rhs_batched: bool, epilogue: Epilogue, dtype: str, allow_tf32: bool,
            out_dtype: str, split_k: int) -> str | None:
    """None where a ``gemm`` template's product takes the wgmma kernel, else why not."""
    if device_info is None or not device_info.wgmma:
        return "the device has no wgmma"
    if dtype == "f32" and not allow_tf32 and not knobs.value("wgmma_split_tf32"):
        return "f32 without allow_tf32"
    if dtype not in INSTRUCTIONS:
        return f"{dtype} operands"
    if out_dtype != dtype and not (dtype in SWIGLU_TYPES and out_dtype == "f32"):
        return "the result is cast (other than to f32 of 16-bit operands)"
    if split_k != 1 and (epilogue is not IDENTITY_EPILOGUE or out_dtype != "f32"):
        return "a split K with an epilogue or C not float32 (the parts' sum applies them)"
    if split_k != 1 and (k % split_k or (k // split_k) % block_k(dtype)):
        return f"K {k} in {split_k} parts that are not whole steps of {block_k(dtype)}"
    if rhs_batched and batch != 1:
        return "a batch of products, each with its own B"
    if not knobs.value("wgmma_layer_gemms"):
        if epilogue is not IDENTITY_EPILOGUE:
            return "an epilogue (the knob wgmma_layer_gemms is off)"
        if batch != 1 or rhs_batched:
            return "a batch of products (the knob wgmma_layer_gemms is off)"
    if not fits(dtype, 1, batch * m, n, k):
        rows = f"{batch}x{m}" if batch != 1 else f"{m}"
        return (f"{rows}x{n}x{k} is not whole {BLOCK_M}x{block_widths()[-1]}x{block_k(dtype)} "
                "tiles")
    try:
        check_epilogue_names("", epilogue, RESERVED_NAMES, ACCUMULATORS)
    except ValueError:
        return "an epilogue parameter is named like a local of the kernel"
    return None


def whole_tile(device_info: DeviceInfo | None) -> int:
    """The lowering's ``gemm-whole-tile`` for `device_info`: where the device runs this kernel
    (with the knobs `wgmma_narrow_blocks` and `wgmma_layer_gemms` on, so that every product of
    whole 128 x 128 tiles takes it), 128: such products are not split along K; else 0."""
    if (device_info is None or not device_info.wgmma or not knobs.value("wgmma_narrow_blocks")
            or not knobs.value("wgmma_layer_gemms")):
        return 0
    return BLOCK_NS[-1]


def splits_tf32(dtype: str, allow_tf32: bool) -> bool:
    """Whether a product that takes the kernel computes in split TF32 (`gemm_wgmma`'s
    `split_tf32`): float32 operands without TF32 allowed (with the knob `wgmma_split_tf32`,
    `why_not`)."""
    return dtype == "f32" and not allow_tf32


def reads_b_k_major(dtype: str) -> bool:
    """Whether the product reads B ``[N, K]`` (K-major: after a transpose, or bound so,
    `BOUND_B_PANELS`) rather than ``[K, N]`` as it is (`ROW_MAJOR_B`)."""
    return dtype not in ROW_MAJOR_B


def stores_bound_b_transposed(dtype: str) -> bool:
    """Whether a bound B of a product that takes the kernel is stored ``[N, K]``
    (`BOUND_B_PANELS`), with the knob `wgmma_layer_gemms` on: for every type, bf16 too,
    although its kernel could read B as it is (`ROW_MAJOR_B`; K-major is as fast: 0.190 ms
    against 0.192 at 4096^3 on the H200), since ``[N, K]`` is how PyTorch's ``nn.Linear``
    holds its weight: stored so, a model's weight can be held once
    (`fusec.compiler.torch_weights`)."""
    return knobs.value("wgmma_layer_gemms") and dtype in INSTRUCTIONS


def takes_swiglu(dtype: str, epilogue: Epilogue) -> bool:
    """Whether a product that takes the kernel may compute a ``fused.swiglu`` of its result
    (the knob `wgmma_swiglu_epilogue` on, a 16-bit type, no epilogue of its own)."""
    return (knobs.value("wgmma_swiglu_epilogue") and dtype in SWIGLU_TYPES
            and epilogue is IDENTITY_EPILOGUE)


def gemm_plan(name: str, batch: int, m: int, n: int, k: int, rhs_batched: bool,
              epilogue: Epilogue, device_info: DeviceInfo | None, dtype: str,
              allow_tf32: bool, out_dtype: str, split_k: int, b_transposed: bool = False,
              swiglu: bool = False, halves: str | None = None, b_bound: bool = False,
              ) -> tuple[KernelSource | None, KernelSource] | None:
    """For a ``gemm`` template's product where `why_not` finds nothing against it: (`transpose`
    of B into ``[N, K]`` or None, `gemm_wgmma`); else None. bf16 reads B ``[K, N]`` as it is
    (`ROW_MAJOR_B`), the others ``[N, K]`` after the transpose; every type reads it as it is
    where `b_transposed` (a bound B stored so, `BOUND_B_PANELS`), and f16 too where `b_bound` (a
    bound B stored ``[K, N]``, which a transpose each call would only copy again: the knob
    `wgmma_b_as_held`). With `swiglu` the product computes
    ``fused.swiglu`` of its result (B's columns interleaved, or, bound transposed, in
    `halves` the kernel pairs as it reads them), where `takes_swiglu`. Both
    kernels are named `name` (the plan builder names them apart)."""
    if why_not(device_info, batch, m, n, k, rhs_batched, epilogue, dtype, allow_tf32,
               out_dtype, split_k) is not None:
        return None
    if swiglu and (not takes_swiglu(dtype, epilogue) or out_dtype != dtype):
        return None
    rows = batch * m
    units = device_info.compute_units if device_info else None
    split = splits_tf32(dtype, allow_tf32)  # float32 accuracy: split TF32, 128 wide
    block_n = 128 if split else block_n_for(rows, n, units // split_k if units else None)
    block_m = block_m_for(rows, n, block_n, units // split_k if units else None)
    parts = parts_for(rows, n, k, dtype, block_m, block_n, units) if split_k == 1 else 1
    # a dependent launch only where the work-groups all run at once (one a unit, at most)
    one_wave = bool(units) and (rows // block_m) * (n // block_n) * split_k * parts <= units
    persistent = persistent_groups_for(rows, n, block_m, block_n, units, out_dtype, swiglu,
                                       split_k, parts, split)
    b_rows_split = split and knobs.value("wgmma_split_tf32_b_rows")
    if not b_transposed and (not reads_b_k_major(dtype) or (b_bound and dtype in MN_MAJOR_B)
                             or b_rows_split):
        return None, gemm_wgmma(name, rows, n, k, dtype, b_rows=True, epilogue=epilogue,
                                swiglu=swiglu, out_dtype=out_dtype, block_n=block_n,
                                split_k=split_k, block_m=block_m, parts=parts,
                                prefetch_b=one_wave, split_tf32=split,
                                persistent_groups=persistent)
    product = gemm_wgmma(name, rows, n, k, dtype, epilogue=epilogue, swiglu=swiglu,
                         out_dtype=out_dtype, block_n=block_n, split_k=split_k,
                         halves=halves if b_transposed else None, block_m=block_m, parts=parts,
                         prefetch_b=one_wave, split_tf32=split, persistent_groups=persistent)
    return (None if b_transposed else transpose(name, k, n, dtype)), product


def transpose(name: str, rows: int, cols: int, dtype: str) -> KernelSource:
    """``dst[c, r] = src[r, c]`` for a ``rows x cols`` row-major matrix of 2- or 4-byte
    elements (rows a multiple of 32, cols of 64, as `fits` makes K and N), through 32 x 64
    tiles in local memory: 256 threads read rows as 4-element vectors (16 lanes a 64-element
    row), and write the tile's columns as 4-element vectors of rows of ``dst`` (8 lanes one
    32-element row); one padding element per tile row spreads the column reads over the
    banks."""
    if rows % 32 or cols % 64:
        raise ValueError(f"kernel '{name}': transposes {rows}x{cols}: rows must be a multiple "
                         "of 32 and columns of 64")
    element = "float" if element_bytes(dtype) == 4 else "ushort"
    args = (KernelArg("src", "in", element), KernelArg("dst", "out", element))
    attribute = "__attribute__((reqd_work_group_size(256, 1, 1)))"
    body = f"""    __local {element} tile[32][65];
    const int t = get_local_id(0);
    const int c0 = get_group_id(0) * 64, r0 = get_group_id(1) * 32;
    #pragma unroll
    for (int i = 0; i < 2; ++i) {{
        const int idx = t + 256 * i, r = idx >> 4, q = idx & 15;
        const {element}4 v = vload4(0, src + (size_t)(r0 + r) * {cols} + c0 + 4 * q);
        tile[r][4 * q] = v.s0; tile[r][4 * q + 1] = v.s1;
        tile[r][4 * q + 2] = v.s2; tile[r][4 * q + 3] = v.s3;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    #pragma unroll
    for (int i = 0; i < 2; ++i) {{
        const int idx = t + 256 * i, c = idx >> 3, q = idx & 7;
        const {element}4 v = ({element}4)(tile[4 * q][c], tile[4 * q + 1][c],
                                          tile[4 * q + 2][c], tile[4 * q + 3][c]);
        vstore4(v, 0, dst + (size_t)(c0 + c) * {rows} + r0 + 4 * q);
    }}
"""
    source = (f"// {name}: transpose of a [{rows}x{cols}] matrix of {dtype}, for wgmma\n"
              f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n")
    return KernelSource(name, source, args, (cols // 64 * 256, rows // 32), (256, 1))


def gemm_wgmma(name: str, m: int, n: int, k: int, dtype: str,
               b_rows: bool = False, epilogue: Epilogue = IDENTITY_EPILOGUE,
               swiglu: bool = False, out_dtype: str | None = None,
               block_n: int = BLOCK_N, split_k: int = 1,
               halves: str | None = None, block_m: int = BLOCK_M,
               parts: int = 1, prefetch_b: bool = False,
               split_tf32: bool = False, persistent_groups: int = 0) -> KernelSource:
    """``out[M, N] = epilogue(lhs[M, K] @ rhs_t[N, K].T)``, in `dtype` (f16, bf16; f32 as TF32
    with a float32 C); with `b_rows` (16-bit types only) ``out = lhs @ rhs`` with ``rhs[K, N]``
    row-major, copied into the stages as 64-column blocks of 64 rows of 128 bytes (swizzled as
    A) and read MN-major. The `epilogue` takes each float32 accumulator with its row and column
    of C before it is rounded to `dtype`; its parameters follow ``out``. With `swiglu` (16-bit
    types, no epilogue) ``out[M, N / 2]`` holds ``up * silu(gate)`` of each pair of columns of
    the product, ``gate = C[:, 2 j]``, ``up = C[:, 2 j + 1]``, in float32 before the rounding.
    `out_dtype` ``"f32"`` (16-bit operands, no SwiGLU) stores C in float32: the epilogue's
    value as it is (an epilogue ending in a cast to f32). Each work-group computes a ``block_m
    x block_n`` block of C (`BLOCK_MS`, `BLOCK_NS`: a warpgroup per 64 rows); the sizes must be
    whole tiles (`fits`). With `split_k`
    (float32 C, no epilogue) work-group ``p`` of each ``split_k``-th of the grid takes the
    ``p``-th part of K and writes its partial product into ``out[p, M, N]``, which
    `gemm.gemm_split_sum` adds (a product of few blocks fills the device so).

    With `swiglu` and `halves` (K-major B only) ``rhs_t`` holds B's two halves as they are,
    rows ``[0, N / 2)`` and ``[N / 2, N)``, not interleaved: the kernel pairs them as it
    copies B's tile into the stages, column ``2 j`` from row ``j`` of the `halves` half
    (``"first"`` or ``"second"``: the gate's), ``2 j + 1`` from row ``j`` of the other
    (`b_row`), so that B can be a model's gate and up weights where they lie.

    With `parts` > 1 (not with `split_k`) each block of C is summed in the kernel from `parts`
    work-groups, the ``p``-th taking the ``p``-th part of K: each writes its float32
    accumulators into ``partials[p]`` (`Scratch`: ``parts x blocks x block_m x block_n``
    floats), fences them and counts itself in ``arrivals[block]``; the last of the block's to
    arrive adds the parts in order of ``p`` (the same sum whichever arrives last), sets the
    count back to 0 for the next launch, and goes on as a whole product's work-group does
    (epilogue, SwiGLU, C in its type). ``arrivals`` must be zero before the first launch
    (`Scratch.zeroed`); the kernel leaves it so.

    With `prefetch_b` (a product whose work-groups all run at once: `gemm_plan`) and the knobs
    `cuda_dependent_launch` and `wgmma_prefetch_b`, the work-groups ask L2 for their panel of B
    before they wait for the kernel before them (`_prefetch_b`).

    With `split_tf32` (f32, blocks 128 wide) each step is three products on TF32 of the
    operands and their low parts, ``A B + A B_lo + A_lo B`` (`_split_tf32_step`): float32
    accuracy from the TF32 tensor cores, both operands read K-major (B read ``[K, N]`` as
    stored with `b_rows`). A float32 product without TF32 takes it where the knob
    `wgmma_split_tf32` is on (`why_not`, `gemm_plan`; on since session 21).

    With `persistent_groups` (a whole product: no parts, C staged within one stage a
    warpgroup, `persists`) the kernel runs that many work-groups, each taking blocks
    ``group, group + groups, ...`` in turn, and a work-group copies its next block's first
    stages while it stores the one before (`_body`): a block's first copies wait on memory
    once a work-group, not once a block."""
    if split_tf32 and (dtype != "f32" or block_n != 128):
        raise ValueError(f"kernel '{name}': split TF32 takes f32 operands in blocks 128 wide, "
                         f"not {dtype} in blocks {block_n} wide")
    if block_m not in BLOCK_MS:
        raise ValueError(f"kernel '{name}': blocks of {block_m} rows; the kernel takes "
                         f"{' or '.join(map(str, BLOCK_MS))}")
    if block_n not in BLOCK_NS:
        raise ValueError(f"kernel '{name}': blocks of {block_n} columns; the kernel takes "
                         f"{' or '.join(map(str, BLOCK_NS))}")
    if not fits(dtype, 1, m, n, k, block_n):
        raise ValueError(f"kernel '{name}': {m}x{n}x{k} {dtype} is not whole "
                         f"{BLOCK_M}x{block_n}x{block_k(dtype)} wgmma tiles")
    if b_rows and dtype not in MN_MAJOR_B and not split_tf32:
        raise ValueError(f"kernel '{name}': wgmma reads {dtype} B only K-major")
    if halves is not None and (not swiglu or b_rows or halves not in ("first", "second")):
        raise ValueError(f"kernel '{name}': B stored in halves ({halves!r}) takes the SwiGLU "
                         "epilogue, K-major, the gate's half 'first' or 'second'")
    if swiglu and (dtype not in SWIGLU_TYPES or epilogue is not IDENTITY_EPILOGUE):
        raise ValueError(f"kernel '{name}': the SwiGLU epilogue takes {' and '.join(SWIGLU_TYPES)} "
                         "products without an epilogue of their own")
    out_dtype = out_dtype or dtype
    if split_k < 1 or k % split_k or (k // split_k) % block_k(dtype):
        raise ValueError(f"kernel '{name}': K {k} in {split_k} parts is not whole steps of "
                         f"{block_k(dtype)}")
    if parts < 1 or k % parts or (k // parts) % block_k(dtype) or (parts > 1 and split_k > 1):
        raise ValueError(f"kernel '{name}': K {k} summed from {parts} parts in the kernel is not "
                         f"whole steps of {block_k(dtype)} (or is split along K as well)")
    if split_k > 1 and (swiglu or epilogue is not IDENTITY_EPILOGUE or out_dtype != "f32"):
        raise ValueError(f"kernel '{name}': a product split along K stores float32 partial "
                         "products, without an epilogue")
    if out_dtype != dtype and (swiglu or dtype not in SWIGLU_TYPES or out_dtype != "f32"):
        raise ValueError(f"kernel '{name}': a wgmma product of {dtype} stores {dtype}, or f32 of "
                         f"16-bit operands without SwiGLU; not '{out_dtype}'")
    if persistent_groups and not persists(block_m, block_n, out_dtype, swiglu, split_k, parts,
                                          split_tf32):
        raise ValueError(f"kernel '{name}': persistent work-groups take a whole product whose "
                         "block of C a warpgroup stages within one stage")
    check_epilogue_names(name, epilogue, RESERVED_NAMES, ACCUMULATORS, "the accumulators d<i>")
    storage = half.STORAGE[dtype]
    blocks = (m // block_m) * (n // block_n)
    persistent_groups = min(persistent_groups, blocks)
    scratch = () if parts == 1 else (
        Scratch("partials", parts * blocks * block_m * block_n * 4),
        Scratch("arrivals", blocks * 4, zeroed=True))
    args = (KernelArg("lhs", "in", storage), KernelArg("rhs" if b_rows else "rhs_t", "in", storage),
            KernelArg("out", "out", half.STORAGE[out_dtype]), *epilogue.params,
            *(KernelArg(s.arg, "out", "float" if s.arg == "partials" else "uint")
              for s in scratch))
    identity = epilogue is IDENTITY_EPILOGUE
    threads = threads_of(block_m)
    attribute = f"__attribute__((reqd_work_group_size({threads}, 1, 1)))"
    shape = f"[{m}x{k}] @ [{k}x{n}]" if b_rows else f"[{m}x{k}] @ [{n}x{k}].T"
    source = (f"// {name}: {shape} on wgmma, {dtype}, "
              f"{block_m}x{block_n} blocks, {stages_for(block_m, block_n, split_tf32)} stages"
              + (f", K in {split_k} parts" if split_k > 1 else "")
              + (f", K in {parts} parts summed in the kernel" if parts > 1 else "")
              + (", SwiGLU of column pairs" if swiglu else "")
              + (f", B in halves ({halves} even)" if halves else "")
              + (", split TF32 (A B + A B_lo + A_lo B)" if split_tf32 else "")
              + (f", {persistent_groups} persistent work-groups" if persistent_groups else "")
              + "\n"
              + ("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" if dtype == "f16" else "")
              + (half.HELPERS + half.bf16_vector_helper(2) if dtype == "bf16" else "")
              + ("" if identity else epilogue.guarded_function())
              + (_swiglu_function(name) if swiglu else "")
              + _load_stage(name, n, k, dtype, b_rows, block_n, halves, block_m)
              + f"{kernel_signature(name, args, attribute)}\n{{\n"
              + _body(name, m, n, k, dtype, b_rows, None if identity else epilogue, swiglu,
                      out_dtype, block_n, split_k, halves is not None, block_m, parts,
                      prefetch_b and knobs.value("cuda_dependent_launch")
                      and knobs.value("wgmma_prefetch_b"), split_tf32, persistent_groups > 0)
              + "}\n")
    groups = persistent_groups or blocks * split_k * parts
    return KernelSource(name, source, args, (groups * threads,), (threads,), scratch=scratch)


def _swiglu_function(name: str) -> str:
    """``<name>_swiglu(gate, up)``: ``up * silu(gate)`` in float32, as ``fused.swiglu``'s
    generated kernel computes it (``silu(x) = x * (1 / (1 + exp(-x)))``, `scalar_ops`)."""
    return (f"inline float {name}_swiglu(const float gate, const float up) {{\n"
            "    return up * (gate * (1.0f / (1.0f + exp(-gate))));\n}\n")


def b_row(r: str, n: int, halves: str) -> str:
    """The row of ``rhs_t`` stored in halves (`gemm_wgmma`'s `halves`), from the first row of
    a block's half-columns on, that interleaved column `r` of the block reads: row ``r / 2`` of
    the gate's half (`halves`) for an even `r`, of the other for an odd one."""
    gate = 0 if halves == "first" else n // 2
    return f"((({r}) & 1) * {n // 2 - 2 * gate} + {gate} + (({r}) >> 1))"


def _load_stage(name: str, n: int, k: int, dtype: str, b_rows: bool, block_n: int,
                halves: str | None = None, block_m: int = BLOCK_M) -> str:
    """``<name>_load_stage``: thread ``t``'s 16-byte ``cp.async`` copies of the A (`block_m` rows)
    and B (`block_n` rows) tiles of K step ``kt`` into the stage at ``slot``; thread ``idx`` of a
    part takes row ``idx / 8``, chunk ``idx % 8`` (a warp reads 4 whole 128-byte rows) and
    writes it at ``128 r + 16 (c ^ r % 8)``. With `b_rows` B's tile is 64 rows of K by
    `block_n` columns: thread ``idx`` takes column block ``idx / 512``, its row ``idx / 8 % 64`` and
    chunk ``idx % 8``, at ``8192 block + 128 r + 16 (c ^ r % 8)`` (again 4 whole 128-byte
    rows a warp). With `halves`, B's tile row ``r`` (an interleaved column) is read from the
    row `b_row` names, past the block's first row of each half. A float32 B with `b_rows`
    (split TF32) is copied as it lies, 32 rows of K of `block_n` floats one after another,
    for the step's pass to write K-major (`_split_tf32_step`)."""
    eb = element_bytes(dtype)
    per_chunk = 16 // eb
    threads = threads_of(block_m)

    def part(rows: int, base: str, offset: int, row: str = "r") -> str:
        return f"""
    #pragma unroll
    for (int i = 0; i < {rows * 8 // threads}; ++i) {{
        const int idx = t + i * {threads};
        const int r = idx >> 3, c = idx & 7;
        const uint dst = slot + {offset} + r * 128 + ((c ^ (r & 7)) << 4);
        const ulong g = {base} + ((ulong){row} * {k} + kt * {block_k(dtype)} + c * {per_chunk}) * {eb};
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(g) : "memory");
    }}"""

    b_part = part(block_n, "b_glob", block_m * ROW_BYTES,
                  "r" if halves is None else b_row("r", n, halves))
    if b_rows and dtype == "f32":  # split TF32: the rows as they are, for its pass to turn
        chunks = block_n * eb // 16  # 16-byte chunks of a row of B's tile
        b_part = f"""
    #pragma unroll
    for (int i = 0; i < {block_k(dtype) * chunks // threads}; ++i) {{
        const int idx = t + i * {threads};
        const int r = idx / {chunks}, c = idx % {chunks};
        const uint dst = slot + {block_m * ROW_BYTES} + r * {block_n * eb} + (c << 4);
        const ulong g = b_glob
            + ((ulong)(kt * {block_k(dtype)} + r) * {n} + c * {per_chunk}) * {eb};
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(g) : "memory");
    }}"""
    elif b_rows:
        b_part = f"""
    #pragma unroll
    for (int i = 0; i < {block_n * 8 // threads}; ++i) {{
        const int idx = t + i * {threads};
        const int j = idx >> 9, r = (idx >> 3) & 63, c = idx & 7;
        const uint dst = slot + {block_m * ROW_BYTES} + j * {B_BLOCK_BYTES} + r * 128
            + ((c ^ (r & 7)) << 4);
        const ulong g = b_glob
            + ((ulong)(kt * {block_k(dtype)} + r) * {n} + j * 64 + c * {per_chunk}) * {eb};
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(g) : "memory");
    }}"""
    return (f"inline void {name}_load_stage(const ulong a_glob, const ulong b_glob, const int kt, "
            f"const uint slot, const int t) {{"
            f"{part(block_m, 'a_glob', 0)}{b_part}\n}}\n")


def _prefetch_b(n: int, k: int, k_part: int, eb: int, b_rows: bool, halves: bool,
                block_n: int, threads: int) -> str:
    """What a work-group does before it waits for the kernel before it (a dependent launch:
    `fusec.runtime.cuda_driver.DEPENDENT_LAUNCH`): asks L2 for every 128-byte line of its
    block's panel of B (``prefetch.global.L2``), a weight no kernel before it writes, so that
    its reads of B after the wait find them there. A prefetch only warms the cache, which
    kernels' writes keep coherent, so it is safe for any B. K-major: the block's `block_n`
    rows of ``rhs_t`` (with `halves`, rows ``j`` and ``N / 2 + j``), ``k_part`` elements each;
    MN-major (`b_rows`): ``k_part`` rows of ``rhs``, ``block_n`` elements each."""
    if b_rows:
        lines, rows, row = block_n * eb // 128, k_part, f"(ulong)r * {n * eb}"
    else:
        lines, rows = -(-k_part * eb // 128), block_n
        row = f"(ulong)((r & 1) * {n // 2} + (r >> 1)) * {k * eb}" if halves \
            else f"(ulong)r * {k * eb}"
    return f"""    for (int i = tid; i < {rows * lines}; i += {threads}) {{
        const int r = i / {lines}, c = i % {lines};
        asm volatile("prefetch.global.L2 [%0];" :: "l"(b_glob + {row} + (ulong)c * 128));
    }}
    asm volatile("griddepcontrol.wait;" ::: "memory");
"""


def _split_tf32_step(stage: int, block_m: int, block_n: int, threads: int, steps: list[str],
                     b_rows: bool = False) -> str:
    """One step of K in split TF32 (`gemm_wgmma`'s `split_tf32`): every float ``x`` of the
    stage's tiles has its low part ``x - tf32(x)`` (``tf32(x)``: its top 19 bits, what
    ``wgmma`` reads) written at the same place of a buffer of low parts (two in turn, after the
    stages: the one written two steps before is no longer read), then ``A B + A B_lo + A_lo B``
    (`steps`), each ``wgmma`` reading its operands' top 19 bits: a float32 product to within
    about ``2^-21`` of each term, where plain TF32 is within ``2^-10``. Before a step's
    products the last step's are added into float32 sums by the ALUs and the accumulators
    start afresh (``FUSEC_WGMMA_PROMOTE``, `ptx_patch`): the tensor cores add rounding toward
    zero, which made the product on the H200 off by 0.7-2.3e-5 of max |C| at K 768 to 3072,
    growing with K (cuBLAS's float32 1-2e-6); promoted, a step's K of 32 at a time.

    With `b_rows` the stage holds B as it is stored, ``[K, N]`` (32 rows of `block_n` floats,
    `_load_stage`), which TF32's ``wgmma`` cannot read: the pass writes B's tile K-major
    (swizzled as the stages' tiles) into a buffer of its own after the low parts' (two in
    turn), and its low parts K-major into the low parts' B tile; a warp's reads of the stage
    are consecutive columns of one row, its writes 8 rows' chunks of distinct banks."""
    low = STAGES * stage
    a_bytes = block_m * ROW_BYTES
    count = (a_bytes if b_rows else stage) // 16  # what the pass copies as it lies
    transposed = high_b = ""
    if b_rows:  # column n, K chunk c (4 floats: rows 4 c .. 4 c + 3 of the stage's B)
        high_b = (f"const ulong db_hi = (((ulong)(sbase + {low + 2 * stage} + (kt & 1) * "
                  f"{block_n * ROW_BYTES}) >> 4) & 0x3FFFUL) | {DESCRIPTOR_FIELDS}UL;\n        ")
        transposed = f"""
          __local const float *rows = (__local const float *)(high + {a_bytes // 16});
          __local uint4 *hib = smem + {(low + 2 * stage) // 16} + (kt & 1) * {block_n * 8};
          for (int i = tid; i < {block_n * 8}; i += {threads}) {{
              const int col = i % {block_n}, c = i / {block_n};
              const float4 v = (float4)(rows[(4 * c) * {block_n} + col],
                                        rows[(4 * c + 1) * {block_n} + col],
                                        rows[(4 * c + 2) * {block_n} + col],
                                        rows[(4 * c + 3) * {block_n} + col]);
              const uint4 x = as_uint4(v);
              const int at = col * 8 + (c ^ (col & 7));
              hib[at] = x;
              lowp[{a_bytes // 16} + at] = as_uint4(v - as_float4(x & (uint4)(0xFFFFE000u)));
          }}"""
    return f"""{{ __local const uint4 *high = smem + slot * {stage // 16};
          __local uint4 *lowp = smem + {low // 16} + (kt & 1) * {stage // 16};
          for (int i = tid; i < {count}; i += {threads}) {{
              const uint4 x = high[i];
              lowp[i] = as_uint4(as_float4(x) - as_float4(x & (uint4)(0xFFFFE000u)));
          }}{transposed}
        }}
        asm volatile("// FUSEC_FENCE_PROXY_ASYNC" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        asm volatile("// FUSEC_WGMMA_PROMOTE" ::: "memory");
        const uint sa_lo = sbase + {low} + (kt & 1) * {stage} + wg * {64 * ROW_BYTES};
        const uint sb_lo = sbase + {low} + (kt & 1) * {stage} + {a_bytes};
        const ulong da_lo = (((ulong)sa_lo >> 4) & 0x3FFFUL) | {DESCRIPTOR_FIELDS}UL;
        const ulong db_lo = (((ulong)sb_lo >> 4) & 0x3FFFUL) | {DESCRIPTOR_FIELDS}UL;
        {high_b}{chr(10).join("        " + each for each in steps).lstrip()}"""


def _body(name: str, m: int, n: int, k: int, dtype: str, b_rows: bool,
          epilogue: Epilogue | None, swiglu: bool, out_dtype: str, block_n: int,
          split_k: int, halves: bool = False, block_m: int = BLOCK_M, parts: int = 1,
          prefetch: bool = False, split_tf32: bool = False, persistent: bool = False) -> str:
    """The kernel's body. Step ``kt`` of a block's K is copied into stage ``(before + kt) %
    stages`` (`stages_for`), ``before`` the steps of the work-group's blocks before it (0 but
    in persistent work-groups), ``stages - 2`` steps ahead of the ``wgmma`` that reads it. A
    persistent work-group (`persistent`), once its block's ``wgmma``s are done, copies its
    next block's first ``stages - 2`` steps into the stages after the last step's and stages
    each warpgroup's C in one of the other two."""
    eb = element_bytes(dtype)
    ceb = element_bytes(out_dtype)  # C's element bytes
    stages = stages_for(block_m, block_n, split_tf32)
    stage = stage_bytes(block_n, block_m)
    threads = threads_of(block_m)
    n_acc = block_n // 2
    accs = [f"d{i}" for i in range(n_acc)]
    names = ", ".join(f"%{i}" for i in range(n_acc))
    outs = ", ".join(f'"=f"({a})' for a in accs)
    slices = block_k(dtype) // (32 // eb)
    # a k slice is 32 bytes further along a K-major row, two 8-row groups (2048 bytes) further
    # down an MN-major B; the transpose immediate of B says which
    b_step, b_trans = (128, 1) if b_rows and not split_tf32 else (2, 0)

    def wgmma_step(a: str, b: str, wait: int) -> str:
        return (f'asm volatile("// FUSEC_WGMMA_STEP {instruction(dtype, block_n)} {slices} 2 '
                f'{b_step} {b_trans} {wait} %0, %1" :: "l"({a}), "l"({b}) : "memory");')

    step = wgmma_step("da", "db", 1)
    if split_tf32:  # the three products of each step, each waiting for the one before's
        # both operands read K-major: B as the stage holds it, or (b_rows) as the pass wrote it
        b_high = "db_hi" if b_rows else "db"
        step = _split_tf32_step(stage, block_m, block_n, threads,
                                [wgmma_step(a, b, 1) for a, b in
                                 (("da", b_high), ("da", "db_lo"), ("da_lo", b_high))], b_rows)
    # C staging: each warpgroup's 64 x block_n tile in rows padded so that the lanes' pair stores
    # (8 rows x 4 lanes) fall in distinct banks: 16 bytes for 16-bit C (4-byte stores), 32
    # for float32 (8-byte stores, served per half warp). With `swiglu` a 64 x block_n / 2
    # tile of one 2-byte store per pair (4 lanes' 8 bytes a row; at block_n 256 rows 272
    # bytes apart: distinct banks)
    out_n, block_out = (n // 2, block_n // 2) if swiglu else (n, block_n)
    row_bytes = staged_row_bytes(block_n, out_dtype, swiglu)
    per_row = block_out * ceb // 16  # 16-byte chunks of a staged row; 128 threads a pass
    pointer = f"(__local {half.STORAGE[out_dtype]} *)"
    stores = []
    for j in range(block_n // 8):
        for h in range(2):
            pair = (f"d{4 * j + 2 * h}", f"d{4 * j + 2 * h + 1}")
            if swiglu:  # gate, up of C's column 4 j + lane % 4 (of the half-wide tile)
                at = f"({pointer}(stg + (lr + {8 * h}) * {row_bytes} + {4 * j * ceb} + q))"
                value = f"{name}_swiglu({pair[0]}, {pair[1]})"
                stores.append(f"    {half.store(dtype, at, '0', value)};")
                continue
            if epilogue is not None:  # at C's row erow + 8 h, columns ecol + 8 j (+ 1)
                pair = tuple(epilogue.call(d, f"erow + {8 * h}", f"ecol + {8 * j + i}")
                             for i, d in enumerate(pair))
            value = f"(float2)({pair[0]}, {pair[1]})"
            at = f"{pointer}(stg + (lr + {8 * h}) * {row_bytes} + {16 * j * ceb // 2} + q)"
            stores.append(f"    {half.vstore(out_dtype, 2, value, '0', at)};")
    store_text = "\n".join(stores)
    dist = stages - 2
    # work-group `part` of K in `split_k` (or `parts`) takes K [part * k_part, (part + 1) * k_part)
    k_part, groups = k // max(split_k, parts), (m // block_m) * (n // block_n)

    def block_of(pid: str, bm: str, bn: str, a_glob: str, b_glob: str) -> str:
        """Block ``pid``'s row and column of blocks (blocks visited in groups of 8 block
        rows) and its A and B tiles' first addresses, declared under the names given."""
        b_first = (f"(ulong)(rhs + (size_t){bn} * {block_n} + (size_t)part * {k_part * n})"
                   if b_rows else
                   f"(ulong)(rhs_t + (size_t){bn} * {block_n // 2 * k} + part * {k_part})"
                   if halves  # each half's rows of the block: block_n / 2 from bn * block_n / 2 on
                   else f"(ulong)(rhs_t + (size_t){bn} * {block_n * k} + part * {k_part})")
        return f"""const int first_m = ({pid} / in_group) * 8;
    const int group_m = min(num_m - first_m, 8);
    const int {bm} = first_m + ({pid} % in_group) % group_m;
    const int {bn} = ({pid} % in_group) / group_m;
    const ulong {a_glob} = (ulong)(lhs + (size_t){bm} * {block_m * k} + part * {k_part});
    const ulong {b_glob} = {b_first};"""

    out_base = "out" if split_k == 1 else f"(out + (size_t)part * {m * out_n})"
    b_fields = MN_DESCRIPTOR_FIELDS if b_rows and not split_tf32 else DESCRIPTOR_FIELDS
    epilogue_place = "" if epilogue is None else (
        f"    const int erow = bm * {block_m} + wg * 64 + lr, "
        f"ecol = bn * {block_n} + (lane & 3) * 2;\n")
    last = "    __local int last_part;\n" if parts > 1 else ""
    early = _prefetch_b(n, k, k_part, eb, b_rows, halves, block_n, threads) if prefetch else ""
    # split TF32: and two stages of low parts, in turn (and with b_rows two K-major B tiles)
    buffers = stages * stage + (2 * stage + (2 * block_n * ROW_BYTES if b_rows else 0)
                                if split_tf32 else 0)
    # persistent: blocks pid, pid + groups, ... of one work-group, the steps before counted
    before = "before + " if persistent else ""
    if persistent:
        head = f"""    const int tid = get_local_id(0), part = 0;
    int before = 0;
    #pragma unroll 1
    for (int pid = get_group_id(0); pid < {groups}; pid += get_num_groups(0)) {{
    {block_of("pid", "bm", "bn", "a_glob", "b_glob")}
    if (before == 0)
"""
        # the next block's first stages, while this one's C is stored
        nxt = f"""    before += ktiles;
    {{
    const int npid = pid + get_num_groups(0);
    {block_of("npid", "nbm", "nbn", "na_glob", "nb_glob")}
    for (int s = 0; s < {dist}; ++s) {{
        if (npid < {groups} && s < ktiles)
            {name}_load_stage(na_glob, nb_glob, s, sbase + ((before + s) % {stages}) * {stage}, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }}
    }}
"""
        staged = f"smem + ((before + {dist} + wg) % {stages}) * {stage}"
        tail = "    }\n"
    else:
        head = f"""    const int tid = get_local_id(0), part = get_group_id(0) / {groups};
    const int pid = get_group_id(0) % {groups};
    {block_of("pid", "bm", "bn", "a_glob", "b_glob")}
"""
        nxt, staged, tail = "", f"smem + wg * {64 * row_bytes}", ""
    return f"""    __local uint4 smem[{buffers // 16}] __attribute__((aligned(1024)));
{last}
    const int num_m = {m // block_m}, in_group = {8 * (n // block_n)};
    const uint sbase = (uint)(size_t)smem;
    const int ktiles = {k_part // block_k(dtype)};
    const int wg = get_local_id(0) >> 7;
{head}{early}    for (int s = 0; s < {dist}; ++s) {{
        if (s < ktiles) {name}_load_stage(a_glob, b_glob, s, sbase + s * {stage}, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }}
    asm volatile("// FUSEC_WGMMA_INIT {n_acc}{' promoted' if split_tf32 else ''}" ::: "memory");
    #pragma unroll 1
    for (int kt = 0; kt < ktiles; ++kt) {{
        asm volatile("cp.async.wait_group {dist - 1};" ::: "memory");
        asm volatile("// FUSEC_FENCE_PROXY_ASYNC" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        const int nk = kt + {dist};
        if (nk < ktiles)
            {name}_load_stage(a_glob, b_glob, nk, sbase + (({before}nk) % {stages}) * {stage}, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const int slot = ({before}kt) % {stages};
        const uint sa = sbase + slot * {stage} + wg * {64 * ROW_BYTES};
        const uint sb = sbase + slot * {stage} + {block_m * ROW_BYTES};
        const ulong da = (((ulong)sa >> 4) & 0x3FFFUL) | {DESCRIPTOR_FIELDS}UL;
        const ulong db = (((ulong)sb >> 4) & 0x3FFFUL) | {b_fields}UL;
        {step}
    }}
    float {', '.join(accs)};
    asm volatile("// FUSEC_WGMMA_DONE {n_acc} {names}" : {outs} :: "memory");
{_sum_parts(accs, parts, groups, threads) if parts > 1 else ""}{nxt}    const int lane = tid & 31, warp = (tid >> 5) & 3;
    // both warpgroups' wgmmas have read every stage: C is staged in the stage buffers
    asm volatile("bar.sync 1, {threads};" ::: "memory");
    __local uchar *stg = (__local uchar *){staged};
    const int lr = warp * 16 + (lane >> 2), q = (lane & 3) * {ceb if swiglu else 2 * ceb};
{epilogue_place}{store_text}
    asm volatile("bar.sync 1, {threads};" ::: "memory");
    const int t128 = tid & 127;
    #pragma unroll
    for (int i = 0; i < {64 * per_row // 128}; ++i) {{
        const int r = (i * 128 + t128) / {per_row}, chunk = (i * 128 + t128) % {per_row};
        const uint4 val = *(__local uint4 *)(stg + r * {row_bytes} + chunk * 16);
        const size_t at = ((size_t)(bm * {block_m} + wg * 64 + r) * {out_n}
                           + bn * {block_out}) * {ceb};
        *(__global uint4 *)((__global uchar *){out_base} + at + chunk * 16) = val;
    }}
{tail}"""


def _sum_parts(accs: list[str], parts: int, blocks: int, threads: int) -> str:
    """The sum of a block's `parts` in the kernel (`gemm_wgmma`'s `parts`): thread ``tid``'s
    accumulators in fours at ``partials[((part * blocks + pid) * len(accs) / 4 + j) * threads
    + tid]`` (each float4 of a part's block read by consecutive threads), the fence and count,
    and in the last work-group to arrive the parts added in order of ``p``, read past the L1
    cache (``volatile``: the other work-groups wrote them on other units). The fences are
    GPU-wide (`ptx_patch`'s ``FUSEC_FENCE_GPU``: OpenCL's ``mem_fence`` is only the
    work-group's on NVIDIA), each thread's before the count, and after it before the reads."""
    fours = len(accs) // 4
    four = [", ".join(accs[4 * j:4 * j + 4]) for j in range(fours)]

    def at(p: str, j: int) -> str:  # float4 j of part p's block pid, thread tid's
        return f"((size_t)({p} * {blocks} + pid) * {fours} + {j}) * {threads} + tid"

    writes = "\n".join(f"    partials4[{at('part', j)}] = (float4)({four[j]});"
                       for j in range(fours))
    adds = "\n".join(
        f"    {{ float4 sum = part == 0 ? (float4)({four[j]}) : parts_in[{at(0, j)}];\n"
        f"      for (int p = 1; p < {parts}; ++p)\n"
        f"          sum += p == part ? (float4)({four[j]}) : parts_in[{at('p', j)}];\n"
        + "".join(f"      {a} = sum.s{i};\n" for i, a in enumerate(accs[4 * j:4 * j + 4]))
        + "    }"
        for j in range(fours))
    return f"""    // K in {parts} parts: this part's block into partials, then counted
    __global float4 *partials4 = (__global float4 *)partials;
{writes}
    asm volatile("// FUSEC_FENCE_GPU" ::: "memory");
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (tid == 0) last_part = atomic_inc(arrivals + pid) == {parts - 1};
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!last_part) return;
    asm volatile("// FUSEC_FENCE_GPU" ::: "memory");
    // the last to arrive: the parts in order, its own from its registers
    volatile __global const float4 *parts_in = (volatile __global const float4 *)partials;
{adds}
    if (tid == 0) arrivals[pid] = 0;
"""


_PROBED: dict[tuple[str, str], tuple[bool, str]] = {}

PROBE_SHAPE = (128, 256, 256)
"""M, N, K of the probe's product: one work-group, 4 K steps (a whole turn of the stages)."""


def probe_wgmma(device: Any) -> tuple[bool, str]:
    """Whether `gemm_wgmma` runs on ``device`` (a ``pyopencl.Device``), and a note saying so or
    why not; decided once per device and driver in a process. Only NVIDIA's OpenCL on a
    device of compute capability 9.0 is tried: the f16 kernel of `PROBE_SHAPE` with B
    row-major (as f16 and bf16 products run it) is built, patched (`ptx_patch`), run and its
    product checked exactly (small integers), in a context of its own, since a faulting
    ``wgmma`` leaves its context unusable."""
    import pyopencl as cl

    if "NVIDIA" not in device.vendor.upper() or device.type & cl.device_type.CPU:
        return False, ""
    key = (device.name, device.driver_version)
    if key not in _PROBED:
        _PROBED[key] = _probe(device)
    return _PROBED[key]


def _probe(device: Any) -> tuple[bool, str]:
    import numpy as np
    import pyopencl as cl

    from fusec.codegen.ptx_patch import patch

    name = device.name.strip()
    try:
        major = int(device.compute_capability_major_nv)
        minor = int(device.compute_capability_minor_nv)
    except (cl.Error, AttributeError) as e:
        return False, f"wgmma: not tried on {name} (no compute capability: {e})"
    if (major, minor) != (9, 0):
        return False, (f"wgmma: not on {name} (compute capability {major}.{minor}, "
                       "not 9.0): the mma.sync GEMMs run")
    m, n, k = PROBE_SHAPE
    try:
        context = cl.Context([device])
        queue = cl.CommandQueue(context)
        kernel = gemm_wgmma("fusec_probe_wgmma", m, n, k, "f16", b_rows=True)
        program = cl.Program(context, kernel.source).build()
        index = program.get_info(cl.program_info.DEVICES).index(device)
        ptx = program.get_info(cl.program_info.BINARIES)[index].decode()
        patched = cl.Program(context, [device], [patch(ptx).encode()]).build()
        rng = np.random.default_rng(0)
        a = rng.integers(-2, 3, (m, k)).astype(np.float16)
        b = rng.integers(-2, 3, (k, n)).astype(np.float16)
        mf = cl.mem_flags
        a_buf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        b_buf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        c_buf = cl.Buffer(context, mf.WRITE_ONLY, m * n * 2)
        patched.fusec_probe_wgmma(queue, kernel.global_size, kernel.local_size,
                                              a_buf, b_buf, c_buf)
        c = np.empty((m, n), np.float16)
        cl.enqueue_copy(queue, c, c_buf)
        queue.finish()
    except Exception as e:  # noqa: BLE001 - any failure means: keep the mma.sync kernels
        first = error_line(e)
        return False, f"wgmma: the probe failed on {name} ({first}): the mma.sync GEMMs run"
    want = a.astype(np.float32) @ b.astype(np.float32)
    if not np.array_equal(c.astype(np.float32), want):
        bad = int(np.count_nonzero(c.astype(np.float32) != want))
        return False, (f"wgmma: the probe's product was wrong on {name} ({bad} of {m * n} "
                       "elements): the mma.sync GEMMs run")
    return True, (f"wgmma: on {name} for f16, bf16 and tf32 products of whole "
                  f"{BLOCK_M}x{BLOCK_NS[-1]}x(64 or 32) tiles (f16 and tf32 after a transpose of "
                  "B unless B is bound); others take the mma.sync GEMMs")


def emulated(kernel: KernelSource) -> KernelSource:
    """`kernel` (a `gemm_wgmma`) with its PTX replaced by plain OpenCL C, for the CPU tests:
    ``cp.async`` a 16-byte copy into the __local buffer at the shared address (``sbase`` 0),
    the fences and commits nothing, ``bar.sync`` a barrier, and a ``wgmma`` step a loop that
    reads the operands through their descriptors as the tensor cores do (128-byte swizzle on
    the address bits: bits 4-6 XOR bits 7-9; TF32 keeps the top 19 bits of a float) into an
    array of accumulators, each k slice's sum added rounding toward zero as the tensor cores
    add (a promotion, ``FUSEC_WGMMA_PROMOTE``, adds them into sums rounding to nearest), laid
    out as ``wgmma``'s (thread ``t``, register ``4 j + i``: row
    ``16 (t / 32) + t % 32 / 4 + 8 (i / 2)``, column ``8 j + 2 (t % 4) + i % 2``). So the
    copies, the swizzled layout, the descriptors, the stage rotation, the block order and the
    staged stores of C are checked on the CPU; only the instructions are not."""
    src = kernel.source
    match = re.search(
        r"FUSEC_WGMMA_STEP m64n(\d+)k(\d+)\.f32\.(\w+)\.\w+ (\d+) (\d+) (\d+) ([01])", src)
    assert match is not None, "not a gemm_wgmma kernel"
    n_acc, k_inst, kind = int(match.group(1)) // 2, int(match.group(2)), match.group(3)
    slices, step_a, step_b, trans_b = (int(match.group(i)) for i in range(4, 8))
    name = kernel.name
    read = {"f16": "vload_half(0, (__local const half *)(sm + at))",
            "bf16": "as_float((uint)*(__local const ushort *)(sm + at) << 16)",
            "tf32": "as_float(*(__local const uint *)(sm + at) & 0xffffe000u)"}[kind]
    eb = 4 if kind == "tf32" else 2
    b_at = (f"(col >> 6) * lbo_b + kk * 128 + (col & 63) * {eb}" if trans_b
            else f"col * 128 + kk * {eb}")
    step_fn = f"""
inline float {name}_add_toward_zero(const float a, const float b) {{
    const float s = a + b, bb = s - a;
    const float e = (a - (s - bb)) + (b - bb);  /* a + b = s + e exactly (TwoSum) */
    return e != 0.0f && (e < 0.0f) != (s < 0.0f) ? nextafter(s, 0.0f) : s;
}}
inline uint {name}_swizzled(const uint a) {{ return a ^ (((a >> 7) & 7u) << 4); }}
inline void {name}_step(__local const uchar *sm, const ulong da, const ulong db,
                        float *acc, const int t) {{
    const uint a0 = (uint)(da & 0x3FFFUL) << 4, b0 = (uint)(db & 0x3FFFUL) << 4;
    const uint lbo_b = (uint)((db >> 16) & 0x3FFFUL) << 4;
    const int w = t >> 5, lane = t & 31;
    for (int s = 0; s < {slices}; ++s)
        for (int i = 0; i < {n_acc}; ++i) {{
            const int row = 16 * w + (lane >> 2) + 8 * ((i & 3) >> 1);
            const int col = 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
            float sum = 0.0f;
            for (int kk = 0; kk < {k_inst}; ++kk) {{
                uint at = {name}_swizzled(a0 + {16 * step_a} * s + row * 128 + kk * {eb});
                const float x = {read};
                at = {name}_swizzled(b0 + {16 * step_b} * s + {b_at});
                sum += x * {read};
            }}
            acc[i] = {name}_add_toward_zero(acc[i], sum);
        }}
}}
"""
    asm = re.compile(r'asm volatile\("((?:[^"\\]|\\.)*)"([^;]*?)\);')

    def emulate_asm(m: re.Match[str]) -> str:
        text = m.group(1)
        if text.startswith("cp.async.cg"):
            return "*(__local uint4 *)(sm + dst) = *(__global const uint4 *)g;"
        if text.startswith("bar.sync"):
            return "barrier(CLK_LOCAL_MEM_FENCE);"
        if "FUSEC_FENCE_GPU" in text:
            return "mem_fence(CLK_GLOBAL_MEM_FENCE);"
        if "FUSEC_WGMMA_INIT" in text:
            return (f"float acc[{n_acc}], accsum[{n_acc}]; for (int i = 0; i < {n_acc}; ++i) "
                    "acc[i] = accsum[i] = 0.0f;")
        if "FUSEC_WGMMA_PROMOTE" in text:
            return (f"for (int i = 0; i < {n_acc}; ++i) {{ accsum[i] += acc[i]; "
                    "acc[i] = 0.0f; }")
        if "FUSEC_WGMMA_STEP" in text:  # its two descriptors, as the asm names them
            da, db = re.findall(r'"l"\((\w+)\)', m.group(2))
            return f"{name}_step((__local const uchar *)smem, {da}, {db}, acc, tid & 127);"
        if "FUSEC_WGMMA_DONE" in text:  # the sums stay 0 but in a promoted kernel
            return " ".join(f"d{i} = accsum[{i}] + acc[{i}];" for i in range(n_acc))
        return ";"  # commits, waits and the proxy fence

    src = asm.sub(emulate_asm, src)
    src = src.replace("const uint slot, const int t) {",
                      "const uint slot, const int t, __local uchar *sm) {")
    src = src.replace(", tid);", ", tid, (__local uchar *)smem);")
    src = src.replace("(uint)(size_t)smem", "0u")
    signature = src.index("__kernel")
    src = src[:signature] + step_fn + src[signature:]
    return replace(kernel, source=src)
