"""An executable's kernels launched through the CUDA driver on PyTorch's stream.

    launches = CudaLaunches(exe)        # exe: an Executable on NVIDIA's OpenCL, bound already
    outputs = launches(tensors, dtypes)   # CUDA tensors in, new CUDA tensors out

Where fusec's inputs and outputs are CUDA tensors, running the kernels through OpenCL puts two
CUDA contexts on the GPU, PyTorch's and OpenCL's, and every call hands its tensors from one to
the other: on the H200 (2026-12-02, bench/results/h200-2026-12-02-s14-timeline.log) about
0.6 ms of a BERT-base call at batch 32 went between the contexts. `CudaLaunches` loads the
program's PTX into PyTorch's context (`fusec.runtime.cuda_driver`) and launches the plan on
PyTorch's current stream: the inputs are the caller's tensors, read in place; the outputs
are tensors PyTorch allocates, written in place; nothing waits for anything but the stream
order PyTorch already keeps.

Each plan buffer has one 64-bit cell holding its address, and each launch's parameters are the
addresses of its buffers' cells (`cuda_driver.launch_params`), so a call only writes the cells
of its inputs and outputs. The other buffers:

- held by the executable in memory CUDA can address (`fusec.runtime.cuda_interop`'s shared
  pool: its intermediates, which it takes from that pool, `BufferPool.cuda_addressable`;
  bound weights, held once over a parameter's memory or in a folded weight's buffer): used
  where they are; `refresh` reads their addresses again after the executable binds one anew;
- any other (constants, the ``index_errors`` record; a bound weight in plain OpenCL memory): a
  CUDA tensor of its own with a copy of the buffer's contents.

`graphs`: the launches are recorded once into a CUDA graph (``torch.cuda.CUDAGraph``) and
replayed, the inputs first copied into tensors the graph reads: one host call a replay instead
of one a kernel, which at batch 1, where each kernel takes microseconds, is what decides the
wall time. The outputs lie in one block a call (`OutputArena`). A graph's addresses are fixed
where it was recorded, so either

- (outputs under `RETARGET_MIN_BYTES`) the graph writes a block of its own (`BlockGraph`), and
  the call's outputs are views of that block itself where no tensor over it is alive any more
  (the caller dropped the last call's outputs: its use count, `BlockGraph.free`), of a second
  graph's block where the first one's are still held (recorded at the first call that needs
  it: a loop ``y = f(x)`` holds the last call's outputs while it makes the next, so the two
  take turns), and a copy of a third graph's block where both are held (`HANDED_BLOCKS`; the
  knob ``cuda_graph_own_blocks``, off: always a copy): no allocation and no copy a call in the
  common case, never a block overwritten that a caller still reads; or
- (`retargets`: outputs of at least `RETARGET_MIN_BYTES`, the knob ``cuda_graph_new_outputs``)
  each call allocates the block and gives the kernel nodes that read or write an output their
  new addresses before the replay (``cuGraphExecKernelNodeSetParams``,
  `cuda_driver.GraphExec`): no copy, and no block held between calls (GPT-2 small's keys and
  values at batch 16: 75 MiB in f16). That costs the host a driver call a node so touched,
  which at batch 1, where the host decides, would cost more than it saves.

Index checks: a kernel that checks its indices records a bad one in the ``index_errors`` tensor
and reads a clamped index instead. Where every check reads a whole call input, the caller
refuses bad indices from the inputs themselves (``checked_inputs``; the torch backend reads
their bounds ahead of the launches and waits for that read alone, `forget_indices` clearing
what the kernels recorded of a refused call): with `graphs` the graph reads them itself
(`bounds`: the `bounded` inputs' and every int32 input's least and greatest values, read into
page-locked memory by the replay, `cuda_driver.HostReadback`), an int32 input taken as int64
and narrowed in the graph after its values are read, so that one call's host work is a copy
per input and a replay. Elsewhere a call reads the record after its launches (a wait) and
raises the error, the record put back. A call that raises returns nothing.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from fusec import knobs
from fusec.codegen.plan import ProgramPlan

from .cuda_driver import (
    CudaDriver,
    Function,
    GraphExec,
    HostReadback,
    KernelNodeParams,
    block_for,
    captured_node,
    dependent_config,
    is_ptx,
    launch_params,
    module_ptx,
    updates_graphs,
)
from .errors import DeviceError, InputError, LaunchError
from .index_errors import first_error

TORCH_DTYPES = {"float32": "float32", "float16": "float16", "uint16": "bfloat16",
                "int32": "int32", "int64": "int64", "int8": "int8", "uint8": "uint8",
                "bool": "bool", "float64": "float64", "int16": "int16"}
"""The torch dtype of a buffer of each numpy dtype the plan uses (bf16 travels as uint16)."""

RETARGET_MIN_BYTES = 8 << 20
"""The least bytes of a graph's outputs for which each replay writes them into a new block
in place (`CudaLaunches.retargets`) rather than into a block of the graph's own (`BlockGraph`)."""

HANDED_BLOCKS = 2
"""The most graphs of a partition whose own blocks a call's outputs are views of (see the
module docstring): one for the call whose outputs the caller still holds, one for the next."""


INPUT_ALIGNMENT = 16
"""Bytes a call input read in place is aligned to (`CudaLaunches.run`): a PyTorch tensor may
start anywhere in its storage (a slice), where a kernel may read 16 bytes at a time."""


def unsupported_reason(exe: Any) -> str | None:
    """Why `exe`'s kernels cannot be launched through CUDA, or None where they can."""
    if not exe.plan.launches:
        return "the program has no kernels"
    if any(s.donor is not None for s in exe.plan.outputs):
        return "the program updates an input in place (a donated input)"
    try:
        binaries = exe.program.binaries
    except Exception as e:  # noqa: BLE001 - the driver's reason, reported
        return f"the OpenCL driver gives no program binary ({e})"
    if len(binaries) != 1 or not is_ptx(binaries[0]):
        return "the OpenCL driver's program binary is not PTX (not NVIDIA's OpenCL)"
    return None


DECIDING_WARMUP = 2
DECIDING_REPLAYS = 10
"""Replays of each graph the first call times (`CudaLaunches.decide_dependent`), after
`DECIDING_WARMUP` untimed."""


SHORT_KERNEL_MS = 0.010
"""The longest a partition's kernels may take on average (its plain replay's time over its
launches) for its graph to keep dependent launches (`prefers_dependent`). On the H200 (session
22, bench/results/h200-2026-12-03-s22-decision-*.log, f16, back-to-back calls) GPT-2 small at
batch 1, about 5 us a kernel, took 0.552 ms a call with them against 0.635 without; BERT-base at
batch 32, about 22 us a kernel, 2.072 against 1.963, although the first call's 10 timed replays
had found them 3% faster there (2.006 against 2.071 ms); the Llama-style model at batch 32,
about 66 us a kernel, 3.48 against 2.89 (session 20). Where kernels are short the gaps between
them that dependent launches hide are a large part of the call; where they are long, kernels
whose work-groups start early and wait take the units from the kernel before them."""


def short_kernels(plain_ms: float, launches: int) -> bool:
    """Whether a partition's graph of `launches` kernels, timed at `plain_ms` a replay with
    plain launches, has kernels short enough for dependent launches to be tried
    (`SHORT_KERNEL_MS` on average)."""
    return plain_ms <= SHORT_KERNEL_MS * max(launches, 1)


def prefers_dependent(dependent_ms: float, plain_ms: float) -> bool:
    """Whether a graph of short kernels keeps dependent launches, timed at `dependent_ms` a
    replay against `plain_ms` without: where they save at least 2% (noise on a shared device
    keeps the plain launches)."""
    return dependent_ms < 0.98 * plain_ms


class CudaLaunches:
    """The plan of one executable, launched through CUDA (see the module docstring)."""

    def __init__(self, exe: Any, graphs: bool = False, checked_inputs: bool = True,
                 bounded: Sequence[int] = ()):
        import torch

        reason = unsupported_reason(exe)
        if reason is not None:
            raise DeviceError(f"cannot launch through CUDA: {reason}")
        self.exe = exe
        plan: ProgramPlan = exe.plan
        self.plan = plan
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.driver = CudaDriver()
        asked = (graphs and knobs.value("cuda_dependent_launch")
                 and torch.cuda.get_device_capability(self.device) >= (9, 0))
        self.module = self.driver.load(module_ptx(exe.program.binaries[0], asked))
        weakref.finalize(self, self.driver.unload, self.module)
        self.functions = [self.function(i) for i in range(len(plan.launches))]
        self.cells = [ctypes.c_uint64(0) for _ in plan.buffers]
        self.owned: dict[int, Any] = {}
        """Buffer index -> the CUDA tensor that holds it (see the module docstring)."""
        self.launches = []
        for launch, function in zip(plan.launches, self.functions, strict=True):
            grid, block = block_for(launch.global_size, launch.local_size, function.max_threads)
            self.launches.append((function.handle, *grid, *block, function.dynamic_shared,
                                  launch_params(self.cells, launch.buffers)))
        self.dependent_configs = [dependent_config(each[1:4], each[4:7], each[7])
                                  for each in self.launches] if asked else []
        """Each launch's `cuda_driver.LaunchConfig` as a dependent launch, where asked for."""
        self.deciding = asked
        """Whether the first replay still has to time the graph recorded with dependent
        launches and without, and keep the faster (`decide_dependent`)."""
        self.dependent = False
        """Whether each kernel starts while the one before it runs and waits for it itself
        (`cuda_driver.CudaDriver.launch_dependent`; Hopper and later, the knob on): with
        `graphs`, as the first replay decides (`decide_dependent`); without, never (nothing
        times them there, and where a partition's kernels are long they cost more than they
        save: `SHORT_KERNEL_MS`)."""
        self.configs: list[Any] = [None] * len(self.launches)
        """Each launch's `cuda_driver.LaunchConfig` where the launches are dependent ones,
        else None (`set_dependent`)."""
        self.set_dependent(self.deciding)
        self.timings: dict[bool, float] = {}
        """What `decide_dependent` measured: ms a replay, with dependent launches (True) and
        without."""
        self.call_buffers = [p.spec.buffer for p in exe.call_inputs]
        """The buffer of each call input, in call order."""
        self.call_layouts = [(p.spec.shape, np.dtype(p.spec.dtype))
                             for p in exe.call_inputs]
        """The shape and element type of each call input's buffer."""
        self.direct = [p.direct for p in exe.outputs]
        written = {p.spec.buffer for p, direct in zip(exe.outputs, self.direct, strict=True)
                   if direct}
        self.output_launches = [i for i, launch in enumerate(plan.launches)
                                if written & set(launch.buffers)]
        """The launches that read or write an output written in place."""
        self.checked_inputs = checked_inputs
        self.index_errors = plan.index_errors
        self.exec: GraphExec | None = None
        """The graph as the driver instantiated it, where a replay retargets its outputs."""
        self.nodes: list[tuple[Any, KernelNodeParams]] = []
        """Each launch of `output_launches` in the graph: its node and its parameters."""
        self.refresh()
        self.stream: Any = None
        """The stream of the last call (a call on another one waits for it first)."""
        self.graphs = graphs
        self.new_outputs = knobs.value("cuda_graph_new_outputs")
        """Whether a replay may write large outputs into a new block (`retargets`)."""
        self.own_blocks = (knobs.value("cuda_graph_own_blocks")
                           and hasattr(torch._C, "_storage_Use_Count"))
        """Whether a call's outputs may be views of a graph's own block (`handed`): where
        PyTorch tells a storage's use count (`BlockGraph.free`)."""
        self.graph: Any = None
        self.static_inputs: list[Any] = []
        """The graph's input tensors (each call's inputs are copied into them)."""
        self.arena: OutputArena | None = None
        self.handed: list[BlockGraph] = []
        """The graphs whose blocks a call's outputs are views of (at most `HANDED_BLOCKS`)."""
        self.copied: BlockGraph | None = None
        """The graph whose block a call copies its outputs out of, where every block of
        `handed` is held (recorded where that first happens)."""
        self.kernel_inputs: list[Any] = []
        """The tensors the graph's kernels read each call input from: the static input, or
        where that is a widened int64 one, its int32 copy, narrowed in the graph."""
        self.ranged = [k for k, (shape, dtype) in enumerate(self.call_layouts)
                       if graphs and (k in bounded or dtype == np.int32) and int(np.prod(shape))]
        """The call inputs whose least and greatest values each replay reads back (`bounds`):
        the `bounded` positions and every int32 one (which the graph takes as int64, so that
        an int64 input is narrowed after its values are read), those with elements."""
        self.readback: HostReadback | None = None
        self.ends: list[Any] = []
        """Each recorded graph's tensor of the ranged inputs' least and greatest values."""
        self.raw_stream: int | None = None
        """The handle of `stream` (a call compares the current one's with it)."""

    def set_dependent(self, dependent: bool) -> None:
        """Makes the launches dependent ones (`dependent_configs`), or plain ones."""
        self.dependent = dependent
        self.configs = list(self.dependent_configs) if dependent else [None] * len(self.launches)

    def decide_dependent(self, tensors: Sequence[Any], stream: Any) -> None:
        """Records the graph with plain launches and times `DECIDING_REPLAYS` replays of it on
        `stream` (after `DECIDING_WARMUP`); where its kernels are short (`short_kernels`), the
        same with dependent launches, kept where faster (`prefers_dependent`; the plain graph
        recorded again where not). At batch 1 on the H200 dependent launches made GPT-2 small
        and BERT-base 12-14% faster; at batch 32 BERT-base 5-10% slower, its kernels in one wave
        all the same (sessions 21, 22), and this timing alone found them faster there: so
        kernels as long as those are not tried at all."""
        self.deciding = False
        for dependent in (False, True):
            self.set_dependent(dependent)
            self.forget_graph()
            self.record(tensors, stream)
            self.timings[dependent] = self.time_replays(tensors, stream)
            if not short_kernels(self.timings[False], len(self.launches)):
                return
        if not prefers_dependent(self.timings[True], self.timings[False]):
            self.set_dependent(False)
            self.forget_graph()
            self.record(tensors, stream)

    def time_replays(self, tensors: Sequence[Any], stream: Any) -> float:
        """Ms a replay of the recorded graph with `tensors`: `DECIDING_REPLAYS` back to back,
        on `stream`'s clock (CUDA events), after `DECIDING_WARMUP`."""
        import torch

        for _ in range(DECIDING_WARMUP):
            self.replay(tensors, stream)
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record(stream)
        for _ in range(DECIDING_REPLAYS):
            self.replay(tensors, stream)
        end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) / DECIDING_REPLAYS

    def forget_graph(self) -> None:
        """Lets go of the recorded graphs, if any: the next replay records them again."""
        self.close_exec()
        self.graph = None
        self.handed, self.copied, self.ends = [], None, []

    @property
    def reads_bounds(self) -> bool:
        """Whether each call reads its ranged inputs' bounds back in the graph (`bounds`)."""
        return bool(self.ranged)

    def bounds(self) -> dict[int, list[int]]:
        """The least and greatest value of each ranged call input (by position) of the last
        call, waiting for the graph's read of them alone (its kernels run on)."""
        assert self.readback is not None
        ends = np.frombuffer(self.readback.wait(), dtype=np.int64).tolist()
        return {k: ends[2 * j:2 * j + 2] for j, k in enumerate(self.ranged)}

    def function(self, index: int) -> Function:
        import pyopencl as cl

        launch = self.plan.launches[index]
        local = self.exe.kernels[index].get_work_group_info(
            cl.kernel_work_group_info.LOCAL_MEM_SIZE, self.exe.device.device)
        return self.driver.function(self.module, launch.kernel, local)

    def refresh(self) -> None:
        """Reads the address of each buffer the executable holds again (after it binds a
        weight anew); one with no CUDA address gets a tensor of its own with a copy of its
        contents (`mirror`). A call's own buffers (its inputs', the outputs written in
        place) are set by each call."""
        from .cuda_interop import shared_pool

        exe = self.exe
        pool = shared_pool(exe.device)
        per_call = set(self.call_buffers) | {
            p.spec.buffer for p, direct in zip(exe.outputs, self.direct, strict=True) if direct}
        for index in range(len(self.plan.buffers)):
            buffer = exe.buffers[index]
            if index in per_call:
                continue
            if buffer is None:
                raise DeviceError(f"buffer {index} ({self.plan.buffers[index].label}) of "
                                  f"{exe.function} is not allocated")
            allocation = pool.allocation(buffer)
            if allocation is not None:
                self.owned.pop(index, None)
                self.cells[index].value = allocation.pointer.value
                continue
            if index not in self.owned or self.plan.buffers[index].role == "input":
                self.owned[index] = self.mirror(buffer)
            self.cells[index].value = self.owned[index].data_ptr()
        self.forget_graph()  # its launches read the old addresses

    def close_exec(self) -> None:
        """Lets go of the driver's instance of the graph (its launches read old addresses)."""
        if self.exec is not None:
            self.exec.close()
            self.exec, self.nodes = None, []

    @property
    def retargets(self) -> bool:
        """Whether each replay writes the outputs into a new block in place (see the module
        docstring), not into the graph's own block copied out."""
        assert self.arena is not None
        return (bool(self.output_launches) and self.arena.nbytes >= RETARGET_MIN_BYTES
                and self.new_outputs and updates_graphs(self.driver))

    def torch_bytes(self) -> int:
        """The bytes this object holds in PyTorch's memory: its own buffers, and the graph's
        input and output tensors."""
        blocks = [g.block for g in (*self.handed, self.copied) if g is not None]
        narrowed = [t for t, s in zip(self.kernel_inputs, self.static_inputs, strict=True)
                    if t is not s]
        return sum(t.nbytes for t in (*self.owned.values(), *self.static_inputs, *narrowed,
                                      *blocks))

    def mirror(self, buffer: Any) -> Any:
        """A CUDA tensor with a copy of the contents of `buffer` (not CUDA memory: a constant,
        the ``index_errors`` record, a weight bound in OpenCL's own memory)."""
        import pyopencl as cl
        import torch

        data = np.empty(max(1, buffer.size), np.uint8)
        cl.enqueue_copy(self.exe.queue, data, buffer, is_blocking=True)
        return torch.from_numpy(data).to(self.device)

    def __call__(self, tensors: Sequence[Any], dtypes: Sequence[Any]) -> list[Any]:
        """The outputs (of torch `dtypes`, in return order) of a call with `tensors`, the call
        inputs in order, each contiguous and of its buffer's element size (or int64 where the
        buffer is int32: narrowed on the device, its range the caller's to check)."""
        import torch

        for tensor, (shape, dtype) in zip(tensors, self.call_layouts, strict=True):
            narrowed = tensor.dtype == torch.int64 and dtype == np.int32
            if tuple(tensor.shape) != shape or (tensor.element_size() != dtype.itemsize
                                                and not narrowed):
                raise InputError(f"{self.exe.function} takes an input of shape {list(shape)} "
                                 f"and {dtype.itemsize}-byte elements, not "
                                 f"{list(tensor.shape)} of {tensor.dtype}")
        raw = torch._C._cuda_getCurrentRawStream(self.device.index)
        if raw != self.raw_stream:  # a handle compared: a Stream object costs the host more
            stream = torch.cuda.current_stream(self.device)
            if self.stream is not None:
                stream.wait_stream(self.stream)  # the buffers the last call used
            self.stream, self.raw_stream = stream, raw
        stream = self.stream
        if self.graphs:
            outputs = self.replay(tensors, stream)
        else:
            outputs = self.run(tensors, dtypes, stream)
        if not self.checked_inputs and self.index_errors is not None:
            self.check_indices()
        if all(t.dtype == dtype for t, dtype in zip(outputs, dtypes, strict=True)):
            return outputs
        return [t if t.dtype == dtype else t.to(dtype)
                for t, dtype in zip(outputs, dtypes, strict=True)]

    def run(self, tensors: Sequence[Any], dtypes: Sequence[Any], stream: Any) -> list[Any]:
        import torch

        tensors = [t.to(torch.int32) if t.dtype == torch.int64 else t for t in tensors]
        # read in place: a kernel may read a 16-bit input a uint4 at a time (the knob
        # gpu_half_vectors), which needs the 16-byte alignment OpenCL gives its buffers
        tensors = [t if t.data_ptr() % INPUT_ALIGNMENT == 0 else t.clone() for t in tensors]
        outputs = [torch_empty(port.spec, self.device) for port in self.exe.outputs]
        self.point(tensors, outputs)
        self.launch(stream)
        self.copy_indirect(tensors, outputs)
        return outputs

    def point(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Makes `inputs` (the call inputs, in order) and `outputs` (one a returned value) the
        buffers the launches read and write: the cells of the call inputs' buffers and of the
        outputs written in place."""
        cells = self.cells
        for index, tensor in zip(self.call_buffers, inputs, strict=True):
            cells[index].value = tensor.data_ptr()
        for port, direct, out in zip(self.exe.outputs, self.direct, outputs, strict=True):
            if direct:
                cells[port.spec.buffer].value = out.data_ptr()

    def copy_indirect(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Copies each output that is not its own buffer (a slot's, or a call input's
        returned as it is) out of the buffer that holds it, behind the launches."""
        import torch

        for port, direct, out in zip(self.exe.outputs, self.direct, outputs, strict=True):
            if not direct and out.numel():
                out.view(-1).view(torch.uint8).copy_(
                    self.bytes_of(port.spec.buffer, out.nbytes, inputs))

    def bytes_of(self, index: int, nbytes: int, tensors: Sequence[Any]) -> Any:
        """The first `nbytes` of buffer `index` as a uint8 tensor (a call input's, or one the
        executable or this object holds)."""
        if index in self.call_buffers:
            import torch

            tensor = tensors[self.call_buffers.index(index)]
            return tensor.reshape(-1).view(torch.uint8)[:nbytes]
        return self.owned_bytes(index)[:nbytes]

    def owned_bytes(self, index: int) -> Any:
        if index in self.owned:
            return self.owned[index]
        from .cuda_interop import shared_pool

        return shared_pool(self.exe.device).raw(self.exe.buffers[index])

    def launch(self, stream: Any, nodes: list[tuple[Any, KernelNodeParams]] | None = None) -> None:
        """Every launch of the plan on `stream`; where it is captured, `nodes` collects the
        node and parameters of each launch of `output_launches`."""
        launch = self.driver.launch_kernel
        handle = ctypes.c_void_p(stream.cuda_stream)
        touched = set(self.output_launches) if nodes is not None else set()
        for number, (function, gx, gy, gz, bx, by, bz, shared, params) in \
                enumerate(self.launches):
            config = self.configs[number]
            if config is not None:
                config.stream = handle
                status = self.driver.launch_dependent(config, function, params)
            else:
                status = launch(function, gx, gy, gz, bx, by, bz, shared, handle, params, None)
            if status:
                spec = self.plan.launches[number]
                raise LaunchError(f"cuLaunchKernel failed: {self.driver.message(status)}",
                                  kernel=spec.kernel, places=spec.places)
            if number in touched:
                assert nodes is not None
                nodes.append((captured_node(self.driver, stream.cuda_stream),
                              KernelNodeParams(function.value, gx, gy, gz, bx, by, bz, shared,
                                               ctypes.addressof(params))))

    def replay(self, tensors: Sequence[Any], stream: Any) -> list[Any]:
        """A call through the recorded graphs (recorded at the first call): the outputs are
        views of one block (`OutputArena`), a graph's own where no earlier output over it is
        alive (`handed`), else one copied from a graph's (`copied`), or written there by the
        graph's kernels pointed at it (`retargets`)."""
        import torch

        if self.graph is None:
            if self.deciding:
                self.decide_dependent(tensors, stream)
            else:
                self.record(tensors, stream)
        for static, tensor in zip(self.static_inputs, tensors, strict=True):
            static.copy_(tensor)  # int64 into an int32 input's widened static one: exact
        assert self.arena is not None
        if self.exec is None:
            recorded = self.free_block_graph()
            if recorded is not None:
                recorded.graph.replay()
                return self.arena.views(recorded.block)
            if self.copied is None:
                self.copied = self.block_graph()
            self.copied.graph.replay()
            block = torch.empty_like(self.copied.block)
            block.copy_(self.copied.block)
            return self.arena.views(block)
        block = torch.empty(self.arena.nbytes, dtype=torch.uint8, device=self.device)
        outputs = self.arena.views(block)
        self.point(self.kernel_inputs, outputs)
        for node, params in self.nodes:
            self.exec.set_params(node, params)
        self.exec.launch(stream.cuda_stream)
        self.copy_indirect(self.kernel_inputs, outputs)
        return outputs

    def free_block_graph(self) -> BlockGraph | None:
        """A graph of `handed` whose block no earlier output is over, recorded where there is
        none and fewer than `HANDED_BLOCKS` are; None where all of those are held (or the
        knob ``cuda_graph_own_blocks`` is off)."""
        if not self.own_blocks:
            return None
        for recorded in self.handed:
            if recorded.free():
                return recorded
        if len(self.handed) < HANDED_BLOCKS:
            self.handed.append(self.block_graph())
            return self.handed[-1]
        return None

    def record(self, tensors: Sequence[Any], stream: Any) -> None:
        """Sets up what the graphs read and write (the static inputs, the int32 inputs
        narrowed from their widened static tensors, the ranged inputs' bounds read back,
        `HostReadback`), launches the kernels once outside a graph (a bad launch raises there,
        named) and records the first graph: one that writes a block of its own
        (`block_graph`), or where it `retargets`, the driver's instance of one whose nodes a
        replay points at a new block."""
        import torch

        specs = [p.spec for p in self.exe.call_inputs]
        self.static_inputs = [
            torch.empty(spec.shape, dtype=torch.int64, device=self.device)
            if np.dtype(spec.dtype) == np.int32 else torch_empty(spec, self.device)
            for spec in specs]
        self.kernel_inputs = [static if static.dtype == torch_dtype(spec)
                              else torch_empty(spec, self.device)
                              for static, spec in zip(self.static_inputs, specs, strict=True)]
        self.arena = OutputArena([p.spec for p in self.exe.outputs])
        for static, tensor in zip(self.static_inputs, tensors, strict=True):
            static.copy_(tensor)
        self.narrow()
        block = torch.empty(self.arena.nbytes, dtype=torch.uint8, device=self.device)
        self.point(self.kernel_inputs, self.arena.views(block))
        self.launch(stream)
        if self.ranged and self.readback is None:
            self.readback = HostReadback(self.driver, 16 * len(self.ranged))
            weakref.finalize(self, self.readback.close)
        if not self.retargets:
            first = self.block_graph(block)
            if self.own_blocks:
                self.handed = [first]
            else:
                self.copied = first
            self.graph = first.graph
            return
        nodes: list[tuple[Any, KernelNodeParams]] = []
        graph = self.capture(self.arena.views(block), nodes)
        self.close_exec()
        self.exec = GraphExec(self.driver, graph.raw_cuda_graph())
        self.nodes = nodes
        self.graph = graph

    def block_graph(self, block: Any = None) -> BlockGraph:
        """A graph that writes the outputs into `block` (a new one where None), its own."""
        import torch

        if block is None:
            assert self.arena is not None
            block = torch.empty(self.arena.nbytes, dtype=torch.uint8, device=self.device)
        graph = self.capture(self.arena.views(block), None)  # the views die here
        return BlockGraph(graph, block)

    def capture(self, outputs: list[Any], nodes: list[tuple[Any, KernelNodeParams]] | None
                ) -> Any:
        """A CUDA graph of one call that writes `outputs`: the ranged inputs' bounds read
        back, the int32 inputs narrowed, the launches, the copies of the outputs that are not
        written in place (where `nodes` is None; else the caller's replay copies them, and
        `nodes` collects the nodes of `output_launches`)."""
        import torch

        self.point(self.kernel_inputs, outputs)
        graph = (torch.cuda.CUDAGraph(keep_graph=True) if nodes is not None
                 else torch.cuda.CUDAGraph())
        with torch.cuda.graph(graph):
            capture = torch.cuda.current_stream(self.device)
            if self.ranged:  # an int64 input's two ends written in place by one kernel
                ends = torch.empty(2 * len(self.ranged), dtype=torch.int64, device=self.device)
                for j, k in enumerate(self.ranged):
                    values = self.static_inputs[k]
                    if values.dtype == torch.int64:
                        torch.aminmax(values, out=(ends[2 * j], ends[2 * j + 1]))
                    else:
                        ends[2 * j:2 * j + 2].copy_(torch.stack(torch.aminmax(values)))
                self.ends.append(ends)  # alive as long as the graph that reads it
                assert self.readback is not None
                self.readback.enqueue(ends.data_ptr(), capture.cuda_stream, capturing=True)
            self.narrow()
            self.launch(capture, nodes)
            if nodes is None:
                self.copy_indirect(self.kernel_inputs, outputs)
        return graph

    def narrow(self) -> None:
        """Copies each widened static input into the int32 tensor the kernels read."""
        for static, kernel_input in zip(self.static_inputs, self.kernel_inputs, strict=True):
            if kernel_input is not static:
                kernel_input.copy_(static)

    def forget_indices(self) -> None:
        """Puts the kernels' record of bad indices back to its initial contents (after a call
        refused for a bad index the kernels may have met too)."""
        import torch

        if self.index_errors is None:
            return
        initial = self.plan.buffers[self.index_errors].data
        assert initial is not None
        record = self.owned_bytes(self.index_errors)[:initial.nbytes].view(torch.int64)
        record.copy_(torch.from_numpy(initial).to(self.device))

    def check_indices(self) -> None:
        """Raises the first bad index a kernel of the call recorded (a wait), the record put
        back to its initial contents."""
        import torch

        assert self.index_errors is not None
        record = self.owned_bytes(self.index_errors)
        initial = self.plan.buffers[self.index_errors].data
        assert initial is not None
        words = record[:initial.nbytes].view(torch.int64)
        if not int(words[0]):
            return
        seen = words.cpu().numpy()
        self.forget_indices()
        raise first_error(self.plan.index_checks, seen, initial)


class BlockGraph:
    """A recorded graph that writes a call's outputs into a block of its own (`OutputArena`),
    and whether a tensor over that block is still alive."""

    def __init__(self, graph: Any, block: Any):
        import torch

        self.graph = graph
        self.block = block
        self.storage = block.untyped_storage()._cdata
        """The block's storage, whose use count is one per tensor over it."""
        self.use_count = torch._C._storage_Use_Count
        self.alone = self.use_count(self.storage)
        """The use count with no output over the block: the block's own tensor alone."""

    def free(self) -> bool:
        """Whether no tensor over the block is alive but the block's own (a caller that
        holds an output, a view of one or a slice, holds the block)."""
        return self.use_count(self.storage) == self.alone


class OutputArena:
    """Where the outputs of a graph replay lie in one block of bytes: each at an offset of its
    own, `ALIGN`-aligned (as OpenCL aligns a buffer at least; kernels store in vectors). The
    call's outputs are views of a block (one block a call, not one tensor an output: GPT-2
    small's partition returns 25 tensors, its layers' keys and values).

    The views are cut by runs (`runs`): outputs next to each other of one type and shape are
    one strided view of the block, unbound into its outputs (one host call for GPT-2's 24
    keys and values, not three each: at batch 1 the host decides the wall time)."""

    ALIGN = 256

    def __init__(self, specs: Sequence[Any]):
        self.specs = list(specs)
        self.offsets: list[int] = []
        end = 0
        for spec in self.specs:
            end = -(-end // self.ALIGN) * self.ALIGN
            self.offsets.append(end)
            end += np.dtype(spec.dtype).itemsize * int(np.prod(spec.shape, dtype=np.int64))
        self.nbytes = max(self.ALIGN, -(-end // self.ALIGN) * self.ALIGN)
        """The block's size: whole `ALIGN`s, so that it views as any type the outputs have."""
        self.runs = self.runs_of()

    def runs_of(self) -> list[tuple[Any, int, tuple[int, ...], tuple[int, ...], int]]:
        """Each run of outputs next to each other of one type and shape, as (torch type,
        outputs, shape of the run's view, its strides, its first element): a run of one is
        a view of the output's shape; a longer one has a leading axis, one output along it."""
        runs: list[tuple[Any, int, tuple[int, ...], tuple[int, ...], int]] = []
        i = 0
        while i < len(self.specs):
            spec = self.specs[i]
            key = (np.dtype(spec.dtype), tuple(spec.shape))
            count = 1
            while i + count < len(self.specs) and key == (
                    np.dtype(self.specs[i + count].dtype), tuple(self.specs[i + count].shape)):
                count += 1
            itemsize = key[0].itemsize
            strides = tuple(int(np.prod(key[1][d + 1:], dtype=np.int64))
                            for d in range(len(key[1])))
            first = self.offsets[i] // itemsize
            if count == 1:
                runs.append((torch_dtype(spec), 1, key[1], strides, first))
            else:
                step = (self.offsets[i + 1] - self.offsets[i]) // itemsize
                runs.append((torch_dtype(spec), count, (count, *key[1]), (step, *strides), first))
            i += count
        return runs

    def views(self, block: Any) -> list[Any]:
        """Each output as a tensor over its bytes of `block` (uint8, `nbytes` long), of the
        torch type its buffer holds (bf16 as itself)."""
        typed: dict[Any, Any] = {}
        out: list[Any] = []
        for dtype, count, shape, strides, first in self.runs:
            whole = typed.get(dtype)
            if whole is None:
                whole = typed[dtype] = block.view(dtype)
            view = whole.as_strided(shape, strides, first)
            if count == 1:
                out.append(view)
            else:
                out.extend(view.unbind(0))
        return out


def torch_dtype(spec: Any) -> Any:
    """The torch type of the values of `spec`'s buffer (bf16 as itself, not its bits)."""
    import torch

    return getattr(torch, TORCH_DTYPES[np.dtype(spec.dtype).name])


def torch_empty(spec: Any, device: Any) -> Any:
    """A new tensor for the value of `spec`, of the torch type its buffer holds."""
    import torch

    return torch.empty(spec.shape, dtype=torch_dtype(spec), device=device)
