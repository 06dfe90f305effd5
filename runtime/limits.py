"""Resource limits checked before anything is allocated: a user error, not a crash.

A program whose tensors do not fit the machine is the user's input meeting the machine's size,
so it is reported as a `ResourceError` (one line, with the sizes) before the first allocation,
instead of a ``MemoryError`` or an OpenCL allocation failure halfway through:

    error: inputs need 37.3 GiB; the device 'Intel(R) Xeon(R) ...' has 15.6 GiB

`check_plan` compares a program's buffers with the device (all of them together with its global
memory, each one with its largest single allocation) and its launches with the work-group size
the device can launch; `check_host_arrays` compares arrays about to be made with numpy (random
inputs, the reference's results) with the host memory available now.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from fusec.codegen.plan import ProgramPlan
from fusec.errors import FusecRuntimeError

from .device import OpenCLDevice
from .errors import located


class ResourceError(FusecRuntimeError):
    """The program needs more memory or a larger launch than the machine offers; a launch's
    error starts with the ``file:line:col`` of the op(s) its kernel computes."""

    def __init__(self, message: str, places: tuple[str, ...] = ()) -> None:
        super().__init__(located(places) + message)
        self.places = places
        """``file:line:col`` of the source op(s) of the kernel at fault, if one is."""


def format_bytes(n: int) -> str:
    """``40000000000`` -> ``37.3 GiB`` (binary units, one decimal)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def device_name(device: OpenCLDevice) -> str:
    return device.device.name.strip()


def check_plan(plan: ProgramPlan, device: OpenCLDevice) -> None:
    """Raises `ResourceError` if ``plan`` cannot run on ``device``: its buffers together exceed
    the device's global memory, one buffer exceeds its largest allocation, or a launch's
    work-group is larger than the device launches."""
    caps = device.capabilities
    name = device_name(device)
    by_role: dict[str, int] = {}
    for buffer in plan.buffers:
        by_role[buffer.role] = by_role.get(buffer.role, 0) + buffer.nbytes
    total = sum(by_role.values())
    if total > caps.global_mem_size:
        inputs = by_role.get("input", 0)
        what = (f"inputs need {format_bytes(inputs)}" if inputs > caps.global_mem_size else
                f"@{plan.function} needs {format_bytes(total)} of buffers ("
                + ", ".join(f"{role} {format_bytes(n)}" for role, n in sorted(by_role.items()))
                + ")")
        raise ResourceError(f"{what}; the device '{name}' has "
                            f"{format_bytes(caps.global_mem_size)}")
    for buffer in plan.buffers:
        if buffer.nbytes > caps.max_mem_alloc_size:
            raise ResourceError(
                f"{buffer.role} buffer '{buffer.label}' needs {format_bytes(buffer.nbytes)}; "
                f"the device '{name}' allocates at most {format_bytes(caps.max_mem_alloc_size)} "
                "in one buffer")
    for launch in plan.launches:
        if launch.local_size is None:
            continue
        group = 1
        for d in launch.local_size:
            group *= d
        if group > caps.max_work_group_size:
            raise ResourceError(
                f"kernel '{launch.kernel}' needs work-groups of {group} work-items; the device "
                f"'{name}' launches at most {caps.max_work_group_size}", launch.places)


def host_memory_available() -> int | None:
    """Bytes of host memory available now (``MemAvailable``), or the physical memory where
    that is not known; None if neither is."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def check_host_arrays(what: str, sizes: Iterable[int], available: int | None = None) -> None:
    """Raises `ResourceError` if arrays of ``sizes`` bytes (``what``: "inputs", ...) would not
    fit in the host memory ``available`` (default: `host_memory_available`)."""
    needed = sum(sizes)
    if available is None:
        available = host_memory_available()
    if available is not None and needed > available:
        raise ResourceError(f"{what} need {format_bytes(needed)}; the host has "
                            f"{format_bytes(available)} of memory available")
