"""Runs a placed program: its segments, each an `Executable` on its own device and context.

A call takes numpy arrays (by position or name, checked against the original function's
signature) and returns new numpy arrays, as `fusec.runtime.executable.Executable` does. Each
segment is called with the values it reads: the caller's arrays, or arrays another segment
returned. A value made on the accelerator and read on the host is read back by the segment
that makes it (its output) and used in place by the host's segment; one read on the
accelerator is uploaded by the segment that reads it: those are the transfers of the plan.

Segments run in their order; where some segments do not depend on each other (a host chain
beside an accelerator chain) they run on two threads, so the two devices work at the same time
(PyOpenCL lets go of the GIL while it waits for a device).

Parameters (``bind``) are bound on every segment that reads them, each on its own device.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from fusec.codegen.plan import ValueSpec
from fusec.errors import InputError
from fusec.placement.partition import Segment
from fusec.runtime.executable import (
    Executable,
    KernelTime,
    Profile,
    call_arguments,
    check_input,
)


@dataclass(frozen=True)
class PlacedSegment:
    segment: Segment
    executable: Executable

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
        self.segments = list(segments)
        self.params: dict[str, np.ndarray] = {}
        self.parallel = has_independent_segments([s.segment for s in self.segments])
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

    def arguments(self, args: Sequence[np.ndarray],
                  kwargs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        specs = [s for s in self.inputs if s.name not in self.params]
        return call_arguments(self.function, specs, list(self.params), args, kwargs,
                              lambda spec, value: check_input(self.function, spec, value))

    def __call__(self, *args: np.ndarray, **kwargs: np.ndarray) -> list[np.ndarray]:
        outputs, _ = self.run(self.arguments(args, kwargs), profile=False)
        return outputs

    def profile(self, *args: np.ndarray, **kwargs: np.ndarray) -> tuple[list[np.ndarray], Profile]:
        """Like a call, and every segment's kernel times (their sum is device time on two
        devices, which may overlap)."""
        return self.run(self.arguments(args, kwargs), profile=True)

    def run(self, inputs: list[np.ndarray], profile: bool) -> tuple[list[np.ndarray], Profile]:
        start = time.perf_counter()
        values: dict[str, np.ndarray] = {}
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
                waits = [futures[i] for i in placed.segment.after]
                futures.append(self.pool.submit(self.run_after, waits, placed, values, profile))
            for f in futures:
                kernels += f.result()
        outputs = [values[key] for key in self.output_keys]
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
        given = {name: values[key] for name, key in
                 zip(placed.argument_names, segment.inputs, strict=True)
                 if name not in placed.executable.params}
        exe = placed.executable
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


def has_independent_segments(segments: Sequence[Segment]) -> bool:
    """Whether two segments could run at once (neither reads, even indirectly, the other)."""
    reach: list[set[int]] = []
    for s in segments:
        seen = set(s.after)
        for a in s.after:
            seen |= reach[a]
        reach.append(seen)
    return any(i not in reach[j] for j in range(len(segments)) for i in range(j))
