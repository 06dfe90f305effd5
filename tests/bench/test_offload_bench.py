"""bench/offload.py's command line on the one CPU device here (cpu and auto columns; the gpu
column is n/a): the budget, the --first order, and the workload's own compile options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from fusec.bench import offload
from fusec.bench.workloads import Workload


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def run(args: list[str], tmp_path: Path) -> tuple[Any, list[dict[str, Any]]]:
    out = tmp_path / "rows.json"
    result = CliRunner().invoke(offload.main, [*args, "--runners", "cpu,auto", "--repeat", "1",
                                               "--json-out", str(out)])
    return result, json.loads(out.read_text())


def test_budget_starts_no_workload_after_it(tmp_path: Path) -> None:
    result, rows = run(["-w", "tiny_elementwise", "-w", "tiny_mixed_host_gpu", "--budget-s", "0"],
                       tmp_path)
    assert result.exit_code == 0, result.output
    assert [r["workload"] for r in rows] == ["tiny_elementwise"]
    assert rows[0]["ms"]["cpu"] > 0 and rows[0]["ms"]["auto"] > 0
    assert "not run (" in result.output
    assert "run them with -w tiny_mixed_host_gpu" in result.output


def test_first_runs_first(tmp_path: Path) -> None:
    result, rows = run(["-w", "tiny_elementwise", "-w", "tiny_mixed_host_gpu",
                        "--first", "tiny_mixed_host_gpu"], tmp_path)
    assert result.exit_code == 0, result.output
    assert [r["workload"] for r in rows] == ["tiny_mixed_host_gpu", "tiny_elementwise"]
    assert "not run" not in result.output


TEXT = """
func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %r = nn.relu %e : tensor<64xf32> -> tensor<64xf32>
  func.return %r : tensor<64xf32>
}
"""


def test_the_workloads_compile_options_reach_every_column(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import fusec
    from fusec.compiler import driver

    seen: list[dict[str, Any]] = []

    def spy(real: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            seen.append({k: kwargs.get(k) for k in ("pipeline", "launch_fusion", "allow_tf32")})
            return real(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(fusec, "compile", spy(fusec.compile))
    monkeypatch.setattr(driver, "compile_placed", spy(driver.compile_placed))
    workload = Workload("w", "exp then relu", TEXT, pipeline="none", launch_fusion=False,
                        tf32=True)
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    for runner in ("cpu", "auto"):
        prepared = offload.prepare(runner, workload, [x], ["x"], {}, "default")
        np.testing.assert_allclose(prepared.call()[0], np.maximum(np.exp(x), 0), rtol=1e-6)
    assert seen == [{"pipeline": "none", "launch_fusion": False, "allow_tf32": True}] * 2
    assert prepared.placement == "cpu 2"   # -p none: exp and relu are two units


@pytest.mark.parametrize(("args", "expected"), [
    ([], {"block": offload.BLOCK, "balanced": True}),
    (["--order", "fixed", "--block", "1"], {"block": 1, "balanced": False}),
])
def test_order_and_block_reach_the_timing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          args: list[str], expected: dict[str, Any]) -> None:
    seen: list[dict[str, Any]] = []
    real = offload.interleaved

    def spy(*a: Any, **kwargs: Any) -> Any:
        seen.append({k: kwargs[k] for k in expected})
        return real(*a, **kwargs)

    monkeypatch.setattr(offload, "interleaved", spy)
    # --retime-above 0: a second timing pass (taken when a noisy machine makes the ratio look
    # bad) would call the timing twice; this test is about what reaches the first call
    result, _ = run(["-w", "tiny_elementwise", "--retime-above", "0", *args], tmp_path)
    assert result.exit_code == 0, result.output
    assert seen == [expected]


CHAIN = """
func.func @c(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %a = nn.add %x, %y : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  %r = nn.relu %a : tensor<256x256xf32> -> tensor<256x256xf32>
  func.return %r : tensor<256x256xf32>
}
"""


def test_a_near_tie_is_settled_before_the_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two devices (the CPU device in a second context as the accelerator) and a planted cost
    model whose estimates are a near tie: the auto row's executable measures both candidates
    (each one's outputs checked) before it is timed, and the row says what it measured."""
    import dataclasses

    import pyopencl as cl

    from fusec.compiler import driver
    from fusec.placement.calibration import Setup
    from fusec.placement.cost_model import DeviceProfile, LinearModel, Thresholds
    from fusec.placement.devices import DevicePair
    from fusec.runtime.device import select_device

    host = select_device("cpu")
    context = cl.Context(devices=[host.device])
    second = dataclasses.replace(
        host, context=context, key=(*host.key, "second-context"),
        queue=cl.CommandQueue(context, host.device,
                              properties=cl.command_queue_properties.PROFILING_ENABLE))
    near = Setup(Thresholds(), DeviceProfile(elementwise=LinearModel(0.85e-7)), "calibrated",
                 None, None)
    monkeypatch.setattr(driver, "find_devices", lambda platform=None: DevicePair(host, second))
    monkeypatch.setattr(driver, "load_setup", lambda host, accelerator: near)
    checked: list[int] = []
    real_check = offload.check
    monkeypatch.setattr(offload, "check", lambda out, ref: checked.append(1) or real_check(
        out, ref))
    row = offload.run_workload(Workload("tie", "add relu", CHAIN), ["cpu", "auto"], repeat=2,
                               warmup=1, pipeline="default", seed=0)
    assert row.problems == {} and row.ms["auto"] is not None
    assert row.choice is not None and row.choice["measured"]
    assert row.choice["state"] == "decided" and row.choice["chosen"] in ("cpu", "gpu")
    assert len(checked) == 1 + 1 + 2   # cpu's call, auto's first, each candidate's first after
    assert "; tie measured: gpu " in row.placement and row.placement.startswith("gpu 1")


def planted_interleaved(passes: list[dict[str, Any]], auto_ms: list[float]) -> Any:
    """An `interleaved` that times nothing: the cpu runner's calls take 1 ms, the auto
    runner's `auto_ms[k]` on the k-th timing; each call's arguments go in `passes`."""
    from fusec.bench.timing import Timing

    def fake(calls: Any, warmup: int, repeat: int, **kwargs: Any) -> list[Timing]:
        passes.append({"repeat": repeat, **kwargs})
        n = max(repeat, 10)
        return [Timing((1.0,) * n), Timing((auto_ms[len(passes) - 1],) * n)]
    return fake


@pytest.mark.parametrize("first_auto_ms, retime_above, passes_made", [
    (1.2, offload.RETIME_ABOVE, 2),    # 1.2 > 1.05: timed again
    (1.02, offload.RETIME_ABOVE, 1),   # within: once
    (1.2, 0.0, 1),                     # --retime-above 0: never
])
def test_rows_near_the_bound_are_timed_again(
        monkeypatch: pytest.MonkeyPatch, first_auto_ms: float, retime_above: float,
        passes_made: int) -> None:
    passes: list[dict[str, Any]] = []
    monkeypatch.setattr(offload, "interleaved", planted_interleaved(passes, [first_auto_ms, 1.0]))
    workload = Workload("w", "exp then relu", TEXT)
    row = offload.run_workload(workload, ["cpu", "auto"], repeat=10, warmup=1,
                               pipeline="default", seed=0, retime_above=retime_above)
    assert row.passes == len(passes) == passes_made
    assert row.first_ratio == pytest.approx(first_auto_ms)
    if passes_made == 2:
        # at least 3 full cycles of balanced turns of 5 calls (2 runners: one turn each)
        assert passes[1]["repeat"] == offload.RETIME_CYCLES * 5 >= 15
        assert passes[1]["balanced"] and passes[1]["block"] == offload.BLOCK
        # medians over both timings' calls: 10 at 1.2 ms and 15 at 1.0 ms
        assert row.calls == {"cpu": 25, "auto": 25}
        assert row.ms["auto"] == pytest.approx(1.0) and row.ratio == pytest.approx(1.0)
    else:
        assert row.calls == {"cpu": 10, "auto": 10}
        assert row.ratio == pytest.approx(first_auto_ms)


def test_cycle_calls() -> None:
    assert offload.cycle_calls(3, 5, balanced=True) == 10   # 0 1 0 2 1 2: two turns each
    assert offload.cycle_calls(2, 5, balanced=True) == 5
    assert offload.cycle_calls(3, 5, balanced=False) == 5
    assert offload.cycle_calls(1, 5, balanced=True) == 5


def test_retime_above_on_the_command_line(tmp_path: Path) -> None:
    result, rows = run(["-w", "tiny_elementwise", "--retime-above", "0.01"], tmp_path)
    assert result.exit_code == 0, result.output
    assert rows[0]["passes"] == 2 and rows[0]["calls"]["cpu"] > 0
    assert "timed twice" in result.output
