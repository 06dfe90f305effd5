"""Placement with the calibration measured on the GPU machine in the run of the full offload
table (`data/h100_pocl_calibration_v4.json`: fusec-calibrate there, calibration version 4; the
table is `bench/results/h100-2026-11-25-s3-offload-full-offload.log`). Each workload below goes
to the device that was faster there, numpy arrays in and out.

The case this file was written for: 64 small elementwise kernels (``launch_chain64_unfused``)
took 3.45 ms on the 16-core PoCL CPU and 0.66 ms on the GPU, because every kernel costs the CPU
about 49 us whatever its size (the intercept of its elementwise fit). Costing the host by its
fits' slopes alone put the program on the CPU; `calibration.kernel_fixed_seconds` adds that
cost to each host kernel, as the accelerator's estimates include their intercepts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from xdsl.dialects import func

from fusec.bench.workloads import all_workloads, offload_workloads
from fusec.compiler.context import make_context
from fusec.compiler.driver import load
from fusec.compiler.pipeline import run_pipeline
from fusec.placement import calibration
from fusec.placement.decide import place

DATA = Path(__file__).parent / "data" / "h100_pocl_calibration_v4.json"
WORKLOADS = {w.name: w for w in all_workloads() + offload_workloads()}


def devices(name: str) -> set[str]:
    stored = json.loads(DATA.read_text())["devices"]
    host = calibration.profile_from_json(stored["host"]["profile"])
    gpu = calibration.profile_from_json(stored["accelerator"]["profile"])
    workload = WORKLOADS[name]
    module = load(workload.text)
    spec = "default" if workload.pipeline is None else workload.pipeline
    if spec not in ("", "none"):
        run_pipeline(make_context(), module, spec)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    p = place(fn, calibration.derive_thresholds(host, gpu), gpu, params=list(workload.params))
    return {d.device for d in p.decisions}


@pytest.mark.parametrize("name, device", [
    # measured there, ms cpu / gpu
    ("launch_chain64_unfused", "gpu"),   # 3.45 / 0.66: 64 kernels
    ("launch_chain64", "gpu"),           # 0.149 / 0.134 (one launch after launch fusion)
    ("residual_layernorm", "cpu"),       # 0.173 / 0.595
    ("softmax", "cpu"),                  # 0.235 / 0.662
    ("row_layernorm", "cpu"),            # 0.215 / 0.417
    ("elementwise", "cpu"),              # 3.96 / 44.9
    ("sum", "cpu"),                      # 0.961 / 7.27
    ("gemm_epilogue", "gpu"),            # 1.18 / 0.764
    ("matmul_bias_gelu", "gpu"),         # 4.17 / 0.986
    ("centered_gram", "gpu"),            # 1.99 / 0.683
    ("bert_b1", "gpu"),                  # 6.55 / 0.500
])
def test_each_workload_goes_to_the_faster_device(name: str, device: str) -> None:
    assert devices(name) == {device}


def test_without_the_host_kernel_cost_the_small_kernels_stay_on_the_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibration, "kernel_fixed_seconds", lambda profile: 0.0)
    assert devices("launch_chain64_unfused") == {"cpu"}
