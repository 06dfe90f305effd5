"""PyTorch interop: CPU tensors in and out of a call without a copy (DLPack), on both ways a
call moves arrays. Skipped where torch is not installed (it is an optional peer)."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from fusec.runtime import executable as executable_module
from fusec.runtime.errors import InputError
from fusec.runtime.host_memory import address, aligned_empty
from fusec.runtime.interop import array_to_tensor, is_tensor, tensor_to_array, to_tensors

torch = pytest.importorskip("torch")

SOURCE = """
func.func @f(%x: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %y = nn.add %x, %b : tensor<16x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
  %z = nn.relu %y : tensor<16x32xf32> -> tensor<16x32xf32>
  func.return %z : tensor<16x32xf32>
}
"""

RNG = np.random.default_rng(3)
X = RNG.standard_normal((16, 32), dtype=np.float32)
B = RNG.standard_normal(32, dtype=np.float32)


@pytest.fixture(scope="module", params=["host", "copy"])
def exe(request: pytest.FixtureRequest) -> fusec.runtime.executable.Executable:
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "copy":
            patch.setattr(executable_module, "shares_host_memory", lambda device: False)
        return fusec.compile(SOURCE, device="cpu")


def test_cpu_tensors_in_tensors_out(exe) -> None:  # noqa: ANN001
    (z,) = exe(torch.from_numpy(X), torch.from_numpy(B))
    assert isinstance(z, torch.Tensor) and z.dtype == torch.float32 and z.device.type == "cpu"
    np.testing.assert_allclose(z.numpy(), np.maximum(X + B, 0), rtol=1e-6)


def test_tensor_and_numpy_inputs_mixed(exe) -> None:  # noqa: ANN001
    (z,) = exe(X, b=torch.from_numpy(B))
    assert isinstance(z, torch.Tensor)
    np.testing.assert_allclose(z.numpy(), np.maximum(X + B, 0), rtol=1e-6)


def test_strided_and_grad_tensors(exe) -> None:  # noqa: ANN001
    x = torch.from_numpy(X.T.copy()).t()  # non-contiguous view
    b = torch.from_numpy(B).requires_grad_()
    (z,) = exe(x, b)
    np.testing.assert_allclose(z.numpy(), np.maximum(X + B, 0), rtol=1e-6)


def test_numpy_calls_still_return_numpy(exe) -> None:  # noqa: ANN001
    (z,) = exe(X, B)
    assert type(z) is np.ndarray


def test_wrong_tensor_dtype_names_the_input(exe) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match=r"^@f input 'b' has dtype float64, expected float32$"):
        exe(torch.from_numpy(X), torch.from_numpy(B.astype(np.float64)))
    with pytest.raises(InputError, match=r"^@f input 'x' is a torch tensor of dtype "
                                         r"torch.bfloat16 that numpy cannot view"):
        exe(torch.from_numpy(X).to(torch.bfloat16), torch.from_numpy(B))


def test_no_copy_either_way() -> None:
    x = aligned_empty((16, 32), np.dtype(np.float32), 4096)
    x[...] = X
    tensor = torch.from_numpy(x)
    viewed = tensor_to_array(tensor)
    assert address(viewed) == tensor.data_ptr() == address(x)
    out = to_tensors([x], tensor)[0]
    assert out.data_ptr() == address(x)
    assert array_to_tensor(x).data_ptr() == address(x)


def test_zero_copy_input_on_the_host_memory_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """An aligned CPU tensor's own memory is what the kernels are given (no staging copy:
    the size limit of staged inputs is lowered to 0)."""
    monkeypatch.setattr(executable_module, "RESIDENT_BYTES", 0)
    exe = fusec.compile(SOURCE, device="cpu")
    if not (exe.host_memory and exe.device.host_pointers):
        pytest.skip("the device does not use host arrays in place")
    x = aligned_empty((16, 32), np.dtype(np.float32), exe.alignment)
    x[...] = X
    tensor = torch.from_numpy(x)
    seen: list[int] = []
    original = executable_module.use_host_buffer

    def recording(context, array, read_only):  # noqa: ANN001, ANN202
        seen.append(address(array))
        return original(context, array, read_only)

    monkeypatch.setattr(executable_module, "use_host_buffer", recording)
    (z,) = exe(tensor, torch.from_numpy(B))
    assert tensor.data_ptr() in seen
    np.testing.assert_allclose(z.numpy(), np.maximum(X + B, 0), rtol=1e-6)


def test_is_tensor() -> None:
    assert is_tensor(torch.zeros(1)) and not is_tensor(np.zeros(1))
