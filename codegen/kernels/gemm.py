"""Batched SGEMM with an epilogue applied in registers: ``C[b] = epilogue(A[b] @ B[b or 0])``.

``A: [batch, M, K]``, ``B: [batch, K, N]`` (or ``[K, N]`` shared by every batch when
``rhs_batched`` is false), ``C: [batch, M, N]``, all row-major float32. The kernel parameters are
``lhs, rhs, out`` followed by the epilogue's params. The epilogue sees the flattened output row
``b * M + m`` and the column ``n``.

Two code shapes, chosen by `GemmTiles.staging`:

- register tiling (``"none"`` or ``"rhs"``, the CPU default): each work-item keeps a
  ``thread_m x thread_n`` tile of C in ``floatW`` registers and streams over K, broadcasting one
  element of A against a ``W``-wide slice of B per step. A tile at the right or bottom edge is
  shifted back inside the matrix (so every load is in bounds and the inner loop has no guards)
  and stores only the elements no other work-item owns. With ``"rhs"`` the work-group (a column
  of tiles) first copies a ``[block_k, thread_n]`` slice of B contiguously into local memory:
  streaming B straight from global memory walks it with a stride of N floats, which on a CPU
  misses cache and TLB at every step (measured 2x slower at 1024^3).
- local-memory tiling (``"both"``, the GPU default): a work-group stages a
  ``block_m x block_k`` tile of A and a ``block_k x block_n`` tile of B in local memory (zero
  filled past the edges), and each work-item accumulates ``thread_m x thread_n`` outputs spread
  ``group_m`` rows and ``group_n`` columns apart (``vector_width`` 1), or in runs of four read
  as one float4 from local memory (``vector_width`` 4), so that local reads and global stores
  stay unit-stride across neighbouring work-items.

Split along K (``split_k`` parts, for products with too few output tiles to fill a GPU): the
third launch dimension numbers ``(part, batch)``; part ``p`` multiplies the columns
``[p * chunk, (p + 1) * chunk)`` of A with the same rows of B and stores its partial product,
without an epilogue, at ``out[p]`` of an ``[split_k, batch, M, N]`` buffer. `gemm_split_sum`
then adds the parts and applies the epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fusec import knobs
from fusec.codegen.kernels import gemm_ffma_pipelined as ffma
from fusec.codegen.kernels import gemm_mma_pipelined as pipelined
from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
    BOUND_B_PANELS,
    IDENTITY_EPILOGUE,
    DeviceInfo,
    Epilogue,
    KernelArg,
    KernelSource,
    ceil_div,
    check_epilogue_names,
    check_positive,
    kernel_signature,
    round_up,
)
from fusec.codegen.kernels.gemm_mma import gemm_mma, mma_kind

VECTOR_WIDTHS = (1, 2, 4, 8, 16)
STAGINGS = ("none", "rhs", "both")

RESERVED_NAMES = frozenset({
    "batch", "a", "b", "c", "bp", "row_own", "col_own", "row0", "col0", "kk", "k0", "e", "v",
    "depth", "b_panel", "tx", "ty", "tid", "row_base", "col_base", "a_tile", "b_tile", "row",
    "col", "grow", "gcol", "gk",
})
"""Identifiers the kernel body declares, besides the generated ``a<i>``, ``b<j>``, ``c<i>_<j>``
and ``a<i>k`` registers; epilogue parameters must not use them."""
LANES = "0123456789abcdef"


@dataclass(frozen=True)
class GemmTiles:
    """How the output is split among work-items and work-groups."""

    thread_m: int = 4
    """Output rows per work-item."""
    thread_n: int = 4
    """Output columns per work-item (a multiple of `vector_width`)."""
    group_m: int = 1
    """Work-items per work-group along the rows."""
    group_n: int = 1
    """Work-items per work-group along the columns."""
    block_k: int = 0
    """Depth of the tiles staged in local memory per step (0 when nothing is staged)."""
    vector_width: int = 1
    """Register tiling: columns are loaded and accumulated as ``float<vector_width>``."""
    staging: str = "none"
    """What goes through local memory: "none" (register tiling, all loads from global),
    "rhs" (register tiling; each work-group, one column of tiles, stages a [block_k,
    thread_n] slice of B contiguously: packing for CPUs) or "both" (A and B tiles, GPUs)."""

    def __post_init__(self) -> None:
        for label in ("thread_m", "thread_n", "group_m", "group_n", "vector_width"):
            if getattr(self, label) <= 0:
                raise ValueError(f"GemmTiles.{label} must be positive: {self}")
        if self.staging not in STAGINGS:
            raise ValueError(f"GemmTiles.staging must be one of {STAGINGS}: {self}")
        if (self.block_k > 0) != (self.staging != "none"):
            raise ValueError(f"GemmTiles.block_k must be positive exactly when something is "
                             f"staged: {self}")
        if self.vector_width not in VECTOR_WIDTHS:
            raise ValueError(f"GemmTiles.vector_width must be one of {VECTOR_WIDTHS}: {self}")
        if self.thread_n % self.vector_width:
            raise ValueError(f"GemmTiles.thread_n must be a multiple of vector_width: {self}")
        if self.staging == "both" and self.vector_width not in (1, 4):
            raise ValueError(f"GemmTiles: staging 'both' reads local memory as float or "
                             f"float4 (vector_width 1 or 4): {self}")
        if self.staging == "both" and self.thread_m % self.vector_width:
            raise ValueError(f"GemmTiles: staging 'both' needs thread_m a multiple of "
                             f"vector_width: {self}")
        if self.staging == "rhs" and self.group_n != 1:
            raise ValueError(f"GemmTiles: staging 'rhs' needs group_n 1: {self}")

    @property
    def block_m(self) -> int:
        return self.thread_m * self.group_m

    @property
    def block_n(self) -> int:
        return self.thread_n * self.group_n

    def local_memory_bytes(self) -> int:
        """Bytes of ``__local`` memory a work-group uses."""
        if self.staging == "rhs":
            return 4 * self.block_k * self.thread_n
        if self.staging == "both":
            return 4 * self.block_k * (self.block_m + self.vector_width + self.block_n)
        return 0

    def key(self) -> str:
        """A compact name, e.g. ``6x16v8_g16x1_rhs256`` or ``4x4_g16x16_both16``."""
        text = f"{self.thread_m}x{self.thread_n}"
        if self.vector_width > 1:
            text += f"v{self.vector_width}"
        text += f"_g{self.group_m}x{self.group_n}"
        return text + (f"_{self.staging}{self.block_k}" if self.block_k else "")


CPU_TILES = GemmTiles(thread_m=6, thread_n=16, vector_width=8, group_m=16, staging="rhs",
                      block_k=256)
"""Register tiling for AVX2-class CPUs: a 6x16 tile is 12 ``float8`` accumulators; a work-group
of 16 such tiles (96 rows) shares a 16 KiB slice of B copied contiguously into local memory,
which on a CPU is ordinary cache-resident memory: the copy is the packing step of a BLAS."""

CPU_WIDE_TILES = GemmTiles(thread_m=8, thread_n=32, vector_width=16, group_m=16, staging="rhs",
                           block_k=256)
"""`CPU_TILES` for CPUs whose native vector holds 16 floats (AVX-512): an 8x32 tile is 16
``float16`` accumulators of the 32 registers, and a work-group of 16 tiles covers 128 rows (a
BERT-base layer's S=128 in one group, no ragged tile). On Intel's CPU runtime, 2 cores of an
AMD EPYC (Zen 4), fastest launch of 16 interleaved in one process, against 6x32 tiles (12
accumulators, the previous default): 128x768x3072 0.91x, 128x3072x768 0.86x, 128x768x768
0.90x, 512x768x3072 0.96x, 1024^3 0.97x, 512x768x768 0.96x; 6x32 had been 0.76-0.93x of
`CPU_TILES`."""

GPU_TILES = GemmTiles(thread_m=4, thread_n=4, group_m=16, group_n=16, block_k=16,
                      staging="both", vector_width=4)
"""A 64x64 block per work-group of 256, 4x4 outputs per work-item read as float4."""

GPU_LARGE_TILES = GemmTiles(thread_m=8, thread_n=8, group_m=16, group_n=16, block_k=16,
                            staging="both", vector_width=4)
"""A 128x128 block per work-group of 256 for large products, 8x8 outputs per work-item read as
two float4 of A and two of B per step: 31 TFLOP/s at 4096^3 on an H200 (NVIDIA OpenCL), 61% of
PyTorch's float32 matmul with TF32 off; the same tiles read as scalars gave 26."""


def default_gemm_tiles(device_info: DeviceInfo | None, m: int, n: int) -> GemmTiles:
    """The tiles used when none are given: the device's autotuned tiles when it has them
    (`DeviceInfo.gemm_tiles`), else register tiles on a CPU (or an unknown device; wider ones
    where the native vector holds 16 floats), local-memory tiles on a GPU, larger ones when the
    output has room for many blocks."""
    if device_info is not None and device_info.gemm_tiles is not None:
        return device_info.gemm_tiles
    if device_info is None or device_info.is_cpu:
        wide = device_info is not None and device_info.float_vector_width >= 16
        return taller_cpu_groups(CPU_WIDE_TILES, m, n) if wide else CPU_TILES
    if m * n >= 2048 * 2048:
        return GPU_LARGE_TILES
    return GPU_TILES


CPU_TALLER_GROUPS = (64, 32)
"""Rows of register tiles per work-group that `taller_cpu_groups` tries before `CPU_WIDE_TILES`'s
16: one copy of a slice of B into local memory then serves 512 or 256 rows instead of 128. On
Intel's CPU runtime, 2 Zen 4 cores, fastest of 16 launches against 16: 512x768x768 0.95x,
512x768x3072 0.96x, 1024^3 0.96x, 4096x256x256 0.95x; 128 groups were slower again."""

MIN_CPU_GROUPS = 24
"""Work-groups a taller group must still leave, so that every core of a larger CPU (16 on the
GPU machine's host) gets more than one."""


def taller_cpu_groups(tiles: GemmTiles, m: int, n: int) -> GemmTiles:
    """`tiles` with the most rows per work-group from `CPU_TALLER_GROUPS` that leaves at least
    `MIN_CPU_GROUPS` work-groups and no more than an eighth of the rows past the edge (a tile
    there is shifted back inside and computes rows again); else `tiles` as they are."""
    for group_m in CPU_TALLER_GROUPS:
        rows = tiles.thread_m * group_m
        blocks = -(-m // rows)
        groups = blocks * -(-n // tiles.thread_n)
        if rows <= m and blocks * rows - m <= m // 8 and groups >= MIN_CPU_GROUPS:
            return replace(tiles, group_m=group_m)
    return tiles


def fit_register_tiles(tiles: GemmTiles, m: int, n: int, k: int) -> GemmTiles:
    """Shrink a register tile that is larger than the matrix, so that edge tiles can be shifted
    back inside it (``thread_m <= m``, ``thread_n <= n``), and a staged slice deeper than K."""
    width = tiles.vector_width
    while width > n:
        width //= 2
    thread_n = min(tiles.thread_n, n // width * width)
    thread_n -= thread_n % width
    block_k = min(tiles.block_k, k)
    return replace(tiles, thread_m=min(tiles.thread_m, m), thread_n=thread_n,
                   vector_width=width, block_k=block_k)


def gemm(
    name: str,
    batch: int,
    m: int,
    n: int,
    k: int,
    rhs_batched: bool,
    epilogue: Epilogue = IDENTITY_EPILOGUE,
    tiles: GemmTiles | None = None,
    device_info: DeviceInfo | None = None,
    split_k: int = 1,
    dtype: str = "f32",
    allow_tf32: bool = False,
    out_dtype: str | None = None,
    rhs_panels: int | None = None,
) -> KernelSource:
    """``out[b] = epilogue(lhs[b] @ rhs[b if rhs_batched else 0])`` for matrices of element
    type `dtype` (``f32``, ``f16`` or ``bf16``: converted to float as they are loaded, the
    products accumulated in float32, the result rounded once when stored); with `split_k` > 1,
    ``out[p, b]`` = the float32 product over the `p`-th of `split_k` chunks of K (no
    epilogue: `gemm_split_sum` applies it). `out_dtype` (default `dtype`) is C's element type
    when the epilogue ends in a cast (any of `half.BUFFER_TYPES`); such a product takes the
    portable kernel, not the tensor-core ones, except an f32 C of 16-bit operands.

    On a device with tensor cores for `dtype` (`DeviceInfo.tensor_cores`; f32 only with
    `allow_tf32`) and no explicit `tiles`, the product is a tensor-core kernel instead (not
    split along K): `gemm_mma_pipelined` where its rows are whole 16-byte chunks
    (`gemm_mma_pipelined.fits`), else `gemm_mma.gemm_mma`. A float32 product without TF32 on
    such a device (`ffma_fits`; not split, no explicit `tiles`, float32 result) takes
    `gemm_ffma_pipelined` instead of the portable kernel, also where autotuned tiles exist
    (`DeviceInfo.gemm_tiles`: they tune the portable kernel).

    With `rhs_panels` `BOUND_B_PANELS` on the FFMA kernel, B is ``[N, K]`` (read K-major:
    `rhs_panel_width`). With other `rhs_panels` (which must be `rhs_panel_width` of the same
    product), B is stored as panels of that many columns, ``[N / rhs_panels, K, rhs_panels]``
    (`plan.pack_panels`, done once when a weight is bound): each work-item reads its columns
    of B as one contiguous stream instead of the work-group copying B into local memory on
    every call, the packing step a BLAS does for each product done once for the weight."""
    check_positive(name, batch=batch, m=m, n=n, k=k, split_k=split_k)
    if dtype not in half.STORAGE:
        raise ValueError(f"kernel '{name}': unknown element type '{dtype}'")
    result = out_dtype or dtype
    if result not in half.BUFFER_TYPES:
        raise ValueError(f"kernel '{name}': unknown result element type '{result}'")
    widened = half.is_half(dtype) and result == "f32"  # an epilogue ending in a cast to f32
    if (device_info is not None and tiles is None and split_k == 1
            and (result == dtype or widened)
            and mma_kind(dtype) in device_info.tensor_cores and (dtype != "f32" or allow_tf32)):
        if pipelined.fits(dtype, n, k):
            return pipelined.gemm_mma_pipelined(name, batch, m, n, k, rhs_batched, epilogue, dtype,
                                                out_dtype=result)
        return gemm_mma(name, batch, m, n, k, rhs_batched, epilogue, dtype, out_dtype=result)
    if takes_ffma(device_info, tiles, split_k, dtype, result, allow_tf32, n, k):
        return ffma.gemm_ffma_pipelined(name, batch, m, n, k, rhs_batched, epilogue,
                                        tiles=ffma.default_tiles(
                                            m, n, batch, (device_info.compute_units or 0)
                                            if device_info is not None else 0),
                                        b_k_major=rhs_panels == BOUND_B_PANELS)
    if split_k > 1 and epilogue is not IDENTITY_EPILOGUE:
        raise ValueError(f"kernel '{name}': a GEMM split along K stores partial products; "
                         "its epilogue belongs to gemm_split_sum")
    check_epilogue_names(name, epilogue, RESERVED_NAMES, r"[abc]\d+(_\d+|k)?",
                         "the registers a<i>, b<j>, c<i>_<j>, a<i>k")
    if tiles is None:
        tiles = default_gemm_tiles(device_info, m, n)
    if tiles.staging != "both":
        tiles = fit_register_tiles(tiles, m, n, k)
    if device_info is not None:
        _check_fits(name, tiles, device_info)
    if rhs_panels is not None and rhs_panels != _panel_width(tiles, n, rhs_batched, split_k):
        raise ValueError(f"kernel '{name}': tiles {tiles.key()} cannot read B in panels of "
                         f"{rhs_panels} columns (rhs_panel_width gives the width, or None)")
    storage = half.STORAGE[dtype]
    shape = _Shape(batch, m, n, k, rhs_batched, split_k, dtype, result)
    args = (
        KernelArg("lhs", "in", storage),
        KernelArg("rhs", "in", storage),
        KernelArg("out", "out", half.BUFFER_TYPES[shape.out_dtype]),
        *epilogue.params,
    )
    if tiles.staging == "both":
        body, global_size, local_size = _local_tiled(shape, tiles, epilogue)
    else:
        body, global_size, local_size = _register_tiled(shape, tiles, epilogue,
                                                        rhs_panels is not None)
    attribute = f"__attribute__((reqd_work_group_size({local_size[0]}, {local_size[1]}, 1)))"
    split = f", split along K in {split_k} parts of {shape.chunk}" if split_k > 1 else ""
    split += f", B in panels of {rhs_panels} columns" if rhs_panels else ""
    source = (
        f"// {name}: [{batch}x{m}x{k}] @ [{batch if rhs_batched else 1}x{k}x{n}], "
        f"tiles {tiles.key()}{split}, {dtype}\n"
        f"{half.HELPERS if half.is_half(dtype) or half.is_half(shape.out_dtype) else ''}"
        f"{_vector_helpers(shape, tiles)}"
        f"{epilogue.guarded_function(_stored_width(tiles))}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, global_size, local_size)


def takes_ffma(device_info: DeviceInfo | None, tiles: GemmTiles | None, split_k: int,
               dtype: str, out_dtype: str, allow_tf32: bool, n: int, k: int) -> bool:
    """Whether `gemm` takes `gemm_ffma_pipelined`: a float32 product without TF32 (else the
    tensor cores take it), not split, on a device where `ffma_fits`."""
    return (device_info is not None and tiles is None and split_k == 1 and dtype == "f32"
            and out_dtype == "f32" and not allow_tf32 and ffma_fits(device_info, n, k))


def ffma_fits(device_info: DeviceInfo, n: int, k: int) -> bool:
    """Whether a float32 product (no TF32) takes `gemm_ffma_pipelined` on this device: rows of
    whole float4 (`gemm_ffma_pipelined.fits`) on a device whose inline PTX ``mma.sync`` for
    TF32 built (`DeviceInfo.tensor_cores`): that is NVIDIA's OpenCL on sm_80 or newer, where
    ``cp.async`` exists too."""
    return "tf32" in device_info.tensor_cores and ffma.fits(n, k)


def rhs_panel_width(m: int, n: int, k: int, rhs_batched: bool,
                    device_info: DeviceInfo | None, split_k: int = 1, dtype: str = "f32",
                    out_dtype: str | None = None, allow_tf32: bool = False) -> int | None:
    """The width of the panels `gemm` can read a bound B in, or None where it reads B as it
    is. On a CPU, its register tiles' columns (its register-tiled kernel stages B in local
    memory otherwise), for one B shared by the batch, not split along K, with N a multiple of
    the tile's columns. On a GPU, `BOUND_B_PANELS` where the product takes the FFMA kernel
    (`takes_ffma`) for one B shared by the batch, with the knob `ffma_b_k_major` on: B
    ``[N, K]``, as PyTorch's ``nn.Linear`` holds its weight. The arguments are `gemm`'s."""
    if device_info is None:
        return None
    if not device_info.is_cpu:
        k_major = (knobs.value("ffma_b_k_major") and not rhs_batched
                   and takes_ffma(device_info, None, split_k, dtype, out_dtype or dtype,
                                  allow_tf32, n, k))
        return BOUND_B_PANELS if k_major else None
    tiles = default_gemm_tiles(device_info, m, n)
    if tiles.staging != "both":
        tiles = fit_register_tiles(tiles, m, n, k)
    return _panel_width(tiles, n, rhs_batched, split_k)


def _panel_width(tiles: GemmTiles, n: int, rhs_batched: bool, split_k: int) -> int | None:
    if (tiles.staging == "both" or tiles.vector_width == 1 or n % tiles.thread_n
            or rhs_batched or split_k != 1):
        return None
    return tiles.thread_n


def _check_fits(name: str, tiles: GemmTiles, device: DeviceInfo) -> None:
    if tiles.local_memory_bytes() > device.local_mem_size:
        raise ValueError(f"kernel '{name}': tiles {tiles.key()} need "
                         f"{tiles.local_memory_bytes()} bytes of local memory, {device.name} has "
                         f"{device.local_mem_size}")
    if tiles.group_m * tiles.group_n > device.max_work_group_size:
        raise ValueError(f"kernel '{name}': tiles {tiles.key()} need work-groups of "
                         f"{tiles.group_m * tiles.group_n}, {device.name} allows "
                         f"{device.max_work_group_size}")


@dataclass(frozen=True)
class _Shape:
    batch: int
    m: int
    n: int
    k: int
    """The depth of the product, and the row stride of A."""
    rhs_batched: bool
    split_k: int = 1
    dtype: str = "f32"
    """The element type of A and B, and of C unless split (partial products are float32)."""
    result: str | None = None
    """The element type of C when it is not `dtype` (an epilogue ending in a cast)."""

    @property
    def out_dtype(self) -> str:
        return "f32" if self.split_k > 1 else (self.result or self.dtype)

    def load(self, pointer: str, index: str) -> str:
        """C expression: element ``index`` of operand ``pointer`` (A or B) as a float."""
        return half.load(self.dtype, pointer, index)

    @property
    def chunk(self) -> int:
        """Columns of A (rows of B) one part of a split product folds."""
        return ceil_div(self.k, self.split_k)

    @property
    def depth(self) -> str:
        """C expression of this work-group's depth: K, or the length of its part of K."""
        if self.split_k == 1:
            return str(self.k)
        return str(self.chunk) if self.chunk * self.split_k == self.k else "k_len"

    def operand_pointers(self) -> str:
        """C declarations of ``a``, ``b``, ``c``: this batch's matrices (this part's columns of
        A, rows of B and partial product when split)."""
        m, n, k = self.m, self.n, self.k
        rhs_offset = f"batch * {k * n}" if self.rhs_batched else "0"
        t, out_t = half.STORAGE[self.dtype], half.BUFFER_TYPES[self.out_dtype]
        if self.split_k == 1:
            return (
                "    const int batch = get_global_id(2);\n"
                f"    __global const {t} *a = lhs + batch * {m * k};\n"
                f"    __global const {t} *b = rhs + {rhs_offset};\n"
                f"    __global {out_t} *c = out + batch * {m * n};\n"
            )
        chunk = self.chunk
        length = (f"    const int k_len = min({chunk}, {k} - part * {chunk});\n"
                  if self.depth == "k_len" else "")
        return (
            f"    const int batch = get_global_id(2) % {self.batch};\n"
            f"    const int part = get_global_id(2) / {self.batch};\n"
            f"{length}"
            f"    __global const {t} *a = lhs + batch * {m * k} + part * {chunk};\n"
            f"    __global const {t} *b = rhs + {rhs_offset} + part * {chunk * n};\n"
            f"    __global {out_t} *c = out + (part * {self.batch} + batch) * {m * n};\n"
        )


def _store(shape: _Shape, epilogue: Epilogue, row: str, col: str, value: str) -> str:
    """C statement storing `value` (the accumulator) at C[row, col] through the epilogue."""
    flat_row = f"batch * {shape.m} + {row}"
    value = epilogue.call(value, flat_row, col)
    return f"{half.store(shape.out_dtype, 'c', f'({row}) * {shape.n} + {col}', value)};"


def _register_tiled(
    shape: _Shape, tiles: GemmTiles, epilogue: Epilogue, rhs_panels: bool = False
) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    tm, tn, width, bk = tiles.thread_m, tiles.thread_n, tiles.vector_width, tiles.block_k
    vectors = tn // width
    vtype = "float" if width == 1 else f"float{width}"
    m, n, k, depth = shape.m, shape.n, shape.k, shape.depth
    staged = tiles.staging == "rhs" and not rhs_panels

    lines = [
        shape.operand_pointers(),
        "    // This work-item owns rows [row_own, row_own + tm) and columns [col_own, ...);\n"
        "    // a tile past the edge is shifted back inside and stores only what it owns.\n",
        f"    const int row_own = get_global_id(1) * {tm};\n",
        f"    const int col_own = get_global_id(0) * {tn};\n",
        f"    const int row0 = min(row_own, {m - tm});\n",
        f"    const int col0 = min(col_own, {n - tn});\n",
    ]
    if not staged:
        lines.append(f"    if (row_own >= {m} || col_own >= {n}) return;\n")
    for r in range(tm):
        lines.append(f"    __global const {half.STORAGE[shape.dtype]} *a{r} = "
                     f"a + (row0 + {r}) * {k};\n")
    for r in range(tm):
        accs = ", ".join(f"c{r}_{v} = 0.0f" for v in range(vectors))
        lines.append(f"    {vtype} {accs};\n")
    if staged:
        # The work-group (one column of tiles) copies a [bk, tn] slice of B into local memory,
        # contiguous, then every work-item multiplies its rows of A with it.
        lid, threads = "get_local_id(1)", tiles.group_m
        lines += [
            f"    __local float b_panel[{bk * tn}];\n",
            f"    for (int k0 = 0; k0 < {depth}; k0 += {bk}) {{\n",
            f"        const int depth = min({bk}, {depth} - k0);\n",
            "        barrier(CLK_LOCAL_MEM_FENCE);\n",
            f"        for (int e = {lid}; e < depth * {vectors}; e += {threads}) {{\n",
            f"            const int kk = e / {vectors}, v = e % {vectors};\n",
            _vector_copy(width, f"b + (k0 + kk) * {n} + col0 + v * {width}",
                         f"b_panel + kk * {tn} + v * {width}", shape.dtype),
            "        }\n",
            "        barrier(CLK_LOCAL_MEM_FENCE);\n",
        ]
        if round_up(ceil_div(m, tm), tiles.group_m) * tm > m:
            # Work-items past the last row (a ragged last work-group, e.g. the 128 rows of a
            # BERT layer in groups of 96) only help copy B; they would recompute a shifted tile.
            lines += [f"        const int steps = row_own < {m} ? depth : 0;\n",
                      "        for (int kk = 0; kk < steps; ++kk) {\n"]
        else:
            lines.append("        for (int kk = 0; kk < depth; ++kk) {\n")
        b_row, a_index, inner = f"b_panel + kk * {tn}", "k0 + kk", "            "
    elif rhs_panels:
        # B is [n / tn, k, tn]: this tile's columns are one contiguous panel (col0 == col_own).
        lines += [f"    __global const {half.STORAGE[shape.dtype]} *panel = "
                  f"b + (col0 / {tn}) * {k * tn};\n",
                  f"    for (int kk = 0; kk < {depth}; ++kk) {{\n"]
        b_row, a_index, inner = f"panel + kk * {tn}", "kk", "        "
    else:
        lines.append(f"    for (int kk = 0; kk < {depth}; ++kk) {{\n")
        b_row, a_index, inner = f"b + kk * {n} + col0", "kk", "        "
    b_dtype = "f32" if staged else shape.dtype  # the staged panel holds floats
    for v in range(vectors):
        load = half.vload(b_dtype, width, str(v), f"({b_row})")
        lines.append(f"{inner}const {vtype} b{v} = {load};\n")
    for r in range(tm):
        lines.append(f"{inner}const {vtype} a{r}k = ({vtype})({shape.load(f'a{r}', a_index)});\n")
        for v in range(vectors):
            lines.append(f"{inner}c{r}_{v} = mad(a{r}k, b{v}, c{r}_{v});\n")
    lines.append("        }\n    }\n" if staged else "    }\n")
    if staged:
        lines.append(f"    if (row_own >= {m} || col_own >= {n}) return;\n")
    lines += _vector_stores(shape, tiles, epilogue)
    for r in range(tm):
        lines.append(f"    if (row0 + {r} >= row_own) {{\n")
        for v in range(vectors):
            for lane in range(width):
                col = f"col0 + {v * width + lane}"
                value = f"c{r}_{v}" if width == 1 else f"c{r}_{v}.s{LANES[lane]}"
                lines.append(f"        if ({col} >= col_own) "
                             f"{_store(shape, epilogue, f'row0 + {r}', col, value)}\n")
        lines.append("    }\n")
    global_size = (
        round_up(ceil_div(n, tn), tiles.group_n),
        round_up(ceil_div(m, tm), tiles.group_m),
        shape.batch * shape.split_k,
    )
    return "".join(lines), global_size, (tiles.group_n, tiles.group_m, 1)


def _vector_stores(shape: _Shape, tiles: GemmTiles, epilogue: Epilogue) -> list[str]:
    """Where a work-item owns all the columns of its tile (every tile but a shifted last one),
    its rows are stored a vector at a time through the epilogue's vector function; the
    lane-by-lane stores after it handle the shifted tile. Nothing when the epilogue has no
    vector function of the tile's width (or the result is not a float type)."""
    width = tiles.vector_width
    if width == 1 or shape.out_dtype not in VECTOR_STORE_TYPES:
        return []
    lines = ["    if (col0 == col_own) {\n"]
    for r in range(tiles.thread_m):
        lines.append(f"        if (row0 + {r} >= row_own) {{\n")
        for v in range(tiles.thread_n // width):
            col = f"col0 + {v * width}"
            value = epilogue.vector_call(width, f"c{r}_{v}", f"batch * {shape.m} + row0 + {r}",
                                         col)
            if value is None:
                return []
            target = f"c + (row0 + {r}) * {shape.n} + {col}"
            store = half.vstore(shape.out_dtype, width, value, "0", target)
            lines.append(f"            {store};\n")
        lines.append("        }\n")
    lines.append("        return;\n    }\n")
    return lines


VECTOR_STORE_TYPES = ("f32", "f16", "bf16")
"""Result types `_vector_stores` writes (a vector epilogue yields floats)."""


def _stored_width(tiles: GemmTiles) -> int | None:
    """The vector width `_vector_stores` stores with: the register tiles', None for the
    local-tiled kernel (which stores lane by lane)."""
    return None if tiles.staging == "both" or tiles.vector_width == 1 else tiles.vector_width


def _vector_helpers(shape: _Shape, tiles: GemmTiles) -> str:
    width = _stored_width(tiles)
    return half.bf16_vector_helper(width) if width and shape.out_dtype == "bf16" else ""


def _vector_copy(width: int, source: str, target: str, dtype: str = "f32") -> str:
    """C statement copying `width` elements of `dtype` from `source` to the floats at `target`
    (pointers)."""
    indent = "            "
    value = half.vload(dtype, width, "0", f"({source})")
    if width == 1:
        return f"{indent}*({target}) = {value};\n"
    return f"{indent}vstore{width}({value}, 0, {target});\n"


def _local_tiled(
    shape: _Shape, tiles: GemmTiles, epilogue: Epilogue
) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    tm, tn, gm, gn, bk = (tiles.thread_m, tiles.thread_n, tiles.group_m, tiles.group_n,
                          tiles.block_k)
    bm, bn, width = tiles.block_m, tiles.block_n, tiles.vector_width
    threads = gm * gn
    m, n, k, depth = shape.m, shape.n, shape.k, shape.depth
    # a_tile is stored k-major, its rows padded against bank conflicts (by a whole vector
    # when it is read as float4, so that the reads stay aligned).
    lines = [
        shape.operand_pointers(),
        "    const int tx = get_local_id(0), ty = get_local_id(1);\n",
        f"    const int tid = ty * {gn} + tx;\n",
        f"    const int row_base = get_group_id(1) * {bm};\n",
        f"    const int col_base = get_group_id(0) * {bn};\n",
        f"    __local float a_tile[{bk}][{bm + width}] __attribute__((aligned(16)));\n",
        f"    __local float b_tile[{bk}][{bn}] __attribute__((aligned(16)));\n",
    ]
    for r in range(tm):
        accs = ", ".join(f"c{r}_{j} = 0.0f" for j in range(tn))
        lines.append(f"    float {accs};\n")
    lines.append(f"    for (int k0 = 0; k0 < {depth}; k0 += {bk}) {{\n")
    lines.append(f"        for (int e = tid; e < {bm * bk}; e += {threads}) {{\n"
                 f"            const int row = e / {bk}, kk = e % {bk};\n"
                 f"            const int grow = row_base + row, gk = k0 + kk;\n"
                 f"            a_tile[kk][row] = (grow < {m} && gk < {depth}) ? "
                 f"{shape.load('a', f'grow * {k} + gk')} : 0.0f;\n"
                 "        }\n")
    lines.append(f"        for (int e = tid; e < {bk * bn}; e += {threads}) {{\n"
                 f"            const int kk = e / {bn}, col = e % {bn};\n"
                 f"            const int gk = k0 + kk, gcol = col_base + col;\n"
                 f"            b_tile[kk][col] = (gk < {depth} && gcol < {n}) ? "
                 f"{shape.load('b', f'gk * {n} + gcol')} : 0.0f;\n"
                 "        }\n")
    lines.append("        barrier(CLK_LOCAL_MEM_FENCE);\n")
    lines.append("        #pragma unroll\n")
    lines.append(f"        for (int kk = 0; kk < {bk}; ++kk) {{\n")
    a_values = _tile_reads(lines, "a", "a_tile", "ty", tm, gm, width)
    b_values = _tile_reads(lines, "b", "b_tile", "tx", tn, gn, width)
    for r in range(tm):
        for j in range(tn):
            lines.append(f"            c{r}_{j} = mad({a_values[r]}, {b_values[j]}, c{r}_{j});\n")
    lines.append("        }\n")
    lines.append("        barrier(CLK_LOCAL_MEM_FENCE);\n")
    lines.append("    }\n")
    for r in range(tm):
        lines.append(f"    if (row_base + {_owned_offset('ty', r, gm, width)} < {m}) {{\n"
                     f"        const int row = row_base + {_owned_offset('ty', r, gm, width)};\n")
        for j in range(tn):
            col = f"col_base + {_owned_offset('tx', j, gn, width)}"
            lines.append(f"        if ({col} < {n}) "
                         f"{_store(shape, epilogue, 'row', col, f'c{r}_{j}')}\n")
        lines.append("    }\n")
    global_size = (ceil_div(n, bn) * gn, ceil_div(m, bm) * gm, shape.batch * shape.split_k)
    return "".join(lines), global_size, (gn, gm, 1)


def _owned_offset(thread: str, index: int, group: int, width: int) -> str:
    """Offset inside the block of a work-item's `index`-th row (or column).

    Width 1: rows ``thread + index * group`` (neighbouring work-items own neighbouring rows).
    Width 4: runs of four, ``chunk * 4 * group + thread * 4 + lane``, read as one float4.
    """
    if width == 1:
        return f"{thread} + {index * group}" if index else thread
    chunk, lane = divmod(index, width)
    offset = chunk * width * group + lane
    return f"{thread} * {width} + {offset}" if offset else f"{thread} * {width}"


def _tile_reads(lines: list[str], prefix: str, tile: str, thread: str, count: int, group: int,
                width: int) -> list[str]:
    """Append the reads of one k-slice of `tile` into registers; return the C expression of
    each of the `count` values."""
    indent = "            "
    if width == 1:
        for i in range(count):
            lines.append(f"{indent}const float {prefix}{i} = "
                         f"{tile}[kk][{_owned_offset(thread, i, group, 1)}];\n")
        return [f"{prefix}{i}" for i in range(count)]
    for chunk in range(count // width):
        offset = _owned_offset(thread, chunk * width, group, width)
        lines.append(f"{indent}const float{width} {prefix}{chunk} = "
                     f"*(__local const float{width} *)&{tile}[kk][{offset}];\n")
    return [f"{prefix}{i // width}.s{LANES[i % width]}" for i in range(count)]


SPLIT_SUM_GROUP = 256
"""Work-items per work-group of `gemm_split_sum` (one per output element)."""

SPLIT_SUM_RESERVED = frozenset({"partials", "out", "e", "acc", "row", "col"})


def gemm_split_sum(
    name: str,
    batch: int,
    m: int,
    n: int,
    split_k: int,
    epilogue: Epilogue = IDENTITY_EPILOGUE,
    dtype: str = "f32",
) -> KernelSource:
    """``out[b, i, j] = epilogue(sum_p partials[p, b, i, j], b * m + i, j)``: the second kernel of
    a GEMM split along K (`gemm` with `split_k`). Parameters: ``partials``, ``out``, then the
    epilogue's. One work-item per output element, the parts added in order."""
    check_positive(name, batch=batch, m=m, n=n, split_k=split_k)
    check_epilogue_names(name, epilogue, SPLIT_SUM_RESERVED)
    total = batch * m * n
    if dtype not in half.BUFFER_TYPES:
        raise ValueError(f"kernel '{name}': unknown element type '{dtype}'")
    args = (KernelArg("partials", "in"), KernelArg("out", "out", half.BUFFER_TYPES[dtype]),
            *epilogue.params)
    parts = "".join(f"    acc += partials[e + {p * total}];\n" for p in range(1, split_k))
    source = (
        f"// {name}: the {split_k} partial products of a [{batch}x{m}x{n}] GEMM added, "
        f"then its epilogue, {dtype}\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args)}\n{{\n"
        "    const int e = get_global_id(0);\n"
        f"    if (e >= {total}) return;\n"
        "    float acc = partials[e];\n"
        f"{parts}"
        f"    const int row = e / {n}, col = e % {n};\n"
        f"    {half.store(dtype, 'out', 'e', epilogue.call('acc', 'row', 'col'))};\n"
        "}\n"
    )
    return KernelSource(name, source, args, (round_up(total, SPLIT_SUM_GROUP),),
                        (SPLIT_SUM_GROUP,))
