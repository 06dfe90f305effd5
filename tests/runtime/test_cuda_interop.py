"""Device arrays shared with PyTorch CUDA tensors (runtime/cuda_interop.py). The sharing
itself needs an NVIDIA GPU with cl_khr_external_memory_opaque_fd and torch with CUDA: those
tests run on the GPU machine (`python3 -m pytest tests/runtime/test_cuda_interop.py`) and are
skipped elsewhere; what is refused, and why, is checked on the CPU device."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from fusec.runtime.cuda_interop import (
    enable_cuda_sharing,
    from_torch,
    to_torch,
    unsupported_reason,
)
from fusec.runtime.device import select_device
from fusec.runtime.device_array import to_device
from fusec.runtime.errors import DeviceError, FusecRuntimeError, InputError

SOURCE = """
func.func @f(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %y = nn.add %x, %b : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %z = nn.relu %y : tensor<64x128xf32> -> tensor<64x128xf32>
  func.return %z : tensor<64x128xf32>
}
"""

RNG = np.random.default_rng(5)
X = RNG.standard_normal((64, 128), dtype=np.float32)
B = RNG.standard_normal(128, dtype=np.float32)


def test_the_cpu_device_is_refused_with_the_reason() -> None:
    cpu = select_device("cpu")
    assert "is not a GPU" in (unsupported_reason(cpu) or "")
    with pytest.raises(DeviceError, match=r"^cannot share memory with CUDA: .* is not a GPU$"):
        enable_cuda_sharing(cpu)
    with pytest.raises(InputError, match=r"^CUDA sharing is not enabled for this device"):
        to_torch(to_device(cpu, X))


def gpu_with_sharing():  # noqa: ANN201
    pytest.importorskip("torch")
    try:
        gpu = select_device("gpu")
    except FusecRuntimeError:
        pytest.skip("no OpenCL GPU")
    reason = unsupported_reason(gpu)
    if reason is not None:
        pytest.skip(reason)
    return gpu


def test_outputs_are_tensors_and_tensors_inputs_without_a_copy() -> None:
    import torch

    gpu = gpu_with_sharing()
    pool = enable_cuda_sharing(gpu)
    exe = fusec.compile(SOURCE, device="gpu")
    (y,) = exe(exe.to_device(X), exe.to_device(B))
    t = to_torch(y)
    assert t.is_cuda and t.shape == (64, 128) and t.dtype == torch.float32
    assert t.data_ptr() == pool.allocation(y.buffer).pointer.value
    np.testing.assert_allclose(t.cpu().numpy(), np.maximum(X + B, 0), rtol=1e-6)
    t.mul_(-1)  # torch writes the array's memory
    z = from_torch(t, gpu)
    assert z.buffer is y.buffer
    (w,) = exe(z, exe.to_device(B))
    np.testing.assert_allclose(w.get(), np.maximum(-np.maximum(X + B, 0) + B, 0), rtol=1e-6)


def test_a_torch_allocated_tensor_is_copied_on_the_device() -> None:
    import torch

    gpu = gpu_with_sharing()
    enable_cuda_sharing(gpu)
    exe = fusec.compile(SOURCE, device="gpu")
    x = torch.from_numpy(X).cuda()
    (y,) = exe(from_torch(x, gpu), from_torch(torch.from_numpy(B).cuda(), gpu))
    np.testing.assert_allclose(to_torch(y).cpu().numpy(), np.maximum(X + B, 0), rtol=1e-6)


def test_steady_state_allocates_no_shared_memory() -> None:
    gpu = gpu_with_sharing()
    pool = enable_cuda_sharing(gpu)
    exe = fusec.compile(SOURCE, device="gpu")
    x, b = exe.to_device(X), exe.to_device(B)
    for _ in range(3):
        to_torch(exe(x, b)[0])
    before = pool.allocations
    for _ in range(10):
        to_torch(exe(x, b)[0])
    assert pool.allocations == before
