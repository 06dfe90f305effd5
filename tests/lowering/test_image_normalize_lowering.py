"""``fused.image_normalize`` lowered to one ``row_reduce`` launch over planes, in both layouts
of the template (a work-item per plane, the CPU shape; a work-group per plane, the GPU shape),
both run on the test device against the numpy reference: gain and bias of every per-plane
shape (``[C, 1, 1]``, ``[1, C, 1, 1]``, ``[N, C, 1, 1]``, a scalar), images of rank 2, 3 and 4,
planes of 1 to 10,000 elements, both variances, the clamp and gamma in both orders."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

LAYOUTS = {
    "cpu": DeviceInfo(name="CPU layout", is_cpu=True),
    "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256),
}


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>" if shape else "tensor<f32>"


def program(x: tuple[int, ...], gain: tuple[int, ...] | None, bias: tuple[int, ...] | None,
            props: str) -> str:
    params = [("x", x), *((("g", gain),) if gain is not None else ()),
              *((("b", bias),) if bias is not None else ())]
    header = ", ".join(f"%{n}: {tensor(s)}" for n, s in params)
    operands = ("%x" + (" gain %g" if gain is not None else "")
                + (" bias %b" if bias is not None else ""))
    types = tensor(x) + (f" gain {tensor(gain)}" if gain is not None else "") + (
        f" bias {tensor(bias)}" if bias is not None else "")
    return f"""
func.func @f({header}) -> {tensor(x)} {{
  %y = fused.image_normalize {operands} {props} : {types} -> {tensor(x)}
  func.return %y : {tensor(x)}
}}"""


CASES = [
    ((2, 3, 1, 1), (3, 1, 1), (3, 1, 1), "{}"),
    ((2, 3, 1, 17), (1, 3, 1, 1), (2, 3, 1, 1), '{clamp_min = -0.5 : f32, clamp_max = 1.0 : f32}'),
    ((1, 3, 25, 40), (), None, '{variance = "moments", eps = 1.0e-03 : f32}'),
    ((3, 100, 100), (3, 1, 1), (1,), '{clamp_min = 0.0 : f32, gamma = 1.8 : f32}'),
    ((4, 9), None, (1, 1), '{gamma = 2.0 : f32, clamp_max = 2.0 : f32, gamma_first = true}'),
    ((2, 1, 5, 7), None, None, '{eps = 0.0 : f32}'),
]


@pytest.mark.parametrize("layout", ["cpu", "gpu"])
@pytest.mark.parametrize("case", CASES, ids=[str(c[0]) for c in CASES])
def test_layouts(layout: str, case) -> None:
    x_shape, gain, bias, props = case
    text = program(x_shape, gain, bias, props)
    rng = np.random.default_rng(sum(x_shape))
    args = [rng.standard_normal(x_shape).astype(np.float32)]
    for shape in (gain, bias):
        if shape is not None:
            args.append(rng.standard_normal(shape).astype(np.float32))
    if x_shape[-1] > 2 and len(x_shape) > 2:
        args[0][(0,) * (len(x_shape) - 2) + (0, 1)] = np.nan  # a NaN plane stays NaN
    expected = run_function(load(text), args)
    plan = lower(load(text), pipeline="none", device_info=LAYOUTS[layout]).plan
    assert len(plan.launches) == 1
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-5, 1e-4):
        assert result.ok, result.describe(1e-5, 1e-4)
