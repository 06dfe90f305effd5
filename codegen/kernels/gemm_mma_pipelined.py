"""Tensor-core GEMM, pipelined: ``cp.async`` into swizzled local memory, ``ldmatrix``
fragments, ``mma.sync``.

The same product as `gemm_mma.gemm_mma` (``C[b] = epilogue(A[b] @ B[b or 0])``, f32
accumulation, the result rounded once when stored) for f16 and bf16 operands
(``mma.sync.m16n8k16``) and for f32 operands through TF32 (``mma.sync.m16n8k8``, each operand
rounded by ``cvt.rna.tf32.f32`` as its fragment is loaded), built the way fast Ampere-class
GEMMs are built, all through inline PTX in OpenCL C:

- A pipeline step covers 64 bytes of K: 32 elements of 16 bits, or 16 of f32; two fragment
  steps of 32 bytes each (k16 for 16-bit operands, k8 for TF32). So a stage of A (``block_m``
  rows of 64 bytes) and of B (one step of K rows of ``block_n`` elements) has the same bytes
  for every kind: 16 KiB for 128x128 blocks.
- Global -> local: each work-item issues 16-byte ``cp.async.cg.shared.global`` copies (no
  registers in between); chunks past the edges of A or B are zero-filled by the copy's source
  size 0. ``stages - 1`` steps are in flight while the tensor cores work on one; one barrier
  per step (``cp.async.wait_group stages - 2``, then the barrier).
- Local layout, no padding: chunk ``c`` of A row ``r`` is stored at chunk ``c ^ ((r >> 1) &
  3)``; of B row ``r`` at ``c ^ (r & 7)`` (16-bit) or ``c ^ ((r & 3) << 1)`` (f32). The eight
  16-byte rows that one ``ldmatrix`` 8x8 matrix reads, the words a warp reads of a TF32 B
  tile, and the chunks that eight consecutive work-items copy then fall on distinct banks.
- Fragments: ``ldmatrix.x4`` gives a 16x32-byte A fragment (rows ``lane & 15``, chunk ``lane
  >> 4``): the m16n8k16 A registers of 16-bit operands, or the m16n8k8 ones of TF32 (a 32-bit
  element is two 16-bit halves of one row). For 16-bit B, ``ldmatrix.x4.trans`` on the
  row-major tile gives the B fragments of two 8-column mma tiles (k rows ``lane & 15``, column
  chunk ``lane >> 4``), the layout ``.col`` asks for; TF32 B fragments are read word by word.
  With ``fragment_prefetch`` the fragments of the next fragment step are loaded while the
  tensor cores work on this one, the next stage's first ones right after the step's barrier.
- A warp computes a ``warp_m x warp_n`` sub-block (``warp_m / 16`` by ``warp_n / 8`` mma
  tiles), the work-group ``block_m x block_n``.

The copies need rows that start on 16 bytes: K and N multiples of 8 (16-bit) or 4 (f32)
(`fits`); `gemm_mma` keeps the register-staged kernel for other shapes.

Local addresses for PTX: a ``__local`` pointer converted to an integer is its address in the
shared state space (NVIDIA's OpenCL puts ``__local`` in ``.shared``), so ``(uint)(size_t)p``
is what ``ldmatrix`` and ``cp.async`` take; global pointers are passed as 64-bit integers.

``mma="emulated"`` replaces ``cp.async`` by a plain 16-byte copy, ``ldmatrix`` by plain OpenCL C
that exchanges the lanes' row addresses through local memory and reads the matrices by the PTX
layouts, and ``mma.sync`` and ``cvt`` by `gemm_mma`'s emulation: the tiling, swizzle, pipeline
indexing, edges and epilogue of this kernel then run on any OpenCL device (the CPU in CI).
"""

from __future__ import annotations

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
from fusec.codegen.kernels.cp_async import CP_ASYNC, emulated_group_helpers, group_helpers
from fusec.codegen.kernels.gemm_mma import (
    MMAS,
    _emulation,
    _Mma,
    _ptx_helpers,
    check_out_dtype,
    mma_kind,
)

ROW_BYTES = 64
"""Bytes of K per pipeline step: an A row of a stage, four 16-byte chunks."""
FRAGMENT_BYTES = 32
"""Bytes of K per fragment step (one mma's depth: k16 of 16-bit elements, k8 of TF32)."""

RESERVED_NAMES = frozenset({
    "batch", "a", "b", "c", "tid", "lane", "warp", "g", "t", "warp_row", "warp_col",
    "row_base", "col_base", "smem", "smem_base", "xch", "mma_scratch", "kt", "read_stage",
    "write_stage", "row", "col", "st", "k0", "block_id", "first_row", "group_rows",
})


@dataclass(frozen=True)
class PipelineTiles:
    """The blocking of the pipelined kernel."""

    block_m: int = 128
    block_n: int = 128
    warps_m: int = 2
    warps_n: int = 2
    stages: int = 3
    fragment_prefetch: bool = True
    """Load the next fragment step's fragments before this one's products."""
    group_m: int = 0
    """Run the blocks in groups of ``group_m`` block rows, column by column within a group
    (so the blocks running at once share rows of A and columns of B in the L2 cache); 0: row
    by row, as launched."""

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
        return self.block_m * ROW_BYTES

    @property
    def stage_bytes(self) -> int:
        """A and B of one step: the B tile has as many bytes per column as an A row."""
        return (self.block_m + self.block_n) * ROW_BYTES

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
        if (4 * self.block_m) % self.threads or (4 * self.block_n) % self.threads:
            problems.append("tiles whose 16-byte chunks divide evenly among the work-items")
        if self.group_m < 0:
            problems.append("group_m >= 0")
        if problems:
            raise ValueError(f"pipelined tensor-core tiles {self}: need {'; '.join(problems)}")


DEFAULT_TILES = PipelineTiles()
"""128x128 blocks of 4 warps (64x64 each), 3 stages: 48 KiB of local memory, the
``CL_DEVICE_LOCAL_MEM_SIZE`` NVIDIA's OpenCL reports. On an H100 (`bench/results/
h100-2026-11-25-tensor-cores-2.log`) this was the fastest blocking within 48 KiB; more stages
or 128x256 blocks (64-96 KiB, which the driver also ran) gained under 2%, and 2 stages lost 40%."""


def fits(dtype: str, n: int, k: int) -> bool:
    """Whether the pipelined kernel computes this product: rows of A (K elements) and B (N
    elements) that are whole 16-byte chunks; ``f32`` means TF32 products."""
    vector = {"f16": 8, "bf16": 8, "f32": 4}.get(dtype)
    return vector is not None and k % vector == 0 and n % vector == 0


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
    out_dtype: str | None = None,
) -> KernelSource:
    """The pipelined tensor-core kernel (see the module docstring) for ``dtype`` operands
    (``f32``: through TF32); ``mma`` is ``"ptx"`` or ``"emulated"``; C of `out_dtype`
    (`gemm_mma.check_out_dtype`)."""
    check_positive(name, batch=batch, m=m, n=n, k=k)
    if not fits(dtype, n, k):
        raise ValueError(f"kernel '{name}': the pipelined tensor-core GEMM takes f16 or bf16 "
                         f"with K and N multiples of 8, or f32 with multiples of 4; not {dtype} "
                         f"K={k} N={n}")
    if mma not in ("ptx", "emulated"):
        raise ValueError(f"kernel '{name}': mma must be 'ptx' or 'emulated', got '{mma}'")
    tiles.check()
    check_epilogue_names(name, epilogue, RESERVED_NAMES,
                         r"[ab][rcdvp]\d+|f\d[ab]\d+_\d+|c\d+_\d+_\d+|[ab]_ld\d+_\d+",
                         "the kernel's copy, fragment or accumulator registers")
    spec = MMAS[mma_kind(dtype)]
    storage = half.STORAGE[dtype]
    out_dtype = check_out_dtype(name, dtype, out_dtype)
    args = (KernelArg("lhs", "in", storage), KernelArg("rhs", "in", storage),
            KernelArg("out", "out", half.STORAGE[out_dtype]), *epilogue.params)
    emulated = mma == "emulated"
    helpers = (_emulation(name, spec) + _emulated_copies(name)) if emulated else (
        _ptx_helpers(name, spec) + _ptx_copies(name, tiles.stages))
    body = _Body(name, batch, m, n, k, rhs_batched, epilogue, dtype, spec, tiles,
                 emulated, out_dtype).source()
    attribute = f"__attribute__((reqd_work_group_size({tiles.threads}, 1, 1)))"
    source = (
        f"// {name}: [{batch}x{m}x{k}] @ [{batch if rhs_batched else 1}x{k}x{n}], {dtype}, "
        f"tensor cores ({spec.instruction}, ldmatrix, cp.async x{tiles.stages}, "
        f"{tiles.block_m}x{tiles.block_n} blocks{', emulated' if emulated else ''})\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{helpers}"
        f"{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    global_size = (ceil_div(n, tiles.block_n) * tiles.threads, ceil_div(m, tiles.block_m), batch)
    return KernelSource(name, source, args, global_size, (tiles.threads, 1, 1))


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
        f"inline void {name}_cp16(const uint dst, __global const ushort *src,\n"
        "                         const uint bytes) {\n"
        f'    asm volatile("{CP_ASYNC}" :: "r"(dst), "l"((ulong)src), "r"(bytes) : "memory");\n'
        "}\n"
        + group_helpers(name, stages)
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
        + emulated_group_helpers(name)
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
    spec: _Mma
    tiles: PipelineTiles
    emulated: bool
    out_dtype: str
    """C's element type."""

    @property
    def tf32(self) -> bool:
        return self.spec.kind == "tf32"

    @property
    def halves(self) -> int:
        """16-bit words per element: the copies count in 16-bit words."""
        return self.spec.elem_bytes // 2

    @property
    def tiles_m(self) -> int:
        return self.tiles.warp_m // 16

    @property
    def tiles_n(self) -> int:
        return self.tiles.warp_n // 8

    @property
    def block_k(self) -> int:
        return ROW_BYTES // self.spec.elem_bytes

    @property
    def b_row_bytes(self) -> int:
        return self.tiles.block_n * self.spec.elem_bytes

    def source(self) -> str:
        tl, m, n, k = self.tiles, self.m, self.n, self.k
        rhs_offset = f"batch * {k * n}" if self.rhs_batched else "0"
        steps = ceil_div(k, self.block_k)
        lines = [
            "    const int batch = get_global_id(2);\n",
            f"    __global const ushort *a = (__global const ushort *)(lhs + batch * {m * k});\n",
            f"    __global const ushort *b = (__global const ushort *)(rhs + {rhs_offset});\n",
            f"    __global {half.STORAGE[self.out_dtype]} *c = out + batch * {m * n};\n",
            "    const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;\n",
            "    const int g = lane >> 2, t = lane & 3;\n",
            f"    const int warp_row = (warp / {tl.warps_n}) * {tl.warp_m};\n",
            f"    const int warp_col = (warp % {tl.warps_n}) * {tl.warp_n};\n",
            *self.block_origin(),
            f"    __local ushort smem[{tl.local_bytes // 2}] __attribute__((aligned(128)));\n",
        ]
        if self.emulated:
            scratch = 24 * self.spec.k
            lines += [
                "    const uint smem_base = 0u;\n",
                f"    __local uint xch[{32 * tl.warps_m * tl.warps_n}];\n",
                f"    __local float mma_scratch[{scratch * tl.warps_m * tl.warps_n}];\n",
            ]
        else:
            lines.append("    const uint smem_base = (uint)(size_t)smem;\n")
        for i in range(self.tiles_m):
            for j in range(self.tiles_n):
                lines.append(f"    float c{i}_{j}_0 = 0.0f, c{i}_{j}_1 = 0.0f, "
                             f"c{i}_{j}_2 = 0.0f, c{i}_{j}_3 = 0.0f;\n")
        for buf in range(2 if tl.fragment_prefetch else 1):
            regs = [f"f{buf}a{i}_{q}" for i in range(self.tiles_m) for q in range(4)]
            regs += [f"f{buf}b{j}_{q}" for j in range(self.tiles_n) for q in range(2)]
            lines.append(f"    uint {', '.join(regs)};\n")
        lines += self.fragment_offsets()
        lines += self.copy_setup()
        for s in range(tl.stages - 1):
            lines.append(f"    /* prologue: step {s} into stage {s} */\n")
            lines += self.copies(f"{s * self.block_k}", f"{s * tl.stage_bytes}u", "    ")
            lines.append(f"    {self.name}_commit();\n")
        last_stage = (tl.stages - 1) * tl.stage_bytes
        lines.append(f"    uint read_stage = 0u, write_stage = {last_stage}u;\n")
        fragment_steps = ROW_BYTES // FRAGMENT_BYTES
        advance = [
            f"read_stage = read_stage + {tl.stage_bytes}u == {tl.local_bytes}u ? 0u : "
            f"read_stage + {tl.stage_bytes}u;\n",
            f"write_stage = write_stage + {tl.stage_bytes}u == {tl.local_bytes}u ? 0u : "
            f"write_stage + {tl.stage_bytes}u;\n",
        ]
        copies = ([f"        if (kt + {tl.stages - 1} < {steps}) {{\n"]
                  + self.copies(f"(kt + {tl.stages - 1}) * {self.block_k}", "write_stage",
                                "            ")
                  + ["        }\n", f"        {self.name}_commit();\n"])
        wait = [f"        {self.name}_wait();\n", "        barrier(CLK_LOCAL_MEM_FENCE);\n"]
        ind = "        "
        if tl.fragment_prefetch:
            lines += [line[4:] for line in wait]
            lines += [line[4:] for line in self.load_fragments(0, 0)]
            lines.append(f"    for (int kt = 0; kt < {steps}; ++kt) {{\n")
            for fs in range(fragment_steps):
                last = fs == fragment_steps - 1
                if last:
                    lines += wait + [ind + line for line in advance]
                lines += self.load_fragments((fs + 1) % fragment_steps, (fs + 1) % 2)
                if fs == 0:
                    lines += copies
                lines += self.products(fs % 2)
            lines.append("    }\n")
        else:
            lines.append(f"    for (int kt = 0; kt < {steps}; ++kt) {{\n")
            lines += wait + copies
            for fs in range(fragment_steps):
                lines += self.load_fragments(fs, 0)
                lines += self.products(0)
            lines += [ind + line for line in advance]
            lines.append("    }\n")
        lines.append(f"    {self.name}_wait_all();\n")
        lines += self.stores()
        return "".join(lines)

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

    def fragment_offsets(self) -> list[str]:
        """Each lane's fragment addresses within a stage, in bytes: ``a_ld<fs>`` (its
        ``ldmatrix`` row) for the warp's first mma row at fragment step ``fs`` (the others
        are 16 rows = 1024 bytes apart); for 16-bit B ``b_ld<fs>_<p>``, its ``ldmatrix.trans``
        row for mma columns ``2p, 2p+1``; for TF32 B ``b_ld<fs>_<j>``, the word of its
        first B register for mma column ``j`` (the second is 4 rows further)."""
        tl = self.tiles
        lines = []
        for fs in range(ROW_BYTES // FRAGMENT_BYTES):
            lines.append(
                f"    const uint a_ld{fs} = (uint)((warp_row + (lane & 15)) * {ROW_BYTES} "
                f"+ (({2 * fs} + (lane >> 4)) ^ ((lane >> 1) & 3)) * 16);\n")
            if self.tf32:
                for j in range(self.tiles_n):
                    lines.append(
                        f"    const uint b_ld{fs}_{j} = (uint)({tl.a_bytes} + ({8 * fs} + t) * "
                        f"{self.b_row_bytes} + ((((warp_col >> 2) + {2 * j} + (g >> 2)) ^ "
                        "(t << 1)) * 16) + (g & 3) * 4);\n")
            else:
                for p in range(self.tiles_n // 2):
                    lines.append(
                        f"    const uint b_ld{fs}_{p} = (uint)({tl.a_bytes} + ({16 * fs} + "
                        f"(lane & 15)) * {self.b_row_bytes} + (((warp_col >> 3) + {2 * p} + "
                        "(lane >> 4)) ^ (lane & 7)) * 16);\n")
        return lines

    def b_swizzle(self, chunk: str, row: str) -> str:
        if self.tf32:
            return f"({chunk} ^ (({row} & 3) << 1))"
        return f"({chunk} ^ ({row} & 7))"

    def copy_setup(self) -> list[str]:
        """Per work-item, loop-invariant parts of its copies: for each chunk ``i`` of A, its
        tile row ``ar<i>``, chunk ``ac<i>``, local offset ``ad<i>``, whether its row is in A
        (``av<i>``) and its source at step 0 (``ap<i>``); for B the same with ``b`` (the row
        is along K, so only the column is checked here). Offsets in A and B count 16-bit
        words."""
        tl, m, n, k, e = self.tiles, self.m, self.n, self.k, self.halves
        lines = []
        per_row_b = self.b_row_bytes // 16
        for i in range(4 * tl.block_m // tl.threads):
            at = f"tid + {i * tl.threads}"
            lines += [
                f"    const int ar{i} = ({at}) >> 2, ac{i} = ({at}) & 3;\n",
                f"    const uint ad{i} = (uint)(ar{i} * {ROW_BYTES} + "
                f"(ac{i} ^ ((ar{i} >> 1) & 3)) * 16);\n",
                f"    const int av{i} = "
                f"{'1' if m % tl.block_m == 0 else f'row_base + ar{i} < {m}'};\n",
                f"    __global const ushort *ap{i} = a + (av{i} ? (row_base + ar{i}) * {k * e} "
                f"+ ac{i} * 8 : 0);\n",
            ]
        for i in range(4 * tl.block_n // tl.threads):
            at = f"tid + {i * tl.threads}"
            lines += [
                f"    const int br{i} = ({at}) / {per_row_b}, bc{i} = ({at}) % {per_row_b};\n",
                f"    const uint bd{i} = (uint)({tl.a_bytes} + br{i} * {self.b_row_bytes} "
                f"+ {self.b_swizzle(f'bc{i}', f'br{i}')} * 16);\n",
                f"    const int bv{i} = "
                f"{'1' if n % tl.block_n == 0 else f'col_base * {e} + bc{i} * 8 < {n * e}'};\n",
                f"    __global const ushort *bp{i} = b + (bv{i} ? br{i} * {n * e} + "
                f"col_base * {e} + bc{i} * 8 : 0);\n",
            ]
        return lines

    def copies(self, k0: str, stage: str, ind: str) -> list[str]:
        """The copies of the A and B tiles of the step starting at element ``k0`` of K into
        the stage at byte ``stage``."""
        tl, n, k, e = self.tiles, self.n, self.k, self.halves
        lead = "smem, " if self.emulated else ""
        # a step that starts inside K is whole when K is a multiple of the step (the copies
        # run only for steps that start inside K): then only the rows and columns are checked
        whole_steps = k % self.block_k == 0 and self.k >= (self.tiles.stages - 1) * self.block_k
        lines = [f"{ind}{{ const int k0 = {k0}; const uint st = smem_base + {stage};\n"]
        for i in range(4 * tl.block_m // tl.threads):
            ok = f"av{i}" if whole_steps else f"av{i} && k0 * {e} + ac{i} * 8 < {k * e}"
            lines.append(f"{ind}  {self.name}_cp16({lead}st + ad{i}, ({ok}) ? ap{i} + k0 * {e} "
                         f": a, ({ok}) ? 16u : 0u);\n")
        for i in range(4 * tl.block_n // tl.threads):
            ok = f"bv{i}" if whole_steps else f"bv{i} && k0 + br{i} < {k}"
            lines.append(f"{ind}  {self.name}_cp16({lead}st + bd{i}, ({ok}) ? bp{i} + k0 * {n * e} "
                         f": b, ({ok}) ? 16u : 0u);\n")
        lines.append(f"{ind}}}\n")
        return lines

    def load_fragments(self, fs: int, buf: int) -> list[str]:
        """The warp's A and B fragments of fragment step ``fs`` of the stage at
        ``read_stage``, into the registers ``f<buf>a*`` and ``f<buf>b*``."""
        ind = "        "
        lead = "smem, xch + warp * 32, lane, " if self.emulated else ""
        lines = [f"{ind}{{ const uint st = smem_base + read_stage; /* fragment step {fs} */\n"]
        for i in range(self.tiles_m):
            regs = [f"f{buf}a{i}_{q}" for q in range(4)]
            lines.append(f"{ind}  {self.name}_ldsm({lead}st + a_ld{fs} + {i * 16 * ROW_BYTES}u, "
                         f"{', '.join('&' + r for r in regs)});\n")
            if self.tf32:
                lines += [f"{ind}  {r} = {self.name}_tf32(as_float({r}));\n" for r in regs]
        if self.tf32:
            words = "((__local const uint *)smem)"
            for j in range(self.tiles_n):
                for q, extra in enumerate(("", f" + {4 * self.b_row_bytes}u")):
                    lines.append(f"{ind}  f{buf}b{j}_{q} = {self.name}_tf32(as_float({words}["
                                 f"(read_stage + b_ld{fs}_{j}{extra}) >> 2]));\n")
        else:
            for p in range(self.tiles_n // 2):
                j0, j1 = 2 * p, 2 * p + 1
                lines.append(f"{ind}  {self.name}_ldsm_t({lead}st + b_ld{fs}_{p}, &f{buf}b{j0}_0, "
                             f"&f{buf}b{j0}_1, &f{buf}b{j1}_0, &f{buf}b{j1}_1);\n")
        lines.append(f"{ind}}}\n")
        return lines

    def products(self, buf: int) -> list[str]:
        """The warp's mma products from the fragment registers ``f<buf>*``."""
        ind = "        "
        lead = f"mma_scratch + warp * {24 * self.spec.k}, lane, " if self.emulated else ""
        lines = []
        for i in range(self.tiles_m):
            a = ", ".join(f"f{buf}a{i}_{q}" for q in range(4))
            for jj in range(self.tiles_n):
                j = jj if i % 2 == 0 else self.tiles_n - 1 - jj  # serpentine: B reuse
                acc = ", ".join(f"&c{i}_{j}_{q}" for q in range(4))
                lines.append(f"{ind}{self.name}_mma({lead}{a}, f{buf}b{j}_0, f{buf}b{j}_1, "
                             f"{acc});\n")
        return lines

    def stores(self) -> list[str]:
        """Each work-item's two adjacent columns of a row (``2t``, ``2t + 1`` of an mma tile)
        go out in one 4- or 8-byte store: N is even (`fits`), so both are in C or neither."""
        m, n = self.m, self.n
        lines: list[str] = []
        for i in range(self.tiles_m):
            for half_row in (0, 8):
                row = f"row_base + warp_row + {i * 16 + half_row} + g"
                lines.append(f"    if ({row} < {m}) {{\n        const int row = {row};\n")
                for j in range(self.tiles_n):
                    q = 2 if half_row else 0
                    col = f"col_base + warp_col + {j * 8} + 2 * t"
                    v0, v1 = (self.epilogue.call(f"c{i}_{j}_{q + d}", f"batch * {m} + row",
                                                 f"col + {d}") for d in (0, 1))
                    store = self.pair_store(f"row * {n} + col", v0, v1)
                    lines.append(f"        {{ const int col = {col};\n"
                                 f"          if (col < {n}) {store}; }}\n")
                lines.append("    }\n")
        return lines

    def pair_store(self, index: str, v0: str, v1: str) -> str:
        """C statement: floats ``v0``, ``v1`` stored at ``c[index]``, ``c[index + 1]`` (index
        even), rounded to the output type."""
        if self.out_dtype == "f16":
            return f"vstore_half2_rte((float2)({v0}, {v1}), 0, c + {index})"
        if self.out_dtype == "bf16":
            return (f"*(__global uint *)(c + {index}) = (uint)fusec_float_to_bf16({v0}) | "
                    f"((uint)fusec_float_to_bf16({v1}) << 16)")
        return f"vstore2((float2)({v0}, {v1}), 0, c + {index})"
