"""Types shared by the kernel templates, and the small pieces of OpenCL C they all emit.

A template is a pure function from sizes and options to a `KernelSource`: the complete OpenCL C
of one kernel, its parameters in order, and its launch geometry. Nothing is cached or read from
the environment; the same arguments always give the same text.

Sizes are baked into the source as literals, so the OpenCL compiler sees constant loop bounds.
Helper functions a template emits are prefixed with the kernel's name, and an epilogue's
function sits inside an include guard named after it, so that several kernels' sources may be
concatenated into one program.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusec import knobs

if TYPE_CHECKING:
    from fusec.codegen.kernels.gemm import GemmTiles

ARG_KINDS = ("in", "out", "int", "float")
"""Kinds of kernel parameters: const global buffer, global buffer, and two scalar kinds."""


@dataclass(frozen=True)
class KernelArg:
    """One kernel parameter, in order."""

    name: str
    kind: str
    """"in" (const global buffer), "out" (global buffer), "int" or "float"."""
    dtype: str = "float"
    """OpenCL element type of a buffer."""

    def __post_init__(self) -> None:
        if self.kind not in ARG_KINDS:
            raise ValueError(f"kernel argument '{self.name}': kind '{self.kind}' is not one of "
                             f"{ARG_KINDS}")
        if not self.name.isidentifier():
            raise ValueError(f"kernel argument name '{self.name}' is not a C identifier")

    def declaration(self) -> str:
        """The C parameter declaration, e.g. ``__global const float *restrict bias``."""
        if self.kind == "in":
            return f"__global const {self.dtype} *restrict {self.name}"
        if self.kind == "out":
            return f"__global {self.dtype} *restrict {self.name}"
        return f"const {self.kind} {self.name}"


@dataclass(frozen=True)
class Epilogue:
    """A scalar function applied to each output element in registers, before it is stored.

    `function` is C source defining ``float <name>(float acc, int row, int col, <params>)``; the
    kernel calls it with the accumulated value, the flattened output row (over batch * M) and the
    output column, then the `params` by name. The params are appended to the kernel's own
    parameters, in order.
    """

    function: str
    name: str
    params: tuple[KernelArg, ...] = ()
    vectorized: Callable[[int], str | None] | None = field(default=None, compare=False)
    """For a width N, C source defining ``floatN <name>_vN(floatN acc, int row, int col,
    <params>)``, the epilogue of the N adjacent elements (``row``, ``col + i``), or None where
    there is none (`fusec.codegen.vector_epilogue`); asked only by a kernel that holds its
    results in vectors (the others call `function` once per element). It should cache."""

    def call(self, acc: str, row: str, col: str) -> str:
        """The C expression applying this epilogue to `acc` at (`row`, `col`)."""
        extra = "".join(f", {param.name}" for param in self.params)
        return f"{self.name}({acc}, {row}, {col}{extra})"

    def vector_call(self, width: int, acc: str, row: str, col: str) -> str | None:
        """The C expression applying this epilogue to the ``float<width>`` `acc` of columns
        `col` .. `col` + `width` - 1 of `row`; None when it has no function of that width."""
        if self.vector_function(width) is None:
            return None
        extra = "".join(f", {param.name}" for param in self.params)
        return f"{self.name}_v{width}({acc}, {row}, {col}{extra})"

    def guarded_function(self, width: int | None = None) -> str:
        """`function` inside an include guard, so that it may appear twice in one program;
        with `width`, its vector function of that width too (if it has one)."""
        text = _guarded(f"FUSEC_EPILOGUE_{self.name}", self.function)
        vector = self.vector_function(width) if width else None
        if vector is not None:
            text += _guarded(f"FUSEC_EPILOGUE_{self.name}_v{width}", vector)
        return text


    def vector_function(self, width: int) -> str | None:
        """The source of the vector function of `width` lanes (`vectorized`), or None."""
        return None if self.vectorized is None else self.vectorized(width)


def _guarded(guard: str, source: str) -> str:
    return f"#ifndef {guard}\n#define {guard}\n{source.strip()}\n#endif\n"


IDENTITY_EPILOGUE = Epilogue(
    function="inline float fusec_identity(float acc, int row, int col) { return acc; }",
    name="fusec_identity",
    vectorized=lambda width: (f"inline float{width} fusec_identity_v{width}(float{width} acc, "
                              "int row, int col) { return acc; }"),
)
"""The epilogue that stores the accumulated value unchanged."""


@dataclass(frozen=True)
class Scratch:
    """A buffer a kernel needs besides its operands, which the program provides (its last
    parameters, in order): `nbytes` of memory of the kernel's own between launches, or, where
    `zeroed`, zero before the first launch and left zero by every launch (counters), so that
    one buffer serves every launch of the program that needs one."""

    arg: str
    """The kernel parameter it is passed as."""
    nbytes: int
    zeroed: bool = False


@dataclass(frozen=True)
class KernelSource:
    """Complete OpenCL C for one kernel and everything needed to launch it."""

    name: str
    source: str
    """Helpers and the ``__kernel`` itself."""
    args: tuple[KernelArg, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    build_options: tuple[str, ...] = ()
    scratch: tuple[Scratch, ...] = ()
    """The buffers the program gives it after its operands (`Scratch`)."""


@dataclass(frozen=True)
class DeviceInfo:
    """What the templates need to know about the device they generate code for."""

    name: str
    is_cpu: bool
    local_mem_size: int = 32768
    """Bytes of ``__local`` memory per work-group."""
    max_work_group_size: int = 256
    float_vector_width: int = 8
    """Floats in the device's native vector (``CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT``): 16 on a
    CPU with AVX-512, where the CPU GEMM tiles are `gemm.CPU_WIDE_TILES`."""
    gemm_tiles: GemmTiles | None = None
    """The GEMM tiles `tuning.autotune_gemm` chose for this device, used instead of the
    defaults; None when it has not run."""
    global_mem_size: int | None = None
    """Bytes of global memory: the default budget of launch fusion (``fuse-launches``); None
    when unknown (the pass's own default then)."""
    compute_units: int | None = None
    """``CL_DEVICE_MAX_COMPUTE_UNITS`` (132 SMs on an H200): how many work-groups run at once,
    which decides the block width of the ``wgmma`` GEMM (`gemm_wgmma.block_n_for`); None when
    unknown."""
    tensor_cores: tuple[str, ...] = ()
    """The tensor-core products (``f16``, ``bf16``, ``tf32``) whose inline PTX built on this
    device (`gemm_mma.probe_tensor_cores`): the GEMM uses them there."""
    wgmma: bool = False
    """Whether Hopper's ``wgmma`` GEMM (`gemm_wgmma`, its PTX patched to sm_90a) ran correctly
    on this device (`gemm_wgmma.probe_wgmma`): products of whole tiles use it there."""
    int64_atomics: bool = True
    """Whether the device has ``cl_khr_int64_extended_atomics`` (``atom_min`` on a ``long``):
    a gather records its first bad index with one (`fusec.codegen.kernels.gather`)."""
    notes: tuple[str, ...] = ()
    """What was found out about the device while reading it (tools print these under
    ``--verbose``), e.g. which tensor-core products the driver rejected."""

    @property
    def kind(self) -> str:
        """``"cpu"`` or ``"gpu"``: the shape of the generated kernels (``lower-to-kernels``'s
        ``device`` option); an accelerator gets the GPU shapes."""
        return "cpu" if self.is_cpu else "gpu"

    @classmethod
    def from_device(cls, device: Any, tuning: Path | None = None,
                    tuned: bool = True) -> DeviceInfo:
        """Read the fields from a ``pyopencl.Device``; with `tuned`, also the GEMM tiles cached
        for it by the autotuner (in `tuning`, default its usual file) if they fit the device.
        The tiles change the generated source, so programs built with and without them are
        cached apart."""
        import pyopencl as cl

        from fusec.codegen.kernels.gemm_mma import probe_tensor_cores
        from fusec.codegen.kernels.gemm_wgmma import probe_wgmma

        tensor_cores, note = probe_tensor_cores(device)
        wgmma, wgmma_note = probe_wgmma(device) if tensor_cores else (False, "")
        info = cls(
            name=device.name.strip(),
            is_cpu=bool(device.type & cl.device_type.CPU),
            local_mem_size=int(device.local_mem_size),
            max_work_group_size=int(device.max_work_group_size),
            float_vector_width=int(device.native_vector_width_float),
            global_mem_size=int(device.global_mem_size),
            compute_units=int(device.max_compute_units),
            tensor_cores=tensor_cores,
            wgmma=wgmma,
            int64_atomics="cl_khr_int64_extended_atomics" in device.extensions.split(),
            notes=tuple(n for n in (note, wgmma_note) if n),
        )
        if not tuned:
            return info
        from fusec.codegen.kernels.tuning import cached_gemm_tiles

        tiles = cached_gemm_tiles(device, tuning)
        if tiles is None or not info.fits(tiles):
            return info
        return replace(info, gemm_tiles=tiles)

    def fits(self, tiles: GemmTiles) -> bool:
        """Whether a work-group of `tiles` fits this device's local memory and size limit."""
        return (tiles.local_memory_bytes() <= self.local_mem_size
                and tiles.group_m * tiles.group_n <= self.max_work_group_size)


def kernel_signature(name: str, args: Sequence[KernelArg],
                     attributes: str = "") -> str:
    """``__kernel void name(...)`` with one parameter per line."""
    check_unique_names(name, args)
    params = ",\n    ".join(arg.declaration() for arg in args)
    attrs = f"{attributes} " if attributes else ""
    return f"__kernel {attrs}void {name}(\n    {params})"


def check_unique_names(kernel: str, args: Sequence[KernelArg]) -> None:
    """Raise ValueError if two parameters share a name (e.g. an epilogue param and a buffer)."""
    seen: set[str] = set()
    for arg in args:
        if arg.name in seen:
            raise ValueError(f"kernel '{kernel}': two parameters are named '{arg.name}'")
        seen.add(arg.name)


def check_epilogue_names(kernel: str, epilogue: Epilogue, reserved: frozenset[str],
                         registers: str | None = None, registers_are: str = "") -> None:
    """Raise ValueError if an epilogue parameter is named like a local of the kernel body: one
    of `reserved`, or a name matching `registers` (a regular expression for the kernel's
    numbered registers, which `registers_are` describes in the message)."""
    for param in epilogue.params:
        if param.name in reserved:
            raise ValueError(f"kernel '{kernel}': epilogue parameter '{param.name}' clashes with "
                             f"a name the kernel uses; reserved: {', '.join(sorted(reserved))}")
        if registers is not None and re.fullmatch(registers, param.name):
            raise ValueError(f"kernel '{kernel}': epilogue parameter '{param.name}' is named like "
                             f"{registers_are}")


def check_positive(kernel: str, **sizes: int) -> None:
    """Raise ValueError naming the first size that is not a positive integer."""
    for label, value in sizes.items():
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"kernel '{kernel}': {label} must be a positive integer, "
                             f"got {value!r}")


def float_literal(value: float) -> str:
    """A C float literal that round-trips `value` (``1e-05f``, ``0.125f``)."""
    text = repr(float(value))
    if "inf" in text or "nan" in text:
        raise ValueError(f"cannot write {value} as a C float literal")
    if "." not in text and "e" not in text:
        text += ".0"
    return f"{text}f"


def float_expression(value: float) -> str:
    """A C float expression for any ``value``: `float_literal`, ``INFINITY`` or ``NAN``, and a
    negative value in parentheses (so that it can follow any operator)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    literal = float_literal(value)
    return f"({literal})" if value < 0 else literal


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


def largest_power_of_two_at_most(n: int) -> int:
    return 1 << (n.bit_length() - 1)


BOUND_B_PANELS = 1
"""The panel width (`fusec.codegen.plan.pack_panels`) of a bound GEMM B stored K-major:
panels of one column, ``[N, K]``, B transposed once when it is bound (as PyTorch's
``nn.Linear`` holds its weight). The ``wgmma`` kernels (`gemm_wgmma`), the skinny K-major one
(`gemm_skinny.gemm_skinny_k_major`) and the float32 FFMA kernel (`gemm_ffma_pipelined`'s
``b_k_major``) read it."""

CPU_ROW_LOCAL_SIZE = 1
"""Work-items per row of a row kernel on a CPU: one, reading the row as float8 vectors with no
barrier. Measured on [512, 768] (Intel's CPU runtime): a row added with explicit float8 loads
took 0.11 ms, the same row strided over 8, 64 or 256 work-items (vectorised by the compiler
across work-items) 0.44-0.52 ms, and the tree reductions of a work-group cost more again."""

ROW_VECTOR_WIDTH = 8
"""Vector width of a row handled by one work-item (AVX2: eight floats)."""


def default_row_local_size(cols: int, device_info: DeviceInfo | None = None,
                           per_item: int = 4, limit: int = 256) -> int:
    """Work-items per row of a row kernel: `CPU_ROW_LOCAL_SIZE` on a CPU (or an unknown
    device); on a GPU a power of two giving each work-item about `per_item` elements of the
    row, between 32 (a warp) and `limit`."""
    if device_info is None or device_info.is_cpu:
        return CPU_ROW_LOCAL_SIZE
    wanted = ceil_div(cols, per_item)
    size = 32
    while size < wanted and size < min(limit, device_info.max_work_group_size):
        size *= 2
    return size


Combine = Callable[[str, str], list[str]]
"""Given two index expressions ``into`` and ``other``, the C statements that fold the partial
results at ``other`` into those at ``into`` (in the local arrays of a reduction)."""


def tree_reduction(local_size: int, lid: str, combine: Combine, indent: str = "    ",
                   offset: str = "") -> str:
    """C code reducing per-work-item partials held in local arrays into index `offset` + 0.

    The caller has stored each work-item's partials at index `offset` + `lid` (`offset` is empty
    or ends in ``+``: several rows of one work-group reduce side by side) and must read the
    result from index `offset` + 0 after this code; a barrier follows the last step. Works for
    any `local_size`: the part above the largest power of two is folded in first.
    """
    lines = ["barrier(CLK_LOCAL_MEM_FENCE);"]
    into = f"{offset}{lid}"
    half = largest_power_of_two_at_most(local_size)
    if half < local_size:
        lines += [f"if ({lid} < {local_size - half}) {{",
                  *(f"    {s}" for s in combine(into, f"{into} + {half}")),
                  "}", "barrier(CLK_LOCAL_MEM_FENCE);"]
    stride = half // 2
    while stride >= 1:
        lines += [f"if ({lid} < {stride}) {{",
                  *(f"    {s}" for s in combine(into, f"{into} + {stride}")),
                  "}", "barrier(CLK_LOCAL_MEM_FENCE);"]
        stride //= 2
    return "".join(f"{indent}{line}\n" for line in lines)


WARP = 32
"""Work-items of an NVIDIA warp: the lanes one ``shfl.sync`` exchanges values among."""

SHUFFLE_MASKS = (16, 8, 4, 2, 1)
"""The lane distances of a warp's butterfly (`RowCombine`), in this order in both forms: every
lane ends with the same value, each step adding (or taking the larger of) two equal-length
halves, so the result does not depend on the lane and is bitwise the same run to run."""

Fold = Callable[[str, str], str]
"""The C expression folding two partial results (``a + b``, ``fmax(a, b)``, ...)."""


def fold_sum(a: str, b: str) -> str:
    """The `Fold` of a sum."""
    return f"{a} + {b}"


def fold_max(a: str, b: str) -> str:
    """The `Fold` of a maximum (OpenCL's ``fmax``: a NaN operand gives the other)."""
    return f"fmax({a}, {b})"


COMBINES = ("auto", "tree", "ptx", "emulated")
"""A row kernel's ``combine`` argument (`warp_shuffles`)."""


def warp_shuffles(device_info: DeviceInfo | None, row_size: int,
                  combine: str = "auto") -> str | None:
    """How a row kernel with `row_size` work-items per row combines their partials
    (`RowCombine.shuffles`): as `combine` asks (``"tree"``: None; ``"ptx"``, ``"emulated"``),
    or for ``"auto"`` as `device_info` allows: ``"ptx"`` with the knob `row_warp_shuffles` on,
    on a GPU whose inline PTX built (`DeviceInfo.tensor_cores`: NVIDIA, sm_80 or newer) and
    rows of whole warps; else None, a tree in local memory."""
    if combine not in COMBINES:
        raise ValueError(f"combine must be one of {', '.join(COMBINES)}, not '{combine}'")
    if combine != "auto":
        return None if combine == "tree" else combine
    if (device_info is None or device_info.is_cpu or not device_info.tensor_cores
            or row_size % WARP or not knobs.value("row_warp_shuffles")):
        return None
    return "ptx"


@dataclass(frozen=True)
class RowCombine:
    """How the `row_size` work-items of a row combine their partial results into one value
    every one of them holds (`combine`).

    - `shuffles` None: each stores its partial into a local array at `offset` + `lid`, and a
      tree (`tree_reduction`) folds them, a barrier a step (log2 of the row's work-items).
    - ``"ptx"``: a butterfly of ``shfl.sync.bfly`` within each warp (`SHUFFLE_MASKS`, no
      barrier), then lane 0 of each warp stores the warp's value and, after one barrier, every
      work-item folds the row's warp values in order; a row of one warp needs no barrier at all.
    - ``"emulated"``: the same with each shuffle an exchange through local memory between
      barriers (plain OpenCL C, so the CPU device in CI runs the form's indexing and order).

    Rows of whole warps only (`row_size` a multiple of `WARP`) for the shuffle forms: the
    work-items of a row are consecutive in the work-group (dimension 0), so then no warp
    spans two rows."""

    name: str
    """The kernel's name, prefixing its helper functions."""
    row_size: int
    shuffles: str | None = None
    offset: str = "at + "
    """Where this row's partials start in the work-group's local arrays (`tree_reduction`)."""
    lid: str = "lid"

    def __post_init__(self) -> None:
        if self.shuffles not in (None, "ptx", "emulated"):
            raise ValueError(f"kernel '{self.name}': shuffles must be 'ptx' or 'emulated', "
                             f"not '{self.shuffles}'")
        if self.shuffles and self.row_size % WARP:
            raise ValueError(f"kernel '{self.name}': warp shuffles take rows of whole warps of "
                             f"{WARP}, not {self.row_size} work-items")

    def function(self, op: str) -> str:
        return f"{self.name}_warp_{op}"

    def helpers(self, folds: dict[str, Fold]) -> str:
        """The warp functions of each fold `op` -> its expression (nothing for a tree)."""
        if self.shuffles is None:
            return ""
        out = []
        for op, fold in folds.items():
            if self.shuffles == "ptx":
                steps = "".join(
                    f'    asm volatile("shfl.sync.bfly.b32 %0, %1, {m}, 0x1f, 0xffffffff;" '
                    f': "=f"(o) : "f"(v));\n    v = {fold("v", "o")};\n'
                    for m in SHUFFLE_MASKS)
                out.append(f"inline float {self.function(op)}(float v) {{\n    float o;\n"
                           f"{steps}    return v;\n}}\n")
            else:
                steps = "".join(
                    f"    exchange[me] = v;\n    barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f"    v = {fold('v', f'exchange[me ^ {m}]')};\n"
                    "    barrier(CLK_LOCAL_MEM_FENCE);\n" for m in SHUFFLE_MASKS)
                out.append(f"inline float {self.function(op)}(float v, __local float *exchange, "
                           f"const int me) {{\n{steps}    return v;\n}}\n")
        return "".join(out)

    def declarations(self, group_items: int, indent: str = "    ") -> str:
        """The kernel's local arrays of the combine besides the caller's own: the exchange of
        the emulated shuffles (one float a work-item of the work-group)."""
        if self.shuffles != "emulated":
            return ""
        return f"{indent}__local float exchange[{group_items}];\n"

    def combine(self, variable: str, value: str, op: str, fold: Fold,
                scratch: str = "scratch", indent: str = "    ") -> str:
        """C code declaring ``const float`` `variable`: `value` (each work-item's partial)
        folded by `fold` over the row, in every work-item of it; `scratch` (a local array of
        one float a work-item) is free again after it."""
        me = f"{self.offset}{self.lid}"
        if self.shuffles is None:
            def tree_fold(into: str, other: str) -> list[str]:
                a, b = f"{scratch}[{into}]", f"{scratch}[{other}]"
                return [f"{a} = {fold(a, b)};"]

            return (f"{indent}{scratch}[{me}] = {value};\n"
                    f"{tree_reduction(self.row_size, self.lid, tree_fold, indent, self.offset)}"
                    f"{indent}const float {variable} = {scratch}[{self.offset}0];\n"
                    f"{indent}barrier(CLK_LOCAL_MEM_FENCE);\n")
        args = "" if self.shuffles == "ptx" else f", exchange, {me}"
        call = f"{self.function(op)}({value}{args})"
        warps = self.row_size // WARP
        if warps == 1:
            return f"{indent}const float {variable} = {call};\n"
        first = f"({self.offset}0) / {WARP}"
        partial = f"{variable}_warps"
        folds = "".join(f"{indent}{partial} = {fold(partial, f'{scratch}[{first} + {w}]')};\n"
                        for w in range(1, warps))
        return (f"{indent}{{\n{indent}    const float warp_value = {call};\n"
                f"{indent}    if (({self.lid} & {WARP - 1}) == 0) "
                f"{scratch}[({me}) / {WARP}] = warp_value;\n{indent}}}\n"
                f"{indent}barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"{indent}float {partial} = {scratch}[{first}];\n{folds}"
                f"{indent}const float {variable} = {partial};\n"
                f"{indent}barrier(CLK_LOCAL_MEM_FENCE);\n")


def indent_block(text: str, indent: str) -> str:
    """Prefix every non-empty line of `text` with `indent`."""
    return "".join(f"{indent}{line}\n" if line.strip() else "\n" for line in text.splitlines())


@dataclass(frozen=True)
class RowSlots:
    """How a work-group of `local_size` work-items covers a row of `cols` elements: work-item
    ``lid`` holds elements ``lid + s * local_size`` for ``s < count``, in registers."""

    cols: int
    local_size: int
    lid: str = "lid"

    @property
    def count(self) -> int:
        return ceil_div(self.cols, self.local_size)

    def index(self, slot: int) -> str:
        """C expression of the column held in `slot`."""
        return self.lid if slot == 0 else f"{self.lid} + {slot * self.local_size}"

    def always_in_row(self, slot: int) -> bool:
        """Whether every work-item's element in `slot` lies inside the row."""
        return (slot + 1) * self.local_size <= self.cols

    def guard(self, slot: int) -> str:
        """C condition that the element in `slot` lies inside the row (``1`` if it always does)."""
        return "1" if self.always_in_row(slot) else f"{self.index(slot)} < {self.cols}"

    def guarded(self, slot: int, statement: str) -> str:
        """`statement`, executed only where the element in `slot` lies inside the row."""
        if self.always_in_row(slot):
            return statement
        return f"if ({self.guard(slot)}) {statement}"


CPU_ROWS_PER_GROUP = 32
"""Rows side by side in one work-group of a row kernel with one work-item per row on a CPU
(fewer where `CPU_MIN_GROUPS` asks for it). Residual norms of [512, 768], kernel time, medians
of 80 launches interleaved in one process (Intel CPU OpenCL, 2 cores): LayerNorm 0.77x and
RMSNorm 0.97x with 32 instead of 1, 0.85x and 0.88x with 16 (a second run: 16 gave 0.87x and
0.88x)."""

CPU_MIN_GROUPS = 8
"""A CPU row kernel makes at least this many work-groups where there are as many rows: Intel's
runtime runs a work-group on one thread, so rows in too few groups leave a core idle."""

CPU_SOFTMAX_GROUP = 16
"""Work-items per work-group of the CPU softmax: fewer, larger work-groups cost Intel's CPU
runtime less to schedule: [6144, 128] 0.80 -> 0.68 ms with 16 instead of 1 (medians, same
run); 64 was no better."""

GPU_GROUP_SIZE = 256
"""Work-items a row kernel's work-group aims for on a GPU (several short rows share one)."""


def default_rows_per_group(row_size: int, device_info: DeviceInfo | None = None,
                           rows: int | None = None, cpu: int = CPU_ROWS_PER_GROUP) -> int:
    """Rows per work-group of a row kernel with `row_size` work-items per row: on a CPU, one
    when a row has several work-items, else `cpu`, fewer when `rows` is given and would then
    make fewer than `CPU_MIN_GROUPS` work-groups. On a GPU, `GPU_GROUP_SIZE` work-items' worth,
    fewer (with the knob `row_groups_fill_units`) where `rows` would then give fewer
    work-groups than the device has compute units."""
    if device_info is None or device_info.is_cpu:
        if row_size > 1:
            return 1
        return max(1, min(cpu, rows // CPU_MIN_GROUPS)) if rows else cpu
    per_group = max(1, min(GPU_GROUP_SIZE, device_info.max_work_group_size) // row_size)
    if rows and device_info.compute_units and knobs.value("row_groups_fill_units"):
        # A work-group for each unit where the rows allow (a batch-1 model's 128 rows).
        per_group = max(1, min(per_group, rows // device_info.compute_units))
    return per_group


@dataclass(frozen=True)
class RowGroup:
    """Launch layout of a row kernel: `row_size` work-items per row (dimension 0) and
    `rows_per_group` rows side by side in one work-group (dimension 1).

    The kernel's prologue declares ``lid`` (position in the row), ``at`` (where this row's
    partials start in the work-group's local arrays), ``row`` and ``base`` (the row's first
    element; a padding row past the last one reads the last row and stores nothing).
    """

    rows: int
    cols: int
    row_size: int
    rows_per_group: int

    @property
    def has_padding_rows(self) -> bool:
        return self.rows % self.rows_per_group != 0

    def global_size(self) -> tuple[int, int]:
        return (self.row_size, round_up(self.rows, self.rows_per_group))

    def local_size(self) -> tuple[int, int]:
        return (self.row_size, self.rows_per_group)

    def attribute(self) -> str:
        return (f"__attribute__((reqd_work_group_size({self.row_size}, "
                f"{self.rows_per_group}, 1)))")

    def summary(self) -> str:
        items = "one work-item" if self.row_size == 1 else f"{self.row_size} work-items"
        rows = "one row" if self.rows_per_group == 1 else f"{self.rows_per_group} rows"
        return f"{items} per row, {rows} per work-group"

    def prologue(self) -> str:
        row = f"min(row, {self.rows - 1})" if self.has_padding_rows else "row"
        return (
            "    const int lid = get_local_id(0);\n"
            f"    const int at = get_local_id(1) * {self.row_size};\n"
            "    const int row = get_global_id(1);\n"
            f"    const int base = {row} * {self.cols};\n"
        )

    def guarded_store(self, statement: str) -> str:
        """`statement` (a store), skipped in padding rows."""
        if self.has_padding_rows:
            return f"if (row < {self.rows}) {statement}"
        return statement


MAX_CACHED_SLOTS = 64
"""Row kernels keep a row in registers when each work-item holds at most this many elements;
longer rows are streamed from global memory twice."""


def row_local_size(kernel: str, cols: int, local_size: int | None,
                   device_info: DeviceInfo | None, per_item: int = 4) -> int:
    """The work-group size of a row kernel: `local_size`, or the default for the device
    (`default_row_local_size` with `per_item` elements a work-item)."""
    if local_size is None:
        return default_row_local_size(cols, device_info, per_item)
    check_positive(kernel, local_size=local_size)
    return local_size


@dataclass(frozen=True)
class Lanes:
    """Spellings for the body of a loop over a row, `width` elements at a time from ``i``."""

    width: int

    @property
    def type(self) -> str:
        return "float" if self.width == 1 else f"float{self.width}"

    def load(self, pointer: str) -> str:
        if self.width == 1:
            return f"{pointer}[i]"
        return f"vload{self.width}(0, {pointer} + i)"

    def store(self, value: str, pointer: str) -> str:
        if self.width == 1:
            return f"{pointer}[i] = {value};"
        return f"vstore{self.width}({value}, 0, {pointer} + i);"

    def acc(self, name: str) -> str:
        """The partial result `name` kept by this loop (a vector or a scalar)."""
        return f"{name}_{'v' if self.width > 1 else 's'}"


@dataclass(frozen=True)
class Accumulator:
    """A value reduced over a row by `row_pass`: a sum (``+``) or a maximum (``fmax``)."""

    name: str
    combine: str
    init: str

    def fold(self, a: str, b: str) -> str:
        return f"{a} + {b}" if self.combine == "+" else f"fmax({a}, {b})"


def row_pass(cols: int, width: int, body: Callable[[Lanes], list[str]],
             accumulators: Sequence[Accumulator] = (), indent: str = "    ") -> str:
    """C code visiting a row of `cols` elements: `width` at a time, then one at a time for the
    remainder. `body` gives the statements for either; each accumulator is declared before
    (as a vector and a scalar partial) and reduced to ``const float <name>`` after."""
    full = cols // width * width
    lines: list[str] = []
    vector, scalar = Lanes(width), Lanes(1)
    for acc in accumulators:
        lines.append(f"{vector.type} {vector.acc(acc.name)} = {acc.init}; "
                     f"float {scalar.acc(acc.name)} = {acc.init};")
    if full:
        lines += [f"for (int i = 0; i < {full}; i += {width}) {{",
                  *(f"    {s}" for s in body(vector)), "}"]
    if full < cols:
        lines += [f"for (int i = {full}; i < {cols}; ++i) {{",
                  *(f"    {s}" for s in body(scalar)), "}"]
    for acc in accumulators:
        value = scalar.acc(acc.name)
        for lane in range(width if width > 1 else 0):
            value = acc.fold(value, f"{vector.acc(acc.name)}.s{'0123456789abcdef'[lane]}")
        lines.append(f"const float {acc.name} = {value};")
    return "".join(f"{indent}{line}\n" for line in lines)


def exp2_polynomial(vtype: str) -> str:
    """C lines declaring ``{vtype} p``: ``2^f`` for ``|f| <= 0.5`` by Cephes' degree-6
    ``exp2f`` polynomial (1.7e-7 relative), ``f`` in scope."""
    coefficients = ("1.339887440266574e-3f", "9.618437357674640e-3f", "5.550332471162809e-2f",
                    "2.402264791363012e-1f", "6.931472028550421e-1f", "1.0f")
    return (f"    {vtype} p = 1.535336188319500e-4f;\n"
            + "".join(f"    p = mad(p, f, {c});\n" for c in coefficients))


def vector_exp_function(name: str, width: int) -> str:
    """C source of ``float<width> name(float<width> x)``: ``e^x`` for CPU kernels whose ``exp``
    is the bottleneck (softmax of [6144, 128] on Intel's CPU runtime: 1.2-1.5x faster than the
    built-in, which on this AMD machine is a library call, and faster than Cody-Waite reduction,
    measured side by side).

    ``e^x = 2^t`` with ``t = x log2(e)``: ``2^(t - rint(t))`` by Cephes' degree-6 ``exp2f``
    polynomial (1.7e-7 relative), times ``2^rint(t)`` built in the exponent bits as two factors
    ``2^h * 2^(n - h)`` (``h = n >> 1``), each a normal float, so that the product rounds once
    into the subnormal range, to 0 below it and to ``inf`` above the float range, as ``exp``
    does. Rounding ``t`` to a float adds a relative error of about ``|x| * 6e-8``: 1e-7 at
    ``|x| = 1``, 1e-6 at ``|x| = 17``, where softmax's ``e^(x - max)`` is below 4e-8 of the row's
    largest term. ``x`` is clamped with ``select`` (NaN stays NaN) to ``[-104, 89]``, past
    which the result is 0 or ``inf`` anyway: ``e^-inf`` is 0 (a masked softmax entry), not the
    smallest normal float, which a later ``log`` or comparison would tell apart."""
    vtype, itype = f"float{width}", f"int{width}"
    return f"""#ifndef FUSEC_EXP_{name}
#define FUSEC_EXP_{name}
inline {vtype} {name}({vtype} x) {{
    x = select(x, ({vtype})(-104.0f), x < -104.0f);
    x = select(x, ({vtype})(89.0f), x > 89.0f);
    const {vtype} t = x * 1.44269504088896341f;
    const {vtype} n = rint(t);
    const {vtype} f = t - n;
{exp2_polynomial(vtype)}    const {itype} e = convert_{itype}(n);
    const {itype} h = e >> 1;
    return p * as_{vtype}((h + 127) << 23) * as_{vtype}((e - h + 127) << 23);
}}
#endif
"""


def vector_exp_nonpositive_function(name: str, width: int) -> str:
    """C source of ``float<width> name(float<width> x)``: ``e^x`` for ``x <= 0`` (or NaN), as
    softmax takes it of ``x - max``; cheaper than `vector_exp_function` (17 vector operations
    against 20; the [6144, 128] softmax kernel on Intel's CPU runtime 0.18 -> 0.16 ms), with the
    same results on that range.

    The same polynomial of ``2^(t - n)``; ``n = rint(t)`` comes from adding and subtracting
    ``1.5 * 2^23``, which leaves ``n`` in the low bits of the sum's integer view. ``2^n`` is
    ``2^(n + 64)``, a normal float for ``-150 <= n <= 0``, times ``2^-64``: the product rounds
    once into the subnormal range and to 0 below it, as ``exp`` does. ``x`` is clamped with
    ``select`` (NaN stays NaN) to ``-104``, where the result is 0, so ``e^-inf`` is 0. Nothing
    clamps from above: past ``x = 43`` the exponent overflows, so it is only for arguments known
    not to be positive."""
    vtype, itype = f"float{width}", f"int{width}"
    return f"""#ifndef FUSEC_EXP_NONPOSITIVE_{name}
#define FUSEC_EXP_NONPOSITIVE_{name}
inline {vtype} {name}({vtype} x) {{
    x = select(x, ({vtype})(-104.0f), x < -104.0f);
    const {vtype} t = x * 1.44269504088896341f;
    const {vtype} shifted = t + 12582912.0f;
    const {vtype} n = shifted - 12582912.0f;
    const {vtype} f = t - n;
{exp2_polynomial(vtype)}    const {itype} e = as_{itype}(shifted) - 0x4B400000;
    return p * as_{vtype}((e + 191) << 23) * 5.42101086242752217e-20f;
}}
#endif
"""


