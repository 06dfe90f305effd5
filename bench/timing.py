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


def wall_times(call: Callable[[], object], warmup: int, repeat: int) -> Timing:
    """Wall time of `call` (which must return only once its work is done), in milliseconds."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1e3)
    return Timing(tuple(samples))


def device_times(timed_call: Callable[[], float], repeat: int) -> Timing:
    """Medians of `timed_call`, which runs once and returns the device time it measured (ms)."""
    return Timing(tuple(timed_call() for _ in range(repeat)))
