"""Timing several runners of one workload, interleaved, so that they share the machine's noise.

On a shared, loaded machine the load changes from second to second. Timing runner A for ten
seconds and then runner B would compare A's quiet moment with B's busy one; here every runner
is warmed up, then the runners take turns, one call each per round, and each runner's median
is taken over its own calls. A fast runner gets more calls (until its calls add up to
`MIN_TIME_S`, at most `MAX_CALLS`), a slow one at least `repeat`.

A call's time can depend on the call just before it: a CPU OpenCL runtime's worker threads go
to sleep while another runner's GPU call runs, and the next CPU call pays to wake them (20% of a
0.2 ms call, Intel CPU OpenCL on 2 cores, after a 1 ms gap). In a fixed order one runner always
follows the same other one and alone pays for it. `interleaved(..., balanced=True)` takes turns
in an order where each runner follows each other runner equally often (`turn_order`), and
``block`` makes each turn that many calls in a row, as a caller calling one function repeatedly.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIN_TIME_S = 0.25
"""Fast calls are repeated until they have run this long, so their medians are stable."""
MAX_CALLS = 200
BLOCK = 5
"""Calls of one runner in a row per turn, in the balanced order fusec-bench and
``fusec.bench.offload`` use."""


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
    block: int = 1,
    balanced: bool = False,
    max_time_s: float | None = None,
    min_calls: int = 1,
) -> list[Timing]:
    """Times each of `calls` (each returns the ms it measured) in rounds; one Timing each.

    Each turn makes ``block`` calls of one runner in a row; the turns go round in the order of
    `calls`, or with ``balanced`` in `turn_order`'s (see the module docstring). With
    ``max_time_s`` a slow runner makes fewer than `repeat` calls, about that long in all, but
    at least ``min_calls``."""
    order = turn_order(len(calls)) if balanced else list(range(len(calls)))
    estimates = [0.0] * len(calls)
    for _ in range(max(warmup, 1)):
        for i, call in enumerate(calls):
            estimates[i] = call()
    wanted = [
        max(repeat, min(MAX_CALLS, int(min_time_s * 1e3 / max(ms, 1e-3)))) for ms in estimates
    ]
    if max_time_s is not None:
        wanted = [min(n, max(min_calls, int(max_time_s * 1e3 / max(ms, 1e-3))))
                  for n, ms in zip(wanted, estimates, strict=True)]
    samples: list[list[float]] = [[] for _ in calls]
    while any(len(s) < n for s, n in zip(samples, wanted, strict=True)):
        for i in order:
            for _ in range(block):
                if len(samples[i]) < wanted[i]:
                    samples[i].append(calls[i]())
    return [Timing(tuple(s)) for s in samples]


def turn_order(n: int) -> list[int]:
    """A cycle of turns of runners ``0..n-1`` in which each runner follows each other runner
    exactly once (the last turn is followed by the first): an Euler circuit of the complete
    directed graph on the runners, so each runner has ``n - 1`` turns. For 3: 0 1 0 2 1 2."""
    if n < 2:
        return list(range(n))
    unused = {v: [w for w in range(n) if w != v] for v in range(n)}
    stack, circuit = [0], []
    while stack:   # Hierholzer
        v = stack[-1]
        if unused[v]:
            stack.append(unused[v].pop(0))
        else:
            circuit.append(stack.pop())
    circuit.reverse()
    return circuit[:-1]   # the walk ends where it began

