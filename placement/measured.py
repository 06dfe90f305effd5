"""An auto-placed function whose placement is measured, not guessed: a near tie's two candidates.

Where the cost model's estimates of the chosen placement and of the best other one are within
the tie margin (`fusec.placement.tie`), compilation builds both, and `MeasuredChoice` holds
them. Its first calls are real calls, their results returned, made in turns on one candidate
and then the other, the model's choice first: ``TURN_CALLS`` calls a turn, ``trials`` turns
each. The first call of a turn is not timed: it pays for the switch (an executable's first
call, a CPU runtime's worker threads waking after the other device's call) that a caller
calling one executable repeatedly does not pay; the others are timed, wall time of the call
(`clock`, injectable for tests).

A candidate's figure is its fastest timed call, not the median: what a candidate's first
calls pay and its later ones do not only ever makes a call slower, never faster, and it can
last several calls. On the H200 machine's 16-core CPU (PoCL) a CPU candidate of 0.29-0.32 ms
a call in the steady state timed 0.63, 0.59 and 0.31 ms in its three turns (explained_variance)
and 1.21 ms in its first (power_step), while the GPU's timed 0.49-0.58 against 0.48-0.50
steady: the medians chose the GPU, 1.6-1.7 times slower than the CPU once warm. After the last
turn the candidate with the lower fastest call keeps every later call (a tie keeps the model's
choice); it is decided earlier, as soon as each candidate has `CLEAR_SAMPLES` timed calls,
where one's fastest is over `CLEAR_RATIO` times the other's (the model's estimates were close,
the devices are not: on the H100 machine a 1024^3 matmul measured 4 ms on the GPU and 15.7 on
the CPU while the CPU's calibration put them within 14%), so a clearly slower candidate runs
four calls, not ``2 x trials``; one timed call each decided power_step above on a cold call.
The record (`MeasuredChoice.record`, the offload report's ``choice``) says that the choice was
measured, with the times.

A call with device arrays runs on the current candidate (the model's choice until the
measuring ends) and is not timed: device arrays belong to one device's context. So does
`profile`. Parameters bound with `bind` are bound on both candidates.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyopencl.array as cl_array

from fusec.runtime.device_array import DeviceArray

TURN_CALLS = 2
"""Calls of one candidate in a row while measuring; the first of each is not timed."""
CLEAR_RATIO = 2.0
"""A fastest call over this many times the other's decides before the last turn."""
CLEAR_SAMPLES = 2
"""Timed calls each candidate has before `CLEAR_RATIO` may decide early."""


class MeasuredChoice:
    """Two compiled candidates of one function; the faster, measured, runs (module docstring)."""

    def __init__(self, candidates: Sequence[tuple[str, Any]], trials: int,
                 clock: Callable[[], float] = time.perf_counter):
        """`candidates`: (name, executable), the model's choice first."""
        if len(candidates) < 2 or trials < 1:
            raise ValueError("MeasuredChoice needs two candidates and at least one trial")
        self.names = [name for name, _ in candidates]
        self.executables = [exe for _, exe in candidates]
        self.trials = trials
        self.clock = clock
        self.turns = [i for _ in range(trials) for i in range(len(candidates))]
        """The candidate of each turn: 0 1 0 1 ... (each follows the other equally often)."""
        self.samples: list[list[float]] = [[] for _ in candidates]
        """Each candidate's timed calls, seconds."""
        self.calls = 0
        """Calls made while measuring."""
        self.chosen: int | None = None

    @property
    def calls_to_decide(self) -> int:
        """Calls that measuring takes at most (fewer where one candidate is clearly slower)."""
        return len(self.turns) * TURN_CALLS

    @property
    def current(self) -> Any:
        """The executable that runs untimed calls: the chosen one, or the model's choice."""
        return self.executables[0 if self.chosen is None else self.chosen]

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        if self.chosen is not None or has_device_arrays(args, kwargs):
            return self.current(*args, **kwargs)  # type: ignore[no-any-return]
        turn, within = divmod(self.calls, TURN_CALLS)
        index = self.turns[turn]
        start = self.clock()
        outputs = self.executables[index](*args, **kwargs)
        elapsed = self.clock() - start
        self.calls += 1
        if within > 0:
            self.samples[index].append(elapsed)
        if self.calls == self.calls_to_decide or self.clear():
            fastest = [min(s) for s in self.samples]
            self.chosen = min(range(len(fastest)), key=lambda i: (fastest[i], i))
        return outputs  # type: ignore[no-any-return]

    def clear(self) -> bool:
        """Whether every candidate has `CLEAR_SAMPLES` timed calls and one's fastest is over
        `CLEAR_RATIO` times another's."""
        if any(len(s) < CLEAR_SAMPLES for s in self.samples):
            return False
        fastest = [min(s) for s in self.samples]
        return max(fastest) > CLEAR_RATIO * min(fastest)

    def profile(self, *args: Any, **kwargs: Any) -> Any:
        return self.current.profile(*args, **kwargs)

    def bind(self, name: str, value: np.ndarray) -> None:
        for exe in self.executables:
            exe.bind(name, value)

    def unbind(self, name: str) -> None:
        for exe in self.executables:
            exe.unbind(name)

    def arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        return self.current.arguments(args, kwargs)  # type: ignore[no-any-return]

    @property
    def input_names(self) -> list[str]:
        return list(self.current.input_names)

    @property
    def param_names(self) -> list[str]:
        return list(self.current.param_names)

    @property
    def call_inputs(self) -> Any:
        return self.current.call_inputs

    @property
    def function(self) -> str:
        return str(self.current.function)

    @property
    def devices(self) -> list[str]:
        """The current candidate's devices, by description."""
        exe = self.current
        return list(getattr(exe, "devices", None) or [exe.device.description])

    def record(self) -> dict[str, Any]:
        """Where the measuring stands: ``state`` (``measuring`` or ``decided``), the ``calls``
        made while measuring and how many it takes at most, each candidate's timed calls (ms),
        their medians and the fastest (what decides), and the ``chosen`` candidate's name (None
        while measuring)."""
        return {
            "state": "measuring" if self.chosen is None else "decided",
            "calls": self.calls,
            "calls_to_decide": self.calls_to_decide,
            "times_ms": {n: [s * 1e3 for s in samples]
                         for n, samples in zip(self.names, self.samples, strict=True)},
            "median_ms": {n: statistics.median(samples) * 1e3 if samples else None
                          for n, samples in zip(self.names, self.samples, strict=True)},
            "fastest_ms": {n: min(samples) * 1e3 if samples else None
                           for n, samples in zip(self.names, self.samples, strict=True)},
            "chosen": None if self.chosen is None else self.names[self.chosen],
        }


def has_device_arrays(args: Sequence[Any], kwargs: Mapping[str, Any]) -> bool:
    return any(isinstance(v, DeviceArray | cl_array.Array)
               for v in (*args, *kwargs.values()))
