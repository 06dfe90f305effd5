"""What placement makes of the benchmark workloads, given made-up profiles shaped like the GPU
machine's two devices (an H100 behind PCIe, a 16-core PoCL CPU; rough figures, not
measurements: the real ones come from fusec-calibrate there). The point is the shape of the
decisions: large matmuls and compute-heavy bodies go to the GPU, memory-bound work on host
arrays stays on the CPU, and the mixed workload splits."""

from __future__ import annotations

import pytest
from xdsl.dialects import func

from fusec.bench.workloads import all_workloads, offload_workloads
from fusec.compiler.context import make_context
from fusec.compiler.driver import load
from fusec.compiler.pipeline import run_pipeline
from fusec.placement.calibration import derive_thresholds
from fusec.placement.cost_model import DeviceProfile, LinearModel
from fusec.placement.decide import place

GPU = DeviceProfile(
    elementwise=LinearModel(4e-12, 2e-6),    # an add of 4M: 48 MB at 3 TB/s
    reduction=LinearModel(2e-12, 4e-6),
    matmul=LinearModel(2e-13, 5e-6),         # m*k*n units, about 10 TFLOP/s at small sizes
    upload=LinearModel(1 / 15e9, 1e-5),      # pageable copies, 15 GB/s
    download=LinearModel(1 / 15e9, 1e-5),
    launch_s=1.2e-5,
    elementwise_step=1e-13,
)
CPU = DeviceProfile(
    elementwise=LinearModel(3e-10),          # 12 bytes an element at 40 GB/s
    reduction=LinearModel(1e-10),
    matmul=LinearModel(1e-11),               # about 200 GFLOP/s
    launch_s=1e-5,
    elementwise_step=7.7e-11,                # a transcendental-heavy step on 16 cores
)
WORKLOADS = {w.name: w for w in all_workloads() + offload_workloads()}


def placed(name: str) -> dict[str, str]:
    module = load(WORKLOADS[name].text)
    run_pipeline(make_context(), module, "default")
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    p = place(fn, derive_thresholds(CPU, GPU), GPU, params=WORKLOADS[name].params)
    return {d.work.label: d.device for d in p.decisions}


def test_the_mixed_workload_splits() -> None:
    assert placed("mixed_host_gpu") == {"nn.matmul #0": "gpu", "fused.elementwise #1": "cpu",
                                        "nn.softmax #2": "cpu"}


@pytest.mark.parametrize("name, device", [
    ("elementwise", "cpu"),        # 3 cheap steps over host arrays: the copies cost more
    ("sum", "cpu"),                # 64 MB to upload for one number
    ("chain8", "gpu"),             # a 15-step body: the CPU's arithmetic costs more
    ("sgemm1024", "gpu"),
    ("sgemm4096", "gpu"),
    ("bert_b32", "gpu"),
])
def test_single_device_workloads(name: str, device: str) -> None:
    assert set(placed(name).values()) == {device}
