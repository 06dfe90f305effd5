"""Out-of-range gather indices on the OpenCL device: the kernel records the first bad index and
the call raises `IndexOutOfRangeError` (an `InputError`) naming the input, the position and the
value (`fusec.runtime.index_errors`), on every way a call moves its arrays: in place on a
device that uses host arrays ("host"), mapped ("host-mapped"), copied as on a discrete GPU
("copy"), and with 32-bit atomics only ("no-int64-atomics"). In-range indices, negative ones
included, still give the reference's numbers, also in the call after an error. A call with
device arrays returns at once and raises at the read-back."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.driver import load, lower
from fusec.errors import IndexOutOfRangeError, InputError
from fusec.runtime import executable as executable_module
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

SOURCE = """
func.func @f(%table: tensor<5x3xf32>, %ids: tensor<2x4xi32>, %x: tensor<4x6xf32>,
             %cols: tensor<3xi32>) -> (tensor<2x4x3xf32>, tensor<4x3xf32>) {
  %e = nn.gather %table, %ids {axis = 0 : i64} : tensor<5x3xf32>, tensor<2x4xi32> -> tensor<2x4x3xf32>
  %c = nn.gather %x, %cols {axis = 1 : i64} : tensor<4x6xf32>, tensor<3xi32> -> tensor<4x3xf32>
  func.return %e, %c : tensor<2x4x3xf32>, tensor<4x3xf32>
}
"""

TABLE = np.arange(15, dtype=np.float32).reshape(5, 3)
X = np.arange(24, dtype=np.float32).reshape(4, 6)
IDS = np.array([[0, 4, -1, -5], [2, 3, 1, 0]], np.int32)
COLS = np.array([5, -6, 0], np.int32)


@pytest.fixture(scope="module",
                params=["host", "host-mapped", "copy", "no-int64-atomics"])
def exe(request: pytest.FixtureRequest) -> Iterator[Executable]:
    device = select_device("cpu")
    info = DeviceInfo.from_device(device.device)
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "copy":
            patch.setattr(executable_module, "shares_host_memory", lambda device: False)
        if request.param == "host-mapped":
            device = dataclasses.replace(device, host_pointers=False)
        if request.param == "no-int64-atomics":
            info = dataclasses.replace(info, int64_atomics=False)
        compiled = Executable(lower(load(SOURCE, "gathers.mlir"), device_info=info).plan,
                              device)
        assert ("atom_min" in compiled.plan.source) == (request.param != "no-int64-atomics")
        yield compiled


def expected(ids: np.ndarray, cols: np.ndarray) -> list[np.ndarray]:
    return [np.take(TABLE, ids, axis=0), np.take(X, cols, axis=1)]


def check_in_range(exe: Executable) -> None:
    for got, want in zip(exe(TABLE, IDS, X, COLS), expected(IDS, COLS), strict=True):
        np.testing.assert_array_equal(got, want)


def test_in_range_indices_negative_ones_included(exe: Executable) -> None:
    check_in_range(exe)


@pytest.mark.parametrize("value", [5, -6, 2**31 - 1, -2**31])
def test_a_bad_index_is_named_with_its_position_and_value(exe: Executable, value: int) -> None:
    ids = IDS.copy()
    ids[1, 2] = value
    with pytest.raises(IndexOutOfRangeError) as caught:
        exe(TABLE, ids, X, COLS)
    error = caught.value
    assert isinstance(error, InputError)
    assert (error.position, error.value, error.dim, error.axis) == ((1, 2), value, 5, 0)
    assert str(error) == (f"gathers.mlir:4:3: error: index {value} at position [1, 2] of input "
                          "'ids' is out of range for axis 0 of size 5 (valid: -5 to 4)")
    check_in_range(exe)  # the record was cleared: the next call is fine


def test_the_first_bad_index_is_reported(exe: Executable) -> None:
    """Of several bad indices, the lowest position in row-major order (with 32-bit atomics
    only: one of them, with its own value)."""
    ids = np.array([[0, 1, 9, 2], [-7, 3, 8, 0]], np.int32)
    with pytest.raises(IndexOutOfRangeError) as caught:
        exe(TABLE, ids, X, COLS)
    error = caught.value
    if "atom_min" in exe.plan.source:
        assert (error.position, error.value) == ((0, 2), 9)
    else:
        assert ids[error.position] == error.value and not -5 <= error.value < 5
    check_in_range(exe)


def test_the_second_gather_names_its_input_and_axis(exe: Executable) -> None:
    cols = np.array([0, 1, 6], np.int32)
    with pytest.raises(IndexOutOfRangeError, match=r"gathers.mlir:5:3: error: index 6 at "
                       r"position \[2\] of input 'cols' is out of range for axis 1 of size 6"):
        exe(TABLE, IDS, X, cols)


def test_a_device_array_call_raises_at_the_read_back(exe: Executable) -> None:
    ids = IDS.copy()
    ids[0, 3] = -6
    args = [exe.to_device(a) for a in (TABLE, ids, X, COLS)]
    embedded, _ = exe(*args)  # enqueued; nothing raised yet
    with pytest.raises(IndexOutOfRangeError, match=r"index -6 at position \[0, 3\]"):
        embedded.get()
    good = [exe.to_device(a) for a in (TABLE, IDS, X, COLS)]
    for got, want in zip(exe(*good), expected(IDS, COLS), strict=True):
        np.testing.assert_array_equal(got.get(), want)


def test_synchronize_raises_it_too(exe: Executable) -> None:
    ids = IDS.copy()
    ids[1, 0] = 5
    args = [exe.to_device(a) for a in (TABLE, ids, X, COLS)]
    exe(*args)
    with pytest.raises(IndexOutOfRangeError, match=r"index 5 at position \[1, 0\]"):
        exe.synchronize()
    exe.synchronize()  # reported once


FUSIBLE = """
func.func @g(%table: tensor<5x3xf32>, %ids: tensor<4xi32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = nn.gather %table, %ids {axis = 0 : i64} : tensor<5x3xf32>, tensor<4xi32> -> tensor<4x3xf32>
  %s = nn.add %e, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %r = nn.relu %s : tensor<4x3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
"""


@pytest.mark.parametrize("pipeline", ["default", "none"])
def test_a_gather_among_fusible_ops_still_checks(pipeline: str) -> None:
    """Whatever the fusion passes do with a gather and the elementwise ops after it, a bad
    index is still an error of the call (a fusion that absorbs gathers must keep the check)."""
    import fusec

    exe = fusec.compile(FUSIBLE, pipeline=pipeline, device="cpu")
    b = np.ones(3, np.float32)
    (out,) = exe(TABLE, np.array([0, -1, 4, -5], np.int32), b)
    np.testing.assert_array_equal(out, np.maximum(TABLE[[0, 4, 4, 0]] + b, 0))
    with pytest.raises(IndexOutOfRangeError, match=r"index -6 at position \[3\] of input 'ids'"):
        exe(TABLE, np.array([0, 1, 2, -6], np.int32), b)


def test_a_loaded_artifact_checks_its_indices(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The record's plan (`IndexCheck`, the ``index_errors`` buffer) travels in a ``.fusec``
    artifact: the loaded executable raises the same error."""
    import fusec
    from fusec.tools import fusec_build

    (tmp_path / "g.mlir").write_text(FUSIBLE)
    assert fusec_build.main([str(tmp_path / "g.mlir"), "-o", str(tmp_path / "g.fusec"),
                             "--device", "cpu"]) == 0
    exe = fusec.load(str(tmp_path / "g.fusec"))
    b = np.ones(3, np.float32)
    (out,) = exe(TABLE, np.array([0, 1, 2, -5], np.int32), b)
    np.testing.assert_array_equal(out, np.maximum(TABLE[[0, 1, 2, 0]] + b, 0))
    with pytest.raises(IndexOutOfRangeError, match=r"index 5 at position \[1\] of input 'ids' "
                       r"is out of range for axis 0 of size 5"):
        exe(TABLE, np.array([0, 5, 2, 1], np.int32), b)
