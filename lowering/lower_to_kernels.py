"""Lowers tensor functions to the kernel-level IR: a host schedule over buffers plus kernels.

    tensor func.func of nn/fused ops  ->  func.func over memrefs of memref.alloc, kernel.launch,
                                          kernel.template, kernel.view, memref.get_global
                                          + one kernel.func per generated kernel

Preconditions: every function takes and returns static ranked tensors of f32, f16, bf16 (held
in 16 bits, computed on in float32 registers), i32, i8 (a storage type: only casts compute on
it) or i1; every
op is an ``nn`` op or a fused op in ``NATIVE_FUSED_OPS`` (the ``lower-opencl`` pipeline runs
``unfuse`` on the others first). An op that cannot be lowered fails the pass with its name and
location; no tensor op is ever left behind.

How each op is lowered (tables in ``generated_ops`` and ``template_ops``):

- elementwise ``nn`` ops (through the ``scalar_ops`` tables), ``fused.elementwise``,
  ``fused.reduce``, the ``nn.reduce_*`` ops, ``nn.transpose``, ``nn.narrow``, ``nn.concat``,
  ``fused.swiglu`` and integer ``nn.matmul``: a generated ``kernel.func`` (``kernel_builder``)
  whose body is the op's scalar IR, launched with ``kernel.launch``;
- float ``nn.matmul``, ``fused.matmul_bias_act`` (bias and activation as an epilogue region of
  scalar IR), the norms, softmax and attention: ``kernel.template``;
- ``fused.row_reduce``: the ``row_reduce`` template, its body as the region (``row_reduce_ops``);
- ``fused.image_normalize``: the same template over planes, its body built from the op's
  properties (``image_normalize_ops``);
- ``fused.matmul_epilogue``: the ``gemm`` template with the body as its epilogue
  (``matmul_epilogue_ops``);
- ``nn.reshape``: ``kernel.view`` (no kernel); ``nn.constant``: a ``memref.global`` uploaded
  once, read with ``memref.get_global``.

This is a conversion of whole functions (every value changes type, from tensor to memref), so
the pass walks each function once in program order and builds its replacement; it is not a set
of independent rewrite patterns.

Before::

    func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
      %y = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      func.return %y : tensor<4x8xf32>
    }

After::

    func.func @f(%x: memref<4x8xf32>, %b: memref<8xf32>) -> memref<4x8xf32> {
      %y = memref.alloc() : memref<4x8xf32>
      kernel.launch @f_add_0(%x, %b, %y) {global_size = array<i64: 8>,
          local_size = array<i64: 8>} : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>
      func.return %y : memref<4x8xf32>
    }
    kernel.func @f_add_0(%in0: memref<4x8xf32>, %in1: memref<8xf32>, %out: memref<4x8xf32>) {
      ... float4 loads, arith.addf on vector<4xf32>, a float4 store
    }
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException, VerifyException

from fusec import knobs
from fusec.dialects import fused, kernel
from fusec.dialects.common import I8
from fusec.dialects.donation import aliased_outputs
from fusec.dialects.locations import stamp
from fusec.lowering.kernel_builder import (
    Access,
    LoopKernel,
    build_kernel,
    choose_reduce_width,
    choose_vector_width,
    identity_access,
    is_half_kernel,
)
from fusec.passes._util import OpPassFailure

SUPPORTED_ELEMENT_TYPES: tuple[Attribute, ...] = (
    Float32Type(), Float16Type(), BFloat16Type(), i32, i1, I8,
)

NATIVE_FUSED_OPS: tuple[str, ...] = (
    "fused.elementwise",
    "fused.reduce",
    "fused.row_reduce",
    "fused.matmul_bias_act",
    "fused.matmul_epilogue",
    "fused.residual_layer_norm",
    "fused.residual_rms_norm",
    "fused.swiglu",
    "fused.attention_block",
    "fused.transformer_layer",
    "fused.centered_gram",
    "fused.power_step_normalize",
    "fused.explained_variance",
    "fused.image_normalize",
)
"""Fused ops the OpenCL backend implements itself; ``lower-opencl`` un-fuses every other one."""


def non_native_fused_ops() -> list[str]:
    """The fused ops ``lower-opencl`` must un-fuse before ``lower-to-kernels``."""
    return [op.name for op in fused.FUSED_OPS if op.name not in NATIVE_FUSED_OPS]


DEVICES: tuple[str, ...] = ("cpu", "gpu")
"""The device kinds the generated kernels are shaped for (``lower-to-kernels{device=...}``)."""


def lower_opencl_spec(
    device: str | None = None,
    launch_budget: int | None = None,
    launch_fusion: bool = True,
    allow_oversized: bool = False,
    allow_tf32: bool = False,
    vector_width: int | None = None,
    max_work_group_size: int | None = None,
    gemm_whole_tile: int = 0,
) -> str:
    """The ``lower-opencl`` pipeline: un-fuse what the backend lacks, lower, merge adjacent
    launches (``fuse-launches``, unless ``launch_fusion`` is off), plan buffers; the lowering
    shapes its kernels for ``device`` and launch fusion uses ``launch_budget`` bytes (the
    passes' defaults when None), leaving kernels alone over it unfused with
    ``allow_oversized``; ``allow_tf32`` lets f32 matmuls use TF32 tensor cores;
    ``vector_width`` is the elementwise kernels' (the pass's default, 4, when None); a GPU
    whose ``max_work_group_size`` is below the pass's ``gpu-pointwise-local-size`` gets that;
    ``gemm_whole_tile``: products of whole tiles of it are not split along K (a device with
    Hopper's ``wgmma`` GEMM)."""
    unfuse = non_native_fused_ops()
    first = f"unfuse{{ops={','.join(n.removeprefix('fused.') for n in unfuse)}}}," if unfuse else ""
    options = " ".join([*([f"device={device}"] if device else []),
                        *(["allow-tf32=true"] if allow_tf32 else []),
                        *([f"vector-width={vector_width}"] if vector_width else []),
                        *([f"gemm-whole-tile={gemm_whole_tile}"] if gemm_whole_tile else []),
                        *([f"gpu-pointwise-local-size={_power_of_2_below(max_work_group_size)}"]
                          if max_work_group_size and max_work_group_size < GPU_POINTWISE_LOCAL
                          else [])])
    lowering = f"lower-to-kernels{{{options}}}" if options else "lower-to-kernels"
    fusion = ""
    if launch_fusion:
        options = []
        if launch_budget is not None:
            options.append(f"budget={launch_budget}")
        if allow_oversized:
            options.append("allow-oversized=true")
        fusion = f"fuse-launches{{{' '.join(options)}}}," if options else "fuse-launches,"
    return f"{first}{lowering},{fusion}plan-buffers"


class LoweringError(Exception):
    """Raised by an op's lowering when it cannot handle the op; becomes PassFailedException."""


def buffer_type(t: Attribute) -> MemRefType:
    """The memref type holding a value of tensor type ``t``."""
    if not isinstance(t, TensorType):
        raise LoweringError(f"values of type {t} are not tensors")
    if t.element_type not in SUPPORTED_ELEMENT_TYPES:
        raise LoweringError(
            f"element type {t.element_type} is not supported by the OpenCL backend "
            "(f32, f16, bf16, i32, i8 and i1 are)"
        )
    return MemRefType(t.element_type, t.get_shape())


GPU_POINTWISE_LOCAL = 256
"""The default of ``lower-to-kernels``'s ``gpu-pointwise-local-size``."""


def _power_of_2_below(n: int) -> int:
    """The largest power of 2 at most ``n`` (``n >= 1``)."""
    return 1 << (n.bit_length() - 1)


@dataclass(frozen=True)
class LoweringOptions:
    vector_width: int
    local_size: int
    group_reduce_min: int
    split_outputs: int
    device: str = "cpu"
    reduce_vector_width: int = 16
    cpu_chunk_min: int = 4096
    gemm_split_outputs: int = 1 << 19
    gemm_split_depth: int = 256
    allow_tf32: bool = False
    gpu_pointwise_local_size: int = GPU_POINTWISE_LOCAL
    gemm_whole_tile: int = 0


def viewed_buffer(value: SSAValue) -> SSAValue:
    """The buffer that ``value`` is, or is a ``kernel.view`` of."""
    while isinstance(value.owner, kernel.ViewOp):
        value = value.owner.source
    return value


def produces_nothing(op: Operation) -> bool:
    """Whether ``op`` has results and each is a tensor of no elements."""
    return bool(op.results) and all(
        isinstance(r.type, TensorType) and 0 in r.type.get_shape() for r in op.results)


class FunctionLowering:
    """Builds the host schedule of one function; the lowering functions call its helpers."""

    def __init__(self, module: ModuleOp, fn: func.FuncOp, options: LoweringOptions):
        self.module = module
        self.fn = fn
        self.options = options
        self.prefix = fn.sym_name.data
        self.block = Block(arg_types=[buffer_type(t) for t in fn.function_type.inputs.data])
        self.values: dict[SSAValue, SSAValue] = {}
        self.kernels: list[Operation] = []
        self.globals: list[Operation] = []
        self.counter = 0
        self.deferred: dict[SSAValue, Callable[[], SSAValue]] = {}
        """Values whose kernel is built only if something other than a special reader needs
        them (e.g. a slice of a packed q/k/v buffer that attention reads in place)."""
        self.loop_launches: dict[Operation, tuple[LoopKernel, int]] = {}
        """Each launch of a generated kernel: its spec and the kernel's index in `kernels`."""
        self.emitted: dict[Operation, list[Operation]] = {}
        """Tensor op -> the host ops (launches, templates, views, allocations) its lowering
        added, in order; what ``-t dot{kernels=true}`` draws."""
        for old, new in zip(fn.body.block.args, self.block.args, strict=False):
            new.name_hint = old.name_hint
            self.values[old] = new
        try:
            self.donated = aliased_outputs(fn)
            """Argument index -> the result index whose buffer it is (donated arguments)."""
        except VerifyException as e:
            raise LoweringError(str(e)) from None

    # --- helpers for the lowerings --------------------------------------------------------------

    def buffer(self, value: SSAValue) -> SSAValue:
        """The buffer holding tensor ``value``."""
        if value not in self.values and value in self.deferred:
            self.values[value] = self.deferred.pop(value)()
        return self.values[value]

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def reusable(self, value: SSAValue, op: Operation) -> bool:
        """Whether ``op`` may write its result into the buffer of its operand ``value``: the
        buffer is an intermediate or a donated argument (not a constant, not an argument the
        caller keeps), and no op after ``op`` reads ``value`` or another value held in that
        buffer (a reshape of it, an earlier update of it)."""
        if value in self.deferred:
            return False
        root = viewed_buffer(self.buffer(value))
        if isinstance(root, BlockArgument):
            if root.block is not self.block or root.index not in self.donated:
                return False
        elif not isinstance(root.owner, memref.AllocOp):
            return False
        for tensor, buffer in self.values.items():
            if viewed_buffer(buffer) is not root:
                continue
            for use in tensor.uses:
                user = use.operation
                if user is not op and (user.parent is not op.parent
                                       or not user.is_before_in_block(op)):
                    return False
        return True

    def alloc(self, t: Attribute, hint: str | None = None) -> SSAValue:
        result = self.add(memref.AllocOp([], [], buffer_type(t))).results[0]
        result.name_hint = hint
        return result

    def name(self, kind: str) -> str:
        self.counter += 1
        return f"{self.prefix}_{kind}_{self.counter - 1}"

    def launch(
        self,
        kind: str,
        buffers: Sequence[SSAValue],
        parallel: Sequence[int],
        loads: list[Access],
        body: Block,
        store: Access,
        reduced: Sequence[int] = (),
        reduce_kind: str | None = None,
        arg_names: Sequence[str] | None = None,
        extra_stores: Sequence[Access] = (),
    ) -> None:
        """Generates a loop kernel over ``buffers`` (see ``kernel_builder``) and launches it.

        On a GPU a reduction of many elements per output runs a work-group per output; on a
        CPU a work-item per output reads them contiguously (as vectors where it can). When
        there are few outputs, either way several work-groups (GPU) or work-items (CPU) share
        each output and a second kernel combines their partial results."""
        if math.prod(parallel) == 0:
            return  # an empty result: nothing to compute
        spec = self.loop_kernel(kind, buffers, parallel, loads, body, store, reduced, reduce_kind,
                                tuple(extra_stores))
        count = math.prod(reduced) if reduced else 0
        per_output = self.options.split_outputs // math.prod(parallel)
        if self.options.device == "cpu":
            split = min(count // self.options.cpu_chunk_min, per_output)
        elif count < self.options.group_reduce_min:
            split = 1
        else:
            spec.group_reduce = True
            split = min(count // (self.options.local_size * 16), per_output)
        if split <= 1:
            self.emit_launch(spec, buffers, arg_names)
        else:
            self.split_reduction(kind, spec, buffers, split, count, arg_names)

    def loop_kernel(
        self,
        kind: str,
        buffers: Sequence[SSAValue],
        parallel: Sequence[int],
        loads: list[Access],
        body: Block,
        store: Access,
        reduced: Sequence[int],
        reduce_kind: str | None,
        extra_stores: tuple[Access, ...] = (),
    ) -> LoopKernel:
        types = [b.type for b in buffers]
        assert all(isinstance(t, MemRefType) for t in types)
        spec = LoopKernel(
            self.name(kind),
            types,  # type: ignore[arg-type]
            tuple(parallel),
            loads,
            body,
            store,
            reduced=tuple(reduced),
            reduce_kind=reduce_kind,
            local_size=(self.options.gpu_pointwise_local_size
                        if self.options.device == "gpu" and not reduced
                        else self.options.local_size),
            extra_stores=extra_stores,
        )
        aligned = self.options.device == "gpu" and knobs.value("gpu_half_vectors")
        spec.vector_width = choose_vector_width(spec, self.options.vector_width,
                                                half=self.options.device == "cpu",
                                                aligned_half=aligned)
        spec.aligned = aligned and spec.vector_width > 1 and is_half_kernel(spec)
        if self.options.device == "cpu":
            spec.reduce_width = choose_reduce_width(spec, self.options.reduce_vector_width)
        return spec

    def emit_launch(
        self, spec: LoopKernel, buffers: Sequence[SSAValue], arg_names: Sequence[str] | None
    ) -> None:
        fn = build_kernel(spec)
        names = arg_names or [*(f"in{i}" for i in range(len(buffers) - 1)), "out"]
        for arg, hint in zip(fn.args, names, strict=False):
            arg.name_hint = hint
        self.kernels.append(fn)
        global_size, local_size = spec.launch_sizes()
        launch = self.add(kernel.LaunchOp(SymbolRefAttr(spec.name), buffers, global_size,
                                          local_size))
        self.loop_launches[launch] = (spec, len(self.kernels) - 1)

    def scalar_where_it_merges(self) -> None:
        """Launches a 16-bit kernel that `choose_vector_width` gave vectors (a CPU's) one
        element a work-item again where, so launched, it would merge with the launch before or
        after it (``fuse-launches`` merges launches of one layout key only, `pointwise_key`):
        a copy of values into a cache beside the rotary embedding of the same rows, say, is one
        launch rather than two. Float32 kernels keep the widths they had before 16-bit ones
        took vectors."""
        from fusec.lowering.fuse_launches import pointwise_key

        launches = [op for op in self.block.ops
                    if isinstance(op, kernel.LaunchOp | kernel.TemplateOp)]

        def key(op: Operation | None) -> Any:
            if op not in self.loop_launches:
                return None
            assert isinstance(op, kernel.LaunchOp)
            return pointwise_key(self.kernels[self.loop_launches[op][1]], *op.sizes())

        for k, launch in enumerate(launches):
            before = launches[k - 1] if k else None
            after = launches[k + 1] if k + 1 < len(launches) else None
            if launch not in self.loop_launches:
                continue
            spec, index = self.loop_launches[launch]
            if spec.vector_width == 1 or not is_half_kernel(spec):
                continue
            scalar = dataclasses.replace(spec, vector_width=1)
            fn = build_kernel(scalar)
            sizes = scalar.launch_sizes()
            mine = pointwise_key(fn, tuple(sizes[0]), tuple(sizes[1]))
            if mine is None or mine not in (key(before), key(after)):
                continue
            old = self.kernels[index]
            for arg, hint in zip(fn.args, old.args, strict=True):
                arg.name_hint = hint.name_hint
            fn.location = old.location
            self.kernels[index] = fn
            self.loop_launches[launch] = (scalar, index)
            launch.properties["global_size"] = kernel.ints(sizes[0])
            launch.properties["local_size"] = kernel.ints(sizes[1])

    def split_reduction(
        self,
        kind_name: str,
        spec: LoopKernel,
        buffers: Sequence[SSAValue],
        split: int,
        count: int,
        arg_names: Sequence[str] | None,
    ) -> None:
        """Two launches: ``split`` work-groups (GPU) or work-items (CPU) per output write
        partial results to a ``[outputs..., split]`` buffer, then one work-item per output
        combines them."""
        out = buffers[spec.store.arg]
        out_type = out.type
        assert isinstance(out_type, MemRefType)
        rank = len(spec.parallel)
        partial_type = MemRefType(out_type.element_type, [*spec.parallel, split])
        partial = self.add(memref.AllocOp([], [], partial_type)).results[0]
        partial.name_hint = "partials"
        kind = spec.reduce_kind or "sum"
        first = dataclasses.replace(
            spec,
            arg_types=[*spec.arg_types[: spec.store.arg], partial_type,
                       *spec.arg_types[spec.store.arg + 1 :]],
            parallel=(*spec.parallel, split),
            store=Access(spec.store.arg, tuple((d, 0) for d in range(rank + 1))),
            reduce_kind="sum" if kind == "mean" else kind,
            split=split,
        )
        stage_one = [*buffers[: spec.store.arg], partial, *buffers[spec.store.arg + 1 :]]
        self.emit_launch(first, stage_one, arg_names)
        elem = out_type.element_type
        identity = Block(arg_types=[elem])
        identity.add_op(fused.YieldOp(identity.args[0]))
        second = self.loop_kernel(
            f"{kind_name}_parts",
            [partial, out],
            spec.parallel,
            [Access(0, tuple((d, 0) for d in range(rank + 1)))],
            identity,
            Access(1, spec.store.index),
            (split,),
            kind,
        )
        second.mean_count = count
        self.emit_launch(second, [partial, out], ["partials", "out"])

    def template(
        self,
        name: str,
        params: dict[str, Attribute],
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        extras: Sequence[SSAValue] = (),
        epilogue: Block | None = None,
    ) -> None:
        region = Region(epilogue) if epilogue is not None else None
        self.add(kernel.TemplateOp(name, params, inputs, outputs, extras, region))

    def stand_in(self, buffer: SSAValue, shape: Sequence[int]) -> SSAValue:
        """A detached tensor value standing for the intermediate ``buffer``, so that helpers
        written for tensor values (which look up their buffer) can take it."""
        mtype = buffer.type
        assert isinstance(mtype, MemRefType)
        value = Block(arg_types=[TensorType(mtype.element_type, list(shape))]).args[0]
        self.values[value] = buffer
        return value

    def global_constant(self, value: Attribute, t: MemRefType) -> SSAValue:
        sym = self.name("cst")
        self.globals.append(
            memref.GlobalOp.get(StringAttr(sym), t, value, constant=UnitAttr())
        )
        return self.add(memref.GetGlobalOp(sym, t)).results[0]

    # --- the walk -------------------------------------------------------------------------------

    def run(self, lowerings: dict[type[Operation], Callable[..., list[SSAValue]]]) -> None:
        for op in self.fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                self.add(func.ReturnOp(*self.returned_buffers(op)))
                continue
            lower = lowerings.get(type(op))
            if lower is None:
                raise self.failure(op, self.unsupported(op))
            last = self.block.last_op
            kernels, globals_ = len(self.kernels), len(self.globals)
            try:
                results = (self.empty_results(op) if produces_nothing(op)
                           else lower(self, op))
            except LoweringError as e:
                raise self.failure(op, str(e)) from None
            added = last.next_op if last is not None else self.block.first_op
            self.emitted[op] = []
            while added is not None:
                self.emitted[op].append(added)
                added = added.next_op
            # What this op became carries its location (a kernel's build or launch error
            # names it): its host ops, its kernels and its constants.
            stamp([*self.emitted[op], *self.kernels[kernels:], *self.globals[globals_:]],
                  op.location)
            for old, new in zip(op.results, results, strict=False):
                if old in self.deferred:
                    continue
                if new.name_hint is None:
                    new.name_hint = old.name_hint
                self.values[old] = new

    def returned_buffers(self, ret: func.ReturnOp) -> list[SSAValue]:
        """The buffers ``ret`` returns: a result that a donated argument's buffer holds is that
        argument (the value copied into it unless it is already there); any other result held
        in a donated argument's buffer is copied out first, before that buffer is written."""
        buffers = [self.buffer(v) for v in ret.operands]
        donors = {self.block.args[a]: r for a, r in self.donated.items()}
        for i, (value, buffer) in enumerate(zip(ret.operands, buffers, strict=True)):
            root = viewed_buffer(buffer)
            if root in donors and donors[root] != i:
                buffers[i] = self.copy(value, buffer)
        for arg, i in donors.items():
            if viewed_buffer(buffers[i]) is not arg:
                self.copy(ret.operands[i], buffers[i], into=arg)
                buffers[i] = arg
        return buffers

    def copy(self, value: SSAValue, buffer: SSAValue,
             into: SSAValue | None = None) -> SSAValue:
        """A launch copying ``buffer`` (holding tensor ``value``) into ``into`` (default: a new
        buffer); the buffer written."""
        from fusec.lowering.generated_ops import copy_kernel

        out = into if into is not None else self.alloc(value.type, value.name_hint)
        shape = tuple(value.type.get_shape())  # type: ignore[attr-defined]
        if math.prod(shape) == 0:
            return out
        rank = len(shape)
        copy_kernel(self, "copy", self.stand_in(buffer, shape), out, shape,
                    identity_access(0, rank), identity_access(1, rank))
        return out

    def empty_results(self, op: Operation) -> list[SSAValue]:
        """The buffers of an op whose every result has no elements: allocated, nothing to
        compute (a template kernel, a GEMM or a norm, takes no empty size)."""
        return [self.alloc(r.type, r.name_hint) for r in op.results]

    @staticmethod
    def unsupported(op: Operation) -> str:
        if op.dialect_name() == "fused":
            return "this fused op is not implemented natively; run unfuse on it first"
        return "the OpenCL backend has no lowering for it"

    @staticmethod
    def failure(op: Operation, why: str) -> OpPassFailure:
        return OpPassFailure("lower-to-kernels", op, f"cannot lower '{op.name}': {why}")

    def replacement(self) -> func.FuncOp:
        result_types = [self.buffer_result_type(t) for t in self.fn.function_type.outputs.data]
        new = func.FuncOp(
            self.prefix,
            (self.block.arg_types, result_types),
            Region(self.block),
            self.fn.sym_visibility,
            arg_attrs=self.fn.arg_attrs,
        )
        new.location = self.fn.location
        return new

    def buffer_result_type(self, t: Attribute) -> MemRefType:
        try:
            return buffer_type(t)
        except LoweringError as e:
            raise self.failure(self.fn, str(e)) from None


@dataclass(frozen=True)
class LowerToKernelsPass(ModulePass):
    name = "lower-to-kernels"

    vector_width: int = 4
    """Elements per work-item (float4 loads and stores) of elementwise kernels where the
    innermost dimension allows; 1 disables vectorisation."""

    local_size: int = 64
    """Work-group size of generated kernels (a power of 2); on a GPU, of those with a
    reduction (see ``gpu-pointwise-local-size``)."""

    gpu_pointwise_local_size: int = GPU_POINTWISE_LOCAL
    """GPU: work-group size of generated kernels without a reduction (elementwise regions,
    casts, stores of several results). On an H200 (NVIDIA OpenCL) cast_chain's kernel over 16M
    elements took 0.164 ms in groups of 64, 0.085 in groups of 128, 0.056 in groups of 256."""

    group_reduce_min: int = 256
    """Reductions of at least this many elements per output use a whole work-group per output
    (a tree in local memory) instead of one work-item."""

    split_outputs: int = 256
    """A reduction with fewer outputs than this spreads each output's elements over several
    work-groups (GPU) or work-items (CPU), about ``split-outputs`` in all; a second kernel
    combines them."""

    device: str = "cpu"
    """The device kind the generated kernels are shaped for: ``cpu`` (a work-item folds a
    contiguous run of a reduction, ``reduce-vector-width`` elements at a time) or ``gpu``
    (work-group trees for long reductions, see ``group-reduce-min``)."""

    reduce_vector_width: int = 16
    """CPU: elements of a contiguous reduction folded at once, as one vector (float16: two
    AVX2 registers, so two independent chains of adds; sum of 16M 2.88 -> 2.58 ms against
    float8, rows of 128-20000 as fast or faster); 1 disables."""

    cpu_chunk_min: int = 4096
    """CPU: a reduction with few outputs is split into chunks of at least this many
    elements."""

    gemm_split_outputs: int = 1 << 19
    """GPU: a float matmul with fewer output elements than this (2^19: 128 of the GPU GEMM's
    64x64 tiles, about one per SM of an H200) is split along K into enough parts to reach it,
    each part at least ``gemm-split-depth`` deep; a second kernel adds the parts and applies
    the epilogue. 0 disables."""

    gemm_split_depth: int = 256
    """GPU: the least depth (K) of one part of a matmul split along K."""

    allow_tf32: bool = False
    """Let f32 matmuls run on tensor cores in TF32 (operands rounded to 10 mantissa bits,
    float32 accumulation), as PyTorch's ``allow_tf32``, where the device has them; off, f32
    matmuls are computed in float32."""

    gemm_whole_tile: int = 0
    """GPU: a tensor-core matmul (16-bit, or f32 with ``allow-tf32``) whose rows and columns
    are whole multiples of this and whose K is of 64 is never split along K: the device runs
    such products on a kernel that fills it without a split (Hopper's ``wgmma`` GEMM, 128, which
    the driver sets where the device has it). 0: no such kernel."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.lower(op)

    def lower(self, op: ModuleOp) -> dict[Operation, list[Operation]]:
        """Lowers every function of ``op`` in place; returns each tensor op's host ops."""
        from fusec.lowering.column_stats_ops import COLUMN_STATS_LOWERINGS
        from fusec.lowering.generated_ops import GENERATED_LOWERINGS
        from fusec.lowering.image_normalize_ops import IMAGE_NORMALIZE_LOWERINGS
        from fusec.lowering.matmul_epilogue_ops import MATMUL_EPILOGUE_LOWERINGS
        from fusec.lowering.row_reduce_ops import ROW_REDUCE_LOWERINGS
        from fusec.lowering.template_ops import TEMPLATE_LOWERINGS

        lowerings = {**GENERATED_LOWERINGS, **TEMPLATE_LOWERINGS, **ROW_REDUCE_LOWERINGS,
                     **MATMUL_EPILOGUE_LOWERINGS, **COLUMN_STATS_LOWERINGS,
                     **IMAGE_NORMALIZE_LOWERINGS}
        for option, value in (("local-size", self.local_size),
                              ("gpu-pointwise-local-size", self.gpu_pointwise_local_size)):
            if value <= 0 or value & (value - 1):
                raise PassFailedException(
                    f"lower-to-kernels: {option} must be a power of 2, got {value}")
        if self.device not in DEVICES:
            raise PassFailedException(
                f"lower-to-kernels: device must be one of {', '.join(DEVICES)}, "
                f"got '{self.device}'"
            )
        if self.reduce_vector_width not in (1, 2, 4, 8, 16):
            raise PassFailedException(
                "lower-to-kernels: reduce-vector-width must be 1, 2, 4, 8 or 16, "
                f"got {self.reduce_vector_width}"
            )
        if self.vector_width <= 0:  # 0 divided by zero, -1 built a kernel with lanes of -1
            raise PassFailedException(
                f"lower-to-kernels: vector-width must be positive, got {self.vector_width}"
            )
        if self.gemm_split_depth <= 0:
            raise PassFailedException(
                f"lower-to-kernels: gemm-split-depth must be positive, got {self.gemm_split_depth}"
            )
        if self.gemm_whole_tile < 0:
            raise PassFailedException(
                f"lower-to-kernels: gemm-whole-tile must be 0 (none) or positive, got "
                f"{self.gemm_whole_tile}"
            )
        if self.cpu_chunk_min <= 0:
            raise PassFailedException(
                f"lower-to-kernels: cpu-chunk-min must be positive, got {self.cpu_chunk_min}"
            )
        options = LoweringOptions(
            self.vector_width, self.local_size, self.group_reduce_min, self.split_outputs,
            self.device, self.reduce_vector_width, self.cpu_chunk_min,
            self.gemm_split_outputs, self.gemm_split_depth, self.allow_tf32,
            self.gpu_pointwise_local_size, self.gemm_whole_tile,
        )
        emitted: dict[Operation, list[Operation]] = {}
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if fn.is_declaration:
                raise OpPassFailure(
                    "lower-to-kernels", fn,
                    f"cannot lower @{fn.sym_name.data}: it is a declaration (no body)",
                )
            try:
                lowering = FunctionLowering(op, fn, options)
            except LoweringError as e:
                raise OpPassFailure(
                    "lower-to-kernels",
                    fn,
                    f"cannot lower the arguments of @{fn.sym_name.data}: {e}",
                ) from None
            lowering.run(lowerings)
            lowering.scalar_where_it_merges()
            new = lowering.replacement()
            Rewriter.replace_op(fn, new)
            if lowering.globals:
                op.body.block.insert_ops_before(lowering.globals, new)
            for k in reversed(lowering.kernels):
                op.body.block.insert_op_after(k, new)
            emitted |= lowering.emitted
        return emitted
