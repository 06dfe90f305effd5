"""`fusec.bench.call_overhead` runs and prints every part of a call's wall time (the numbers
themselves are measurements, not checked here)."""

from __future__ import annotations

import pytest

from fusec.bench import call_overhead


def test_prints_the_steps_the_floor_and_the_load(capsys: pytest.CaptureFixture[str]) -> None:
    call_overhead.main(["-w", "trivial", "-w", "residual_rmsnorm", "--calls", "3"])
    out = capsys.readouterr().out
    for label in ("trivial (1 launch", "residual_rmsnorm (1 launch", "call wall",
                  "kernel (profiling events)", "its launches alone",
                  *(f"step: {step}" for step in call_overhead.STEPS),
                  "enqueue + queue.finish()", "enqueue + event.wait()", "poll the event",
                  "profiling queue", "USE_HOST_PTR", "set_arg", "load average"):
        assert label in out
    rows = [line for line in out.splitlines() if line.endswith(" us")]
    assert len(rows) == 2 * 14 + 6


def test_index_check_prints_the_call_with_and_without_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    call_overhead.main(["--index-check", "--calls", "3"])
    out = capsys.readouterr().out
    for label in ("host-array call, indices checked", "host-array call, record not read",
                  "the read after the wait alone", "device-array call (no wait), checked",
                  "difference", "load average"):
        assert label in out


def test_an_unknown_workload_is_a_command_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        call_overhead.main(["-w", "no_such_workload"])
    assert exit_info.value.code == 2
    assert "unknown workload no_such_workload" in capsys.readouterr().err


def test_busy_us_spins_before_each_timed_call(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    spun: list[float] = []
    monkeypatch.setattr(call_overhead, "spin", spun.append)
    call_overhead.main(["-w", "trivial", "--calls", "3", "--busy-us", "50"])
    assert "50 us of host work before each timed call" in capsys.readouterr().out
    # the walls and profiled calls (10 each), the raw launches (3): each after 50 us of spin
    assert set(spun) <= {0.0, 50.0} and spun.count(50.0) >= 23  # 0: the floor rows
    with pytest.raises(SystemExit) as exit_info:
        call_overhead.main(["-w", "trivial", "--busy-us", "-1"])
    assert exit_info.value.code == 2
