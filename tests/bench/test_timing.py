"""The schedule of `fusec.bench.timing.interleaved`: who is called when (times are not checked;
the calls are fakes that record their turn)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from fusec.bench.timing import interleaved, turn_order


def recorder(n: int, log: list[int]) -> list[Callable[[], float]]:
    def call(i: int) -> float:
        log.append(i)
        return 1.0
    return [lambda i=i: call(i) for i in range(n)]


def cyclic_pairs(order: list[int]) -> Counter[tuple[int, int]]:
    return Counter(zip(order, order[1:] + order[:1], strict=True))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_each_runner_follows_each_other_once(n: int) -> None:
    order = turn_order(n)
    assert Counter(order) == {i: n - 1 for i in range(n)}
    assert cyclic_pairs(order) == {(a, b): 1 for a in range(n) for b in range(n) if a != b}


def test_one_runner() -> None:
    assert turn_order(1) == [0]


def turns(log: list[int]) -> list[tuple[int, int]]:
    """The log as (runner, calls in a row)."""
    out: list[tuple[int, int]] = []
    for i in log:
        if out and out[-1][0] == i:
            out[-1] = (i, out[-1][1] + 1)
        else:
            out.append((i, 1))
    return out


def test_balanced_blocks() -> None:
    log: list[int] = []
    timings = interleaved(recorder(3, log), warmup=1, repeat=12, min_time_s=0, block=3,
                          balanced=True)
    assert [len(t.samples_ms) for t in timings] == [12, 12, 12]
    measured = turns(log[3:])   # after one warm-up call each
    assert all(length == 3 for _, length in measured)
    runners = [r for r, _ in measured]
    assert runners == turn_order(3) * 2   # 0 1 0 2 1 2: each after each other one once


def test_default_is_the_fixed_order_one_call_a_turn() -> None:
    log: list[int] = []
    interleaved(recorder(3, log), warmup=1, repeat=2, min_time_s=0)
    assert log == [0, 1, 2, 0, 1, 2, 0, 1, 2]


def test_a_slow_runner_gets_repeat_calls_a_fast_one_more() -> None:
    log: list[int] = []
    calls = [lambda: log.append(0) or 1.0, lambda: log.append(1) or 100.0]
    timings = interleaved(calls, warmup=1, repeat=4, min_time_s=0.02, block=2, balanced=True)
    assert [len(t.samples_ms) for t in timings] == [20, 4]


def test_max_time_cuts_a_slow_runner_to_min_calls() -> None:
    log: list[int] = []
    calls = [lambda: log.append(0) or 1.0, lambda: log.append(1) or 100.0]
    timings = interleaved(calls, warmup=1, repeat=10, min_time_s=0.02, block=5, balanced=True,
                          max_time_s=0.25, min_calls=3)
    # 1 ms: 20 calls (min_time_s), under 250 ms; 100 ms: 10 wanted, cut to 2, at least 3
    assert [len(t.samples_ms) for t in timings] == [20, 3]
