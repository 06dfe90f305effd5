"""Runs a placed program: its segments, each an `Executable` on its own device and context.

A call takes arrays by position or name, checked against the original function's signature:
numpy arrays (on the host) or device arrays (`fusec.runtime.device_array.DeviceArray`, or
``pyopencl.array.Array``) of either device. Each segment is called with the values it reads:
the caller's arrays, or what another segment returned. A value goes to a segment as it is when
it is on the host or on that segment's device; a device array of the other device is read
back to the host first. So a value made on the accelerator and read on the host crosses once,
read back; a host value read on the accelerator is uploaded by the segment that reads it. A
segment on the accelerator whose results a later accelerator segment reads is called with
device arrays (`Executable` then returns device arrays, without waiting), so such values stay
on the device between the two. Those are the transfers of the plan.

The results are numpy arrays, or, when the caller passed a device array, each where it was
made (device arrays for results of the accelerator, as `Executable` does).

Segments run in their order; where some segments do not depend on each other (a host chain
beside an accelerator chain) they run on two threads, so the two devices work at the same time
(PyOpenCL lets go of the GIL while it waits for a device); each device runs its own segments
one at a time, in order.

Parameters (``bind``) are bound on every segment that reads them, each on its own device.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyopencl.array as cl_array

from fusec.codegen.plan import ValueSpec
from fusec.errors import InputError
from fusec.placement.decide import ACCELERATOR
from fusec.placement.partition import Segment
from fusec.runtime.device import OpenCLDevice
from fusec.runtime.device_array import DeviceArray, same_context, to_device
from fusec.runtime.executable import (
    Executable,
    KernelTime,
    Profile,
    call_arguments,
    check_input,
    check_layout,
)


@dataclass(frozen=True)
class PlacedSegment:
    segment: Segment
    executable: Executable
    keep_on_device: bool = False
    """Called with device arrays, so that its results stay on its device (a later segment on
    the same device reads one)."""

    @property
    def argument_names(self) -> list[str]:
        return [s.name for s in self.executable.plan.inputs]


class PlacedExecutable:
    """A function whose units run on two devices; call it with numpy arrays."""

    def __init__(self, function: str, inputs: Sequence[ValueSpec], outputs: Sequence[str],
                 segments: Sequence[PlacedSegment],
                 params: Mapping[str, np.ndarray] | None = None):
        self.function_name = function
        self.inputs = list(inputs)
        """The original function's arguments (`ValueSpec.buffer` unused)."""
        self.output_keys = list(outputs)
        """Value keys (`fusec.placement.partition.ValueKeys`) of the results, in order."""
        self.segments = [mark_kept(s, segments) for s in segments]
        self.params: dict[str, np.ndarray] = {}
        self.parallel = has_independent_segments([s.segment for s in self.segments])
        self.waits = [wait_for(s.segment, [p.segment for p in self.segments])
                      for s in self.segments]
        """Per segment, those it waits for: those it reads, and the one before it on its
        device (one device runs its segments one at a time, in order)."""
        self.pool = ThreadPoolExecutor(max_workers=2) if self.parallel else None
        for name, value in (params or {}).items():
            self.bind(name, value)

    @property
    def function(self) -> str:
        return f"@{self.function_name}"

    @property
    def devices(self) -> list[str]:
        return [s.executable.device.description for s in self.segments]

    @property
    def input_names(self) -> list[str]:
        return [s.name for s in self.inputs if s.name not in self.params]

    @property
    def param_names(self) -> list[str]:
        return list(self.params)

    def bind(self, name: str, value: np.ndarray) -> None:
        """Keeps input `name` on every device that reads it (see `Executable.bind`)."""
        if name not in [s.name for s in self.inputs]:
            raise InputError(f"{self.function} has no input '{name}' (inputs: "
                             f"{', '.join(s.name for s in self.inputs)})")
        key = self.key_of(name)
        for placed in self.segments:
            if key in placed.segment.inputs:
                placed.executable.bind(name, value)
        self.params[name] = value

    def unbind(self, name: str) -> None:
        if name not in self.params:
            raise InputError(f"{self.function} input '{name}' is not bound")
        key = self.key_of(name)
        for placed in self.segments:
            if key in placed.segment.inputs:
                placed.executable.unbind(name)
        del self.params[name]

    def key_of(self, name: str) -> str:
        return f"arg:{[s.name for s in self.inputs].index(name)}"

    def arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        specs = [s for s in self.inputs if s.name not in self.params]
        return call_arguments(self.function, specs, list(self.params), args, kwargs,
                              self.accept)

    def accept(self, spec: ValueSpec, value: Any) -> Any:
        """A checked numpy array or device array for input `spec`, else an InputError."""
        if isinstance(value, DeviceArray | cl_array.Array):
            check_layout(f"{self.function} input '{spec.name}'", spec, value.shape,
                         value.dtype)
            return value
        return check_input(self.function, spec, value)

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        outputs, _ = self.run(self.arguments(args, kwargs), profile=False)
        return outputs

    def profile(self, *args: Any, **kwargs: Any) -> tuple[list[Any], Profile]:
        """Like a call, and every segment's kernel times (their sum is device time on two
        devices, which may overlap)."""
        return self.run(self.arguments(args, kwargs), profile=True)

    def run(self, inputs: list[Any], profile: bool) -> tuple[list[Any], Profile]:
        start = time.perf_counter()
        values: dict[str, Any] = {}
        for spec, array in zip([s for s in self.inputs if s.name not in self.params], inputs,
                               strict=True):
            values[self.key_of(spec.name)] = array
        kernels: list[KernelTime] = []
        if self.pool is None:
            for placed in self.segments:
                kernels += self.run_segment(placed, values, profile)
        else:
            futures: list[Future[list[KernelTime]]] = []
            for placed in self.segments:
                waits = [futures[i] for i in self.waits[placed.segment.index]]
                futures.append(self.pool.submit(self.run_after, waits, placed, values, profile))
            for f in futures:
                kernels += f.result()
        outputs = [values[key].copy() if key.startswith("arg:") and isinstance(
            values[key], np.ndarray) else values[key] for key in self.output_keys]
        if not any(isinstance(v, DeviceArray | cl_array.Array) for v in inputs):
            outputs = [host(v) for v in outputs]
        return outputs, Profile(tuple(kernels), time.perf_counter() - start)

    def run_after(self, waits: Sequence[Future[list[KernelTime]]], placed: PlacedSegment,
                  values: dict[str, np.ndarray], profile: bool) -> list[KernelTime]:
        for f in waits:
            f.result()
        return self.run_segment(placed, values, profile)

    def run_segment(self, placed: PlacedSegment, values: dict[str, np.ndarray],
                    profile: bool) -> list[KernelTime]:
        """Calls one segment with the values it reads; stores what it returns."""
        segment = placed.segment
        exe = placed.executable
        given = {name: for_device(values[key], exe.device) for name, key in
                 zip(placed.argument_names, segment.inputs, strict=True)
                 if name not in exe.params}
        if placed.keep_on_device and not any(isinstance(v, DeviceArray)
                                             for v in given.values()):
            name, array = next(iter(given.items()), (None, None))
            if name is not None:   # one device array in: the call stays on the device
                given[name] = to_device(exe.device, array)
        if profile:
            outputs, prof = exe.profile(**given)
            kernels = list(prof.kernels)
        else:
            outputs, kernels = exe(**given), []
        for key, array in zip(segment.outputs, outputs, strict=True):
            values[key] = array
        return kernels

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False)

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(wait=False)


def host(value: Any) -> Any:
    """A device array read back into a numpy array; anything else as it is."""
    return value.get() if isinstance(value, DeviceArray | cl_array.Array) else value


def for_device(value: Any, device: OpenCLDevice) -> Any:
    """`value` as a segment on `device` takes it: as it is if it is on the host or on that
    device, read back to the host if it is a device array of another context."""
    if isinstance(value, DeviceArray):
        return value if same_context(value.device.context, device.context) else value.get()
    if isinstance(value, cl_array.Array):
        return value if same_context(value.context, device.context) else value.get()
    return value


def mark_kept(placed: PlacedSegment, segments: Sequence[PlacedSegment]) -> PlacedSegment:
    """`placed`, kept on its device when it is on the accelerator and a later segment there
    reads one of its results (the host reads host arrays in place anyway)."""
    mine = set(placed.segment.outputs)
    device = placed.segment.device
    keep = device == ACCELERATOR and any(s.segment.device == device and mine & set(s.segment.inputs)
               for s in segments if s.segment.index > placed.segment.index)
    return PlacedSegment(placed.segment, placed.executable, keep)


def wait_for(segment: Segment, segments: Sequence[Segment]) -> list[int]:
    same_device = [s.index for s in segments
                   if s.device == segment.device and s.index < segment.index]
    return sorted(set(segment.after) | set(same_device[-1:]))


def has_independent_segments(segments: Sequence[Segment]) -> bool:
    """Whether two segments could run at once (neither reads, even indirectly, the other)."""
    reach: list[set[int]] = []
    for s in segments:
        seen = set(s.after)
        for a in s.after:
            seen |= reach[a]
        reach.append(seen)
    return any(i not in reach[j] for j in range(len(segments)) for i in range(j))
