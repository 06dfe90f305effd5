"""Which two devices placement chooses between: the host (a CPU OpenCL device) and the
accelerator (the best device, when it is not a CPU).

With no GPU (or no CPU device beside it) there is one device: everything runs there, and
`DevicePair.note` says why nothing is placed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyopencl as cl

from fusec.placement.decide import ACCELERATOR, HOST
from fusec.runtime.device import OpenCLDevice, select_device
from fusec.runtime.errors import DeviceError


@dataclass(frozen=True)
class DevicePair:
    host: OpenCLDevice | None
    accelerator: OpenCLDevice | None
    note: str | None = None
    """Why there is one device only, where that is so."""

    @property
    def single(self) -> tuple[str, OpenCLDevice] | None:
        """The role and device when there is one device, else None."""
        if self.host is not None and self.accelerator is not None:
            return None
        if self.accelerator is not None:
            return ACCELERATOR, self.accelerator
        assert self.host is not None
        return HOST, self.host

    def device(self, role: str) -> OpenCLDevice:
        device = self.host if role == HOST else self.accelerator
        assert device is not None, role
        return device


def is_cpu(device: OpenCLDevice) -> bool:
    return bool(device.device.type & cl.device_type.CPU)


def find_devices(platform: str | None = None) -> DevicePair:
    """The host and the accelerator (on a platform matching `platform`, if given); raises
    DeviceError when there is no usable device at all."""
    best = select_device("auto", platform)
    if is_cpu(best):
        return DevicePair(best, None, f"one OpenCL device ({best.description}): no GPU to "
                                      "offload to, every kernel runs on it")
    try:
        host = select_device("cpu")
    except DeviceError:
        return DevicePair(None, best, f"one OpenCL device ({best.description}): no CPU "
                                      "OpenCL device beside it, every kernel runs on it")
    return DevicePair(host, best)
