"""Instantiates a ``kernel.template`` op: the template's OpenCL C with the epilogue generated
from the op's region, and the order in which the op's buffers bind to the kernel's parameters.

Each template name maps to one small function reading the op's ``params``; the kernel sources
themselves come from ``fusec.codegen.kernels``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue

from fusec.codegen.emitter import BUFFER_TYPES, emit_epilogue
from fusec.codegen.kernels import attention_cpu as cpu_attention
from fusec.codegen.kernels import attention_mma as tensor_core_attention
from fusec.codegen.kernels.argmax import argmax
from fusec.codegen.kernels.attention import HeadsLayout, attention
from fusec.codegen.kernels.attention_cpu import attention_cpu
from fusec.codegen.kernels.attention_mma import attention_mma
from fusec.codegen.kernels.attention_tiled import attention_tiled, tiled_attention_config
from fusec.codegen.kernels.cache_attention_split import (
    cache_attention_combine,
    cache_attention_split,
)
from fusec.codegen.kernels.cache_update import cache_update
from fusec.codegen.kernels.centered_gram_split import gram_combine, gram_slices
from fusec.codegen.kernels.column_stats import (
    centered_gram,
    column_finish,
    column_mean,
    gemm_column_sums,
)
from fusec.codegen.kernels.column_stats_cpu import (
    centered_gram_cpu,
    column_finish_cpu,
    column_mean_cpu,
    gemm_column_sums_cpu,
)
from fusec.codegen.kernels.common import (
    BOUND_B_PANELS,
    IDENTITY_EPILOGUE,
    DeviceInfo,
    Epilogue,
    KernelArg,
    KernelSource,
    float_expression,
)
from fusec.codegen.kernels.gather import INDEX_ERRORS_ARG, gather
from fusec.codegen.kernels.gemm import gemm, gemm_split_sum, rhs_panel_width, takes_ffma
from fusec.codegen.kernels.gemm_skinny import WIDE, gemm_skinny, gemm_skinny_k_major, reads_k_major
from fusec.codegen.kernels.gemm_wgmma import (
    SWIGLU_TYPES,
    gemm_plan,
    splits_tf32,
    stores_bound_b_transposed,
)
from fusec.codegen.kernels.norm import layer_norm
from fusec.codegen.kernels.row_reduce import row_reduce
from fusec.codegen.kernels.softmax import softmax
from fusec.codegen.row_functions import row_inputs, stage_functions, strided_row_input
from fusec.codegen.vector_epilogue import emit_vector_epilogue
from fusec.dialects import kernel


@dataclass(frozen=True)
class TemplateInstance:
    """A template's kernel and the host buffers bound to its parameters, in order."""

    source: KernelSource
    buffers: tuple[SSAValue, ...]
    checks_indices: bool = False
    """Whether the kernel takes the program's ``index_errors`` record as its last parameter
    (`fusec.codegen.kernels.gather`), which the plan binds after `buffers`."""


class TemplateParamError(ValueError):
    """A ``kernel.template`` without a parameter its template reads, or with one of the wrong
    kind (hand-written kernel IR): one line, where an assert failed before (exit 70)."""


AttributeT = TypeVar("AttributeT", bound=Attribute)


class Params:
    """Typed reads of a ``kernel.template``'s ``params``."""

    def __init__(self, op: kernel.TemplateOp):
        self.op = op

    def _read(self, key: str, kind: type[AttributeT], what: str) -> AttributeT:
        template = self.op.template.data
        if key not in self.op.params.data:
            raise TemplateParamError(f"kernel.template \"{template}\" needs the parameter '{key}'")
        attr = self.op.param(key)
        if not isinstance(attr, kind):
            raise TemplateParamError(f"kernel.template \"{template}\" parameter '{key}' must be "
                                     f"{what}, got {attr}")
        return attr

    def int(self, key: str, default: int | None = None) -> int:
        if default is not None and key not in self.op.params.data:
            return default
        attr = self._read(key, IntegerAttr, "an integer")
        return attr.value.data

    def bool(self, key: str) -> bool:
        return bool(self.int(key))

    def float(self, key: str) -> float:
        attr = self._read(key, FloatAttr, "a float")
        return attr.value.data

    def str(self, key: str, default: str | None = None) -> str:
        if default is not None and key not in self.op.params.data:
            return default
        attr = self._read(key, StringAttr, "a string")
        return attr.data


def epilogue_of(op: kernel.TemplateOp, name: str) -> Epilogue:
    """The op's epilogue region as a C function; the identity when the op has none."""
    if op.epilogue is None:
        return IDENTITY_EPILOGUE
    block = op.epilogue.block
    names = [f"epi{i}" for i in range(len(op.extras))]
    function_name = f"{name}_epilogue"
    source = emit_epilogue(function_name, block, names)
    params = tuple(
        KernelArg(n, "in", BUFFER_TYPES[e.type.element_type])  # type: ignore[attr-defined]
        for n, e in zip(names, op.extras, strict=False)
    )

    @functools.cache
    def vectorized(width: int) -> str | None:
        return emit_vector_epilogue(f"{function_name}_v{width}", block, names, width)

    return Epilogue(source, function_name, params, vectorized)


def gemm_rhs_panel_width(op: kernel.TemplateOp, device: DeviceInfo | None) -> int | None:
    """The panel width a ``gemm`` op's kernel can read its B in (`gemm.rhs_panel_width`:
    `common.BOUND_B_PANELS`, B stored transposed, for the FFMA kernel with the knob
    `ffma_b_k_major`); on a ``wgmma`` device, `common.BOUND_B_PANELS` for a product the
    Hopper kernel reads K-major."""
    if op.template.data != "gemm":
        return None
    p = Params(op)
    if p.int("skinny", 0):
        return BOUND_B_PANELS if skinny_reads_b_transposed(p) else None
    if (stores_bound_b_transposed(p.str("dtype", "f32"))
            and instantiate_gemm_wgmma(op, "gemm", device, b_transposed=True) is not None):
        return BOUND_B_PANELS
    dtype = p.str("dtype", "f32")
    return rhs_panel_width(p.int("m"), p.int("n"), p.int("k"), p.bool("rhs_batched"), device,
                           p.int("split_k", 1), dtype, p.str("out_dtype", dtype),
                           bool(p.int("allow_tf32", 0)))


def gemm_reads_rhs_panels(op: Operation, panels: int | None, device: DeviceInfo | None) -> bool:
    """Whether `op` is a ``gemm`` that can read its B stored in `panels`
    (`gemm_rhs_panel_width`'s choice; a skinny product also B as it is, or K-major where K
    allows, `gemm_skinny_k_major`)."""
    if not isinstance(op, kernel.TemplateOp) or op.template.data != "gemm":
        return False
    p = Params(op)
    if panels is None and reads_bound_b_as_is(op, device):
        return True
    if p.int("skinny", 0) and (panels is None or (panels == BOUND_B_PANELS
                                                  and reads_k_major(p.int("k"))
                                                  and not p.bool("rhs_batched"))):
        return True
    return panels == gemm_rhs_panel_width(op, device)


def reads_bound_b_as_is(op: kernel.TemplateOp, device: DeviceInfo | None) -> bool:
    """Whether ``gemm`` `op` can read a bound B as it is stored, ``[K, N]``, with no copy of it
    stored: the ``wgmma`` kernel MN-major (f16 and bf16) or, in split TF32 (which reads B only
    K-major), after a transpose each call into a buffer of the call's (the weight held once
    where PyTorch holds it ``[K, N]``, GPT-2's ``Conv1D``); or the float32 FFMA kernel
    (which also reads it ``[N, K]``)."""
    hopper = instantiate_gemm_wgmma(op, "gemm", device, b_bound=True)
    if hopper is not None:
        p = Params(op)
        return hopper[0] is None or splits_tf32(p.str("dtype", "f32"),
                                                bool(p.int("allow_tf32", 0)))
    return takes_ffma_kernel(op, device)


def takes_ffma_kernel(op: kernel.TemplateOp, device: DeviceInfo | None) -> bool:
    """Whether ``gemm`` `op` takes the float32 FFMA kernel (`gemm.takes_ffma`), which reads a
    bound B as it is or ``[N, K]``."""
    p = Params(op)
    dtype = p.str("dtype", "f32")
    return not p.int("skinny", 0) and takes_ffma(device, None, p.int("split_k", 1), dtype,
                                                 p.str("out_dtype", dtype),
                                                 bool(p.int("allow_tf32", 0)), p.int("n"),
                                                 p.int("k"))


def skinny_reads_b_transposed(p: Params) -> bool:
    """Whether a skinny product reads a bound B stored ``[N, K]`` (`gemm_skinny_k_major`):
    where a tensor-core product of the same weight (a prefill's) stores it so
    (`stores_bound_b_transposed`), so that one copy serves both, and K allows it. Not a
    vocabulary-wide product (`gemm_skinny.WIDE`): reading B as it is is faster there, and a
    prefill's head is skinny too (bench/results/h200-2026-12-02-s10-decode.log (b))."""
    return (stores_bound_b_transposed(p.str("dtype", "f32")) and reads_k_major(p.int("k"))
            and p.int("n") < WIDE and not p.bool("rhs_batched"))


def instantiate_gemm(op: kernel.TemplateOp, name: str, device: DeviceInfo | None,
                     rhs_panels: int | None = None) -> KernelSource:
    p = Params(op)
    if p.int("skinny", 0) and rhs_panels == BOUND_B_PANELS:
        return gemm_skinny_k_major(name, p.int("batch") * p.int("m"), p.int("n"), p.int("k"),
                                   epilogue_of(op, name), dtype=p.str("dtype", "f32"),
                                   out_dtype=p.str("out_dtype", p.str("dtype", "f32")))
    if p.int("skinny", 0):
        return gemm_skinny(name, p.int("batch") * p.int("m"), p.int("n"), p.int("k"),
                           epilogue_of(op, name), dtype=p.str("dtype", "f32"),
                           out_dtype=p.str("out_dtype", p.str("dtype", "f32")))
    return gemm(
        name,
        p.int("batch"),
        p.int("m"),
        p.int("n"),
        p.int("k"),
        p.bool("rhs_batched"),
        epilogue_of(op, name),
        device_info=device,
        split_k=p.int("split_k", 1),
        dtype=p.str("dtype", "f32"),
        allow_tf32=bool(p.int("allow_tf32", 0)),
        out_dtype=p.str("out_dtype", p.str("dtype", "f32")),
        rhs_panels=rhs_panels,
    )


def epilogue_is_identity(op: kernel.TemplateOp) -> bool:
    """Whether the op's epilogue stores the accumulator unchanged (none, or a block that only
    yields its first argument, with no extra buffers)."""
    if op.epilogue is None:
        return True
    ops = list(op.epilogue.block.ops)
    return (not op.extras and len(ops) == 1 and isinstance(ops[0], kernel.YieldOp)
            and tuple(ops[0].operands) == (op.epilogue.block.args[0],))


def instantiate_gemm_wgmma(op: kernel.TemplateOp, name: str, device: DeviceInfo | None,
                           b_transposed: bool = False, swiglu: bool = False,
                           halves: str | None = None, b_bound: bool = False,
                           ) -> tuple[KernelSource | None, KernelSource] | None:
    """For a ``gemm`` op that takes the Hopper kernel on `device` (`gemm_wgmma.gemm_plan`):
    the transpose of its B into a ``[N, K]`` buffer (None where the kernel reads B as it is,
    or where `b_transposed`: B is bound and stored ``[N, K]``) and the product; else None.
    With `swiglu`, the product that computes ``fused.swiglu`` of its result (B's gate and up
    columns paired: `fusec.codegen.swiglu_epilogue`; `halves`: B stored in halves, paired as
    it is read), or None where it cannot. `b_bound`: B is bound and stored as it is, ``[K,
    N]`` (read MN-major where the type allows, not transposed each call)."""
    if op.template.data != "gemm" or device is None or not device.wgmma:
        return None
    if Params(op).int("skinny", 0):
        return None
    p = Params(op)
    dtype = p.str("dtype", "f32")
    split = p.int("split_k", 1)  # a split product writes float32 partial products
    return gemm_plan(name, p.int("batch"), p.int("m"), p.int("n"), p.int("k"),
                     p.bool("rhs_batched"),
                     IDENTITY_EPILOGUE if epilogue_is_identity(op) else epilogue_of(op, name),
                     device, dtype, bool(p.int("allow_tf32", 0)),
                     "f32" if split > 1 else p.str("out_dtype", dtype), split, b_transposed,
                     swiglu, halves, b_bound)


def skinny_takes_swiglu(op: kernel.TemplateOp) -> bool:
    """Whether a skinny ``gemm`` op may compute a ``fused.swiglu`` of its result (a decode
    step's SwiGLU, B's gate and up columns interleaved as a prefill's tensor-core product with
    the SwiGLU epilogue stores them): a 16-bit type, as that product takes, an even N and no
    epilogue of its own; B read K-major (`gemm_skinny_k_major`) where the prefill stores it so
    (`skinny_reads_b_transposed`), else as it is (`gemm_skinny`)."""
    p = Params(op)
    return (bool(p.int("skinny", 0)) and p.str("dtype", "f32") in SWIGLU_TYPES
            and p.int("n") % 2 == 0 and epilogue_is_identity(op))


def instantiate_gemm_swiglu(op: kernel.TemplateOp, name: str, device: DeviceInfo | None,
                            b_transposed: bool, halves: str | None = None,
                            ) -> tuple[KernelSource | None, KernelSource] | None:
    """The launches of a ``gemm`` op that computes ``fused.swiglu`` of its product, B's gate
    and up columns interleaved (`fusec.codegen.swiglu_epilogue`): on `gemm_wgmma`
    (`instantiate_gemm_wgmma`), or a skinny product reading B ``[N, K]`` (`b_transposed`,
    where `skinny_reads_b_transposed`) or as it is, with no transpose; None where none takes
    it. `halves`: B (read K-major) holds the gate's and up's halves as they are, the kernel
    pairing them as it reads them (`SwigluEpilogue.halves`)."""
    if not Params(op).int("skinny", 0):
        return instantiate_gemm_wgmma(op, name, device, b_transposed, swiglu=True,
                                      halves=halves)
    p = Params(op)
    if not skinny_takes_swiglu(op) or (b_transposed and not skinny_reads_b_transposed(p)):
        return None
    rows, dtype = p.int("batch") * p.int("m"), p.str("dtype", "f32")
    out_dtype = p.str("out_dtype", dtype)
    if b_transposed:
        return None, gemm_skinny_k_major(name, rows, p.int("n"), p.int("k"), IDENTITY_EPILOGUE,
                                         dtype=dtype, out_dtype=out_dtype, swiglu=True,
                                         halves=halves)
    return None, gemm_skinny(name, rows, p.int("n"), p.int("k"), IDENTITY_EPILOGUE,
                             dtype=dtype, out_dtype=out_dtype, swiglu=True)


def instantiate_gemm_split_sum(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)
    return gemm_split_sum(name, p.int("batch"), p.int("m"), p.int("n"), p.int("split_k"),
                          epilogue_of(op, name), dtype=p.str("dtype", "f32"))


def instantiate_norm(op: kernel.TemplateOp, name: str, device: DeviceInfo | None) -> KernelSource:
    p = Params(op)
    return layer_norm(
        name,
        p.int("rows"),
        p.int("cols"),
        p.float("eps"),
        residual=p.bool("residual"),
        rms=op.template.data == "rms_norm",
        has_beta=p.bool("has_beta"),
        device_info=device,
        dtype=p.str("dtype", "f32"),
    )


def instantiate_softmax(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)
    return softmax(name, p.int("rows"), p.int("cols"), device_info=device,
                   dtype=p.str("dtype", "f32"))


def instantiate_attention(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)

    def layout(which: str) -> HeadsLayout:
        return HeadsLayout(row_stride=p.int(f"{which}_row_stride"),
                           column_offset=p.int(f"{which}_offset"))

    sizes = (name, p.int("batch"), p.int("seq_q"), p.int("seq_k"), p.int("num_heads"),
             p.int("head_dim"), p.float("scale"))
    options = {"causal": p.bool("causal"), "has_mask": p.bool("has_mask"),
               "q_layout": layout("q"), "k_layout": layout("k"), "v_layout": layout("v"),
               "mask_dtype": p.str("mask_dtype"), "dtype": p.str("dtype", "f32"),
               "kv_heads": p.int("kv_heads", p.int("num_heads"))}
    # a 16-bit attention whose result is stored in f32 (`fuse-attention-cast`): not the CPU
    # kernel's (f32 only)
    stored = p.str("out_dtype", options["dtype"])
    window = p.int("window", 0) or None  # a sliding window: the one-query-per-item kernel
    if window is not None:
        return attention(*sizes, **options, window=window, out_dtype=stored)
    # f32 on a CPU: the kernel on explicit float8 vectors (attention_cpu.why_not says when not)
    if cpu_attention.why_not(device, options["dtype"], p.int("head_dim"), p.int("seq_q"),
                             p.int("seq_k")) is None:
        return attention_cpu(*sizes, **options)
    # 16-bit q/k/v on a device whose mma.sync builds take the tensor-core kernel
    # (attention_mma.why_not says when not: head_dim not a multiple of 16, a driver without
    # the PTX, the switch off); other GPUs get the register-tiled kernel where its local memory
    # holds the tiles (H100, B=32 S=128 D=64: see attention_tiled's docstring); a CPU otherwise
    # keeps one query per work-item.
    if tensor_core_attention.why_not(device, p.str("dtype", "f32"), p.int("head_dim"),
                                     p.bool("has_mask")) is None:
        return attention_mma(*sizes, **options, out_dtype=stored)
    config = None if device is None or device.is_cpu else tiled_attention_config(
        p.int("head_dim"), p.bool("has_mask"), device.local_mem_size,
        device.max_work_group_size)
    if config is not None:
        return attention_tiled(*sizes, **options, query_threads=config[0],
                               key_threads=config[1], out_dtype=stored)
    return attention(*sizes, **options, out_dtype=stored)


def instantiate_cache_attention(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    """``nn.cache_attention``: the one-query-per-work-item `attention` kernel with the cache
    position and grouped kv heads (on every device for now)."""
    p = Params(op)
    return attention(name, p.int("batch"), p.int("seq_q"), p.int("seq_k"), p.int("num_heads"),
                     p.int("head_dim"), p.float("scale"),
                     q_layout=HeadsLayout(row_stride=p.int("q_row_stride"),
                                          column_offset=p.int("q_offset")),
                     dtype=p.str("dtype", "f32"), kv_heads=p.int("kv_heads"),
                     cache_position=True)


def instantiate_cache_attention_split(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    """``nn.cache_attention`` split along the keys (two launches, `cache_attention_split`)."""
    p = Params(op)
    if op.template.data == "cache_attention_combine":
        return cache_attention_combine(name, p.int("rows"), p.int("head_dim"), p.int("splits"),
                                       p.str("dtype", "f32"))
    return cache_attention_split(name, p.int("batch"), p.int("seq_q"), p.int("seq_k"),
                                 p.int("num_heads"), p.int("kv_heads"), p.int("head_dim"),
                                 p.float("scale"), p.int("splits"), p.int("q_row_stride"),
                                 p.int("q_offset"), p.str("dtype", "f32"))


def instantiate_cache_update(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)
    return cache_update(name, p.int("outer"), p.int("length"), p.int("rows"), p.int("inner"),
                        p.str("dtype"), p.bool("copy"),
                        p.int("update_row_stride", 0) or None, p.int("update_offset", 0))


def instantiate_argmax(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)
    return argmax(name, p.int("rows"), p.int("cols"), p.str("dtype"), p.int("group", 1))


def instantiate_gather(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)
    return gather(name, p.int("outer"), p.int("dim"), p.int("count"), p.int("inner"),
                  p.str("dtype"), device is None or device.int64_atomics)


def instantiate_row_reduce(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    p = Params(op)
    assert op.epilogue is not None, "a row_reduce template carries its row body"
    width = (1 if device is not None and not device.is_cpu
             else min(device.float_vector_width, 16) if device is not None
             else ROW_REDUCE_VECTOR_WIDTH)
    out = op.outputs[0].type.element_type  # type: ignore[attr-defined]
    shape = tuple(op.outputs[0].type.get_shape())  # type: ignore[attr-defined]
    axis = p.int("axis", len(shape) - 1)
    layout = None
    if axis != len(shape) - 1:  # strided rows: read and stored one element at a time
        width = 1
        layout = strided_row_input("out", None, shape, axis)
    functions, stages = stage_functions(name, op.epilogue.block, width, out)
    inputs = row_inputs(op.inputs, op.outputs[0], axis)
    return row_reduce(name, p.int("rows"), p.int("cols"), inputs, stages, functions,
                      width=width, device_info=device, out_dtype=str(out), out_layout=layout)


ROW_REDUCE_VECTOR_WIDTH = 8
"""Floats per vector of a CPU row_reduce kernel when the device is unknown (AVX2); a known CPU
gets its native float vector (16 with AVX-512: written-out softmax 6144 x 128 0.34 -> 0.26 ms,
LayerNorm 512 x 768 0.067 -> 0.046 ms, best of 30 launches, 2 Zen 4 cores)."""


def instantiate_column_stats(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    """The column-statistics kernels (``codegen/kernels/column_stats.py``)."""
    p = Params(op)
    template = op.template.data
    cpu = p.str("shape", "gpu") == "cpu"  # the lowering's device kind, not this device's
    width = device.float_vector_width if device is not None else 8
    if template == "column_mean":
        if cpu:
            return column_mean_cpu(name, p.int("rows"), p.int("cols"), width)
        return column_mean(name, p.int("rows"), p.int("cols"))
    tile = p.int("tile", 16)
    if template == "centered_gram":
        if cpu:
            return centered_gram_cpu(name, p.int("rows"), p.int("cols"),
                                     float_expression(p.float("scale")), tile, width)
        return centered_gram(name, p.int("rows"), p.int("cols"), p.float("scale"), tile)
    if template == "gemm_column_sums":
        if cpu:
            return gemm_column_sums_cpu(name, p.int("m"), p.int("k"), p.int("c"), p.str("mode"),
                                        tile, width)
        return gemm_column_sums(name, p.int("m"), p.int("k"), p.int("c"), p.str("mode"), tile)
    if cpu:
        return column_finish_cpu(name, p.int("parts"), p.int("m"), p.int("c"), p.str("mode"),
                                 float_expression(p.float("eps")))
    return column_finish(name, p.int("parts"), p.int("m"), p.int("c"), p.str("mode"),
                         p.float("eps"), tile)


def instantiate_gram_split(
    op: kernel.TemplateOp, name: str, device: DeviceInfo | None
) -> KernelSource:
    """The GPU centered Gram in two launches (``codegen/kernels/centered_gram_split.py``)."""
    p = Params(op)
    sizes = (p.int("n"), p.int("d"), p.int("slice_rows"))
    if op.template.data == "gram_slices":
        return gram_slices(name, *sizes)
    return gram_combine(name, *sizes, p.float("scale"))


INSTANTIATE: dict[str, Callable[[kernel.TemplateOp, str, DeviceInfo | None], KernelSource]] = {
    "gemm": instantiate_gemm,
    "gemm_split_sum": instantiate_gemm_split_sum,
    "layer_norm": instantiate_norm,
    "rms_norm": instantiate_norm,
    "softmax": instantiate_softmax,
    "attention": instantiate_attention,
    "gather": instantiate_gather,
    "cache_update": instantiate_cache_update,
    "cache_attention": instantiate_cache_attention,
    "cache_attention_split": instantiate_cache_attention_split,
    "cache_attention_combine": instantiate_cache_attention_split,
    "argmax": instantiate_argmax,
    "row_reduce": instantiate_row_reduce,
    "column_mean": instantiate_column_stats,
    "centered_gram": instantiate_column_stats,
    "gemm_column_sums": instantiate_column_stats,
    "column_finish": instantiate_column_stats,
    "gram_slices": instantiate_gram_split,
    "gram_combine": instantiate_gram_split,
}


def instantiate(op: kernel.TemplateOp, name: str, device: DeviceInfo | None,
                rhs_panels: int | None = None) -> TemplateInstance:
    """The kernel for ``op`` named ``name``; its buffers are the op's inputs, outputs, extras.
    `rhs_panels`: a ``gemm``'s B is stored in panels of that width (`gemm_rhs_panel_width`)."""
    template = op.template.data
    if template not in INSTANTIATE:
        raise ValueError(f"unknown kernel template '{template}' (known: {', '.join(INSTANTIATE)})")
    if rhs_panels is not None:
        source = instantiate_gemm(op, name, device, rhs_panels)
    else:
        source = INSTANTIATE[template](op, name, device)
    buffers = (*op.inputs, *op.outputs, *op.extras)
    checks_indices = bool(source.args) and source.args[-1] == INDEX_ERRORS_ARG
    args = source.args[:-1] if checks_indices else source.args
    buffer_args = [a for a in args if a.kind in ("in", "out")]
    if len(buffer_args) != len(buffers) or len(buffer_args) != len(args):
        raise ValueError(
            f"template '{template}' takes {[a.name for a in source.args]}, but the op binds "
            f"{len(buffers)} buffers"
        )
    return TemplateInstance(source, buffers, checks_indices)
