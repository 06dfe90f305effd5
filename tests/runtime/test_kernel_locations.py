"""Build and launch errors name the kernel and the source op(s) it computes (``file:line:col``),
carried from the parsed ops through fusion, lowering, launch fusion and the plan."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.driver import load, lower
from fusec.runtime.device import select_device
from fusec.runtime.errors import BuildError, LaunchError
from fusec.runtime.executable import Executable, locate_build_error
from fusec.runtime.limits import ResourceError

BREAK_KERNEL = Path(__file__).parents[2] / "lit_tests" / "runtime" / "inputs" / "break_kernel.py"
_spec = importlib.util.spec_from_file_location("break_kernel", BREAK_KERNEL)
assert _spec is not None and _spec.loader is not None
break_kernel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(break_kernel)

SOURCE = """func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %s = nn.softmax %h : tensor<8x64xf32> -> tensor<8x64xf32>
  %e = nn.exp %s : tensor<8x64xf32> -> tensor<8x64xf32>
  %n = nn.neg %e : tensor<8x64xf32> -> tensor<8x64xf32>
  func.return %n : tensor<8x64xf32>
}
"""


@pytest.fixture(scope="module")
def device():  # type: ignore[no-untyped-def]
    return select_device("cpu")


def compiled(device, pipeline: str = "none"):  # type: ignore[no-untyped-def]
    info = DeviceInfo.from_device(device.device)
    return lower(load(SOURCE, "model.mlir"), pipeline=pipeline, device_info=info,
                 filename="model.mlir")


def test_every_launch_names_its_source_ops(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device).plan
    places = [launch.places for launch in plan.launches]
    # matmul, add, softmax, then exp and neg merged into one launch by fuse-launches
    assert places == [("model.mlir:2:3",), ("model.mlir:3:3",), ("model.mlir:4:3",),
                      ("model.mlir:5:3", "model.mlir:6:3")], places
    fused = plan.launches[-1].kernel
    assert fused.endswith("_fused2") and plan.places_of(fused) == places[-1]


def test_fused_op_names_the_op_it_replaced_then_the_ops_it_absorbed(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device, "fuse-matmul-bias-act").plan
    assert plan.launches[0].kernel.startswith("f_gemm") and plan.launches[0].places == (
        "model.mlir:3:3", "model.mlir:2:3")


def test_build_error_names_the_kernel_and_its_source(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device).plan
    for index, expected in ((2, "model.mlir:4:3: error: kernel 'f_softmax_"),
                            (3, "model.mlir:5:3 (and 1 more): error: kernel 'f_exp_")):
        broken = break_kernel.break_kernel(plan, index)
        with pytest.raises(BuildError) as info:
            Executable(broken, device)
        message = str(info.value)
        assert message.startswith(expected), message
        assert "OpenCL build failed on" in message and "planted_unknown_type" in message
        assert "\n" not in message
        assert info.value.kernel == plan.kernel_lines[index].kernel


def test_build_error_without_a_line_names_no_kernel(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device).plan
    error = BuildError(device="d", log="Compilation failed\nsomething went wrong", source="")
    assert locate_build_error(error, plan) is error
    assert str(error) == "OpenCL build failed on d: something went wrong"


def test_launch_error_names_the_kernel_and_its_source(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device).plan
    launches = list(plan.launches)
    # A work-group that does not divide the global size: the enqueue fails.
    launches[3] = dataclasses.replace(launches[3], local_size=(3,))
    exe = Executable(dataclasses.replace(plan, launches=tuple(launches)), device)
    x, w, b = (np.ones(s, np.float32) for s in ((8, 64), (64, 64), (64,)))
    with pytest.raises(LaunchError) as info:
        exe(x, w, b)
    message = str(info.value)
    assert message.startswith(
        f"model.mlir:5:3 (and 1 more): error: kernel '{launches[3].kernel}': enqueue failed"
    ), message
    assert info.value.places == ("model.mlir:5:3", "model.mlir:6:3")


def test_work_group_too_large_names_the_kernel_and_its_source(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device).plan
    launches = list(plan.launches)
    launches[2] = dataclasses.replace(launches[2], local_size=(1 << 20,))
    with pytest.raises(ResourceError) as info:
        Executable(dataclasses.replace(plan, launches=tuple(launches)), device)
    assert str(info.value).startswith(
        f"model.mlir:4:3: error: kernel '{launches[2].kernel}' needs work-groups of 1048576"
    ), str(info.value)


def test_unfused_ops_stand_where_the_fused_op_stood(device) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(device, "fuse-matmul-bias-act,unfuse").plan
    assert [launch.places for launch in plan.launches[:2]] == [
        ("model.mlir:3:3", "model.mlir:2:3")] * 2
