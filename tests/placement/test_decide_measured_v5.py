"""Placement with the calibration measured on the GPU machine (an H200 and a 16-core CPU with
PoCL) in the run of the full offload table after f16 work got costs of its own
(`data/h200_pocl_calibration_v5.json`: fusec-calibrate there, calibration version 5; the table
is `bench/results/h200-2026-11-25-s4-offload-full-offload.log`). Each workload below goes to the
device that was faster there, numpy arrays in and out.

The case this file was written for: ``cast_chain`` (f16 in and out, a tanh GELU times a gain
computed in f32, 4096x4096) took 52.8 ms on the CPU and 6.6 ms on the GPU. Costed as f32
work it was estimated at about 3 ms on the CPU and stayed there (64.6 ms against 19.1 in the
run before); with the f16 kernels' measured costs (`cost_model.half_costs`) the CPU is
estimated at 67.5 ms and it goes to the GPU.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from xdsl.dialects import func

from fusec.bench.workloads import all_workloads, offload_workloads
from fusec.compiler.context import make_context
from fusec.compiler.driver import load
from fusec.compiler.pipeline import run_pipeline
from fusec.placement import calibration
from fusec.placement.cost_model import DeviceProfile
from fusec.placement.decide import Placement, place
from fusec.placement.tie import check_tie

DATA = Path(__file__).parent / "data" / "h200_pocl_calibration_v5.json"
WORKLOADS = {w.name: w for w in all_workloads() + offload_workloads()}


def profiles() -> tuple[DeviceProfile, DeviceProfile]:
    stored = json.loads(DATA.read_text())["devices"]
    return (calibration.profile_from_json(stored["host"]["profile"]),
            calibration.profile_from_json(stored["accelerator"]["profile"]))


def placed(name: str, host: DeviceProfile, gpu: DeviceProfile) -> tuple[Placement, bool]:
    """The placement of workload `name` and whether it is a near tie (measured)."""
    workload = WORKLOADS[name]
    module = load(workload.text)
    spec = "default" if workload.pipeline is None else workload.pipeline
    if spec not in ("", "none"):
        run_pipeline(make_context(), module, spec)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    thresholds = calibration.derive_thresholds(host, gpu)
    p = place(fn, thresholds, gpu, params=list(workload.params))
    tie = check_tie(fn, p, thresholds, gpu, list(workload.params))
    return p, tie is not None and tie.tie


def devices(name: str) -> set[str]:
    p, _ = placed(name, *profiles())
    return {d.device for d in p.decisions}


@pytest.mark.parametrize("name, device", [
    # measured there, ms cpu / gpu
    ("cast_chain", "gpu"),               # 52.8 / 6.63: f16 work
    ("centered_gram", "gpu"),            # 2.22 / 0.632
    ("launch_chain64_unfused", "gpu"),   # 3.11 / 0.566
    ("residual_layernorm", "cpu"),       # 0.143 / 0.524
    ("row_softmax", "cpu"),              # 0.222 / 0.613
    ("elementwise", "cpu"),              # 1.56 / 36.0
    ("sum", "cpu"),                      # 0.969 / 6.51
    ("multi_output", "cpu"),             # 0.651 / 5.53
    ("image_normalize", "cpu"),          # 0.397 / 1.04
    ("gemm_epilogue", "gpu"),            # 1.26 / 0.761
    ("hgemm1024", "gpu"),                # 6.94 / 0.681 (an f16 matmul: not f16 elementwise)
])
def test_each_workload_goes_to_the_faster_device(name: str, device: str) -> None:
    assert devices(name) == {device}


def test_without_the_f16_costs_cast_chain_stays_on_the_cpu() -> None:
    host, gpu = profiles()
    assert host.half_elementwise is not None and gpu.half_elementwise is not None
    p, _ = placed("cast_chain", dataclasses.replace(host, half_elementwise=None), gpu)
    assert {d.device for d in p.decisions} == {"cpu"}
    (decision,) = p.decisions
    assert decision.cpu_s is not None and decision.cpu_s < 0.005   # it took 52.8 ms


@pytest.mark.parametrize("name", ["power_step", "explained_variance"])
def test_the_column_statistics_are_near_ties(name: str) -> None:
    """0.228 / 0.457 and 0.239 / 0.444 ms there: the model puts them on the GPU but within the
    tie margin, so the executable measures both and keeps the CPU
    (`fusec.placement.measured`)."""
    p, tie = placed(name, *profiles())
    assert tie and {d.device for d in p.decisions} == {"gpu"}
