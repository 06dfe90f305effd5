"""Timing one synchronous call: warm-up first, then the median of several runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def min_ms(self) -> float:
        return min(self.samples_ms)


MIN_TIME_S = 0.25
"""Fast calls are repeated until they have run this long, so their medians are stable."""
MAX_CALLS = 200


def wall_times(call: Callable[[], object], warmup: int, repeat: int,
               min_time_s: float = MIN_TIME_S) -> Timing:
    """Wall time of `call` (which must return only once its work is done), in milliseconds:
    at least `repeat` calls, more (up to MAX_CALLS) while they add up to less than
    `min_time_s`."""
    for _ in range(warmup):
        call()
    samples: list[float] = []
    spent = 0.0
    while len(samples) < repeat or (spent < min_time_s and len(samples) < MAX_CALLS):
        start = time.perf_counter()
        call()
        elapsed = time.perf_counter() - start
        samples.append(elapsed * 1e3)
        spent += elapsed
    return Timing(tuple(samples))


def device_times(timed_call: Callable[[], float], repeat: int) -> Timing:
    """Medians of `timed_call`, which runs once and returns the device time it measured (ms)."""
    return Timing(tuple(timed_call() for _ in range(repeat)))
