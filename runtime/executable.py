"""Runs a `ProgramPlan` on an OpenCL device: compile once, call many times.

At construction the program is built (through the program cache), every buffer is allocated
once (inputs, one buffer per intermediate memory slot, constants uploaded once) and every
launch gets its own ``cl.Kernel`` with its arguments already set. A call then only checks the
inputs, enqueues their uploads, the launches and the downloads of the outputs on the device's
in-order queue without waiting in between, and waits once at the end.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from .device import OpenCLDevice
from .errors import InputError, LaunchError
from .plan import LaunchSpec, ProgramPlan, ValueSpec
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


class Executable:
    """A compiled function on one device; call it with numpy arrays."""

    def __init__(self, plan: ProgramPlan, device: OpenCLDevice):
        self.plan = plan
        self.device = device
        self.program = get_program(device, plan.source, plan.build_options)
        context = device.context
        flags = cl.mem_flags
        self.buffers: list[cl.Buffer] = []
        for spec in plan.buffers:
            if spec.data is not None:
                self.buffers.append(cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                                              hostbuf=spec.data))
            else:
                self.buffers.append(cl.Buffer(context, flags.READ_WRITE, spec.nbytes))
        self.kernels = [self.prepare(launch) for launch in plan.launches]

    def prepare(self, launch: LaunchSpec) -> cl.Kernel:
        try:
            k = cl.Kernel(self.program, launch.kernel)
            k.set_args(*(self.buffers[b] for b in launch.buffers))
        except cl.Error as e:
            raise LaunchError(f"cannot prepare the launch: {e}", kernel=launch.kernel) from e
        return k

    @property
    def input_names(self) -> list[str]:
        return [v.name for v in self.plan.inputs]

    def __call__(self, *args: np.ndarray, **kwargs: np.ndarray) -> list[np.ndarray]:
        """The outputs, in return order, for inputs given positionally or by name."""
        outputs, _ = self.run(self.bind(args, kwargs), profile=False)
        return outputs

    def profile(self, *args: np.ndarray, **kwargs: np.ndarray) -> tuple[list[np.ndarray], Profile]:
        """Like a call, and also each kernel's time from OpenCL profiling events."""
        return self.run(self.bind(args, kwargs), profile=True)

    # --- inputs ---------------------------------------------------------------------------------

    def bind(
        self, args: Sequence[np.ndarray], kwargs: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        """The inputs in parameter order, checked against the compiled signature."""
        specs = self.plan.inputs
        fn = f"@{self.plan.function}"
        names = [s.name for s in specs]
        if len(args) > len(specs):
            raise InputError(f"{fn} takes {len(specs)} inputs ({', '.join(names)}), "
                             f"got {len(args)} positional arrays")
        given: dict[str, np.ndarray] = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name not in names:
                raise InputError(f"{fn} has no input '{name}' (inputs: {', '.join(names)})")
            if name in given:
                raise InputError(f"{fn} input '{name}' is given twice")
            given[name] = value
        missing = [n for n in names if n not in given]
        if missing:
            raise InputError(f"{fn} is missing input{'s' if len(missing) > 1 else ''} "
                             + ", ".join(f"'{n}'" for n in missing))
        return [check_input(fn, spec, given[spec.name]) for spec in specs]

    # --- running --------------------------------------------------------------------------------

    def run(self, inputs: list[np.ndarray], profile: bool) -> tuple[list[np.ndarray], Profile]:
        queue = self.device.queue
        start = time.perf_counter()
        for spec, array in zip(self.plan.inputs, inputs, strict=False):
            cl.enqueue_copy(queue, self.buffers[spec.buffer], array, is_blocking=False)
        events = []
        for launch, k in zip(self.plan.launches, self.kernels, strict=False):
            try:
                events.append(cl.enqueue_nd_range_kernel(
                    queue, k, launch.global_size, launch.local_size))
            except cl.Error as e:
                raise LaunchError(f"enqueue failed: {e}", kernel=launch.kernel) from e
        outputs = [np.empty(s.shape, s.dtype) for s in self.plan.outputs]
        last = None
        for spec, array in zip(self.plan.outputs, outputs, strict=False):
            last = cl.enqueue_copy(queue, array, self.buffers[spec.buffer], is_blocking=False)
        if last is not None:
            last.wait()
        else:
            queue.finish()
        wall = time.perf_counter() - start
        times: tuple[KernelTime, ...] = ()
        if profile:
            times = tuple(
                KernelTime(launch.kernel, (e.profile.end - e.profile.start) * 1e-9)
                for launch, e in zip(self.plan.launches, events, strict=False)
            )
        return outputs, Profile(times, wall)


def check_input(fn: str, spec: ValueSpec, value: object) -> np.ndarray:
    """``value`` as a C-contiguous array of ``spec``'s shape and dtype, or an InputError."""
    if not isinstance(value, np.ndarray):
        raise InputError(f"{fn} input '{spec.name}' must be a numpy array, "
                         f"got {type(value).__name__}")
    if value.shape != spec.shape:
        raise InputError(f"{fn} input '{spec.name}' has shape {list(value.shape)}, "
                         f"expected {list(spec.shape)}")
    if value.dtype != spec.dtype:
        raise InputError(f"{fn} input '{spec.name}' has dtype {value.dtype}, "
                         f"expected {spec.dtype}")
    return np.ascontiguousarray(value)
