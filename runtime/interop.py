"""PyTorch tensors as inputs and outputs of a call, without importing torch unless it is used.

A CPU ``torch.Tensor`` is read in place: DLPack (``np.from_dlpack``) gives a numpy array over
the tensor's memory, which the call then takes like any numpy array (on the CPU device a
C-contiguous, aligned one is used by the kernels in place). When a call's inputs included a
tensor, its numpy outputs become tensors over the same memory (``torch.from_numpy``, no copy).

A CUDA tensor given to a call is copied to the host (``tensor.cpu()``) and the outputs are
copied back to the tensor's device: a copy each way per call, through the host, on top of the
call's own upload and download (66 ms in and 39 ms out for 64 MiB on the H100). Memory that
PyTorch allocates cannot be imported into OpenCL; `fusec.runtime.cuda_interop` shares the
other way round (device arrays in exportable CUDA memory, seen by torch without a copy).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .errors import InputError


def is_tensor(value: object) -> bool:
    """Whether `value` is a ``torch.Tensor`` (never imports torch: if it was not imported,
    nothing is a tensor)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def tensor_to_array(tensor: Any, where: str = "tensor") -> np.ndarray:
    """A numpy array over a CPU tensor's memory (DLPack, no copy), or over a host copy of a
    tensor on another device; an InputError naming `where` for a tensor numpy cannot hold."""
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()  # the copy the module docstring describes
    if tensor.is_conj() or tensor.is_neg():
        tensor = tensor.resolve_conj().resolve_neg()
    try:
        return np.from_dlpack(tensor)
    except (BufferError, RuntimeError, TypeError) as error:
        raise InputError(f"{where} is a torch tensor of dtype {tensor.dtype} that numpy cannot "
                         f"view ({error})") from error


def to_tensors(outputs: list[np.ndarray], like: Any) -> list[Any]:
    """The outputs as tensors on `like`'s device: over the same memory on the CPU."""
    import torch

    tensors = [torch.from_numpy(out) for out in outputs]
    if like.device.type != "cpu":
        tensors = [t.to(like.device) for t in tensors]
    return tensors


def array_to_tensor(array: np.ndarray) -> Any:
    """A CPU tensor over `array`'s memory (DLPack, no copy)."""
    import torch

    return torch.from_dlpack(array)
