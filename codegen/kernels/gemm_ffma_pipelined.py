"""Float32 GEMM on the FMA units (no tensor cores), pipelined: ``cp.async`` into local memory,
float4 reads, a register tile per work-item.

``C[b] = epilogue(A[b] @ B[b or 0])`` for row-major float32 A, B and C, the products plain
``fma`` in float32 (no TF32), built the way fast SIMT SGEMMs are built, through inline PTX in
NVIDIA's OpenCL C:

- Global -> local: each work-item issues 16-byte ``cp.async.cg.shared.global`` copies (no
  registers in between) of a ``block_m x block_k`` tile of A and a ``block_k x block_n`` tile
  of B; chunks past the edges of A or B are zero-filled by the copy's source size 0.
  ``stages - 1`` steps are in flight while the work-group multiplies one; one barrier per step
  (``cp.async.wait_group stages - 2``, then the barrier).
- A stays row-major in local memory (rows of ``block_k`` floats, so a copy moves 16 bytes of a
  row unchanged), and is read as a float4 along K: one float4 gives four steps of K of one row.
  Chunk ``c`` of A row ``r`` is stored at chunk ``c ^ ((r >> s) & (chunks - 1))``, ``2^s`` the
  rows of one 128-byte line, so the rows a warp reads at once fall on distinct banks. B is
  row-major, unswizzled: a warp reads consecutive float4 of one row.
- A work-item owns ``thread_m x thread_n`` outputs: rows ``lane_row + lanes_m * r`` and float4
  column chunks ``lane_col + lanes_n * q`` of its warp's ``warp_m x warp_n`` tile (a warp is
  ``lanes_m x lanes_n`` work-items), so neighbouring work-items read neighbouring float4 of B
  and store neighbouring float4 of C. Per four steps of K it reads ``thread_m`` float4 of A and
  ``4 * thread_n / 4`` of B for ``4 * thread_m * thread_n`` fma.

With ``b_k_major``, B is ``[N, K]`` (K-major: a bound ``nn.Linear`` weight as PyTorch holds it,
stored so once, `common.BOUND_B_PANELS`), and its tile is kept as A's is, ``block_n`` rows of
``block_k`` floats, but padded rather than swizzled: four floats after each group of four rows
(`b_row_offset`). A work-item reads, per four steps of K, one float4 of each of its ``thread_n``
columns (as many as it reads of a row-major B); the rows a warp reads at once are its lanes'
first columns, four apart, which the padding puts on distinct banks, and each read is a
constant offset from the first row of one of its groups of four columns (an XOR swizzle by the
row made those offsets depend on the lane: 1.3x slower on the H200).

The copies need rows that start on 16 bytes: K and N multiples of 4 (`fits`); other shapes keep
the portable kernel (`gemm._local_tiled`).

``copies="emulated"`` replaces ``cp.async`` by a plain, synchronous float4 copy (and commit and
wait by nothing): the tiling, swizzle, stage rotation, edges and epilogue of this kernel then run
on any OpenCL device (the CPU in CI).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fusec import knobs
from fusec.codegen.kernels.common import (
    IDENTITY_EPILOGUE,
    Epilogue,
    KernelArg,
    KernelSource,
    ceil_div,
    check_epilogue_names,
    check_positive,
    kernel_signature,
)
from fusec.codegen.kernels.cp_async import CP_ASYNC, emulated_group_helpers, group_helpers

LINE_BYTES = 128
"""Bytes of local memory one access can read without a bank conflict (32 banks of 4 bytes)."""

RESERVED_NAMES = frozenset({
    "batch", "a", "b", "c", "tid", "lane", "warp", "lane_row", "lane_col", "warp_row",
    "warp_col", "row_base", "col_base", "smem", "smem_base", "kt", "read_stage", "write_stage",
    "row", "col", "st", "k0", "block_id", "first_row", "group_rows", "a_read", "b_read",
    "a_swz", "sa", "sb",
})


SCHEDULES = ("a", "b", "b_carry")


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


@dataclass(frozen=True)
class FfmaTiles:
    """The blocking of the pipelined FFMA kernel."""

    block_m: int = 128
    block_n: int = 64
    block_k: int = 16
    """Depth of one pipeline step (a multiple of 4: whole float4 of an A row)."""
    warps_m: int = 2
    warps_n: int = 2
    lanes_m: int = 8
    """Work-items of a warp along the rows; ``32 / lanes_m`` along the columns."""
    stages: int = 3
    group_m: int = 0
    """Run the blocks in groups of ``group_m`` block rows, column by column within a group
    (so the blocks running at once share rows of A and columns of B in the L2 cache); 0: row
    by row, as launched."""
    schedule: str = "b"
    """Order of the local reads in a step, per four columns of K: ``"a"``, the float4 of A of
    every row first, then per column of K its float4 of B and the fma; ``"b"``, the float4 of
    B of the four columns first, then row by row the float4 of A and its fma; ``"b_carry"``,
    as ``"b"`` with the barrier before the step's last four columns (whose reads come first),
    after which the next step's first float4 of B are read while the fma finish."""

    @property
    def lanes_n(self) -> int:
        return 32 // self.lanes_m

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def warp_m(self) -> int:
        return self.block_m // self.warps_m

    @property
    def warp_n(self) -> int:
        return self.block_n // self.warps_n

    @property
    def thread_m(self) -> int:
        return self.warp_m // self.lanes_m

    @property
    def thread_n(self) -> int:
        return self.warp_n // self.lanes_n

    @property
    def chunks_k(self) -> int:
        """float4 chunks in one A row of a stage."""
        return self.block_k // 4

    @property
    def stage_floats(self) -> int:
        return self.block_m * self.block_k + self.block_k * self.block_n

    @property
    def local_bytes(self) -> int:
        return 4 * self.stages * self.stage_floats

    def key(self) -> str:
        """A compact name, e.g. ``128x64x16_w2x2_l8_s3_b`` (``_g8`` before the schedule when
        grouped)."""
        text = (f"{self.block_m}x{self.block_n}x{self.block_k}_w{self.warps_m}x{self.warps_n}"
                f"_l{self.lanes_m}_s{self.stages}")
        text += f"_g{self.group_m}" if self.group_m else ""
        return text + f"_{self.schedule}"

    def check(self) -> None:
        """Raise ValueError if the blocking cannot be generated."""
        problems = []
        sizes = (self.block_m, self.block_n, self.block_k, self.warps_m, self.warps_n,
                 self.lanes_m)
        if not all(_power_of_two(v) for v in sizes) or self.lanes_m > 32:
            problems.append("powers of two for the block, warp and lane counts (lanes_m <= 32)")
        elif self.block_k < 4:
            problems.append("block_k at least 4")
        elif self.block_m % (self.warps_m * self.lanes_m) or self.warp_n % (4 * self.lanes_n):
            problems.append("warp tiles of whole rows per lane and whole float4 per lane")
        elif (self.block_m * self.chunks_k) % self.threads or \
                (self.block_k * self.block_n // 4) % self.threads:
            problems.append("tiles whose float4 chunks divide evenly among the work-items")
        if self.stages < 2:
            problems.append("at least 2 stages")
        if self.group_m < 0:
            problems.append("group_m >= 0")
        if self.schedule not in SCHEDULES:
            problems.append(f"a schedule among {', '.join(SCHEDULES)}")
        elif self.schedule == "b_carry" and self.block_k < 8:
            problems.append("block_k at least 8 for the schedule b_carry (its first and last "
                            "four columns of K apart)")
        if problems:
            raise ValueError(f"pipelined FFMA tiles {self.key()}: need {'; '.join(problems)}")


DEFAULT_TILES = FfmaTiles()
"""128x64 blocks of 4 warps (64x32 each, 8x4 work-items of 8x8 outputs), 16 deep, 3 stages,
schedule ``"b"``: 36 KiB of local memory, 159-161 registers (ptxas), so 3 work-groups per SM.
On an H100 128x64 blocks were the fastest of a sweep of 14 blockings at 4096^3 (2.99 ms, 46
TFLOP/s, 1.08x cuBLAS without TF32) and at every BERT-base and Llama GEMM shape at batch 32 and
1 (0.81x-1.05x cuBLAS; `bench/results/h100-2026-11-25-s3-sgemm-sweep-1.log`); 128x128 blocks of
8 warps took 3.2-3.5 ms at 4096^3 and 1.1-1.4x cuBLAS at the BERT shapes, where 4096x768 is
192 such blocks on 132 SMs. Neither 8 or 32 deep, 2 or 4 stages, grouped block rows, nor
``-cl-nv-maxrregcount=128`` (ignored) did better (`...-sweep-2.log`). Schedule ``"b"`` was
1-2.5% faster than ``"a"`` at all 7 shapes of one run, ``"b_carry"`` 1-3% slower
(`...-sweep-3.log`)."""


SMALL_TILES = FfmaTiles(64, 64, 16, 2, 2, 4, 3)
"""64x64 blocks of 4 warps (32x32 each, 4x8 work-items of 8x4 outputs), 104 registers (ptxas):
for products whose 128x64 blocks would leave the device's last wave of work-groups mostly
empty (`default_tiles`)."""

DEFAULT_GROUPS_PER_UNIT = 3
"""Work-groups of `DEFAULT_TILES` that run at once on one compute unit (its registers)."""

FULL_WAVES = 0.8
"""The least share of the work-group slots of its waves (`DEFAULT_GROUPS_PER_UNIT` per unit)
that a product's 128x64 blocks fill for it to keep them. On the H200
(`bench/results/h200-2026-12-03-s19-ffma-sweep.log`, kernel ms, 128x64 / 64x64 / cuBLAS): 2048
rows by 768 columns (K 768: 192 blocks, 0.48 of one wave's slots) 0.090 / 0.066 / 0.075, K 3072
0.324 / 0.236 / 0.235; by 2304 (576 blocks, 0.73) 0.198 / 0.181 / 0.191; by 3072 (768, 0.97)
0.229 / 0.238 / 0.252; 4096 by 768 (384, 0.97) 0.438 / 0.461 / 0.472; 4096 by 3072 (1536, 0.97)
0.449 / 0.459 / 0.424."""


def default_tiles(m: int, n: int, batch: int = 1, units: int = 0) -> FfmaTiles:
    """The blocking `gemm.gemm` uses for ``batch`` products of ``m x n`` on a device of `units`
    compute units (0: unknown): `DEFAULT_TILES`, or `SMALL_TILES` where the default's blocks
    fill less than `FULL_WAVES` of the slots of the waves they take."""
    if units <= 0 or not knobs.value("ffma_fill_waves"):
        return DEFAULT_TILES
    blocks = batch * ceil_div(m, DEFAULT_TILES.block_m) * ceil_div(n, DEFAULT_TILES.block_n)
    slots = units * DEFAULT_GROUPS_PER_UNIT
    filled = blocks / (ceil_div(blocks, slots) * slots)
    return DEFAULT_TILES if filled >= FULL_WAVES else SMALL_TILES


def fits(n: int, k: int) -> bool:
    """Whether the pipelined kernel computes this product: rows of A (K floats) and B (N
    floats) that are whole 16-byte chunks."""
    return k % 4 == 0 and n % 4 == 0


def gemm_ffma_pipelined(
    name: str,
    batch: int,
    m: int,
    n: int,
    k: int,
    rhs_batched: bool,
    epilogue: Epilogue = IDENTITY_EPILOGUE,
    copies: str = "ptx",
    tiles: FfmaTiles = DEFAULT_TILES,
    b_k_major: bool = False,
) -> KernelSource:
    """The pipelined FFMA kernel (see the module docstring); ``copies`` is ``"ptx"``
    (``cp.async``) or ``"emulated"`` (plain copies, any OpenCL device); `b_k_major`: B is
    ``[N, K]``."""
    check_positive(name, batch=batch, m=m, n=n, k=k)
    if not fits(n, k):
        raise ValueError(f"kernel '{name}': the pipelined FFMA GEMM takes K and N multiples of "
                         f"4; not K={k} N={n}")
    if copies not in ("ptx", "emulated"):
        raise ValueError(f"kernel '{name}': copies must be 'ptx' or 'emulated', got '{copies}'")
    tiles.check()
    check_epilogue_names(name, epilogue, RESERVED_NAMES,
                         r"[ab][rcdvpxkz]\d+|[abc]\d+(_\d+)?|[ab][fq]\d+_\d+(_\d+)?|"
                         r"pb\d+_\d+_\d+",
                         "the kernel's copy, fragment or accumulator registers")
    args = (KernelArg("lhs", "in"), KernelArg("rhs", "in"), KernelArg("out", "out"),
            *epilogue.params)
    emulated = copies == "emulated"
    helpers = _emulated_copies(name) if emulated else _ptx_copies(name, tiles.stages)
    body = _Body(name, batch, m, n, k, rhs_batched, epilogue, tiles, emulated,
                 b_k_major).source()
    attribute = f"__attribute__((reqd_work_group_size({tiles.threads}, 1, 1)))"
    source = (
        f"// {name}: [{batch}x{m}x{k}] @ [{batch if rhs_batched else 1}x"
        f"{f'{n}x{k}]^T' if b_k_major else f'{k}x{n}]'}, f32, FFMA "
        f"(cp.async x{tiles.stages}, tiles {tiles.key()}{', emulated' if emulated else ''})\n"
        f"{helpers}"
        f"{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    global_size = (ceil_div(n, tiles.block_n) * tiles.threads, ceil_div(m, tiles.block_m), batch)
    return KernelSource(name, source, args, global_size, (tiles.threads, 1, 1))


def _ptx_copies(name: str, stages: int) -> str:
    """``<name>_cp16(smem, dst, src, bytes)``: one 16-byte asynchronous copy of ``src`` to float
    ``dst`` of the local array (zero-filled when ``bytes`` is 0); ``<name>_commit``,
    ``<name>_wait`` (all but ``stages - 2`` groups done), ``<name>_wait_all``. A ``__local``
    pointer converted to an integer is its address in the shared state space."""
    return (
        f"inline void {name}_cp16(__local float *smem, const uint dst, __global const float *src,"
        "\n                         const uint bytes) {\n"
        "    const uint addr = (uint)(size_t)(smem + dst);\n"
        f'    asm volatile("{CP_ASYNC}" :: "r"(addr), "l"((ulong)src), "r"(bytes) : "memory");\n'
        "}\n"
        + group_helpers(name, stages)
    )


def _emulated_copies(name: str) -> str:
    """The test doubles of `_ptx_copies` in plain OpenCL C: a synchronous float4 copy (so commit
    and wait do nothing)."""
    return (
        f"inline void {name}_cp16(__local float *smem, const uint dst, __global const float *src,"
        "\n                         const uint bytes) {\n"
        "    vstore4(bytes ? vload4(0, src) : (float4)(0.0f), 0, smem + dst);\n"
        "}\n"
        + emulated_group_helpers(name)
    )


@dataclass
class _Body:
    name: str
    batch: int
    m: int
    n: int
    k: int
    rhs_batched: bool
    epilogue: Epilogue
    tiles: FfmaTiles
    emulated: bool
    b_k_major: bool = False
    """Whether B is ``[N, K]``, and its tile in local memory K-major (else row-major,
    ``[block_k, N]``)."""

    @property
    def rows_per_line(self) -> int:
        """A rows of a stage in one 128-byte line of local memory."""
        return max(1, LINE_BYTES // (4 * self.tiles.block_k))

    def swizzle(self, row: str) -> str:
        """C expression: what chunk ``c`` of A row `row` is XORed with in local memory."""
        shift = self.rows_per_line.bit_length() - 1
        return f"((({row}) >> {shift}) & {self.tiles.chunks_k - 1})"

    def swizzle_of(self, row: int) -> int:
        return (row // self.rows_per_line) & (self.tiles.chunks_k - 1)

    def b_row_offset(self, row: str) -> str:
        """C expression: the float offset of row `row` of a K-major B tile from the tile's
        start: ``block_k`` floats a row, and four more after each group of four rows."""
        return f"({row}) * {self.tiles.block_k} + (({row}) >> 2) * 4"

    def a_chunk_offset(self, row: str, chunk: str) -> str:
        """C expression: the float offset of chunk `chunk` of row `row` of A's tile."""
        return f"{row} * {self.tiles.block_k} + ({chunk} ^ {self.swizzle(row)}) * 4"

    def b_chunk_offset(self, row: str, chunk: str) -> str:
        """C expression: the float offset of chunk `chunk` of row `row` of a K-major B tile
        from the stage's start."""
        return f"{self.tiles.block_m * self.tiles.block_k} + {self.b_row_offset(row)} + {chunk} * 4"

    def source(self) -> str:
        tl, m, n, k = self.tiles, self.m, self.n, self.k
        rhs_offset = f"batch * {k * n}" if self.rhs_batched else "0"
        steps = ceil_div(k, tl.block_k)
        lines = [
            "    const int batch = get_global_id(2);\n",
            f"    __global const float *a = lhs + batch * {m * k};\n",
            f"    __global const float *b = rhs + {rhs_offset};\n",
            f"    __global float *c = out + batch * {m * n};\n",
            "    const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;\n",
            f"    const int lane_row = lane / {tl.lanes_n}, lane_col = lane % {tl.lanes_n};\n",
            f"    const int warp_row = (warp / {tl.warps_n}) * {tl.warp_m};\n",
            f"    const int warp_col = (warp % {tl.warps_n}) * {tl.warp_n};\n",
            *self.block_origin(),
            f"    __local float smem[{self.total}] "
            "__attribute__((aligned(128)));\n",
        ]
        for r in range(tl.thread_m):
            accs = ", ".join(f"c{r}_{j} = 0.0f" for j in range(tl.thread_n))
            lines.append(f"    float {accs};\n")
        lines += self.read_offsets()
        lines += self.copy_setup()
        for s in range(tl.stages - 1):
            lines.append(f"    /* prologue: step {s} into stage {s} */\n")
            lines += self.copies(f"{s * tl.block_k}", f"{s * self.stage}u", "    ")
            lines.append(f"    {self.name}_commit();\n")
        carry = tl.schedule == "b_carry"
        lines.append(f"    uint read_stage = 0u, write_stage = {self.total - self.stage}u;\n")
        if carry:
            lines += [f"    float4 {', '.join(self.carried())};\n",
                      *self.wait_barrier("    "), *self.carried_loads("    ")]
        lines += [
            f"    for (int kt = 0; kt < {steps}; ++kt) {{\n",
            *([] if carry else self.wait_barrier("        ")),
            f"        if (kt + {tl.stages - 1} < {steps}) {{\n",
            *self.copies(f"(kt + {tl.stages - 1}) * {tl.block_k}", "write_stage",
                         "            "),
            "        }\n",
            f"        {self.name}_commit();\n",
            *(self.products() if tl.schedule == "a" else self.products_b_first(carry)),
            *([] if carry else self.advance("        ")),
            "    }\n",
            f"    {self.name}_wait_all();\n",
        ]
        lines += self.stores()
        return "".join(lines)

    @property
    def stage(self) -> int:
        """Floats of one stage: A's tile, then B's (a K-major one padded: `b_row_offset`)."""
        tl = self.tiles
        return tl.stage_floats + (tl.block_n if self.b_k_major else 0)

    @property
    def total(self) -> int:
        return self.tiles.stages * self.stage

    def wait_barrier(self, ind: str) -> list[str]:
        """This work-item's copies of the next step done, then everyone's."""
        return [f"{ind}{self.name}_wait();\n", f"{ind}barrier(CLK_LOCAL_MEM_FENCE);\n"]

    def advance(self, ind: str) -> list[str]:
        """The read and write stages move on by one, round the ring."""
        stage, total = self.stage, self.total
        return [f"{ind}read_stage = read_stage + {stage}u == {total}u ? 0u : "
                f"read_stage + {stage}u;\n",
                f"{ind}write_stage = write_stage + {stage}u == {total}u ? 0u : "
                f"write_stage + {stage}u;\n"]

    def b_offset(self, kr: int, j: int) -> int:
        """Float offset from ``b_read`` of this work-item's ``j``-th float4 of B row ``kr``."""
        return kr * self.tiles.block_n + j * self.tiles.lanes_n * 4

    def b_base(self) -> str:
        """C expression: where this work-item's reads of B in the stage at ``read_stage`` are
        counted from (the offsets of `b_loads`)."""
        return "smem + read_stage" if self.b_k_major else "smem + read_stage + b_read"

    def b_loads(self, q: int, prefix: str) -> list[tuple[str, str]]:
        """The float4 of B this work-item reads for columns ``4q .. 4q + 3`` of K: (register,
        float offset from `b_base`). Row-major B: per row of K, its ``thread_n / 4`` float4
        along N; K-major: per column of N it owns, the float4 along K."""
        tl = self.tiles
        if self.b_k_major:
            return [(f"{prefix}{q}_{j}_{lane}", f"bk{j} + {lane * tl.block_k + 4 * q}")
                    for j in range(tl.thread_n // 4) for lane in range(4)]
        return [(f"{prefix}{q}_{kk}_{j}", str(self.b_offset(4 * q + kk, j)))
                for kk in range(4) for j in range(tl.thread_n // 4)]

    def b_value(self, prefix: str, q: int, kk: int, j: int, lane: int) -> str:
        """C expression: B at column ``4q + kk`` of K and this work-item's column ``4j + lane``
        (in registers of `b_loads`)."""
        if self.b_k_major:
            return f"{prefix}{q}_{j}_{lane}.s{kk}"
        return f"{prefix}{q}_{kk}_{j}.s{lane}"

    def a_load(self, name: str, q: int, r: int, base: str = "sa") -> str:
        """C declaration: ``name`` = the float4 of chunk ``q`` of this work-item's A row
        ``r``."""
        tl = self.tiles
        chunk = q ^ self.swizzle_of(r * tl.lanes_m)
        return (f"const float4 {name} = *(__local const float4 *)({base} + "
                f"{r * tl.lanes_m * tl.block_k} + ax{chunk});\n")

    def carried(self) -> list[str]:
        """The registers that carry the first four columns of B of the next step."""
        return [name for name, _ in self.b_loads(0, "pb")]

    def carried_loads(self, ind: str) -> list[str]:
        return [f"{ind}{name} = *(__local const float4 *)({self.b_base()} + {offset});\n"
                for name, offset in self.b_loads(0, "pb")]

    def products_b_first(self, carry: bool) -> list[str]:
        """One step's fma, schedule ``"b"`` or ``"b_carry"`` (`FfmaTiles.schedule`)."""
        tl = self.tiles
        ind = "        "
        chunks_n = tl.thread_n // 4
        lines = [
            f"{ind}{{ __local const float *sa = smem + read_stage + a_read;\n",
            f"{ind}  __local const float *sb = {self.b_base()};\n",
        ]
        for q in range(tl.chunks_k):
            last = q == tl.chunks_k - 1
            prefix = "pb" if carry and q == 0 else "bq"
            if prefix == "bq":
                for name, offset in self.b_loads(q, prefix):
                    lines.append(f"{ind}  const float4 {name} = "
                                 f"*(__local const float4 *)(sb + {offset});\n")
            if carry and last:
                lines += [f"{ind}  {self.a_load(f'aq{q}_{r}', q, r)}"
                          for r in range(tl.thread_m)]
                lines += self.wait_barrier(ind + "  ") + self.advance(ind + "  ")
                lines += self.carried_loads(ind + "  ")
            for r in range(tl.thread_m):
                if not (carry and last):
                    lines.append(f"{ind}  {self.a_load(f'aq{q}_{r}', q, r)}")
                for kk in range(4):
                    for j in range(chunks_n):
                        for lane in range(4):
                            acc = f"c{r}_{4 * j + lane}"
                            b = self.b_value(prefix, q, kk, j, lane)
                            lines.append(f"{ind}  {acc} = fma(aq{q}_{r}.s{kk}, {b}, {acc});\n")
        lines.append(f"{ind}}}\n")
        return lines

    def block_origin(self) -> list[str]:
        """``row_base`` and ``col_base``: where this work-group's block of C starts."""
        tl = self.tiles
        if tl.group_m == 0:
            return [f"    const int row_base = get_group_id(1) * {tl.block_m};\n",
                    f"    const int col_base = get_group_id(0) * {tl.block_n};\n"]
        across, down = ceil_div(self.n, tl.block_n), ceil_div(self.m, tl.block_m)
        per_group = tl.group_m * across
        return [
            f"    const int block_id = get_group_id(1) * {across} + get_group_id(0);\n",
            f"    const int first_row = block_id / {per_group} * {tl.group_m};\n",
            f"    const int group_rows = min({down} - first_row, {tl.group_m});\n",
            f"    const int row_base = (first_row + block_id % {per_group} % group_rows) * "
            f"{tl.block_m};\n",
            f"    const int col_base = (block_id % {per_group} / group_rows) * {tl.block_n};\n",
        ]

    def read_offsets(self) -> list[str]:
        """Each work-item's local read offsets within a stage, in floats: ``a_read`` (its first
        row of A), ``ax<v>`` (the position of chunk ``v`` of its rows after its own part of the
        swizzle), ``b_read`` (its first float4 of a B row)."""
        tl = self.tiles
        lines = [
            f"    const int a_read = (warp_row + lane_row) * {tl.block_k};\n",
            f"    const int a_swz = {self.swizzle('warp_row + lane_row')};\n",
        ]
        for v in range(tl.chunks_k):
            lines.append(f"    const int ax{v} = ({v} ^ a_swz) * 4;\n")
        if not self.b_k_major:
            lines.append(f"    const int b_read = {tl.block_m * tl.block_k} + warp_col + "
                         "lane_col * 4;\n")
            return lines
        for j in range(tl.thread_n // 4):  # ``bk<j>``: its j-th four columns' first B row
            row = f"warp_col + lane_col * 4 + {j * tl.lanes_n * 4}"
            lines.append(f"    const int bk{j} = {self.b_chunk_offset(row, '0')};\n")
        return lines

    def copy_setup(self) -> list[str]:
        """Per work-item, loop-invariant parts of its copies: for A, those of `row_chunks`; for
        a row-major B the same with ``b`` (its rows along K, so only the column is checked
        here); for a K-major B, those of `row_chunks`, as A's."""
        tl, m, n = self.tiles, self.m, self.n
        lines = self.row_chunks("a", tl.block_m, self.a_chunk_offset, "row_base", m)
        if self.b_k_major:
            return lines + self.row_chunks("b", tl.block_n, self.b_chunk_offset, "col_base", n)
        per_row = tl.block_n // 4
        for i in range(tl.block_k * per_row // tl.threads):
            at = f"tid + {i * tl.threads}"
            lines += [
                f"    const int br{i} = ({at}) / {per_row}, bc{i} = ({at}) % {per_row};\n",
                f"    const uint bd{i} = (uint)({tl.block_m * tl.block_k} + br{i} * "
                f"{tl.block_n} + bc{i} * 4);\n",
                f"    const int bv{i} = "
                f"{'1' if n % tl.block_n == 0 else f'col_base + bc{i} * 4 < {n}'};\n",
                f"    __global const float *bp{i} = b + (bv{i} ? br{i} * {n} + col_base + "
                f"bc{i} * 4 : 0);\n",
            ]
        return lines

    def row_chunks(self, p: str, rows: int, place: Callable[[str, str], str],
                   origin: str, extent: int) -> list[str]:
        """For each of this work-item's chunks ``i`` of a stage's tile of `rows` rows along K
        (A's, or a K-major B's; `p` the matrix, ``a`` or ``b``): its tile row ``<p>r<i>``,
        chunk ``<p>c<i>``, local offset ``<p>d<i>`` (floats from the stage's start: `place` of
        the row and chunk), whether its row is one of the matrix's `extent` (``<p>v<i>``: the
        tile's first row at `origin`) and its source at K = 0 (``<p>p<i>``)."""
        tl, k = self.tiles, self.k
        lines = []
        for i in range(rows * tl.chunks_k // tl.threads):
            at = f"tid + {i * tl.threads}"
            lines += [
                f"    const int {p}r{i} = ({at}) / {tl.chunks_k}, "
                f"{p}c{i} = ({at}) % {tl.chunks_k};\n",
                f"    const uint {p}d{i} = (uint)({place(f'{p}r{i}', f'{p}c{i}')});\n",
                f"    const int {p}v{i} = "
                f"{'1' if extent % rows == 0 else f'{origin} + {p}r{i} < {extent}'};\n",
                f"    __global const float *{p}p{i} = {p} + ({p}v{i} ? ({origin} + {p}r{i}) * {k} "
                f"+ {p}c{i} * 4 : 0);\n",
            ]
        return lines

    def copies(self, k0: str, stage: str, ind: str) -> list[str]:
        """The copies of the A and B tiles of the step starting at column ``k0`` of A into the
        stage at float ``stage``."""
        tl, n, k = self.tiles, self.n, self.k
        # a step that starts inside K is whole when K is a multiple of the step (the copies
        # run only for steps that start inside K): then only the rows and columns are checked
        whole_steps = k % tl.block_k == 0 and k >= (tl.stages - 1) * tl.block_k
        lines = [f"{ind}{{ const int k0 = {k0}; const uint st = {stage};\n"]
        for i in range(tl.block_m * tl.chunks_k // tl.threads):
            ok = f"av{i}" if whole_steps else f"av{i} && k0 + ac{i} * 4 < {k}"
            lines.append(f"{ind}  {self.name}_cp16(smem, st + ad{i}, ({ok}) ? ap{i} + k0 : a, "
                         f"({ok}) ? 16u : 0u);\n")
        if self.b_k_major:
            for i in range(tl.block_n * tl.chunks_k // tl.threads):
                ok = f"bv{i}" if whole_steps else f"bv{i} && k0 + bc{i} * 4 < {k}"
                lines.append(f"{ind}  {self.name}_cp16(smem, st + bd{i}, ({ok}) ? bp{i} + k0 "
                             f": b, ({ok}) ? 16u : 0u);\n")
        for i in range(0 if self.b_k_major else tl.block_k * (tl.block_n // 4) // tl.threads):
            ok = f"bv{i}" if whole_steps else f"bv{i} && k0 + br{i} < {k}"
            lines.append(f"{ind}  {self.name}_cp16(smem, st + bd{i}, ({ok}) ? bp{i} + k0 * {n} "
                         f": b, ({ok}) ? 16u : 0u);\n")
        lines.append(f"{ind}}}\n")
        return lines

    def products(self) -> list[str]:
        """One step's fma over the stage at ``read_stage``: per four columns of K, the
        work-item's float4 of A (one per row), then per column its float4 of B and the fma."""
        tl = self.tiles
        ind = "        "
        chunks_n = tl.thread_n // 4
        lines = [
            f"{ind}{{ __local const float *sa = smem + read_stage + a_read;\n",
            f"{ind}  __local const float *sb = {self.b_base()};\n",
        ]
        for q in range(tl.chunks_k):
            for r in range(tl.thread_m):
                row_offset = r * tl.lanes_m * tl.block_k
                chunk = q ^ self.swizzle_of(r * tl.lanes_m)
                lines.append(f"{ind}  const float4 af{q}_{r} = "
                             f"*(__local const float4 *)(sa + {row_offset} + ax{chunk});\n")
            loads = [f"{ind}  const float4 {name} = *(__local const float4 *)(sb + {offset});\n"
                     for name, offset in self.b_loads(q, "bf")]
            if self.b_k_major:  # every column's float4 spans the four columns of K
                lines += loads
            for kk in range(4):
                if not self.b_k_major:  # row 4q + kk of B, just before its fma
                    lines += loads[kk * chunks_n:(kk + 1) * chunks_n]
                for r in range(tl.thread_m):
                    for j in range(chunks_n):
                        for lane in range(4):
                            acc = f"c{r}_{4 * j + lane}"
                            lines.append(f"{ind}  {acc} = fma(af{q}_{r}.s{kk}, "
                                         f"{self.b_value('bf', q, kk, j, lane)}, {acc});\n")
        lines.append(f"{ind}}}\n")
        return lines

    def stores(self) -> list[str]:
        """Each work-item's float4 runs of a row go out as one 16-byte store: N is a multiple
        of 4 (`fits`), so a run is in C whole or not at all."""
        tl, m, n = self.tiles, self.m, self.n
        lines: list[str] = []
        for r in range(tl.thread_m):
            row = f"row_base + warp_row + lane_row + {r * tl.lanes_m}"
            lines.append(f"    if ({row} < {m}) {{\n        const int row = {row};\n")
            for j in range(tl.thread_n // 4):
                col = f"col_base + warp_col + lane_col * 4 + {j * tl.lanes_n * 4}"
                values = ", ".join(
                    self.epilogue.call(f"c{r}_{4 * j + d}", f"batch * {m} + row", f"col + {d}")
                    for d in range(4))
                lines.append(f"        {{ const int col = {col};\n"
                             f"          if (col < {n}) vstore4((float4)({values}), 0, "
                             f"c + row * {n} + col); }}\n")
            lines.append("    }\n")
        return lines
