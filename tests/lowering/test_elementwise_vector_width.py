"""Elementwise kernels compiled for a CPU run the device's native float vector per work-item
(``fusec.compile`` / `lower` pass ``vector-width`` = `DeviceInfo.float_vector_width`), halved
down to float4 until it divides the innermost dimension, scalar below that; a GPU keeps float4.
Each shape agrees with the numpy reference (tolerances of transcendental ops, as in
``tests/runtime/test_ops_nn.py``)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

LAYOUTS = {
    "avx512": DeviceInfo(name="CPU, 16 floats a vector", is_cpu=True, float_vector_width=16),
    "avx2": DeviceInfo(name="CPU, 8 floats a vector", is_cpu=True, float_vector_width=8),
    "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256),
}


def chain(rows: int, cols: int) -> str:
    """``t = a * b + c`` (c a row broadcast) returned, and ``tanh(t) * a``: one kernel."""
    t, v = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}xf32>"
    return f"""func.func @f(%a: {t}, %b: {t}, %c: {v}) -> ({t}, {t}) {{
  %0 = nn.mul %a, %b : {t}, {t} -> {t}
  %1 = nn.add %0, %c : {t}, {v} -> {t}
  %2 = nn.tanh %1 : {t} -> {t}
  %3 = nn.mul %2, %a : {t}, {t} -> {t}
  func.return %3, %1 : {t}, {t}
}}"""


@pytest.mark.parametrize("layout,cols,width", [
    ("avx512", 64, 16), ("avx512", 24, 8), ("avx512", 12, 4), ("avx512", 6, 1), ("avx512", 1, 1),
    ("avx2", 64, 8), ("avx2", 20, 4), ("avx2", 3, 1),
    ("gpu", 64, 4), ("gpu", 6, 1),
])
def test_vector_width(layout: str, cols: int, width: int) -> None:
    text = chain(5, cols)
    module = load(text)
    args = random_inputs(find_function(module), seed=cols)
    args[0][0, 0] = np.nan
    args[1][1, -1] = np.inf
    expected = run_function(module, args)
    plan = lower(load(text), device_info=LAYOUTS[layout]).plan
    assert len(plan.launches) == 1
    widths = {int(w) for w in re.findall(r"vload(\d+)", plan.source)}
    assert widths == ({width} if width > 1 else set()), plan.source
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-6, 1e-5):
        assert result.ok, result.describe(1e-6, 1e-5)


def test_gpu_pointwise_kernels_run_in_groups_of_256_and_reductions_keep_64():
    """On a GPU a kernel without a reduction runs in work-groups of 256 (cast_chain on an H200:
    0.164 ms in groups of 64, 0.056 in groups of 256); a work-group reduction keeps the pass's
    ``local-size``; a GPU allowing fewer work-items per group gets the largest power of 2 it
    allows; a CPU keeps 64."""
    t = "tensor<64x1024xf32>"
    text = (f"func.func @f(%a: {t}) -> ({t}, tensor<64xf32>) {{\n"
            f"  %0 = nn.tanh %a : {t} -> {t}\n"
            f"  %1 = nn.reduce_sum %a {{axes = array<i64: 1>}} : {t} -> tensor<64xf32>\n"
            f"  func.return %0, %1 : {t}, tensor<64xf32>\n}}\n")

    def local_sizes(info: DeviceInfo) -> dict[str, tuple[int, ...]]:
        plan = lower(load(text), device_info=info, pipeline="none").plan
        return {launch.kernel: launch.local_size for launch in plan.launches}

    gpu = local_sizes(LAYOUTS["gpu"])
    assert [size for name, size in gpu.items() if "tanh" in name] == [(256,)]
    assert [size for name, size in gpu.items() if "reduce" in name] == [(64,)]
    small = local_sizes(DeviceInfo(name="small GPU", is_cpu=False, max_work_group_size=192))
    assert [size for name, size in small.items() if "tanh" in name] == [(128,)]
    cpu = local_sizes(LAYOUTS["avx2"])
    assert [size for name, size in cpu.items() if "tanh" in name] == [(64,)]
