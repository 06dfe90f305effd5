"""The softmax template in f16 and bf16 (its GPU shapes read and write the 16-bit type, computing
in float32), on the test device, against numpy (float64) on the 16-bit inputs: rows in
registers and streamed, several rows a work-group with a padding row, the CPU's default (8
work-items a row); and the lowering, which gives a GPU one template launch and a CPU float32
copies."""

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.kernels.softmax import HALF_CPU_ROW_SIZE, softmax
from fusec.compiler.driver import load, lower
from fusec.dtypes import bf16_bits, bf16_to_f32
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

SHAPES = [  # rows, cols, work-items a row (None: the device's default), rows a work-group
    (5, 768, 64, 1),     # 12 slots: in registers
    (7, 129, 32, 3),     # a ragged last slot, and a padding row
    (3, 8192, 64, 1),    # 128 slots: streamed, online max and sum
    (4, 50, None, None),  # the CPU's default: HALF_CPU_ROW_SIZE work-items
]
ULP = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7}
"""The rounding step of each type at 1: one rounding of the result, and the float32 sums."""


def host(x: np.ndarray, dtype: str) -> np.ndarray:
    return x.astype(np.float16) if dtype == "f16" else bf16_bits(x.astype(np.float32))


def as_float(x: np.ndarray) -> np.ndarray:
    return bf16_to_f32(x) if x.dtype == np.uint16 else x.astype(np.float64)


def reference(x16: np.ndarray) -> np.ndarray:
    x = as_float(x16).astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_half_softmax_matches_numpy(launch, shape, dtype):
    rows, cols, size, group = shape
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, cols)) * 3
    x[0, 1] = 11.0  # one dominant value
    x16 = host(x, dtype)
    kernel = softmax("softmax_half", rows, cols, local_size=size, rows_per_group=group,
                     dtype=dtype)
    assert f"{dtype}" in kernel.source.splitlines()[0]
    assert kernel.local_size[0] == (size or HALF_CPU_ROW_SIZE)
    out = launch(kernel, {"x": x16}, {"out": (rows, cols)})["out"]
    assert out.dtype == x16.dtype
    want = reference(x16)
    error = np.abs(as_float(out) - want) / np.maximum(want, 1e-3)
    assert error.max() <= 2 * ULP[dtype], f"max relative error {error.max():.3g}"


def test_half_softmax_takes_only_16_bit_types():
    with pytest.raises(ValueError, match="f64"):
        softmax("s", 2, 8, dtype="f64")


PROGRAM = """func.func @f(%x: tensor<6x96xf16>) -> tensor<6x96xf16> {
  %y = nn.softmax %x : tensor<6x96xf16> -> tensor<6x96xf16>
  func.return %y : tensor<6x96xf16>
}"""


@pytest.mark.parametrize("kind", ["gpu", "cpu"])
def test_lowering_gives_a_gpu_one_launch_and_a_cpu_float32_copies(kind):
    """On a GPU the f16 softmax is the template alone, reading and writing f16 (it was a
    conversion to f32, the f32 template and a conversion back); on a CPU still those three.
    Either plan runs on the test device and matches the reference."""
    info = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256) \
        if kind == "gpu" else DeviceInfo(name="CPU layout", is_cpu=True)
    plan = lower(load(PROGRAM), pipeline="none", device_info=info).plan
    kernels = [launch.kernel for launch in plan.launches]
    if kind == "gpu":
        assert len(kernels) == 1 and "softmax" in kernels[0]
        assert "softmax of [6x96]" in plan.source and ", f16" in plan.source
    else:
        assert len(kernels) == 3 and "softmax" in kernels[1]
    x = (np.random.default_rng(3).standard_normal((6, 96)) * 4).astype(np.float16)
    (got,) = Executable(plan, select_device(DEVICE))(x)  # type: ignore[arg-type]
    want = run_function(load(PROGRAM), [x])[0].astype(np.float64)
    error = np.abs(got.astype(np.float64) - want) / np.maximum(want, 1e-3)
    assert error.max() <= 2 * ULP["f16"], f"max relative error {error.max():.3g}"
