"""fusec-bench times its runners in balanced turns (`fusec.bench.harness.time_all`): each runner
makes `Settings.block` calls in a row, and each runner's turn follows each other runner's
equally often, for wall times and device times alike (the calls are fakes that log)."""

from __future__ import annotations

import numpy as np

from fusec.bench.harness import Ready, Settings, time_all
from fusec.bench.peers import Prepared
from fusec.bench.timing import BLOCK, turn_order


def turns(log: list[str]) -> list[tuple[str, int]]:
    """The log as (runner, calls in a row)."""
    out: list[tuple[str, int]] = []
    for name in log:
        if out and out[-1][0] == name:
            out[-1] = (name, out[-1][1] + 1)
        else:
            out.append((name, 1))
    return out


def fake(name: str, walls: list[str], devices: list[str]) -> Ready:
    def device_call() -> float:
        devices.append(name)
        return 1.0
    return Ready(name, Prepared(call=lambda: walls.append(name),
                                outputs=lambda: [np.zeros(1, np.float32)],
                                device_call=device_call), 0.0)


def test_runners_take_balanced_turns_of_block_calls() -> None:
    names = ["fusec", "numpy", "torch"]
    walls: list[str] = []
    devices: list[str] = []
    results = time_all([fake(n, walls, devices) for n in names], Settings(repeat=10, warmup=1))
    assert [r.name for r in results] == names
    for r in results:
        assert r.wall is not None and len(r.wall.samples_ms) >= 10
        assert r.device is not None and len(r.device.samples_ms) >= 10
    expected = [(names[i], BLOCK) for i in turn_order(3)]   # fusec numpy fusec torch ...
    assert turns(walls[3:])[:6] == expected        # after one warm-up call each
    assert turns(devices[3:])[:6] == expected


def test_the_fixed_order_can_still_be_asked_for() -> None:
    walls: list[str] = []
    time_all([fake(n, walls, []) for n in ("a", "b")],
             Settings(repeat=3, warmup=1, block=1, balanced=False))
    assert walls[2:8] == ["a", "b"] * 3
