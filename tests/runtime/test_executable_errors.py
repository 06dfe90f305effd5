"""Error paths of the compiled executable: bad inputs, a kernel that fails to build, no usable
device, and ops the lowering cannot handle. Each error says exactly what is wrong."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import fusec
from fusec.compiler.diagnostics import FusecError
from fusec.compiler.driver import load, lower
from fusec.codegen.kernels.common import DeviceInfo
from fusec.runtime.device import select_device
from fusec.runtime.errors import BuildError, DeviceError, InputError
from fusec.runtime.executable import Executable

SOURCE = """
func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""


@pytest.fixture(scope="module")
def exe() -> Executable:
    return fusec.compile(SOURCE, device="cpu")


def x() -> np.ndarray:
    return np.ones((4, 8), np.float32)


def b() -> np.ndarray:
    return np.arange(8, dtype=np.float32)


def test_positional_and_named_calls_agree(exe: Executable) -> None:
    (by_position,) = exe(x(), b())
    (by_name,) = exe(b=b(), x=x())
    np.testing.assert_array_equal(by_position, x() + b())
    np.testing.assert_array_equal(by_name, by_position)


def test_missing_input(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@f is missing input 'b'$"):
        exe(x())


def test_unknown_input(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@f has no input 'z' \(inputs: x, b\)$"):
        exe(x(), b(), z=b())


def test_input_given_twice(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@f input 'x' is given twice$"):
        exe(x(), b(), x=x())


def test_too_many_inputs(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@f takes 2 inputs \(x, b\), got 3 positional"):
        exe(x(), b(), b())


def test_wrong_shape(exe: Executable) -> None:
    with pytest.raises(InputError,
                       match=r"^@f input 'b' has shape \[4\], expected \[8\]$"):
        exe(x(), np.ones(4, np.float32))


def test_wrong_dtype(exe: Executable) -> None:
    with pytest.raises(InputError,
                       match=r"^@f input 'x' has dtype float64, expected float32$"):
        exe(np.ones((4, 8)), b())


def test_not_an_array(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@f input 'x' must be a numpy array \(or a device "
                       r"array, a CPU torch tensor\), got list$"):
        exe([[1.0] * 8] * 4, b())


def test_kernel_that_fails_to_build() -> None:
    device = select_device("cpu")
    info = DeviceInfo.from_device(device.device)
    compiled = lower(load(SOURCE), pipeline="none", device_info=info)
    broken = re.sub(r"const (float\d*) v", r"const \1 = v", compiled.plan.source, count=1)
    assert broken != compiled.plan.source
    plan = dataclasses.replace(compiled.plan, source=broken)
    with pytest.raises(BuildError) as info:
        Executable(plan, device)
    error = info.value
    assert "\n" not in str(error) and "OpenCL build failed" in str(error)
    assert error.source == broken and error.log
    assert "--- build log ---" in error.details() and "--- kernel source ---" in error.details()


def test_no_usable_device() -> None:
    with pytest.raises(DeviceError) as info:
        fusec.compile(SOURCE, device="cpu", platform="no-such-platform")
    message = str(info.value)
    assert "no working OpenCL device of kind 'cpu' on platform 'no-such-platform'" in message
    assert "does not match 'no-such-platform'" in message


def test_type_the_backend_cannot_lower_names_it_and_its_place() -> None:
    source = """func.func @f(%x: tensor<4xf64>) -> tensor<2x2xf64> {
  %y = nn.reshape %x : tensor<4xf64> -> tensor<2x2xf64>
  func.return %y : tensor<2x2xf64>
}"""
    with pytest.raises(
        FusecError,
        match=r"wide.mlir:1:1: error: lower-to-kernels: cannot lower the arguments of @f: "
        r"element type f64 is not supported",
    ):
        fusec.compile(load(source, "wide.mlir"), device="cpu", pipeline="none")
