"""Tensor-core GEMM for NVIDIA's OpenCL: ``mma.sync`` through inline PTX.

``C[b] = epilogue(A[b] @ B[b or 0])`` as `gemm.gemm` computes it (same parameters: ``lhs, rhs,
out``, then the epilogue's), with the products on tensor cores:

- f16 and bf16 operands: ``mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}`` (f32
  accumulation), the result rounded once to the output type when stored;
- f32 operands, only when the caller allows TF32 (as PyTorch's ``allow_tf32``): each operand
  rounded to TF32 (``cvt.rna.tf32.f32``) as it enters local memory, then
  ``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32``.

A work-group of 256 work-items (8 warps: NVIDIA runs the work-items of a work-group in warps of
32 consecutive local ids) computes a 128x128 block of C; warp ``w`` owns the 64x32 sub-block at
rows ``(w / 4) * 64``, columns ``(w % 4) * 32``: 4x4 tiles of 16x8, 64 float accumulators per
work-item. Per step of 32 along K the work-group copies a 128x32 tile of A (row-major, rows
padded to 40 halves or 36 floats) and a 32x128 tile of B (row-major, rows padded to 136) into
local memory; the padding keeps the fragment reads of a warp on distinct banks. The next step's
tiles are read from global memory into registers while the tensor cores work on this one.
Tiles past the edges of A and B are zero-filled, and stores past the edges of C are skipped, so
any M, N, K is computed (K a multiple of 8, or 4 for f32, reads 16 bytes at a time; other K and
N read element by element).

Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16" / "m16n8k8"), with
``g = lane / 4`` and ``t = lane % 4``: for k16, A registers hold the pairs ``A[g][2t..]``,
``A[g+8][2t..]``, ``A[g][2t+8..]``, ``A[g+8][2t+8..]``, B registers ``B[2t..][g]`` and
``B[2t+8..][g]`` (each pair in one 32-bit register, lower k in the low half); for tf32 k8, A is
``A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]`` and B ``B[t][g], B[t+4][g]``; C is ``C[g][2t],
C[g][2t+1], C[g+8][2t], C[g+8][2t+1]`` in both.

``mma="emulated"`` replaces each ``mma.sync`` (and ``cvt``) by plain OpenCL C that gathers the
warp's fragments in local memory by the layouts above and multiplies them: a test double, so
that the tiling, bounds handling and epilogue of this kernel run on any OpenCL device (the CPU
in CI); the real instructions are checked on the GPU machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
from fusec.errors import error_line

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
WARPS_M, WARPS_N = 2, 4
WARP_M, WARP_N = BLOCK_M // WARPS_M, BLOCK_N // WARPS_N  # 64 x 32
TILES_M, TILES_N = WARP_M // 16, WARP_N // 8  # 4 x 4 mma tiles per warp
THREADS = 32 * WARPS_M * WARPS_N
B_STRIDE = BLOCK_N + 8

MMA_KINDS = ("f16", "bf16", "tf32")
"""What the tensor-core kernel computes: 16-bit operands, or f32 operands through TF32."""

RESERVED_NAMES = frozenset({
    "batch", "a", "b", "c", "tid", "lane", "warp", "g", "t", "warp_row", "warp_col",
    "row_base", "col_base", "a_tile", "b_tile", "k0", "row", "col", "mma_scratch",
})


@dataclass(frozen=True)
class _Mma:
    """The spellings of one kind of tensor-core product."""

    kind: str
    k: int
    """Depth of one mma (16 for 16-bit operands, 8 for TF32)."""
    elem_bytes: int
    local_type: str
    """Element type of the local tiles (ushort bit patterns, or uint holding TF32 bits)."""
    instruction: str

    @property
    def a_stride(self) -> int:
        return BLOCK_K + (8 if self.elem_bytes == 2 else 4)

    @property
    def vector(self) -> int:
        """Elements per 16-byte global read."""
        return 16 // self.elem_bytes


MMAS = {
    "f16": _Mma("f16", 16, 2, "ushort", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    "bf16": _Mma("bf16", 16, 2, "ushort", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    "tf32": _Mma("tf32", 8, 4, "uint", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
}


def mma_kind(dtype: str) -> str:
    """The `MMA_KINDS` entry that computes a product of ``dtype`` operands."""
    return "tf32" if dtype == "f32" else dtype


def gemm_mma(
    name: str,
    batch: int,
    m: int,
    n: int,
    k: int,
    rhs_batched: bool,
    epilogue: Epilogue = IDENTITY_EPILOGUE,
    dtype: str = "f16",
    mma: str = "ptx",
    out_dtype: str | None = None,
) -> KernelSource:
    """The tensor-core kernel for ``dtype`` operands (``f32``: through TF32); ``mma`` is
    ``"ptx"`` (the instructions) or ``"emulated"`` (the test double, any device). C is of
    `out_dtype` (default `dtype`; ``f32`` of 16-bit operands: an epilogue ending in a widening
    cast, its value stored as it is)."""
    check_positive(name, batch=batch, m=m, n=n, k=k)
    if dtype not in ("f16", "bf16", "f32"):
        raise ValueError(f"kernel '{name}': tensor cores take f16, bf16 or f32 (TF32), "
                         f"not '{dtype}'")
    if mma not in ("ptx", "emulated"):
        raise ValueError(f"kernel '{name}': mma must be 'ptx' or 'emulated', got '{mma}'")
    check_epilogue_names(name, epilogue, RESERVED_NAMES)
    spec = MMAS[mma_kind(dtype)]
    storage = half.STORAGE[dtype]
    out_dtype = check_out_dtype(name, dtype, out_dtype)
    args = (KernelArg("lhs", "in", storage), KernelArg("rhs", "in", storage),
            KernelArg("out", "out", half.STORAGE[out_dtype]), *epilogue.params)
    body = _Body(name, batch, m, n, k, rhs_batched, epilogue, dtype, spec, mma,
                 out_dtype).source()
    attribute = f"__attribute__((reqd_work_group_size({THREADS}, 1, 1)))"
    helpers = _emulation(name, spec) if mma == "emulated" else _ptx_helpers(name, spec)
    source = (
        f"// {name}: [{batch}x{m}x{k}] @ [{batch if rhs_batched else 1}x{k}x{n}], {dtype}, "
        f"tensor cores ({spec.instruction}{', emulated' if mma == 'emulated' else ''})\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{helpers}"
        f"{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    global_size = (ceil_div(n, BLOCK_N) * THREADS, ceil_div(m, BLOCK_M), batch)
    return KernelSource(name, source, args, global_size, (THREADS, 1, 1))


def check_out_dtype(name: str, dtype: str, out_dtype: str | None) -> str:
    """C's element type for `dtype` operands on the tensor-core kernels: `dtype`, or ``f32``
    of 16-bit operands; a ValueError naming kernel `name` for any other."""
    out_dtype = out_dtype or dtype
    if out_dtype != dtype and not (half.is_half(dtype) and out_dtype == "f32"):
        raise ValueError(f"kernel '{name}': a tensor-core GEMM of {dtype} stores {dtype} or "
                         f"(16-bit operands) f32, not '{out_dtype}'")
    return out_dtype


def _ptx_helpers(name: str, spec: _Mma) -> str:
    """``<name>_mma(...)``: one ``mma.sync`` accumulating into four floats; for TF32 also
    ``<name>_tf32(x)``, the TF32 bits of ``x``."""
    text = (
        f"inline void {name}_mma(const uint a0, const uint a1, const uint a2, const uint a3,\n"
        f"                      const uint b0, const uint b1, float *c0, float *c1,\n"
        f"                      float *c2, float *c3) {{\n"
        "    float d0, d1, d2, d3;\n"
        f'    asm volatile("{spec.instruction} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, '
        '{%8, %9}, {%10, %11, %12, %13};"\n'
        '        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)\n'
        '        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1),\n'
        '          "f"(*c0), "f"(*c1), "f"(*c2), "f"(*c3));\n'
        "    *c0 = d0; *c1 = d1; *c2 = d2; *c3 = d3;\n"
        "}\n"
    )
    if spec.kind == "tf32":
        text += (
            f"inline uint {name}_tf32(const float x) {{\n"
            "    uint r;\n"
            '    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));\n'
            "    return r;\n"
            "}\n"
        )
    return text


def _emulation(name: str, spec: _Mma) -> str:
    """The test double of `_ptx_helpers`: the same functions in plain OpenCL C. Each call
    gathers the warp's A (16 x k) and B (k x 8) fragments in the warp's part of local memory
    by the PTX layouts, and each lane computes its four elements of C from them."""
    kk = spec.k
    if spec.kind == "tf32":
        value = "as_float({})"
        a_parts = [("a0", "g", "t"), ("a1", "g + 8", "t"), ("a2", "g", "t + 4"),
                   ("a3", "g + 8", "t + 4")]
        b_parts = [("b0", "t", "g"), ("b1", "t + 4", "g")]
        writes = [f"    s[({r}) * {kk} + {c}] = {value.format(reg)};\n" for reg, r, c in a_parts]
        writes += [f"    s[{16 * kk} + ({r}) * 8 + {c}] = {value.format(reg)};\n"
                   for reg, r, c in b_parts]
    else:
        lo, hi = ("{}_lo", "{}_hi")
        a_parts = [("a0", "g", "2 * t"), ("a1", "g + 8", "2 * t"), ("a2", "g", "2 * t + 8"),
                   ("a3", "g + 8", "2 * t + 8")]
        b_parts = [("b0", "2 * t", "g"), ("b1", "2 * t + 8", "g")]
        writes = []
        for reg, r, c in a_parts:
            writes.append(f"    s[({r}) * 16 + {c}] = {name}_{lo.format('half')}({reg});\n")
            writes.append(f"    s[({r}) * 16 + {c} + 1] = {name}_{hi.format('half')}({reg});\n")
        for reg, r, c in b_parts:
            writes.append(f"    s[256 + ({r}) * 8 + {c}] = {name}_half_lo({reg});\n")
            writes.append(f"    s[256 + ({r} + 1) * 8 + {c}] = {name}_half_hi({reg});\n")
    if spec.kind == "f16":
        unpack = (
            f"inline float {name}_half_lo(uint r) {{ return vload_half(0, (__private const half *)&r); }}\n"  # noqa: E501
            f"inline float {name}_half_hi(uint r) {{ return vload_half(1, (__private const half *)&r); }}\n"  # noqa: E501
        )
    elif spec.kind == "bf16":
        unpack = (
            f"inline float {name}_half_lo(uint r) {{ return as_float(r << 16); }}\n"
            f"inline float {name}_half_hi(uint r) {{ return as_float(r & 0xffff0000u); }}\n"
        )
    else:
        unpack = (
            f"inline uint {name}_tf32(const float x) {{\n"
            "    /* cvt.rna: to nearest, ties away from zero, 10 mantissa bits */\n"
            "    return (as_uint(x) + 0x1000u) & 0xffffe000u;\n"
            "}\n"
        )
    size = 16 * kk + kk * 8
    outputs = []
    for i, (r, c) in enumerate([("g", "2 * t"), ("g", "2 * t + 1"), ("g + 8", "2 * t"),
                                ("g + 8", "2 * t + 1")]):
        outputs.append(
            f"    {{ float sum = *c{i};\n"
            f"      for (int q = 0; q < {kk}; ++q) sum += s[({r}) * {kk} + q] * "
            f"s[{16 * kk} + q * 8 + {c}];\n"
            f"      *c{i} = sum; }}\n")
    return (
        unpack
        # not inlined: 32 inlined copies per step made the CPU compiler take 20 s, not 3
        + f"__attribute__((noinline)) void {name}_mma(__local float *s, const int lane,\n"
        "                         const uint a0,\n"
        "                         const uint a1, const uint a2, const uint a3, const uint b0,\n"
        "                         const uint b1, float *c0, float *c1, float *c2, float *c3) {\n"
        f"    /* the warp's fragments, {size} floats: A[16][{kk}] then B[{kk}][8] */\n"
        "    const int g = lane >> 2, t = lane & 3;\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        + "".join(writes)
        + "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        + "".join(outputs)
        + "}\n"
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
    mma: str
    out_dtype: str
    """C's element type."""

    def source(self) -> str:
        spec, m, n, k = self.spec, self.m, self.n, self.k
        t = half.STORAGE[self.dtype]
        rhs_offset = f"batch * {k * n}" if self.rhs_batched else "0"
        lines = [
            "    const int batch = get_global_id(2);\n",
            f"    __global const {t} *a = lhs + batch * {m * k};\n",
            f"    __global const {t} *b = rhs + {rhs_offset};\n",
            f"    __global {half.STORAGE[self.out_dtype]} *c = out + batch * {m * n};\n",
            "    const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;\n",
            "    const int g = lane >> 2, t = lane & 3;\n",
            f"    const int warp_row = (warp / {WARPS_N}) * {WARP_M};\n",
            f"    const int warp_col = (warp % {WARPS_N}) * {WARP_N};\n",
            f"    const int row_base = get_group_id(1) * {BLOCK_M};\n",
            f"    const int col_base = get_group_id(0) * {BLOCK_N};\n",
            f"    __local {spec.local_type} a_tile[{BLOCK_M * spec.a_stride}] "
            "__attribute__((aligned(16)));\n",
            f"    __local {spec.local_type} b_tile[{BLOCK_K * B_STRIDE}] "
            "__attribute__((aligned(16)));\n",
        ]
        if self.mma == "emulated":
            scratch = 16 * spec.k + spec.k * 8
            lines.append(f"    __local float mma_scratch[{scratch * WARPS_M * WARPS_N}];\n")
        for i in range(TILES_M):
            for j in range(TILES_N):
                lines.append(f"    float c{i}_{j}_0 = 0.0f, c{i}_{j}_1 = 0.0f, "
                             f"c{i}_{j}_2 = 0.0f, c{i}_{j}_3 = 0.0f;\n")
        tf32 = f"{self.name}_tf32"
        a_loads = _TileLoads("a", BLOCK_M, BLOCK_K, spec.a_stride, k, m, "row_base", spec,
                             rows_are_k=False, tf32=tf32)
        b_loads = _TileLoads("b", BLOCK_K, BLOCK_N, B_STRIDE, n, k, "col_base", spec,
                             rows_are_k=True, tf32=tf32)
        lines += a_loads.declare() + b_loads.declare()
        lines += a_loads.fetch("0") + b_loads.fetch("0")
        lines.append(f"    for (int k0 = 0; k0 < {k}; k0 += {BLOCK_K}) {{\n")
        lines.append("        barrier(CLK_LOCAL_MEM_FENCE);\n")
        lines += a_loads.stash() + b_loads.stash()
        lines.append("        barrier(CLK_LOCAL_MEM_FENCE);\n")
        lines.append(f"        if (k0 + {BLOCK_K} < {k}) {{\n")
        lines += [f"    {line}" for line in a_loads.fetch(f"k0 + {BLOCK_K}")]
        lines += [f"    {line}" for line in b_loads.fetch(f"k0 + {BLOCK_K}")]
        lines.append("        }\n")
        for ks in range(0, BLOCK_K, spec.k):
            lines += self.step(ks)
        lines.append("    }\n")
        lines += self.stores()
        return "".join(lines)

    def step(self, ks: int) -> list[str]:
        """One mma depth (16 or 8) of the warp's 4x4 tiles, from local memory."""
        spec, sa = self.spec, self.spec.a_stride
        ind = "        "
        lines = [f"{ind}{{ /* k {ks} */\n"]
        for i in range(TILES_M):
            r = f"warp_row + {i * 16} + g"
            if spec.kind == "tf32":
                spots = [(r, f"{ks} + t"), (f"{r} + 8", f"{ks} + t"), (r, f"{ks} + t + 4"),
                         (f"{r} + 8", f"{ks} + t + 4")]
                reads = [f"a_tile[({row}) * {sa} + {col}]" for row, col in spots]
            else:
                spots = [(r, f"{ks} + 2 * t"), (f"{r} + 8", f"{ks} + 2 * t"),
                         (r, f"{ks} + 2 * t + 8"), (f"{r} + 8", f"{ks} + 2 * t + 8")]
                reads = [f"*(__local const uint *)&a_tile[({row}) * {sa} + {col}]"
                         for row, col in spots]
            for q, read in enumerate(reads):
                lines.append(f"{ind}const uint a{i}_{q} = {read};\n")
        for j in range(TILES_N):
            col = f"warp_col + {j * 8} + g"
            if spec.kind == "tf32":
                reads = [f"b_tile[({ks} + t) * {B_STRIDE} + {col}]",
                         f"b_tile[({ks} + t + 4) * {B_STRIDE} + {col}]"]
            else:
                reads = [
                    f"(uint)b_tile[({ks} + 2 * t + {o}) * {B_STRIDE} + {col}] | "
                    f"((uint)b_tile[({ks} + 2 * t + {o + 1}) * {B_STRIDE} + {col}] << 16)"
                    for o in (0, 8)
                ]
            for q, read in enumerate(reads):
                lines.append(f"{ind}const uint b{j}_{q} = {read};\n")
        scratch = 16 * spec.k + spec.k * 8
        lead = f"mma_scratch + warp * {scratch}, lane, " if self.mma == "emulated" else ""
        for i in range(TILES_M):
            for j in range(TILES_N):
                acc = ", ".join(f"&c{i}_{j}_{q}" for q in range(4))
                lines.append(f"{ind}{self.name}_mma({lead}a{i}_0, a{i}_1, a{i}_2, a{i}_3, "
                             f"b{j}_0, b{j}_1, {acc});\n")
        lines.append(f"{ind}}}\n")
        return lines

    def stores(self) -> list[str]:
        m, n = self.m, self.n
        lines: list[str] = []
        for i in range(TILES_M):
            for half_row in (0, 8):
                row = f"row_base + warp_row + {i * 16 + half_row} + g"
                lines.append(f"    if ({row} < {m}) {{\n        const int row = {row};\n")
                for j in range(TILES_N):
                    for lane_col in (0, 1):
                        q = lane_col + (2 if half_row else 0)
                        col = f"col_base + warp_col + {j * 8 + lane_col} + 2 * t"
                        value = self.epilogue.call(f"c{i}_{j}_{q}", f"batch * {m} + row", col)
                        store = half.store(self.out_dtype, "c", f"row * {n} + {col}", value)
                        lines.append(f"        if ({col} < {n}) {store};\n")
                lines.append("    }\n")
        return lines


@dataclass
class _TileLoads:
    """Global -> registers (`fetch`) -> local memory (`stash`) of one tile of A or B.

    The tile is ``rows x cols`` elements of an operand of ``height`` rows of ``ld`` elements,
    stored in local memory with row stride ``stride``; `fetch` takes the tile's position along
    K, the other coordinate is ``origin`` (``row_base`` for A, ``col_base`` for B). Reads go 16
    bytes at a time when ``ld`` is a multiple of that many elements (so that a read never
    straddles the edge or a row), else one element at a time; elements past the operand's
    edge read as zero. TF32 tiles are converted by ``tf32`` as they are stashed."""

    prefix: str
    rows: int
    cols: int
    stride: int
    ld: int
    height: int
    origin: str
    spec: _Mma
    rows_are_k: bool
    tf32: str = ""

    def __post_init__(self) -> None:
        self.vector = self.spec.vector if self.ld % self.spec.vector == 0 else 1
        self.count = self.rows * self.cols // self.vector // THREADS

    @property
    def base(self) -> str:
        return "ushort" if self.spec.elem_bytes == 2 else "float"

    @property
    def vtype(self) -> str:
        return self.base if self.vector == 1 else f"{self.base}{self.vector}"

    def declare(self) -> list[str]:
        regs = ", ".join(f"{self.prefix}_r{i}" for i in range(self.count))
        return [f"    {self.vtype} {regs};\n"]

    def where(self, i: int) -> tuple[str, str]:
        """C expressions of the tile row and column of register ``i`` of this work-item."""
        per_row = self.cols // self.vector
        element = f"tid + {i * THREADS}"
        return f"({element}) / {per_row}", f"(({element}) % {per_row}) * {self.vector}"

    def fetch(self, step: str) -> list[str]:
        lines: list[str] = []
        zero = f"({self.vtype})(0)" if self.vector > 1 else "0"
        pointer = f"((__global const {self.base} *){self.prefix})"
        for i in range(self.count):
            r, c = self.where(i)
            if self.rows_are_k:
                grow, gcol = f"{step} + tr", f"{self.origin} + tc"
            else:
                grow, gcol = f"{self.origin} + tr", f"{step} + tc"
            at = f"({grow}) * {self.ld} + {gcol}"
            read = (f"vload{self.vector}(0, {pointer} + {at})" if self.vector > 1
                    else f"{pointer}[{at}]")
            lines.append(f"    {{ const int tr = {r}, tc = {c};\n"
                         f"      {self.prefix}_r{i} = ({grow} < {self.height} && "
                         f"{gcol} < {self.ld}) ? {read} : {zero}; }}\n")
        return lines

    def stash(self) -> list[str]:
        lines: list[str] = []
        tile = f"{self.prefix}_tile"
        for i in range(self.count):
            r, c = self.where(i)
            at = f"({r}) * {self.stride} + {c}"
            value = f"{self.prefix}_r{i}"
            if self.spec.kind == "tf32":
                parts = [value] if self.vector == 1 else [
                    f"{value}.s{lane}" for lane in range(self.vector)]
                converted = [f"{self.tf32}({p})" for p in parts]
                if self.vector == 1:
                    lines.append(f"        {tile}[{at}] = {converted[0]};\n")
                else:
                    lines.append(f"        vstore{self.vector}((uint{self.vector})("
                                 f"{', '.join(converted)}), 0, {tile} + {at});\n")
            elif self.vector == 1:
                lines.append(f"        {tile}[{at}] = {value};\n")
            else:
                lines.append(f"        vstore{self.vector}({value}, 0, {tile} + {at});\n")
        return lines


_PROBED: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {}


def probe_tensor_cores(device: Any) -> tuple[tuple[str, ...], str]:
    """The `MMA_KINDS` whose ``mma.sync`` builds on ``device`` (a ``pyopencl.Device``), and a
    note saying which did not and why; each device is probed once per process. Only NVIDIA's
    OpenCL takes inline PTX; elsewhere the answer is none, without a build."""
    import pyopencl as cl

    if "NVIDIA" not in device.vendor.upper() or device.type & cl.device_type.CPU:
        return (), ""
    key = (device.name, device.driver_version)
    if key not in _PROBED:
        context = cl.Context([device])
        kinds: list[str] = []
        failed: list[str] = []
        for kind in MMA_KINDS:
            name = f"fusec_probe_{kind}"
            source = (_ptx_helpers(name, MMAS[kind])
                      + f"__kernel void {name}(__global float *out) {{\n"
                      "    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;\n"
                      f"    {name}_mma(1u, 2u, 3u, 4u, 5u, 6u, &c0, &c1, &c2, &c3);\n"
                      "    out[get_global_id(0)] = c0 + c1 + c2 + c3;\n}\n")
            try:
                cl.Program(context, source).build()
                kinds.append(kind)
            except cl.Error as e:
                first = error_line(e)
                failed.append(f"{kind} ({first})")
        note = (f"tensor cores: {', '.join(kinds) or 'none'} on {device.name.strip()}"
                + (f"; the driver rejected {', '.join(failed)}: the portable GEMM runs those"
                   if failed else ""))
        _PROBED[key] = (tuple(kinds), note)
    return _PROBED[key]
