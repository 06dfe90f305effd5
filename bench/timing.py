"""Timing several runners of one workload, interleaved, so that they share the machine's noise.

On a shared, loaded machine the load changes from second to second. Timing runner A for ten
seconds and then runner B would compare A's quiet moment with B's busy one; here every runner
is warmed up, then the runners take turns, one call each per round, and each runner's median
is taken over its own calls. A fast runner gets more calls (until its calls add up to
`MIN_TIME_S`, at most `MAX_CALLS`), a slow one at least `repeat`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIN_TIME_S = 0.25
"""Fast calls are repeated until they have run this long, so their medians are stable."""
MAX_CALLS = 200


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def min_ms(self) -> float:
        return min(self.samples_ms)


def wall_call(call: Callable[[], object]) -> float:
    """Wall time of one call (which must return only once its work is done), in ms."""
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1e3


def interleaved(
    calls: Sequence[Callable[[], float]],
    warmup: int,
    repeat: int,
    min_time_s: float = MIN_TIME_S,
) -> list[Timing]:
    """Times each of `calls` (each returns the ms it measured) in rounds; one Timing each."""
    estimates = [0.0] * len(calls)
    for _ in range(max(warmup, 1)):
        for i, call in enumerate(calls):
            estimates[i] = call()
    wanted = [
        max(repeat, min(MAX_CALLS, int(min_time_s * 1e3 / max(ms, 1e-3)))) for ms in estimates
    ]
    samples: list[list[float]] = [[] for _ in calls]
    while any(len(s) < n for s, n in zip(samples, wanted, strict=True)):
        for i, call in enumerate(calls):
            if len(samples[i]) < wanted[i]:
                samples[i].append(call())
    return [Timing(tuple(s)) for s in samples]
