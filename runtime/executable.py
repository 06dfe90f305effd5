"""Runs a `ProgramPlan` on an OpenCL device: compile once, call many times.

At construction the program is built (through the program cache), the buffers that live
across calls are allocated once (intermediates, one per memory slot, taken from the context's
pool where that is CUDA memory too, `BufferPool.cuda_addressable`; constants, uploaded once)
and every launch gets its own ``cl.Kernel`` with its arguments set. A call checks the inputs,
enqueues the launches on the device's in-order queue without waiting in between, and waits once
at the end. Every call returns arrays that the caller owns: no later call writes them (a
later call reuses an output's memory only once the caller holds no array or view of it:
`fusec.runtime.host_outputs`).

How inputs and outputs move depends on the device:

- A device that shares host memory (a CPU, see `fusec.runtime.host_memory`): nothing is copied where
  it can be avoided. A C-contiguous input aligned for the device is used in place (a
  ``CL_MEM_USE_HOST_PTR`` buffer made for the call, or on a device seen to use host arrays in place
  the last call's buffer when the same array object comes again); any other input is first copied
  into an aligned staging array kept for that input. Each output is an aligned array that the
  kernels write directly (with its buffer, reused as above). Where the device was seen to use host
  arrays in place (`OpenCLDevice.host_pointers`: Intel's CPU runtime) the wait is all that is
  needed; on any other such device each output is mapped for reading before the call returns (so
  that an implementation which caches the buffer writes it back), then unmapped. On a device seen to
  use host arrays in place, an input or output of at most `RESIDENT_BYTES` instead goes through a
  staging array whose buffer the kernels keep from call to call: a copy that small costs less than
  making a buffer and pointing every kernel that uses it at it (a mask read by the attention of
  every layer).
- Any other device (a discrete GPU): inputs are uploaded into buffers allocated once, at the
  first call with host arrays (calls with device arrays never need them), with non-blocking
  writes, and outputs are read back into new arrays, then one wait.

Parameters: inputs that stay the same from call to call (weights) can be kept on the device,
``fusec.compile(text, params={"w": w})`` or ``exe.bind("w", w)``: the array is copied once, the
kernels use the device's copy, and the name is no longer an argument of a call (positional
arguments are the remaining inputs, in order: `input_names`). Binding again replaces the
values; ``exe.unbind("w")`` makes ``w`` a call argument again.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

from fusec.codegen.plan import LaunchSpec, ProgramPlan, ValueSpec

from .device import OpenCLDevice
from .device_array import DeviceArray, device_queue, same_context, to_device, wrap
from .errors import BuildError, InputError, LaunchError, first_error_source_line
from .host_memory import (
    aligned_empty,
    host_alignment,
    is_aligned,
    shares_host_memory,
    use_host_buffer,
)
from .host_outputs import OutputSlot
from .index_errors import IndexErrors
from .interop import is_tensor, tensor_to_array, to_tensors
from .limits import check_plan
from .program_cache import get_program


@dataclass(frozen=True)
class KernelTime:
    kernel: str
    seconds: float


@dataclass(frozen=True)
class Profile:
    """One profiled call: each launch's device time (from profiling events) and the wall time
    of the whole call."""

    kernels: tuple[KernelTime, ...]
    wall_seconds: float

    @property
    def kernel_seconds(self) -> float:
        return sum(k.seconds for k in self.kernels)

    @property
    def host_overhead_seconds(self) -> float:
        """Wall time of the call not spent in kernels (uploads, downloads, enqueueing)."""
        return max(0.0, self.wall_seconds - self.kernel_seconds)


UNPROFILED = Profile((), 0.0)
"""What an unprofiled call's `Executable.dispatch` gives with its outputs (it is not timed)."""

RESIDENT_BYTES = 32 << 10
"""Inputs and outputs up to this size are copied through a buffer kept across calls, on a
device that uses host arrays in place (see the module docstring)."""

ArgUse = tuple[cl.Kernel, int]
"""A kernel and the position of one of its buffer arguments."""


@dataclass
class Port:
    """An input or output of a call and where its buffer is a kernel argument."""

    spec: ValueSpec
    uses: list[ArgUse]
    staging: np.ndarray | None = None
    """On a host-memory device: the aligned array a misaligned input is copied into, or a small
    input or output is copied through."""
    resident: cl.Buffer | None = None
    """A small input's or output's buffer over `staging`, the kernels' argument in every call."""
    direct: bool = True
    """Output: the kernels write its array (else it is copied from its buffer at the end)."""
    current: cl.Buffer | None = None
    """The buffer its kernels were last given (kept alive, so that identity is meaningful)."""
    slot: OutputSlot | None = None
    """Output: its host memory from call to call (`Executable.output_slot`)."""
    wrapped: np.ndarray | None = None
    """Input on a host-memory device: the array `current` was made over for a call (the
    buffer holds it, so its memory stays put); the next call given this same array object uses
    `current` again instead of making a buffer (`Executable.wrap_inputs`)."""

    def point(self, buffer: cl.Buffer | None) -> None:
        """Makes `buffer` the kernels' argument; nothing is set when it already is."""
        if buffer is self.current and buffer is not None:
            return
        for k, position in self.uses:
            k.set_arg(position, buffer)
        self.current = buffer
        self.wrapped = None

    @cached_property
    def nbytes(self) -> int:
        return self.spec.dtype.itemsize * _size(self.spec.shape)


@dataclass
class CallState:
    """What one call holds until its wait: the buffers made for it (by plan buffer index)
    and the host arrays those buffers use."""

    buffers: dict[int, cl.Buffer] = field(default_factory=dict)
    arrays: list[np.ndarray] = field(default_factory=list)
    used: dict[int, np.ndarray] = field(default_factory=dict)
    """Host memory: the array each input's buffer is over (the caller's, or a staging copy)."""


class Executable:
    """A compiled function on one device; call it with numpy arrays."""

    def __init__(self, plan: ProgramPlan, device: OpenCLDevice,
                 params: Mapping[str, np.ndarray] | None = None, params_stored: bool = False,
                 share_weights: Executable | None = None,
                 stored: Mapping[str, Any] | None = None):
        check_plan(plan, device)  # before any allocation: a ResourceError names the sizes
        self.plan = plan
        self.device = device
        try:
            self.program = get_program(device, plan.source, plan.build_options)
        except BuildError as e:
            raise locate_build_error(e, plan) from e
        self.host_memory = shares_host_memory(device.device)
        """Whether calls use host arrays in place (see the module docstring)."""
        self.map_outputs = self.host_memory and not device.host_pointers
        """Whether outputs written in place are mapped before a call returns."""
        self.alignment = host_alignment(device.device)
        shared = device_queue(device)
        self.queue = shared.queue
        """The queue of unprofiled calls, and of every device array of this context
        (`fusec.runtime.device_array`); profiled calls use the device's profiling queue."""
        self.shared = shared
        """The queue and pool of the device's context (``shared.pool`` may be replaced, e.g.
        by `fusec.runtime.cuda_interop.enable_cuda_sharing`)."""
        self.params: dict[str, cl.Buffer] = {}
        """The bound inputs: name -> the device buffer holding its values."""
        self.param_arrays: dict[str, DeviceArray] = {}
        """Bound inputs given as device arrays (used in place): kept alive while bound."""
        self.index_errors = (IndexErrors(plan, device, self.host_memory)
                             if plan.index_errors is not None else None)
        """Where the kernels record bad indices (`fusec.runtime.index_errors`), if any do."""
        self.pooled: set[int] = set()
        """The buffers it took from the context's pool (`allocate`), by handle."""
        outputs = self.output_buffers()
        per_call = {s.buffer for s in plan.inputs} | outputs
        self.buffers: list[cl.Buffer | None] = [
            None if i in per_call else self.allocate(i) for i in range(len(plan.buffers))]
        """The buffers of the plan; None for a call input's or output's until a call needs
        one (on a device with memory of its own: `allocate_call_buffers`)."""
        self.call_buffers_missing = not self.host_memory
        """Whether a call with host arrays must first allocate the call buffers."""
        self.kernels = [self.prepare(launch) for launch in plan.launches]
        self.launches = [(k, launch.global_size, launch.local_size)
                         for k, launch in zip(self.kernels, plan.launches, strict=True)]
        uses = self.argument_uses()
        self.inputs = {s.name: Port(s, uses.get(s.buffer, []), current=self.buffers[s.buffer])
                       for s in plan.inputs}
        self.outputs = [Port(s, uses.get(s.buffer, []), direct=s.buffer in outputs and all(
            o.buffer != s.buffer for o in plan.outputs[:i]), current=self.buffers[s.buffer])
            for i, s in enumerate(plan.outputs)]
        self.donated = {s.donor: i for i, s in enumerate(plan.outputs) if s.donor is not None}
        """Donated input -> the output its buffer holds: the caller's array (or device array)
        of that input is updated in place and returned as that output."""
        self.take_call_inputs()
        if self.host_memory and device.host_pointers:
            for port in self.inputs.values():
                if port.spec.name not in self.donated:
                    self.make_resident(port, read_only=True)
            for port in self.outputs:
                if port.direct:
                    self.make_resident(port, read_only=False)
        self.empty = shared.empty
        """Stands for an array of no elements (OpenCL has no empty buffers)."""
        self.collects = (not self.host_memory or self.map_outputs
                         or not all(p.direct or p.spec.donor is not None for p in self.outputs)
                         or (self.index_errors is not None and not self.index_errors.in_place))
        """Whether a call with host arrays enqueues anything after its launches (`collect`)."""
        self.resident_outputs = any(p.resident is not None for p in self.outputs)
        """Whether some output is copied out of its staging array after the wait."""
        self.param_hosts: dict[str, np.ndarray] = {}
        """Bound inputs whose host arrays the device uses in place (`bind`'s `stored`)."""
        self.param_sources: dict[str, Callable[[], Any]] = {}
        """Bound input -> the array it was bound from, weakly (what `borrow` compares)."""
        self.borrowed: set[str] = set()
        """Bound inputs whose buffers another executable made (`borrow`)."""
        for name, value in (params or {}).items():
            if share_weights is None or not self.borrow(share_weights, name, value):
                self.bind(name, value, stored=params_stored)
        for name, value in (stored or {}).items():  # already in their buffers' layout
            self.bind(name, value, stored=True)
        unbound = [s.name for s in plan.inputs
                   if s.repacked and s.name not in self.params]
        if unbound:
            raise InputError(f"{self.function} was compiled with {', '.join(unbound)} bound "
                             "(stored in the GEMM's layout) but is given no value for it")

    def make_resident(self, port: Port, read_only: bool) -> None:
        """Gives a small input or output a staging array and a buffer over it, and points its
        kernels at that buffer for good."""
        nbytes = port.spec.dtype.itemsize * _size(port.spec.shape)
        if not 0 < nbytes <= RESIDENT_BYTES:
            return
        port.staging = aligned_empty(port.spec.shape, port.spec.dtype, self.alignment)
        port.resident = use_host_buffer(self.device.context, port.staging, read_only)
        self.buffers[port.spec.buffer] = port.resident
        port.point(port.resident)

    def allocate(self, index: int) -> cl.Buffer:
        spec = self.plan.buffers[index]
        flags = cl.mem_flags
        if spec.role == "index_errors":
            assert self.index_errors is not None
            return self.index_errors.buffer
        if spec.data is not None:  # a constant, or counters the kernels write ("zeroed")
            access = flags.READ_WRITE if spec.role == "zeroed" else flags.READ_ONLY
            return cl.Buffer(self.device.context, access | flags.COPY_HOST_PTR,
                             hostbuf=spec.data)
        pool = self.shared.pool
        if pool.cuda_addressable:  # CUDA launches use it in place; back to the pool at the end
            buffer = pool.take(spec.nbytes)
            self.pooled.add(buffer.int_ptr)
            weakref.finalize(self, pool.give, spec.nbytes, buffer)
            return buffer
        return cl.Buffer(self.device.context, flags.READ_WRITE, spec.nbytes)

    def output_buffers(self) -> set[int]:
        """The buffers that hold a returned value and nothing else, exactly its size."""
        plan = self.plan
        return {s.buffer for s in plan.outputs
                if plan.buffers[s.buffer].role == "output"
                and plan.buffers[s.buffer].nbytes == max(1, s.dtype.itemsize * _size(s.shape))}

    def prepare(self, launch: LaunchSpec) -> cl.Kernel:
        try:
            k = cl.Kernel(self.program, launch.kernel)
            for position, b in enumerate(launch.buffers):
                k.set_arg(position, self.buffers[b])
        except cl.Error as e:
            raise LaunchError(f"cannot prepare the launch: {e}", kernel=launch.kernel,
                              places=launch.places) from e
        return k

    def argument_uses(self) -> dict[int, list[ArgUse]]:
        """Buffer index -> every (kernel, argument position) it is passed as."""
        uses: dict[int, list[ArgUse]] = {}
        for k, launch in zip(self.kernels, self.plan.launches, strict=True):
            for position, b in enumerate(launch.buffers):
                uses.setdefault(b, []).append((k, position))
        return uses

    @property
    def input_names(self) -> list[str]:
        """The inputs a call takes, in order (the function's parameters less bound ones)."""
        return [p.spec.name for p in self.call_inputs]

    @property
    def input_shapes(self) -> list[tuple[int, ...]]:
        """The shape of each input a call takes, in `input_names` order."""
        return [p.spec.shape for p in self.call_inputs]

    @property
    def input_dtypes(self) -> list[np.dtype]:
        """The numpy dtype of each input a call takes (bf16: ``uint16`` bit patterns)."""
        return [p.spec.dtype for p in self.call_inputs]

    @property
    def output_names(self) -> list[str]:
        """The outputs' names in return order (``result0``, ...)."""
        return [p.spec.name for p in self.outputs]

    @property
    def param_names(self) -> list[str]:
        """The inputs bound to the device (`bind`)."""
        return list(self.params)

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        """The outputs, in return order, for inputs given positionally or by name.

        numpy arrays in: numpy arrays out, after one wait. Any device array in (a
        `DeviceArray` or a ``pyopencl.array.Array`` of this context): the kernels are enqueued
        and the outputs are device arrays at once, the host waits only when it reads one or
        calls `synchronize`; numpy inputs given with them are uploaded first. CPU
        ``torch.Tensor``s are used without a copy (`fusec.runtime.interop`) and the outputs
        are tensors too."""
        return self.dispatch(args, kwargs, profile=False)[0]

    def profile(self, *args: Any, **kwargs: Any) -> tuple[list[Any], Profile]:
        """Like a call, and also each kernel's time from OpenCL profiling events (on the
        profiling queue, after waiting for the unprofiled one); it always waits."""
        return self.dispatch(args, kwargs, profile=True)

    def dispatch(self, args: Sequence[Any], kwargs: Mapping[str, Any],
                 profile: bool) -> tuple[list[Any], Profile]:
        if not kwargs and self.taken_as_is(args):  # numpy in, numpy out
            return self.run(args, profile)
        values = self.arguments(args, kwargs)
        if not kwargs and all(type(a) is np.ndarray for a in args):
            return self.run(values, profile)
        if any(isinstance(v, DeviceArray) for v in values):
            return self.run_device(values, profile)
        outputs, timing = self.run(values, profile)
        tensor = next((v for v in (*args, *kwargs.values()) if is_tensor(v)), None)
        if tensor is not None:
            outputs = to_tensors(outputs, tensor)
        return outputs, timing

    def spared(self, args: Sequence[Any]) -> list[Any]:
        """`args` (a call's inputs, in order) with a copy in place of each numpy array that a
        call updates (a donated input): for a check that runs the program more than once, or
        compares it with the reference on the same arrays afterwards."""
        donated = [p.spec.name in self.donated for p in self.call_inputs]
        return [a.copy() if d and isinstance(a, np.ndarray) else a
                for a, d in zip(args, donated, strict=False)]

    def held_bytes(self) -> int:
        """The bytes of the device buffers this executable made and holds: intermediates, its own
        copies of bound inputs, and (on a device with memory of its own, once a call
        with host arrays made them) the buffers of its call inputs and outputs. Device
        arrays, whether given to a call, returned by one or bound as they are, come from
        the context's pool and are not counted here (`BufferPool.allocated_bytes` has
        them, and the intermediates taken from a pool of CUDA memory, `allocate`), nor
        are buffers borrowed from another executable (`borrow`: that one counts them) or
        made over host arrays bound as they are (`bind`'s `stored`: the caller's
        memory)."""
        not_own = {a.buffer.int_ptr for a in self.param_arrays.values() if a.buffer is not None}
        not_own |= {self.params[name].int_ptr for name in self.param_hosts}
        not_own |= {self.params[name].int_ptr for name in self.borrowed}
        not_own |= self.pooled
        held = {b.int_ptr: b.size for b in [*self.buffers, *self.params.values()]
                if b is not None and b is not self.empty}
        return sum(size for pointer, size in held.items() if pointer not in not_own)

    def synchronize(self) -> None:
        """Waits until every call enqueued so far (and every device array) is done; raises
        the bad index a call with device arrays met (`fusec.runtime.index_errors`)."""
        self.queue.finish()
        self.shared.report_pending()

    def to_device(self, array: Any) -> DeviceArray:
        """A device array on this executable's device with a copy of the host array `array`."""
        return to_device(self.device, array)

    # --- parameters -----------------------------------------------------------------------------

    def bind(self, name: str, value: np.ndarray, stored: bool = False) -> None:
        """Keeps input `name` on the device with the values of `value` (copied now), so that
        calls no longer take it. Binding a bound name again replaces its values.

        `stored`: `value` is already in the layout the input's buffer holds
        (`ValueSpec.stored`, as an artifact keeps its weights): a numpy array, which on a
        device that uses host arrays in place is used in place where aligned, not copied (it
        must not change while it is bound), or a device array, used in place as any device
        array is (without `stored`, one of an input stored in another layout is read back and
        repacked)."""
        port = self.port(name)
        if name in self.donated:
            raise InputError(f"{self.function} input '{name}' is donated (updated in place by "
                             "each call): it cannot be bound")
        checked = self.accept(port.spec, value)
        self.param_arrays.pop(name, None)
        self.param_hosts.pop(name, None)
        self.borrowed.discard(name)
        self.param_sources[name] = source_reference(value)
        if isinstance(checked, DeviceArray) and port.spec.repacked and not stored:
            checked = checked.get()  # stored in another layout: read back once, packed below
        if isinstance(checked, DeviceArray):  # used in place, kept alive while bound
            self.param_arrays[name] = checked
            buffer = checked.buffer if checked.buffer is not None else self.empty
        elif (stored and self.device.host_pointers and checked.nbytes
              and checked.flags.c_contiguous and is_aligned(checked, self.alignment)):
            buffer = use_host_buffer(self.device.context, checked, read_only=True)
            self.param_hosts[name] = checked
        else:
            array = np.ascontiguousarray(checked if stored else port.spec.stored(checked))
            buffer = cl.Buffer(self.device.context,
                               cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                               hostbuf=array) if array.nbytes else self.empty
        self.buffers[port.spec.buffer] = buffer
        port.point(buffer)
        self.params[name] = buffer
        self.take_call_inputs()

    def borrow(self, other: Executable, name: str, value: object) -> bool:
        """Binds input `name` to `other`'s buffer of it, with no copy, where `other` (an
        executable of the same context) was bound from the same array object `value` and
        stores it alike (shape, type, panels, interleave); whether it did. Two programs over
        one set of weights (a prefill and a decode step, `fusec.compile`'s `share_weights`)
        so hold one copy of each weight in each layout. The array must not have changed
        since `other` copied it."""
        mine, theirs = self.inputs.get(name), other.inputs.get(name)
        if (mine is None or theirs is None or name not in other.params or name in self.donated
                or other.param_sources.get(name, no_source)() is not value
                or other.device.context != self.device.context):
            return False
        layout = (mine.spec.shape, mine.spec.dtype, mine.spec.panels, mine.spec.interleaved)
        if layout != (theirs.spec.shape, theirs.spec.dtype, theirs.spec.panels,
                      theirs.spec.interleaved):
            return False
        buffer = other.params[name]
        for kept, theirs_kept in ((self.param_arrays, other.param_arrays),
                                  (self.param_hosts, other.param_hosts)):
            kept.pop(name, None)
            if name in theirs_kept:
                kept[name] = theirs_kept[name]  # type: ignore[index]
        self.buffers[mine.spec.buffer] = buffer
        mine.point(buffer)
        self.params[name] = buffer
        self.param_sources[name] = source_reference(value)
        self.borrowed.add(name)
        self.take_call_inputs()
        return True

    def unbind(self, name: str) -> None:
        """Makes the bound input `name` an argument of every call again."""
        port = self.port(name)
        if name not in self.params:
            raise InputError(f"{self.function} input '{name}' is not bound")
        del self.params[name]
        self.param_arrays.pop(name, None)
        self.param_hosts.pop(name, None)
        self.param_sources.pop(name, None)
        self.borrowed.discard(name)
        index = port.spec.buffer
        if port.resident is not None:
            self.buffers[index] = port.resident
        else:
            self.buffers[index] = None
            self.call_buffers_missing = not self.host_memory
        port.point(self.buffers[index])
        self.take_call_inputs()

    def take_call_inputs(self) -> None:
        """Sets `call_inputs`, the inputs a call takes (those not bound) in parameter order,
        and `layouts`: per call input, the shape and dtype of an array used as it is (None
        for an input stored in another layout, `ValueSpec.repacked`, never used as given)."""
        self.call_inputs = [p for p in self.inputs.values() if p.spec.name not in self.params]
        self.layouts = [(p.spec.shape, p.spec.dtype) if not p.spec.repacked else (None, None)
                        for p in self.call_inputs]

    def port(self, name: str) -> Port:
        if name not in self.inputs:
            raise InputError(f"{self.function} has no input '{name}' (inputs: "
                             f"{', '.join(self.inputs)})")
        return self.inputs[name]

    # --- inputs ---------------------------------------------------------------------------------

    @property
    def function(self) -> str:
        return f"@{self.plan.function}"

    def taken_as_is(self, args: Sequence[Any]) -> bool:
        """Whether `args` are every input, in order, each a numpy array of its input's shape
        and dtype that the call uses as it is (the common call, checked without `accept`)."""
        layouts = self.layouts
        if len(args) != len(layouts):
            return False
        for value, (shape, dtype) in zip(args, layouts, strict=True):
            if type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype:
                return False
        return True

    def arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        """The call's inputs in `input_names` order, checked against the compiled signature:
        numpy arrays and `DeviceArray`s (tensors and pyopencl arrays made into these)."""
        ports = self.call_inputs
        if not kwargs and len(args) == len(ports):
            return [v if type(v) is np.ndarray and v.shape == shape and v.dtype == dtype
                    else self.accept_stored(p.spec, v)  # see `layouts`
                    for p, (shape, dtype), v in zip(ports, self.layouts, args, strict=True)]
        return call_arguments(self.function, [p.spec for p in ports], list(self.params), args,
                              kwargs, self.accept_stored)

    def accept_stored(self, spec: ValueSpec, value: Any) -> np.ndarray | DeviceArray:
        """`accept`, then in the layout the input's buffer holds it in: a weight compiled as
        bound and unbound since (`ValueSpec.panels`) is packed on the host on each call."""
        checked = self.accept(spec, value)
        if not spec.repacked:
            return checked
        if isinstance(checked, DeviceArray):
            raise InputError(f"{self.function} input '{spec.name}' is stored in the GEMM's "
                             "column panels (it was bound at compile time): pass a numpy array "
                             "or bind it")
        return spec.stored(checked)

    def accept(self, spec: ValueSpec, value: Any) -> np.ndarray | DeviceArray:
        """`value` as a checked numpy array or device array for input `spec`, else an
        InputError naming the input."""
        if isinstance(value, np.ndarray):
            return check_input(self.function, spec, value)
        if (isinstance(value, DeviceArray) and value.device is self.device
                and value.shape == spec.shape and value.dtype == spec.dtype):
            return value
        where = f"{self.function} input '{spec.name}'"
        if isinstance(value, cl_array.Array):
            value = wrap(self.device, value, where)
        if isinstance(value, DeviceArray):
            if not same_context(value.device.context, self.device.context):
                raise InputError(f"{where} is a device array of another OpenCL context "
                                 f"({value.device.description}); {self.function} runs on "
                                 f"{self.device.description}")
            check_layout(where, spec, value.shape, value.dtype)
            return value
        if is_tensor(value):
            return check_input(self.function, spec, tensor_to_array(value, where))
        return check_input(self.function, spec, value)

    # --- running --------------------------------------------------------------------------------

    def run(self, inputs: list[np.ndarray], profile: bool) -> tuple[list[np.ndarray], Profile]:
        """A call with host arrays: inputs in, launches, outputs back, one wait."""
        queue = self.queue
        start = 0.0
        if profile:
            self.queue.finish()
            queue = self.device.queue
            start = time.perf_counter()
        state = CallState()
        if self.donated:
            self.check_donated(inputs)
        if self.host_memory:
            self.wrap_inputs(inputs, state)
            outputs = self.wrap_outputs(state)
        else:
            if self.call_buffers_missing:
                self.allocate_call_buffers()
            self.upload(inputs, state, queue)
            outputs = [self.output_slot(p).take()[0] if p.spec.donor is None else self.empty_array
                       for p in self.outputs]
            for port in self.outputs:
                if port.direct:
                    port.point(self.buffers[port.spec.buffer])
        events = self.launch(queue, profile)
        maps = self.collect(outputs, state, queue) if self.collects else []
        if self.collects or profile or not events:
            queue.finish()
        else:  # the launches are the call's last commands: waiting for the last one's event
            events[-1].wait()  # (an in-order queue) costs less than clFinish
        for mapped in maps:
            mapped.base.release(queue)
        if self.index_errors is not None and self.index_errors.flag[0]:
            raise self.index_errors.take(queue)
        if self.donated:
            outputs = self.donated_outputs(inputs, outputs, state)
        if self.host_memory and self.resident_outputs:
            outputs = [p.staging.copy() if p.resident is not None else array
                       for p, array in zip(self.outputs, outputs, strict=True)]
        if not profile:
            return outputs, UNPROFILED
        return outputs, Profile(self.kernel_times(events), time.perf_counter() - start)

    def launch(self, queue: cl.CommandQueue, profile: bool) -> list[cl.Event]:
        """Enqueues every launch; their events when profiling, else the last one alone."""
        enqueue = cl.enqueue_nd_range_kernel
        events: list[cl.Event] = []
        done = 0
        try:
            if profile:
                for k, global_size, local_size in self.launches:
                    events.append(enqueue(queue, k, global_size, local_size))
                    done += 1
            else:
                event = None
                for k, global_size, local_size in self.launches:
                    event = enqueue(queue, k, global_size, local_size)
                    done += 1
                if event is not None:
                    events.append(event)
        except cl.Error as e:
            failed = self.plan.launches[done]
            raise LaunchError(f"enqueue failed: {e}", kernel=failed.kernel,
                              places=failed.places) from e
        return events

    def kernel_times(self, events: list[cl.Event]) -> tuple[KernelTime, ...]:
        """Each launch's device time from the profiling events of `launch(profile=True)`."""
        return tuple(KernelTime(launch.kernel, (e.profile.end - e.profile.start) * 1e-9)
                     for launch, e in zip(self.plan.launches, events, strict=True))

    def run_device(self, inputs: list[np.ndarray | DeviceArray],
                   profile: bool) -> tuple[list[DeviceArray], Profile]:
        """A call with device arrays: the launches (and device-side copies of outputs that
        are not written in place) are enqueued, the outputs are new device arrays from the
        pool. Unprofiled, it returns without waiting."""
        queue = self.queue
        arrays = [v if isinstance(v, DeviceArray) else to_device(self.device, v) for v in inputs]
        start = 0.0
        if profile:
            self.queue.finish()
            queue = self.device.queue
            start = time.perf_counter()
        empty = self.empty
        here: dict[int, cl.Buffer] = {}
        for port, array in zip(self.call_inputs, arrays, strict=True):
            buffer = empty if array.buffer is None else array.buffer
            here[port.spec.buffer] = buffer
            port.point(buffer)
        pool = self.shared.pool
        buffers: list[cl.Buffer | None] = []
        for port in self.outputs:
            if port.spec.donor is not None:  # the donated input's own device array
                buffers.append(None)
                continue
            nbytes = port.nbytes
            buffer = pool.take(nbytes, port.current) if nbytes else None
            if port.direct:
                port.point(empty if buffer is None else buffer)
                here[port.spec.buffer] = empty if buffer is None else buffer
            buffers.append(buffer)
        events = self.launch(queue, profile)
        last = events[-1] if events else None
        if self.index_errors is not None:  # read at the next wait (DeviceQueue.pending)
            read = self.index_errors.enqueue_read(queue) or events[-1]
            self.shared.pending[id(self.index_errors)] = (self.index_errors, queue, read)
        for port, buffer in zip(self.outputs, buffers, strict=True):
            if not port.direct and buffer is not None and port.spec.donor is None:
                index = port.spec.buffer
                source = here.get(index)
                if source is None:
                    source = self.buffers[index]
                last = cl.enqueue_copy(queue, buffer, source, byte_count=port.nbytes)
        device = self.device
        given = {p.spec.name: a for p, a in zip(self.call_inputs, arrays, strict=True)}
        outputs = [given[port.spec.donor] if port.spec.donor is not None
                   else DeviceArray(device, buffer, port.spec.shape, port.spec.dtype, pool=pool,
                                    event=last)
                   for port, buffer in zip(self.outputs, buffers, strict=True)]
        for port in self.outputs:
            if port.spec.donor is not None:
                given[port.spec.donor].event = last
        if not profile:
            return outputs, UNPROFILED
        queue.finish()
        self.shared.report_pending()
        return outputs, Profile(self.kernel_times(events), time.perf_counter() - start)

    def wrap_inputs(self, inputs: list[np.ndarray], state: CallState) -> None:
        """Host memory: a buffer over each input (or over its aligned staging copy)."""
        for port, array in zip(self.call_inputs, inputs, strict=True):
            if port.resident is not None:
                port.staging[...] = array  # the same shape and dtype (checked)
                if port.current is not port.resident:
                    port.point(port.resident)
                continue
            if array.nbytes == 0:
                buffer = self.empty
                port.point(buffer)
            else:  # the kernels are pointed at it
                buffer, array = self.input_buffer(port, array)
            state.arrays.append(array)
            state.buffers[port.spec.buffer] = buffer
            state.used[port.spec.buffer] = array

    def input_buffer(self, port: Port, array: np.ndarray) -> tuple[cl.Buffer, np.ndarray]:
        """Host memory: the buffer over input `array` (or over its aligned staging copy) and
        the array it is over. The last call's buffer serves again when it is over this same
        array object (or the staging array), on a device that uses host arrays in place:
        making a buffer and pointing the kernels at it costs about 2 us an input (Intel CPU
        OpenCL), the identity test nothing."""
        if array is port.wrapped and array.flags.c_contiguous:
            return port.current, array
        if not (array.flags.c_contiguous and is_aligned(array, self.alignment)):
            if port.staging is None:
                port.staging = aligned_empty(port.spec.shape, port.spec.dtype, self.alignment)
            np.copyto(port.staging, array)
            array = port.staging
            if array is port.wrapped:
                return port.current, array
        buffer = use_host_buffer(self.device.context, array,
                                 read_only=port.spec.name not in self.donated)
        port.point(buffer)
        if self.device.host_pointers:  # elsewhere the runtime may keep a copy of the array
            port.wrapped = array
        return buffer, array

    def wrap_outputs(self, state: CallState) -> list[np.ndarray]:
        """Host memory: an aligned array per output (its `output_slot`'s, reused once the
        caller let go of the last one), and for a direct output the buffer over it that its
        kernels write."""
        outputs = []
        for port in self.outputs:
            if port.spec.donor is not None:  # the donated input's array (`donated_outputs`)
                outputs.append(self.empty_array)
                continue
            if port.resident is not None:  # copied out of its staging array after the wait
                port.point(port.resident)
                outputs.append(port.staging)
                continue
            array, buffer = self.output_slot(port).take()
            if port.direct:
                buffer = buffer if buffer is not None else self.empty
                state.buffers[port.spec.buffer] = buffer
                port.point(buffer)
            outputs.append(array)
        return outputs

    def output_slot(self, port: Port) -> OutputSlot:
        """The host memory of output `port`, reused from call to call (`OutputSlot`); on a
        host-memory device, with the buffer its kernels write through when they write it."""
        if port.slot is None:
            context = self.device.context
            writes = self.host_memory and port.direct and port.nbytes > 0
            port.slot = OutputSlot(
                port.spec.shape, port.spec.dtype, self.alignment,
                (lambda array: use_host_buffer(context, array, read_only=False))
                if writes else None)
        return port.slot

    @cached_property
    def empty_array(self) -> np.ndarray:
        """A placeholder for a donated output until the call fills it in."""
        return np.empty(0)

    def check_donated(self, inputs: Sequence[np.ndarray]) -> None:
        """An InputError for a donated input given as an array the call cannot update."""
        for port, array in zip(self.call_inputs, inputs, strict=True):
            if port.spec.name in self.donated and not array.flags.writeable:
                raise InputError(f"{self.function} input '{port.spec.name}' is donated (updated "
                                 "in place) but the array given is read-only")

    def collect_donated(self, port: Port, state: CallState,
                        queue: cl.CommandQueue) -> list[np.ndarray]:
        """Enqueues what brings a donated input's new values to the host: on a device of its
        own, a read into the array it was uploaded from (`donated_outputs` copies that into the
        caller's if it is another); where the device may cache a host array, a map of it."""
        index = port.spec.buffer
        if not self.host_memory:
            target = state.used[index]
            cl.enqueue_copy(queue, target, self.buffers[index], is_blocking=False)
            return []
        mapped, _ = cl.enqueue_map_buffer(queue, state.buffers[index], cl.map_flags.READ, 0,
                                          port.spec.shape, port.spec.dtype, is_blocking=False)
        return [mapped]

    def donated_outputs(self, inputs: Sequence[np.ndarray], outputs: list[np.ndarray],
                        state: CallState) -> list[np.ndarray]:
        """`outputs` with each donated output the caller's array of its input, holding the
        updated values (copied there when the call ran on a staging copy of it)."""
        given = {p.spec.name: a for p, a in zip(self.call_inputs, inputs, strict=True)}
        outputs = list(outputs)
        for name, i in self.donated.items():
            caller = given[name]
            used = state.used.get(self.inputs[name].spec.buffer, caller)
            if used is not caller:
                np.copyto(caller, used)
            outputs[i] = caller
        return outputs

    def allocate_call_buffers(self) -> None:
        """Device memory: the buffers that the call inputs are uploaded into and the outputs
        are written to, made at the first call with host arrays (a call with device arrays
        uses theirs: a decode loop on device arrays never makes a copy of its caches here)."""
        for port in [*self.call_inputs, *self.outputs]:
            index = port.spec.buffer
            if self.buffers[index] is None:
                self.buffers[index] = self.allocate(index)
        self.call_buffers_missing = False

    def upload(self, inputs: list[np.ndarray], state: CallState, queue: cl.CommandQueue) -> None:
        """Device memory: non-blocking writes into the input buffers."""
        for port, array in zip(self.call_inputs, inputs, strict=True):
            port.point(self.buffers[port.spec.buffer])
            if array.nbytes == 0:
                continue
            array = np.ascontiguousarray(array)
            state.arrays.append(array)
            state.used[port.spec.buffer] = array
            cl.enqueue_copy(queue, self.buffers[port.spec.buffer], array, is_blocking=False)

    def collect(self, outputs: list[np.ndarray], state: CallState,
                queue: cl.CommandQueue) -> list[np.ndarray]:
        """Enqueues what brings the outputs to the host: a read of each output not written in
        place, a map of each one that is (to be released after the wait)."""
        maps = []
        for port, array in zip(self.outputs, outputs, strict=True):
            index = port.spec.buffer
            if port.spec.donor is not None:
                donated = self.inputs[port.spec.donor]
                if port.nbytes and (not self.host_memory or self.map_outputs):
                    maps.extend(self.collect_donated(donated, state, queue))
                continue
            if array.nbytes == 0:
                continue
            buffer = state.buffers[index] if index in state.buffers else self.buffers[index]
            if self.host_memory and port.direct:
                if self.map_outputs and port.resident is None:
                    mapped, _ = cl.enqueue_map_buffer(queue, buffer, cl.map_flags.READ, 0,
                                                      array.shape, array.dtype,
                                                      is_blocking=False)
                    maps.append(mapped)
            else:
                cl.enqueue_copy(queue, array, buffer, is_blocking=False)
        if self.index_errors is not None:
            self.index_errors.enqueue_read(queue)
        return maps


def no_source() -> None:
    """The reference of an array that cannot be shared (`source_reference`): always None."""
    return None


def source_reference(value: object) -> Callable[[], Any]:
    """A weak reference to `value` (what a bound input was bound from), or `no_source` for an
    object that takes none (then nothing is shared from it)."""
    try:
        return weakref.ref(value)
    except TypeError:
        return no_source


def locate_build_error(error: BuildError, plan: ProgramPlan) -> BuildError:
    """``error`` naming the kernel its first compiler error is in (by the line the log gives,
    or the program's only kernel) and the source ops that kernel computes."""
    line = first_error_source_line(error.log)
    kernel = plan.kernel_at(line) if line is not None else None
    if kernel is None and len(plan.kernel_lines) == 1:
        kernel = plan.kernel_lines[0].kernel
    if kernel is None:
        return error
    return error.in_kernel(kernel, plan.places_of(kernel))


def _size(shape: tuple[int, ...]) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


def call_arguments(fn: str, specs: Sequence[ValueSpec], bound: Sequence[str],
                   args: Sequence[Any], kwargs: Mapping[str, Any],
                   accept: Callable[[ValueSpec, Any], Any]) -> list[Any]:
    """A call's inputs in `specs` order (the inputs it takes; `bound` are those held on the
    device), from positional and named values, each passed through `accept` with its spec."""
    names = [s.name for s in specs]
    if len(args) > len(specs):
        held = f"; bound: {', '.join(bound)}" if bound else ""
        raise InputError(f"{fn} takes {len(specs)} inputs ({', '.join(names)}{held}), "
                         f"got {len(args)} positional arrays")
    given: dict[str, Any] = dict(zip(names, args, strict=False))
    for name, value in kwargs.items():
        if name in bound:
            raise InputError(f"{fn} input '{name}' is bound to the device; unbind('{name}') "
                             "to pass it in a call")
        if name not in names:
            raise InputError(f"{fn} has no input '{name}' (inputs: {', '.join(names)})")
        if name in given:
            raise InputError(f"{fn} input '{name}' is given twice")
        given[name] = value
    missing = [n for n in names if n not in given]
    if missing:
        raise InputError(f"{fn} is missing input{'s' if len(missing) > 1 else ''} "
                         + ", ".join(f"'{n}'" for n in missing))
    return [accept(s, given[s.name]) for s in specs]


def check_input(fn: str, spec: ValueSpec, value: object) -> np.ndarray:
    """``value`` if it is an array of ``spec``'s shape and dtype (any strides), else an
    InputError naming the input."""
    if not isinstance(value, np.ndarray):
        raise InputError(f"{fn} input '{spec.name}' must be a numpy array (or a device array, "
                         f"a CPU torch tensor), got {type(value).__name__}")
    check_layout(f"{fn} input '{spec.name}'", spec, value.shape, value.dtype)
    return value


def check_layout(where: str, spec: ValueSpec, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """An InputError starting with `where` unless `shape` and `dtype` are `spec`'s."""
    if tuple(shape) != spec.shape:
        raise InputError(f"{where} has shape {list(shape)}, expected {list(spec.shape)}")
    if dtype != spec.dtype:
        raise InputError(f"{where} has dtype {dtype}, expected {spec.dtype}")
