"""Tensor-core GEMM for 16-bit operands, pipelined: ``cp.async`` into swizzled local memory,
``ldmatrix`` fragments, ``mma.sync.m16n8k16``.

The same product as `gemm_mma.gemm_mma` for f16 and bf16 (``C[b] = epilogue(A[b] @ B[b or 0])``,
f32 accumulation, the result rounded once when stored), built the way fast Ampere-class GEMMs
are built, all through inline PTX in OpenCL C:

- Global -> local: each work-item issues 16-byte ``cp.async.cg.shared.global`` copies (no
  registers in between); tiles past the edges of A or B are zero-filled by the copy's source
  size 0. ``stages`` tiles of A (``block_m x 32``) and B (``32 x block_n``) are in flight: the
  copies of step ``kt + stages - 1`` are issued before the tensor cores work on step ``kt``,
  with one barrier per step (``cp.async.wait_group stages - 2``, then the barrier).
- Local layout, no padding: A rows are 64 bytes (4 chunks of 16 bytes), chunk ``c`` of row
  ``r`` stored at chunk ``c ^ ((r >> 1) & 3)``; B rows (``block_n`` halves) chunk ``c`` of row
  ``r`` at ``c ^ (r & 7)``. The eight 16-byte rows that one ``ldmatrix`` 8x8 matrix reads, and
  the chunks that eight consecutive work-items copy, then fall on distinct banks.
- Fragments: ``ldmatrix.x4`` gives a 16x16 A fragment (rows ``lane & 15``, k chunk ``lane >>
  4``); ``ldmatrix.x4.trans`` on the row-major B tile gives the B fragments of two 8-column mma
  tiles (k rows ``lane & 15``, column chunk ``lane >> 4``), which is the layout ``.col``
  asks for.
- A warp computes a ``warp_m x warp_n`` sub-block (``tiles.warp_m / 16`` by ``tiles.warp_n /
  8`` mma tiles), the work-group ``block_m x block_n``.

The copies need rows that start on 16 bytes: K and N multiples of 8 (`fits`); `gemm_mma` uses
the register-staged kernel for other shapes.

Local addresses for PTX: a ``__local`` pointer converted to an integer is its address in the
shared state space (NVIDIA's OpenCL puts ``__local`` in ``.shared``), so ``(uint)(size_t)p``
is what ``ldmatrix`` and ``cp.async`` take; global pointers are passed as 64-bit integers.

``mma="emulated"`` replaces ``cp.async`` by a plain 16-byte copy, ``ldmatrix`` by plain OpenCL C
that exchanges the lanes' row addresses through local memory and reads the matrices by the PTX
layouts, and ``mma.sync`` by `gemm_mma`'s emulation: the tiling, swizzle, pipeline indexing,
edges and epilogue of this kernel then run on any OpenCL device (the CPU in CI).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fusec.codegen.kernels import half
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
from fusec.codegen.kernels.gemm_mma import MMAS, _emulation, _ptx_helpers

BLOCK_K = 32
"""Depth of one pipeline step: two m16n8k16 products; an A row of the tile is 64 bytes."""

RESERVED_NAMES = frozenset({
    "batch", "a", "b", "c", "tid", "lane", "warp", "g", "t", "warp_row", "warp_col",
    "row_base", "col_base", "smem", "smem_base", "xch", "mma_scratch", "kt", "read_stage",
    "write_stage", "row", "col",
})


@dataclass(frozen=True)
class PipelineTiles:
    """The blocking of the pipelined kernel."""

    block_m: int = 128
    block_n: int = 128
    warps_m: int = 2
    warps_n: int = 2
    stages: int = 3

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
    def a_bytes(self) -> int:
        return self.block_m * BLOCK_K * 2

    @property
    def b_bytes(self) -> int:
        return BLOCK_K * self.block_n * 2

    @property
    def stage_bytes(self) -> int:
        return self.a_bytes + self.b_bytes

    @property
    def local_bytes(self) -> int:
        return self.stages * self.stage_bytes

    def check(self) -> None:
        """Raise ValueError if the blocking cannot be generated."""
        problems = []
        if self.stages < 2:
            problems.append("at least 2 stages")
        if self.block_m % (16 * self.warps_m) or self.block_n % (16 * self.warps_n):
            problems.append("warp tiles of whole 16x16 pieces")
        if self.block_n % 64:
            problems.append("block_n a multiple of 64 (the B swizzle spans 8 chunks)")
        if (self.block_m * BLOCK_K // 8) % self.threads or (BLOCK_K * self.block_n // 8) % self.threads:
            problems.append("tiles whose 16-byte chunks divide evenly among the work-items")
        if problems:
            raise ValueError(f"pipelined tensor-core tiles {self}: need {'; '.join(problems)}")


DEFAULT_TILES = PipelineTiles()
"""128x128 blocks of 4 warps (64x64 each), 3 stages: 48 KiB of local memory, the most an
NVIDIA OpenCL work-group gets."""


def fits(dtype: str, n: int, k: int) -> bool:
    """Whether the pipelined kernel computes this product: 16-bit operands whose rows of A
    (K elements) and B (N elements) are whole 16-byte chunks."""
    return dtype in ("f16", "bf16") and k % 8 == 0 and n % 8 == 0


def gemm_mma_pipelined(
    name: str,
    batch: int,
    m: int,
    n: int,
    k: int,
    rhs_batched: bool,
    epilogue: Epilogue = IDENTITY_EPILOGUE,
    dtype: str = "f16",
    mma: str = "ptx",
    tiles: PipelineTiles = DEFAULT_TILES,
) -> KernelSource:
    """The pipelined tensor-core kernel (see the module docstring); ``mma`` is ``"ptx"`` or
    ``"emulated"``."""
    check_positive(name, batch=batch, m=m, n=n, k=k)
    if not fits(dtype, n, k):
        raise ValueError(f"kernel '{name}': the pipelined tensor-core GEMM takes f16 or bf16 "
                         f"with K and N multiples of 8, not {dtype} K={k} N={n}")
    if mma not in ("ptx", "emulated"):
        raise ValueError(f"kernel '{name}': mma must be 'ptx' or 'emulated', got '{mma}'")
    tiles.check()
    check_epilogue_names(name, epilogue, RESERVED_NAMES)
    for param in epilogue.params:
        if re.fullmatch(r"[ab][rcdvp]\d+|[abc]\d+_\d+|[ab]_ld\d+(_\d+)?", param.name):
            raise ValueError(f"kernel '{name}': epilogue parameter '{param.name}' is named like "
                             "the kernel's copy, fragment or accumulator registers")
    spec = MMAS[dtype]
    storage = half.STORAGE[dtype]
    args = (KernelArg("lhs", "in", storage), KernelArg("rhs", "in", storage),
            KernelArg("out", "out", storage), *epilogue.params)
    emulated = mma == "emulated"
    helpers = (_emulation(name, spec) + _emulated_copies(name)) if emulated else (
        _ptx_helpers(name, spec) + _ptx_copies(name, tiles.stages))
    body = _Body(name, batch, m, n, k, rhs_batched, epilogue, dtype, tiles, emulated).source()
    attribute = f"__attribute__((reqd_work_group_size({tiles.threads}, 1, 1)))"
    source = (
        f"// {name}: [{batch}x{m}x{k}] @ [{batch if rhs_batched else 1}x{k}x{n}], {dtype}, "
        f"tensor cores ({spec.instruction}, ldmatrix, cp.async x{tiles.stages}, "
        f"{tiles.block_m}x{tiles.block_n} blocks{', emulated' if emulated else ''})\n"
        f"{half.HELPERS}"
        f"{helpers}"
        f"{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    global_size = (ceil_div(n, tiles.block_n) * tiles.threads, ceil_div(m, tiles.block_m), batch)
    return KernelSource(name, source, args, global_size, (tiles.threads, 1, 1))


CP_ASYNC = "cp.async.cg.shared.global [%0], [%1], 16, %2;"
LDMATRIX = "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
LDMATRIX_TRANS = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"


def _ptx_copies(name: str, stages: int) -> str:
    """``<name>_cp16`` (one 16-byte asynchronous copy, zero-filled when ``bytes`` is 0),
    ``<name>_commit``, ``<name>_wait`` (all but ``stages - 2`` groups done), ``<name>_wait_all``,
    and ``<name>_ldsm`` / ``<name>_ldsm_t`` (``ldmatrix.x4``, plain and transposed)."""
    ldsm = []
    for suffix, instruction in (("ldsm", LDMATRIX), ("ldsm_t", LDMATRIX_TRANS)):
        ldsm.append(
            f"inline void {name}_{suffix}(const uint addr, uint *r0, uint *r1, uint *r2, "
            "uint *r3) {\n"
            "    uint x0, x1, x2, x3;\n"
            f'    asm volatile("{instruction}"\n'
            '        : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(addr) : "memory");\n'
            "    *r0 = x0; *r1 = x1; *r2 = x2; *r3 = x3;\n"
            "}\n")
    return (
        f"inline void {name}_cp16(const uint dst, __global const ushort *src, const uint bytes) {{\n"
        f'    asm volatile("{CP_ASYNC}" :: "r"(dst), "l"((ulong)src), "r"(bytes) : "memory");\n'
        "}\n"
        f'inline void {name}_commit(void) {{ asm volatile("cp.async.commit_group;" ::: "memory"); }}\n'
        f"inline void {name}_wait(void) {{\n"
        f'    asm volatile("cp.async.wait_group {stages - 2};" ::: "memory");\n'
        "}\n"
        f'inline void {name}_wait_all(void) {{ asm volatile("cp.async.wait_group 0;" ::: "memory"); }}\n'
        + "".join(ldsm)
    )


def _emulated_copies(name: str) -> str:
    """The test doubles of `_ptx_copies`, in plain OpenCL C: the copy is synchronous (so commit
    and wait do nothing); ``ldmatrix`` publishes each lane's row address in the warp's 32 words
    of ``xch`` and reads the four 8x8 matrices by the PTX layouts (plain: lane ``l`` gets row
    ``l / 4``, elements ``2 (l % 4)`` and ``+1``; transposed: column ``l / 4`` of rows ``2 (l %
    4)`` and ``+1``), the lower element in the low half."""
    def ldsm(suffix: str, trans: bool) -> str:
        if trans:
            lo = "smem[xch[8 * j + 2 * (lane & 3)] / 2 + (lane >> 2)]"
            hi = "smem[xch[8 * j + 2 * (lane & 3) + 1] / 2 + (lane >> 2)]"
        else:
            lo = "smem[xch[8 * j + (lane >> 2)] / 2 + 2 * (lane & 3)]"
            hi = "smem[xch[8 * j + (lane >> 2)] / 2 + 2 * (lane & 3) + 1]"
        return (
            f"__attribute__((noinline)) void {name}_{suffix}(__local const ushort *smem,\n"
            "        __local uint *xch, const int lane, const uint addr,\n"
            "        uint *r0, uint *r1, uint *r2, uint *r3) {\n"
            "    uint r[4];\n"
            "    barrier(CLK_LOCAL_MEM_FENCE);\n"
            "    xch[lane] = addr;\n"
            "    barrier(CLK_LOCAL_MEM_FENCE);\n"
            "    for (int j = 0; j < 4; ++j)\n"
            f"        r[j] = (uint){lo} | ((uint){hi} << 16);\n"
            "    *r0 = r[0]; *r1 = r[1]; *r2 = r[2]; *r3 = r[3];\n"
            "}\n")

    return (
        f"inline void {name}_cp16(__local ushort *smem, const uint dst,\n"
        "                         __global const ushort *src, const uint bytes) {\n"
        "    vstore8(bytes ? vload8(0, src) : (ushort8)(0), 0, smem + dst / 2);\n"
        "}\n"
        f"inline void {name}_commit(void) {{}}\n"
        f"inline void {name}_wait(void) {{}}\n"
        f"inline void {name}_wait_all(void) {{}}\n"
        + ldsm("ldsm", False) + ldsm("ldsm_t", True)
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
    dtype: str
    tiles: PipelineTiles
    emulated: bool

    @property
    def tiles_m(self) -> int:
        return self.tiles.warp_m // 16

    @property
    def tiles_n(self) -> int:
        return self.tiles.warp_n // 8

    def source(self) -> str:
        tl, m, n, k = self.tiles, self.m, self.n, self.k
        t = half.STORAGE[self.dtype]
        rhs_offset = f"batch * {k * n}" if self.rhs_batched else "0"
        steps = ceil_div(k, BLOCK_K)
        lines = [
            "    const int batch = get_global_id(2);\n",
            f"    __global const ushort *a = (__global const ushort *)(lhs + batch * {m * k});\n",
            f"    __global const ushort *b = (__global const ushort *)(rhs + {rhs_offset});\n",
            f"    __global {t} *c = out + batch * {m * n};\n",
            "    const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;\n",
            "    const int g = lane >> 2, t = lane & 3;\n",
            f"    const int warp_row = (warp / {tl.warps_n}) * {tl.warp_m};\n",
            f"    const int warp_col = (warp % {tl.warps_n}) * {tl.warp_n};\n",
            f"    const int row_base = get_group_id(1) * {tl.block_m};\n",
            f"    const int col_base = get_group_id(0) * {tl.block_n};\n",
            f"    __local ushort smem[{tl.local_bytes // 2}] __attribute__((aligned(128)));\n",
        ]
        if self.emulated:
            lines += [
                "    const uint smem_base = 0u;\n",
                f"    __local uint xch[{32 * tl.warps_m * tl.warps_n}];\n",
                f"    __local float mma_scratch[{384 * tl.warps_m * tl.warps_n}];\n",
            ]
        else:
            lines.append("    const uint smem_base = (uint)(size_t)smem;\n")
        for i in range(self.tiles_m):
            for j in range(self.tiles_n):
                lines.append(f"    float c{i}_{j}_0 = 0.0f, c{i}_{j}_1 = 0.0f, "
                             f"c{i}_{j}_2 = 0.0f, c{i}_{j}_3 = 0.0f;\n")
        lines += self.fragment_offsets()
        lines += self.copy_setup()
        for s in range(tl.stages - 1):
            lines.append(f"    /* prologue: step {s} into stage {s} */\n")
            lines += self.copies(f"{s * BLOCK_K}", f"{s * tl.stage_bytes}u", "    ")
            lines.append(f"    {self.name}_commit();\n")
        lines += [
            f"    uint read_stage = 0u, write_stage = {(tl.stages - 1) * tl.stage_bytes}u;\n",
            f"    for (int kt = 0; kt < {steps}; ++kt) {{\n",
            f"        {self.name}_wait();\n",
            "        barrier(CLK_LOCAL_MEM_FENCE);\n",
            f"        if (kt + {tl.stages - 1} < {steps}) {{\n",
        ]
        lines += self.copies(f"(kt + {tl.stages - 1}) * {BLOCK_K}", "write_stage", "            ")
        lines += [
            "        }\n",
            f"        {self.name}_commit();\n",
        ]
        for kk in range(BLOCK_K // 16):
            lines += self.step(kk)
        wrap = tl.stages * tl.stage_bytes
        lines += [
            f"        read_stage = read_stage + {tl.stage_bytes}u == {wrap}u ? 0u : "
            f"read_stage + {tl.stage_bytes}u;\n",
            f"        write_stage = write_stage + {tl.stage_bytes}u == {wrap}u ? 0u : "
            f"write_stage + {tl.stage_bytes}u;\n",
            "    }\n",
            f"    {self.name}_wait_all();\n",
        ]
        lines += self.stores()
        return "".join(lines)

    def fragment_offsets(self) -> list[str]:
        """Each lane's ``ldmatrix`` row address within a stage, in bytes: ``a_ld<kk>`` for the
        A fragment of the warp's first mma row at k16 step ``kk`` (the others are 1024 bytes =
        16 rows apart), ``b_ld<kk>_<p>`` for the B fragments of mma columns ``2p, 2p+1``."""
        tl = self.tiles
        lines = []
        for kk in range(BLOCK_K // 16):
            lines.append(
                f"    const uint a_ld{kk} = (uint)((warp_row + (lane & 15)) * {BLOCK_K * 2} "
                f"+ ((({2 * kk}) + (lane >> 4)) ^ ((lane >> 1) & 3)) * 16);\n")
            for p in range(self.tiles_n // 2):
                lines.append(
                    f"    const uint b_ld{kk}_{p} = (uint)({tl.a_bytes} + ({16 * kk} + (lane & 15)) "
                    f"* {tl.block_n * 2} + (((warp_col >> 3) + {2 * p} + (lane >> 4)) ^ (lane & 7))"
                    " * 16);\n")
        return lines

    def copy_setup(self) -> list[str]:
        """Per work-item, loop-invariant parts of its copies: for each chunk ``i`` of A, its
        tile row ``ar<i>``, chunk ``ac<i>``, local offset ``ad<i>`` and whether its row is in
        A (``av<i>``); for B the same with ``b`` (the row is along K, so only the column is
        checked here)."""
        tl, m, n, k = self.tiles, self.m, self.n, self.k
        lines = []
        per_row_b = tl.block_n // 8
        for i in range(tl.block_m * BLOCK_K // 8 // tl.threads):
            lines += [
                f"    const int ar{i} = (tid + {i * tl.threads}) >> 2, ac{i} = (tid + {i * tl.threads}) & 3;\n",
                f"    const uint ad{i} = (uint)(ar{i} * {BLOCK_K * 2} + (ac{i} ^ ((ar{i} >> 1) & 3)) * 16);\n",
                f"    const int av{i} = row_base + ar{i} < {m};\n",
                f"    __global const ushort *ap{i} = a + (av{i} ? (row_base + ar{i}) * {k} + ac{i} * 8 : 0);\n",
            ]
        for i in range(BLOCK_K * tl.block_n // 8 // tl.threads):
            lines += [
                f"    const int br{i} = (tid + {i * tl.threads}) / {per_row_b}, "
                f"bc{i} = (tid + {i * tl.threads}) % {per_row_b};\n",
                f"    const uint bd{i} = (uint)({tl.a_bytes} + br{i} * {tl.block_n * 2} "
                f"+ (bc{i} ^ (br{i} & 7)) * 16);\n",
                f"    const int bv{i} = col_base + bc{i} * 8 < {n};\n",
                f"    __global const ushort *bp{i} = b + (bv{i} ? br{i} * {n} + col_base + bc{i} * 8 : 0);\n",
            ]
        return lines

    def copies(self, k0: str, stage: str, ind: str) -> list[str]:
        """The copies of the A and B tiles of the step starting at ``k0`` into the stage at
        byte ``stage``."""
        tl, n, k = self.tiles, self.n, self.k
        lead = "smem, " if self.emulated else ""
        lines = [f"{ind}{{ const int k0 = {k0}; const uint st = smem_base + {stage};\n"]
        for i in range(tl.block_m * BLOCK_K // 8 // tl.threads):
            ok = f"av{i} && k0 + ac{i} * 8 < {k}"
            lines.append(f"{ind}  {self.name}_cp16({lead}st + ad{i}, ({ok}) ? ap{i} + k0 : a, "
                         f"({ok}) ? 16u : 0u);\n")
        for i in range(BLOCK_K * tl.block_n // 8 // tl.threads):
            ok = f"bv{i} && k0 + br{i} < {k}"
            lines.append(f"{ind}  {self.name}_cp16({lead}st + bd{i}, ({ok}) ? bp{i} + k0 * {n} "
                         f": b, ({ok}) ? 16u : 0u);\n")
        lines.append(f"{ind}}}\n")
        return lines

    def step(self, kk: int) -> list[str]:
        """One k16 step of the warp's tiles from the stage at ``read_stage``."""
        ind = "        "
        lead = "smem, xch + warp * 32, lane, " if self.emulated else ""
        lines = [f"{ind}{{ /* k16 step {kk} */\n",
                 f"{ind}  const uint st = smem_base + read_stage;\n"]
        for i in range(self.tiles_m):
            regs = ", ".join(f"&a{i}_{q}" for q in range(4))
            lines.append(f"{ind}  uint a{i}_0, a{i}_1, a{i}_2, a{i}_3;\n")
            lines.append(f"{ind}  {self.name}_ldsm({lead}st + a_ld{kk} + {i * 16 * BLOCK_K * 2}u, "
                         f"{regs});\n")
        for p in range(self.tiles_n // 2):
            j0, j1 = 2 * p, 2 * p + 1
            lines.append(f"{ind}  uint b{j0}_0, b{j0}_1, b{j1}_0, b{j1}_1;\n")
            lines.append(f"{ind}  {self.name}_ldsm_t({lead}st + b_ld{kk}_{p}, &b{j0}_0, &b{j0}_1, "
                         f"&b{j1}_0, &b{j1}_1);\n")
        mma_lead = "mma_scratch + warp * 384, lane, " if self.emulated else ""
        for i in range(self.tiles_m):
            for jj in range(self.tiles_n):
                j = jj if i % 2 == 0 else self.tiles_n - 1 - jj  # serpentine: B reuse
                acc = ", ".join(f"&c{i}_{j}_{q}" for q in range(4))
                lines.append(f"{ind}  {self.name}_mma({mma_lead}a{i}_0, a{i}_1, a{i}_2, a{i}_3, "
                             f"b{j}_0, b{j}_1, {acc});\n")
        lines.append(f"{ind}}}\n")
        return lines

    def stores(self) -> list[str]:
        m, n = self.m, self.n
        lines: list[str] = []
        for i in range(self.tiles_m):
            for half_row in (0, 8):
                row = f"row_base + warp_row + {i * 16 + half_row} + g"
                lines.append(f"    if ({row} < {m}) {{\n        const int row = {row};\n")
                for j in range(self.tiles_n):
                    for lane_col in (0, 1):
                        q = lane_col + (2 if half_row else 0)
                        col = f"col_base + warp_col + {j * 8 + lane_col} + 2 * t"
                        value = self.epilogue.call(f"c{i}_{j}_{q}", f"batch * {m} + row", col)
                        store = half.store(self.dtype, "c", f"row * {n} + {col}", value)
                        lines.append(f"        if ({col} < {n}) {store};\n")
                lines.append("    }\n")
        return lines
