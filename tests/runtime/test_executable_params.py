"""Parameters: inputs bound to the device once (``fusec.compile(params=...)``, ``exe.bind``),
on both ways a call moves arrays (host memory, copies)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import fusec
from fusec.runtime import executable as executable_module
from fusec.runtime.errors import InputError
from fusec.runtime.executable import Executable

SOURCE = """
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>)
    -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
"""

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 8), dtype=np.float32)
W = RNG.standard_normal((8, 16), dtype=np.float32)
B = RNG.standard_normal(16, dtype=np.float32)


@pytest.fixture(params=["host", "copy"])
def exe(request: pytest.FixtureRequest) -> Iterator[Executable]:
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "copy":
            patch.setattr(executable_module, "shares_host_memory", lambda device: False)
        yield fusec.compile(SOURCE, device="cpu")


def test_bound_values_are_used(exe: Executable) -> None:
    exe.bind("w", W)
    assert exe.input_names == ["x", "b"] and exe.param_names == ["w"]
    (y,) = exe(X, B)
    np.testing.assert_allclose(y, X @ W + B, rtol=1e-5, atol=1e-5)
    (y,) = exe(b=B, x=X)
    np.testing.assert_allclose(y, X @ W + B, rtol=1e-5, atol=1e-5)


def test_values_are_copied_when_bound(exe: Executable) -> None:
    w = W.copy()
    exe.bind("w", w)
    w[...] = 0
    (y,) = exe(X, B)
    np.testing.assert_allclose(y, X @ W + B, rtol=1e-5, atol=1e-5)


def test_rebinding_updates_the_values(exe: Executable) -> None:
    exe.bind("w", W)
    exe.bind("b", B)
    exe(X)
    exe.bind("w", 2 * W)
    (y,) = exe(X)
    np.testing.assert_allclose(y, X @ (2 * W) + B, rtol=1e-5, atol=1e-5)


def test_unbind_makes_it_an_argument_again(exe: Executable) -> None:
    exe.bind("w", W)
    exe.unbind("w")
    assert exe.input_names == ["x", "w", "b"] and exe.param_names == []
    (y,) = exe(X, -W, B)
    np.testing.assert_allclose(y, X @ -W + B, rtol=1e-5, atol=1e-5)


def test_compile_with_params() -> None:
    exe = fusec.compile(SOURCE, device="cpu", params={"w": W, "b": B})
    assert exe.input_names == ["x"]
    (y,) = exe(X)
    np.testing.assert_allclose(y, X @ W + B, rtol=1e-5, atol=1e-5)


def test_non_contiguous_param(exe: Executable) -> None:
    fortran = np.asfortranarray(W)
    exe.bind("w", fortran)
    (y,) = exe(X, B)
    np.testing.assert_allclose(y, X @ W + B, rtol=1e-5, atol=1e-5)


def test_wrong_shape_names_the_input(exe: Executable) -> None:
    with pytest.raises(InputError,
                       match=r"^@linear input 'w' has shape \[16, 8\], expected \[8, 16\]$"):
        exe.bind("w", W.T.copy())
    assert exe.param_names == []


def test_wrong_dtype_names_the_input(exe: Executable) -> None:
    with pytest.raises(InputError,
                       match=r"^@linear input 'b' has dtype float64, expected float32$"):
        exe.bind("b", B.astype(np.float64))


def test_unknown_name(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@linear has no input 'v' \(inputs: x, w, b\)$"):
        exe.bind("v", W)
    with pytest.raises(InputError, match=r"^@linear has no input 'v'"):
        fusec.compile(SOURCE, device="cpu", params={"v": W})


def test_bound_input_given_in_a_call(exe: Executable) -> None:
    exe.bind("w", W)
    with pytest.raises(InputError, match=r"^@linear input 'w' is bound to the device; "
                                         r"unbind\('w'\) to pass it in a call$"):
        exe(X, B, w=W)
    with pytest.raises(InputError, match=r"^@linear takes 2 inputs \(x, b; bound: w\), "
                                         r"got 3 positional arrays$"):
        exe(X, W, B)


def test_unbind_of_an_unbound_input(exe: Executable) -> None:
    with pytest.raises(InputError, match=r"^@linear input 'w' is not bound$"):
        exe.unbind("w")


def test_weights_are_shared_only_where_stored_alike() -> None:
    """`Executable.borrow` (``share_weights``): a B that one plan stores ``[N, K]`` (a GPU's
    skinny product) and another as it is (the CPU's) is copied, not shared; a vector both
    store as it is, is shared."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower
    from fusec.runtime.device import select_device

    text = """
func.func @f(%x: tensor<2x64xf16>, %w: tensor<64x40xf16>, %b: tensor<40xf16>) -> tensor<2x40xf16> {
  %0 = nn.matmul %x, %w : tensor<2x64xf16>, tensor<64x40xf16> -> tensor<2x40xf16>
  %1 = nn.add %0, %b : tensor<2x40xf16>, tensor<40xf16> -> tensor<2x40xf16>
  func.return %1 : tensor<2x40xf16>
}"""
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal((64, 40)).astype(np.float16),
              "b": rng.standard_normal(40).astype(np.float16)}
    device = select_device("cpu")
    gpu = lower(load(text), device_info=DeviceInfo("gpu-shaped", is_cpu=False),
                bound=list(params)).plan
    cpu = lower(load(text), device_info=None, bound=list(params)).plan
    first = Executable(gpu, device, params)
    second = Executable(cpu, device, params, share_weights=first)
    assert [s.panels for s in gpu.inputs if s.name == "w"] == [1]
    assert [s.panels for s in cpu.inputs if s.name == "w"] != [1]
    assert second.borrowed == {"b"} and second.params["b"] is first.params["b"]
    x = rng.standard_normal((2, 64)).astype(np.float16)
    np.testing.assert_allclose(first(x)[0].astype(np.float32), second(x)[0].astype(np.float32),
                               rtol=0, atol=2e-2)
