"""LayerNorm and RMSNorm of f16/bf16 tensors (plain, and after a residual add that
``fuse-residual-*-norm`` folds in) are one launch of the norm template reading and writing the
16-bit buffers, no conversion kernels; the result agrees with the reference in the CPU and GPU
layouts."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.dtypes import bf16_bits
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

LAYOUTS = {"cpu": DeviceInfo(name="CPU layout", is_cpu=True),
           "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)}
TOLERANCES = {"f16": (4e-3, 4e-3), "bf16": (3e-2, 3e-2)}
R, C = 6, 200


def program(kind: str, e: str, residual: bool) -> str:
    t, g = f"tensor<{R}x{C}x{e}>", e
    args = f"%x: {t}, %r: {t}, %g: tensor<{C}x{g}>, %b: tensor<{C}x{g}>"
    lines = [f"  %h = nn.add %x, %r : {t}, {t} -> {t}"] if residual else []
    src = "%h" if residual else "%x"
    if kind == "layer_norm":
        lines.append(f"  %y = nn.layer_norm {src}, %g, %b {{eps = 1.000000e-05 : f32}} : {t}, tensor<{C}x{g}>, tensor<{C}x{g}> -> {t}")
    else:
        lines.append(f"  %y = nn.rms_norm {src}, %g {{eps = 1.000000e-06 : f32}} : {t}, tensor<{C}x{g}> -> {t}")
    body = "\n".join(lines)
    return f"func.func @f({args}) -> {t} {{\n{body}\n  func.return %y : {t}\n}}"


def typed(x: np.ndarray, e: str) -> np.ndarray:
    return x.astype(np.float16) if e == "f16" else bf16_bits(x)


def run(text: str, e: str, layout: str) -> list[str]:
    """The kernels of `text`'s plan in `layout`, after checking its result on the device."""
    rng = np.random.default_rng(5)
    args = [typed((rng.standard_normal((R, C)) + 3).astype(np.float32), e),
            typed(rng.standard_normal((R, C)).astype(np.float32), e),
            typed((1 + 0.1 * rng.standard_normal(C)).astype(np.float32), e),
            typed((0.1 * rng.standard_normal(C)).astype(np.float32), e)]
    plan = lower(load(text), pipeline="default", device_info=LAYOUTS[layout],
                 launch_fusion=False).plan
    expected = run_function(load(text), args)
    outputs = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    atol, rtol = TOLERANCES[e]
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)
    return [launch.kernel for launch in plan.launches]


@pytest.mark.parametrize("e", ["f16", "bf16"])
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("layout", ["cpu", "gpu"])
def test_half_norm_is_one_launch_and_agrees(e: str, kind: str, residual: bool,
                                            layout: str) -> None:
    kernels = run(program(kind, e, residual), e, layout)
    assert len(kernels) == 1 and kind in kernels[0], kernels

