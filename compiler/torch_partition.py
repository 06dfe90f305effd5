"""One aten graph at one set of shapes, run by fusec where it can and by PyTorch elsewhere.

    compiled = compile_aten_graph(gm, args, bound={0, 1}, options)   # args: real tensors
    outputs = compiled.module(*args)                                   # a torch.fx.GraphModule

The graph's nodes that `torch_ops.unsupported_reason` accepts are grouped by PyTorch's
capability-based partitioner into partitions without cycles; each partition becomes a
`FusecPartition` (a ``torch.nn.Module`` that holds one fusec executable) called by the outer
graph module, and every other node stays a PyTorch op there (`CompiledGraph.fallback_ops`
lists them with the reason). A partition whose import or compilation fails is left to PyTorch
too, with the error as its reason: no graph is refused whole. In-place ops (a static KV
cache's ``index_copy_``) run in PyTorch with the views and early reads of what they change
(`fusec.compiler.torch_mutation`).

Tensors at a partition's boundary (`TensorBridge`): CPU tensors go in as numpy arrays over their
memory (``np.from_dlpack``, no copy when contiguous) and come out as tensors over the result
arrays (``torch.from_numpy``, no copy). CUDA tensors on NVIDIA's OpenCL, by default: the kernels
launch through the CUDA driver on PyTorch's stream (`fusec.runtime.cuda_launch`, options
``cuda_launch`` and ``cuda_graphs``), the tensors read and written in place; the bounds of the
int64 and indexing inputs are read into page-locked memory behind the launches, and the call
waits for that read alone and refuses a bad value before it returns. Otherwise CUDA tensors go
through `fusec.runtime.cuda_interop` (one device-to-device copy in, none out), as follows. int64
inputs are range-checked and narrowed to int32 (the IR's integer type), and int64 outputs
widened back; bf16 travels as its bit patterns.

Through OpenCL, a call with CUDA tensors waits on the host once, for PyTorch's stream before its
inputs cross (reading, in that wait, the least and greatest values of int64 inputs and of the
inputs that kernels index with, so that a bad one is refused before any kernel runs). Its
outputs are handed over at once, PyTorch's stream made to wait on the GPU for the kernels that
write them (`cuda_interop.StreamOrder`), where every index the program's kernels check is such a
whole input (``options={"overlap": False}``, or computed indices, wait on the host instead). So
the host's work between two calls (PyTorch's guards, the next call's checks) overlaps the GPU's.

Bound inputs (parameters, buffers) are bound to the device when the partition is compiled:
over the tensor's own memory where the executable stores its bytes as they are, whole or as a
range of a folded weight's buffer, else copied (`fusec.compiler.torch_weights`: a model's
weights held once; a tensor may be moved to memory fusec can use in place, its ``.data``
replaced). Each call compares every bound tensor with what was bound (the same tensor object,
its ``data_ptr`` and its ``_version``, which an in-place change such as an optimizer step or
``load_state_dict`` increments): a changed one is bound again (`Executable.bind`; nothing to
do where it is bound over its memory), or, where the compiler folded it into another weight
(`fold_params`), the partition is compiled again, unless the folded weight's buffer holds the
tensor's memory as it is now (`PartitionWeights.holds`: the change is in what the kernels
read). A tensor that fusec itself moved (for another partition) kept its values: no change.
"""

from __future__ import annotations

import operator
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fusec import knobs as knob_registry
from fusec.compiler.diagnostics import FusecError
from fusec.compiler.torch_autocast import REFUSED, explicit_autocast
from fusec.compiler.torch_mutation import Mutations
from fusec.compiler.torch_weights import PartitionWeights, WeightCounts, moved_since, weight_counts
from fusec.codegen.plan import IndexCheck
from fusec.errors import InputError
from fusec.frontends.torch_fx import (
    ImportedGraph,
    TorchImportError,
    host_array,
    import_graph,
    is_index_like,
)
from fusec.frontends.torch_ops import constant_nodes, unsupported_reason
from fusec.runtime.device import OpenCLDevice
from fusec.runtime.errors import DeviceError

INT32_RANGE = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class Options:
    """The backend's options (``torch.compile(..., options={...})``)."""

    device: str = "auto"
    report: str | None = None
    allow_tf32: bool = False
    launch_budget: int | None = None
    pipeline: str = "default"
    max_variants: int = 8
    overlap: bool = True
    """With CUDA tensors, hand a partition's outputs over before its kernels finish, PyTorch's
    stream ordered after them on the GPU (`cuda_interop.StreamOrder`), so that the host's work
    for the next call overlaps the GPU's; only where every index the kernels read is a whole
    call input, refused on the host if bad. False: the host waits for the kernels."""
    knobs: dict[str, bool] = field(default_factory=dict)
    """Code-generation knobs set for this graph's compiles (`fusec.knobs`)."""
    hold_weights_once: bool = True
    """With CUDA tensors, hold the parameters fusec stores as they are once, in fusec's
    memory, their ``.data`` over it (`fusec.compiler.torch_weights`). False: PyTorch keeps
    its parameters' memory and fusec holds copies of them. CPU tensors are held once whatever
    this says."""
    cuda_launch: bool = True
    """With CUDA tensors on NVIDIA's OpenCL, launch the kernels through the CUDA driver on
    PyTorch's stream (`fusec.runtime.cuda_launch`): the tensors are read and written in
    place, one CUDA context. False: through OpenCL, the tensors handed between the two."""
    cuda_graphs: bool = True
    """With `cuda_launch`, record each partition's launches once into a CUDA graph and replay
    it (inputs and outputs copied through the graph's own tensors). False: one
    ``cuLaunchKernel`` a kernel at every call."""

    @staticmethod
    def parse(options: dict[str, Any] | None) -> Options:
        known = {"device", "report", "allow_tf32", "launch_budget", "pipeline", "max_variants",
                 "overlap", "knobs", "hold_weights_once", "cuda_launch", "cuda_graphs"}
        options = dict(options or {})
        unknown = sorted(set(options) - known)
        if unknown:
            raise FusecError(f"fusec backend: unknown option '{unknown[0]}' (options: "
                             f"{', '.join(sorted(known))})")
        if options.get("device", "auto") not in ("auto", "gpu", "cpu"):
            raise FusecError(f"fusec backend: device '{options['device']}' is not one of auto, "
                             "gpu, cpu")
        for name in ("overlap", "hold_weights_once", "cuda_launch", "cuda_graphs"):
            if not isinstance(options.get(name, True), bool):
                raise FusecError(f"fusec backend: {name} takes True or False, not "
                                 f"{options[name]!r}")
        settings = options.get("knobs") or {}
        if not isinstance(settings, Mapping):
            raise FusecError(f"fusec backend: knobs takes a dict of knob names to values, not "
                             f"{settings!r}")
        try:
            options["knobs"] = knob_registry.checked(settings)
        except knob_registry.KnobError as e:
            raise FusecError(f"fusec backend: {e}") from None
        return Options(**options)


@dataclass
class PartitionStats:
    """What one partition compiled to, for the report."""

    ops_in: int
    fused_ops: Counter[str]
    kernel_launches: int


class TensorBridge:
    """Tensors in and out of one executable (see the module docstring).

    `checked`: the call inputs (by position) that kernels index with, read whole, each with
    the checks that read it (`fusec.codegen.plan.IndexCheck`): with CUDA tensors their least
    and greatest values are read in the wait every call makes for its inputs, and a bad one
    is refused before any kernel runs. When every check of the program is among them,
    `ordered` says so: the outputs may then be handed over before the kernels finish
    (`cuda_interop.to_torch_all`), PyTorch's stream ordered after them on the GPU."""

    def __init__(self, device: OpenCLDevice, cuda: bool):
        self.device = device
        self.cuda = cuda
        self.checked: dict[int, list[IndexCheck]] = {}
        self.ordered = False
        self.pinned: Any = None
        """Page-locked memory the bounds of CUDA-launched calls are read into (`cuda_bounds`):
        each ranged input's least value, then its greatest."""
        self.read: Any = None
        """The CUDA event after that read."""

    def index_inputs(self, checks: Sequence[IndexCheck], inputs: Sequence[str],
                     overlap: bool) -> None:
        """Takes the program's index checks (`checks`) over its call inputs (`inputs`, names
        in call order); `overlap`: the backend's option of that name."""
        position = {name: i for i, name in enumerate(inputs)}
        self.checked = {}
        for check in checks:
            if check.input in position:
                self.checked.setdefault(position[check.input], []).append(check)
        self.ordered = overlap and self.cuda and all(c.input in position for c in checks)

    def to_fusec(self, tensors: Sequence[Any]) -> list[Any]:
        """A call's input tensors as fusec takes them, crossing together: int64 ones narrowed
        to int32 after a range check. CUDA tensors are copied and checked with one wait on
        PyTorch's stream for them all (`cuda_interop.from_torch_all`), the indices of
        `checked` inputs too."""
        import torch

        if not self.cuda:
            wide = [t for t in tensors if t.dtype == torch.int64 and t.numel()]
            if wide:
                check_int32(torch.stack([torch.stack(torch.aminmax(t)) for t in wide]).tolist())
            return [host_array(t.to(torch.int32) if t.dtype == torch.int64 else t)
                    for t in tensors]
        from fusec.runtime.cuda_interop import from_torch_all

        if not tensors:  # PyTorch's reads of earlier outputs end before the kernels reuse them
            torch.cuda.current_stream().synchronize()
        arrays, bounds = from_torch_all(
            [(t.contiguous().view(torch.uint16) if t.dtype == torch.bfloat16 else t.contiguous())
             for t in tensors], self.device, narrow=True, bounded=self.checked)
        self.refuse(tensors, bounds)
        return arrays

    def refuse(self, tensors: Sequence[Any], bounds: Mapping[int, Sequence[int]]) -> None:
        """Refuses, by their least and greatest values (`bounds`, by position), an int64 input
        outside int32 and a `checked` input outside an axis it indexes."""
        import torch

        check_int32([b for i, b in bounds.items() if tensors[i].dtype == torch.int64])
        for i, checks in self.checked.items():
            if i in bounds:
                check_indices(tensors[i], bounds[i], checks)

    def cuda_bounds(self, tensors: Sequence[Any]) -> PendingBounds | None:
        """Where the kernels launch through CUDA (`fusec.runtime.cuda_launch`): starts reading
        the least and greatest values of a call's int64 inputs and of its `checked` ones into
        page-locked memory, behind what PyTorch's stream holds so far; None where there are
        none. The caller launches the kernels, then `PendingBounds.check` waits for that read
        alone (the kernels stay queued) and refuses a bad value before the outputs are
        returned. A kernel that meets a bad index reads a clamped one (`codegen.kernels.gather`),
        so the launches ahead of the check read no memory they should not."""
        import torch

        ranged = [i for i, t in enumerate(tensors)
                  if t.numel() and (t.dtype == torch.int64 or i in self.checked)]
        if not ranged:
            return None
        ends = torch.stack([end for i in ranged for end in torch.aminmax(
            tensors[i] if tensors[i].dtype == torch.int64 else tensors[i].to(torch.int64))])
        if self.pinned is None or self.pinned.shape != ends.shape:
            self.pinned = torch.empty(ends.shape, dtype=torch.int64, pin_memory=True)
            self.read = torch.cuda.Event()  # one a bridge: each call waits for its own read
        self.pinned.copy_(ends, non_blocking=True)
        self.read.record()
        return PendingBounds(self, tensors, ranged, self.read)

    def to_torch_all(self, values: Sequence[Any], dtypes: Sequence[Any]) -> list[Any]:
        """A call's results as tensors of `dtypes`."""
        import torch

        if self.cuda:
            from fusec.runtime.cuda_interop import to_torch_all

            tensors = to_torch_all(values, ordered=self.ordered)
            tensors = [t.view(torch.bfloat16) if dtype == torch.bfloat16 else t
                       for t, dtype in zip(tensors, dtypes, strict=True)]
        else:
            tensors = [torch.from_numpy(np.asarray(v).view(np.int16)).view(torch.bfloat16)
                       if dtype == torch.bfloat16 else torch.from_numpy(np.asarray(v))
                       for v, dtype in zip(values, dtypes, strict=True)]
        return [t if t.dtype == dtype else t.to(dtype)
                for t, dtype in zip(tensors, dtypes, strict=True)]


@dataclass
class PendingBounds:
    """The bounds of a call's inputs on their way to page-locked memory (`cuda_bounds`)."""

    bridge: TensorBridge
    tensors: Sequence[Any]
    ranged: list[int]
    done: Any
    """The CUDA event after the read."""

    def check(self) -> None:
        """Waits for the read and refuses an int64 input outside int32 and a `checked` input
        outside an axis it indexes."""
        self.done.synchronize()
        ends = self.bridge.pinned.tolist()
        self.bridge.refuse(self.tensors, {i: ends[2 * k:2 * k + 2]
                                          for k, i in enumerate(self.ranged)})


def check_indices(tensor: Any, bounds: tuple[int, int], checks: Sequence[IndexCheck]) -> None:
    """Refuses `tensor`, the whole of some kernels' indices, when its least or greatest value
    (`bounds`) is outside an axis that one of `checks` indexes: the error names the first bad
    position, as the kernel's own check would (found only then, at a cost)."""
    low, high = bounds
    for check in checks:
        if -check.dim <= low and high < check.dim:
            continue
        flat = tensor.reshape(-1)
        position = int(((flat < -check.dim) | (flat >= check.dim)).nonzero()[0, 0])
        value = int(flat[position])
        raise check.error((position << 32) | (value & 0xFFFFFFFF))


def check_int32(bounds: Sequence[Sequence[int]]) -> None:
    """Refuses int64 inputs whose (least, greatest) values in `bounds` fall outside int32."""
    for low, high in bounds:
        if low < INT32_RANGE[0] or high > INT32_RANGE[1]:
            bad = high if high > INT32_RANGE[1] else low
            raise InputError(f"an int64 input holds {bad}, outside the 32-bit range "
                             "fusec computes integers in")


class BoundTensors:
    """The bound inputs of a partition as they were bound, and which of them a call changed
    (`tensor_state`; kept light, since a model's every parameter is checked on every call)."""

    def __init__(self, args: Sequence[Any], positions: set[int]):
        import torch

        self.data_ptr = torch.Tensor.data_ptr
        """Called through its descriptor: no Python frame a tensor (`unchanged`)."""
        self.held = {i: (args[i], *tensor_state(args[i])[1:]) for i in sorted(positions)}
        self.layouts = {i: (tuple(args[i].shape), args[i].dtype) for i in self.held}
        """Each bound tensor's shape and dtype when it was bound."""
        self.in_place: set[int] = set()
        """The positions whose versions are not compared (`read_in_place`)."""
        self.tables()

    def read_in_place(self, positions: set[int]) -> None:
        """Compares no more the versions of the bound tensors at `positions`: their memory is
        what the kernels read (`FusecPartition.read_in_place`), in place changes and all."""
        self.in_place = positions & set(self.held)
        self.tables()

    def tables(self) -> None:
        """The tables `unchanged` and `changed` compare a call's arguments with."""
        held = self.held
        self.rows = [(i, *state) for i, state in held.items()]
        self.positions = list(held)
        self.tensors = [tensor for tensor, _, _ in held.values()]
        self.pointers = [pointer for _, pointer, _ in held.values()]
        watched = [(tensor, version) for i, (tensor, _, version) in held.items()
                   if version >= 0 and i not in self.in_place]
        self.versioned = [tensor for tensor, _ in watched]
        self.versions = [version for _, version in watched]

    def unchanged(self, args: Sequence[Any]) -> bool:
        """Whether every bound tensor is the one bound, at its address and version: a whole
        table at a time, a model's hundreds of parameters on every call. (PyTorch's own check
        of a table of addresses, ``torch._C._tensors_data_ptrs_at_indices_equal``, took as
        long on the H200's host: 15.5 us against 16.6 for GPT-2 small's 174.)"""
        if not all(map(operator.is_, map(args.__getitem__, self.positions), self.tensors)):
            return False
        return (list(map(self.data_ptr, self.tensors)) == self.pointers
                and list(map(version_of, self.versioned)) == self.versions)

    def changed(self, args: Sequence[Any]) -> list[int]:
        if self.unchanged(args):
            return []
        return [i for i, tensor, pointer, version in self.rows
                if args[i] is not tensor or tensor.data_ptr() != pointer
                or (version >= 0 and i not in self.in_place and tensor._version != version)]

    def relaid(self, args: Sequence[Any], positions: Sequence[int]) -> bool:
        """Whether one of the changed bound tensors at `positions` has another shape or
        dtype than when it was bound (then the partition is compiled again)."""
        return any((tuple(args[i].shape), args[i].dtype) != self.layouts[i] for i in positions)

    def moved(self, args: Sequence[Any], i: int) -> bool:
        """Whether the bound tensor at `i` changed only by a move of fusec's since it was
        bound (`torch_weights.moved_since`): the same object and version, the same values."""
        tensor, pointer, version = self.held[i]
        return (args[i] is tensor and moved_since(tensor, pointer)
                and (version < 0 or tensor._version == version))

    def update(self, args: Sequence[Any], i: int) -> None:
        self.held[i] = (args[i], *tensor_state(args[i])[1:])
        self.tables()


version_of = operator.attrgetter("_version")


def tensor_state(tensor: Any) -> tuple[int, int, int]:
    """What changes when a bound tensor is replaced or changed in place."""
    try:
        version = tensor._version
    except RuntimeError:  # an inference tensor has no version counter: never changed in place
        version = -1
    return (id(tensor), tensor.data_ptr(), version)


class FusecPartition:
    """A partition of the graph run by one fusec executable; called with every input of the
    partition (bound ones too, to check that they did not change)."""

    def __init__(self, gm: Any, example_args: list[Any], bound: set[int], device: OpenCLDevice,
                 options: Options, name: str):
        self.gm = gm
        self.bound = bound
        self.free: list[int] = []
        """The positions of the call inputs (those not bound), in order (set by `build`)."""
        self.device = device
        self.options = options
        self.name = name
        self.bridge = TensorBridge(device, cuda=any(a.is_cuda for a in example_args))
        output = next(n for n in gm.graph.nodes if n.op == "output")
        self.many = isinstance(output.args[0], tuple | list)
        """Whether the partition returns a tuple (else one tensor)."""
        self.build(example_args)

    def build(self, args: list[Any]) -> None:
        """Compiles the partition for `args` (at its first call, and again where a bound
        input changed so: `refresh`), under the graph's knobs (`Options.knobs`)."""
        with knob_registry.overridden(self.options.knobs):
            self.compile_for(args)

    def compile_for(self, args: list[Any]) -> None:
        from fusec.compiler.torch_compile import compile_imported

        imported = import_graph(self.gm, list(args), self.bound, f"<{self.name}>")
        # The last executable goes first: a buffer it binds over tensors' memory keeps views
        # of them, and a tensor with another view over its memory may not move (`movable`).
        self.exe = None
        self.launches = None
        self.weights = PartitionWeights(self.device,
                                        {name: args[i] for i, name in imported.bound.items()},
                                        self.options.hold_weights_once)
        self.exe, self.stats = compile_imported(imported, self.device, self.options,
                                                self.weights)
        imported.params = {}  # the importer's host copies: the executable has what it needs
        self.imported: ImportedGraph = imported
        self.states = BoundTensors(args, self.bound)  # after the moves of `compile_imported`
        self.states.read_in_place(self.read_in_place(args))
        self.free = [i for i in range(len(args)) if i not in self.bound]
        self.dtypes = [out.dtype for out in imported.outputs]
        self.bridge.index_inputs(self.exe.plan.index_checks, self.exe.input_names,
                                 self.options.overlap)
        self.launches = self.cuda_launches(args)

    def cuda_launches(self, args: Sequence[Any]) -> Any:
        """The executable's launches through CUDA (`Options.cuda_launch`), where the tensors
        (`args`) are CUDA ones on PyTorch's current device and the device NVIDIA's OpenCL;
        else None, and `launcher` says why."""
        from fusec.runtime import cuda_launch

        reason = ("the tensors are not CUDA tensors" if not self.bridge.cuda else
                  "options cuda_launch=False" if not self.options.cuda_launch else
                  other_device(args) or cuda_launch.unsupported_reason(self.exe))
        if reason is not None:
            self.launcher = f"opencl ({reason})"
            return None
        whole = all(c.input in self.exe.input_names for c in self.exe.plan.index_checks)
        try:
            launches = cuda_launch.CudaLaunches(self.exe, graphs=self.options.cuda_graphs,
                                                checked_inputs=whole,
                                                bounded=sorted(self.bridge.checked))
        except DeviceError as e:  # the driver refused the PTX, say: OpenCL runs it, reported
            self.launcher = f"opencl ({e})"
            return None
        self.launcher = "cuda graph" if self.options.cuda_graphs else "cuda"
        return launches

    def __call__(self, *args: Any) -> Any:
        changed = self.states.changed(args)
        if changed or self.exe is None:
            self.refresh(list(args), changed)
        inputs = [args[i] for i in self.free]
        if self.launches is not None:
            inputs = [t.contiguous() for t in inputs]
            in_graph = self.launches.reads_bounds  # read back by the graph's replay
            bounds = None if in_graph else self.bridge.cuda_bounds(inputs)
            outputs = self.launches(inputs, self.dtypes)
            try:
                if in_graph:
                    self.bridge.refuse(inputs, self.launches.bounds())
                elif bounds is not None:
                    bounds.check()
            except InputError:
                self.launches.forget_indices()  # what the kernels recorded of them
                raise
        else:
            results = self.exe(*self.bridge.to_fusec(inputs))
            outputs = self.bridge.to_torch_all(results, self.dtypes)
        return tuple(outputs) if self.many else outputs[0]

    def refresh(self, args: list[Any], changed: list[int]) -> None:
        """Binds the changed bound inputs again, or compiles anew where one was folded (not
        where fusec only moved it: its values are those compiled with; nor where the folded
        input's buffer holds its memory, `PartitionWeights.holds`: its changes are the
        kernels')."""
        if self.exe is None:  # the last compile failed
            self.build(args)
            return
        names = set(self.exe.param_names)
        moved = {i for i in changed if self.states.moved(args, i)}
        held = {i for i in changed if self.weights.holds(self.imported.bound.get(i), args[i])}
        if self.states.relaid(args, changed) or not all(
                i in moved or i in held or self.imported.bound.get(i) in names for i in changed):
            self.build(args)
            return
        for i in changed:
            name = self.imported.bound.get(i)
            if name in names:
                self.weights.rebind(self.exe, name, args[i], moved=i in moved)
            self.states.update(args, i)
        self.states.read_in_place(self.read_in_place(args))
        if self.launches is not None:
            self.launches.refresh()

    def read_in_place(self, args: Sequence[Any]) -> set[int]:
        """The positions of the bound inputs whose memory the kernels read as it is (bound
        over it, or where a folded input's buffer holds it): a change of their values in
        place is what the kernels read, so `BoundTensors` need not watch their versions."""
        names = set(self.exe.param_names)
        return {i for i, name in self.imported.bound.items()
                if (name in names and self.weights.bound_over(self.exe, name, args[i]))
                or self.weights.holds(name, args[i])}

    def weight_counts(self) -> WeightCounts:
        """The bytes of its bound inputs held once (over the tensors' memory) and twice."""
        return weight_counts(self.exe, self.weights.parts)


def other_device(args: Sequence[Any]) -> str | None:
    """Why CUDA tensors `args` cannot have their kernels launched in PyTorch's current
    context: one lies on another GPU (None where all lie on the current one)."""
    import torch

    current = torch.cuda.current_device()
    for tensor in args:
        if getattr(tensor, "is_cuda", False) and tensor.device.index != current:
            return f"a tensor is on {tensor.device}, not PyTorch's current device cuda:{current}"
    return None


@dataclass
class CompiledGraph:
    """The graph module that runs a graph, and what the report says about it."""

    module: Any
    ops_in: int
    fused_ops: Counter[str] = field(default_factory=Counter)
    kernel_launches: int = 0
    fallback_ops: list[str] = field(default_factory=list)
    fallback_reasons: dict[str, str] = field(default_factory=dict)
    compile_seconds: float = 0.0
    partitions: int = 0
    weights: WeightCounts = field(default_factory=WeightCounts)
    """The partitions' bound inputs by how they are held, when compiled (`torch_weights`)."""
    launchers: Counter[str] = field(default_factory=Counter)
    """How the partitions' kernels are launched (`FusecPartition.launcher`), by count."""
    watched: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    """The bound inputs folded into constants (`fold_constants`), by position, and their state
    when they were: a change to one needs the graph compiled again."""

    def stale(self, args: Sequence[Any]) -> bool:
        return any(tensor_state(args[i]) != state for i, state in self.watched.items())


def compile_aten_graph(gm: Any, args: list[Any], bound: set[int], device: OpenCLDevice,
                       options: Options) -> CompiledGraph:
    """Partitions ``gm`` (an aten graph with ``meta["val"]`` on its nodes) and compiles each
    supported partition at the shapes of ``args``; see the module docstring."""
    from fusec.frontends.torch_fx import counted_ops, op_name
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    start = time.perf_counter()
    reasons: dict[str, str] = {}

    explicit_autocast(gm)
    compiled = CompiledGraph(gm, counted_ops(gm))
    # In-place ops (a static KV cache's index_copy_ and add_): the inputs they change are
    # call inputs, and what they touch stays in PyTorch (`fusec.compiler.torch_mutation`).
    mutations = Mutations.of(gm)
    bound = bound - mutations.mutated_inputs
    compiled.watched = {i: tensor_state(args[i]) for i in bound if is_index_like(args[i])}
    fold_constants(gm, args, set(compiled.watched), set(mutations.pinned) | mutations.bases)
    mutations = Mutations.of(gm)  # the graph's nodes changed
    examples = mutations.example_inputs(args)

    class Support(OperatorSupport):
        def is_node_supported(self, submodules: Any, node: Any) -> bool:
            if node.op != "call_function":
                return False
            reason = node.meta.get(REFUSED) or mutations.pinned.get(node) \
                or unsupported_reason(node)
            if reason is not None and node.target is not operator.getitem:
                reasons.setdefault(op_name(node.target), reason)
            return reason is None

    partitioner = CapabilityBasedPartitioner(gm, Support(), allows_single_node_partition=True)
    partitions = [p for p in partitioner.propose_partitions() if worth_running(p)]
    split = partitioner.fuse_partitions(partitions, prefix="fusec_") if partitions else gm
    position = {n.target: i for i, n in enumerate(
        n for n in gm.graph.nodes if n.op == "placeholder")}
    values = {n: examples[position[n.target]] for n in split.graph.nodes
              if n.op == "placeholder"}
    bound_nodes = {n for n in values if position[n.target] in bound}
    for node in split.graph.nodes:
        if node.op == "get_attr":
            bound_nodes.add(node)
            values[node] = example_value(node, split, values)
    for node in list(split.graph.nodes):
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "call_module" and node.target.startswith("fusec_"):
            sub = getattr(split, node.target)
            sub_args = [values[a] for a in node.args]
            local_bound = {i for i, a in enumerate(node.args) if a in bound_nodes}
            try:
                part = FusecPartition(sub, sub_args, local_bound, device, options, node.target)
            except (TorchImportError, FusecError, InputError) as e:
                for n in sub.graph.nodes:
                    if n.op == "call_function" and n.target is not operator.getitem:
                        compiled.fallback_ops.append(op_name(n.target))
                reasons.setdefault(node.target, str(e).splitlines()[0])
                part = None
            if part is not None:
                setattr(split, node.target, partition_module(part))
                compiled.fused_ops.update(part.stats.fused_ops)
                compiled.kernel_launches += part.stats.kernel_launches
                compiled.partitions += 1
                compiled.weights += part.weight_counts()
                compiled.launchers[part.launcher] += 1
        elif node.op == "call_function" and node.target is not operator.getitem:
            compiled.fallback_ops.append(op_name(node.target))
        values[node] = example_value(node, split, values)
    split.recompile()
    compiled.module = split
    compiled.fallback_reasons = reasons
    compiled.compile_seconds = time.perf_counter() - start
    return compiled


def fold_constants(gm: Any, args: list[Any], constant_inputs: set[int],
                   kept: set[Any] = frozenset()) -> None:  # type: ignore[assignment]
    """Computes the ops of ``gm`` that depend on constants alone (`constant_nodes`: ``arange``,
    masks, the bound integer inputs at ``constant_inputs``) with PyTorch, and puts each value
    that other ops read in the graph as a constant (``get_attr``). The nodes in ``kept`` (and
    what depends on them) are not folded: a tensor that an in-place op changes (``zeros`` of a
    cache created in the graph) must be created anew at each call."""
    import torch

    constants = constant_nodes(gm, constant_inputs, kept)
    values: dict[Any, Any] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node in gm.graph.nodes:
        if node not in constants:
            continue
        if node.op == "placeholder":
            values[node] = args[placeholders.index(node)]
            continue
        values[node] = example_value(node, gm, values)
        if node.op != "call_function" or not isinstance(values[node], torch.Tensor):
            continue
        readers = [u for u in node.users if u not in constants]
        if not readers:
            continue
        name = f"fusec_constant{len(values)}"
        gm.register_buffer(name, values[node].detach().clone())
        with gm.graph.inserting_before(node):
            attr = gm.graph.get_attr(name)
        attr.meta = dict(node.meta)
        for reader in readers:
            reader.replace_input_with(node, attr)
    gm.graph.eliminate_dead_code()
    gm.recompile()


def worth_running(partition: Any) -> bool:
    """A partition that computes something: not views and casts alone."""
    from fusec.frontends.torch_fx import op_name

    movement = ("aten.view", "aten._unsafe_view", "aten.reshape", "aten.permute",
                "aten.transpose", "aten.t", "aten.unsqueeze", "aten.squeeze", "aten.expand",
                "aten.slice", "aten.select", "aten.contiguous", "aten.clone", "aten.alias",
                "aten.detach", "aten._to_copy", "aten.to", "aten.flatten", "aten.unbind",
                "aten.split", "aten.chunk", "aten._assert_tensor_metadata")
    return any(n.target is not operator.getitem and op_name(n.target) not in movement
               for n in partition.nodes)


def example_value(node: Any, gm: Any, values: dict[Any, Any]) -> Any:
    """The node's value at the example inputs, computed with PyTorch (the partitions' inputs
    must be real tensors to compile them)."""
    import torch

    args = torch.fx.node.map_arg(node.args, lambda n: values[n])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: values[n])
    if node.op == "call_module":
        return getattr(gm, node.target)(*args, **kwargs)
    if node.op == "call_function":
        return node.target(*args, **kwargs)
    if node.op == "get_attr":
        value = gm
        for part in node.target.split("."):
            value = getattr(value, part)
        return value
    return None


def partition_module(partition: FusecPartition) -> Any:
    """A ``torch.nn.Module`` that the outer graph calls in the partition's place."""
    import torch

    class FusecModule(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.partition = partition

        def forward(self, *args: Any) -> Any:
            return self.partition(*args)

    return FusecModule()
