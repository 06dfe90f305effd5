"""OpenCL device selection: find the fastest device that really works.

`select_device` ranks every OpenCL device (a GPU before an accelerator before a CPU; among
CPUs, Intel's runtime before other vendors before PoCL; a native GPU driver before PoCL), then
takes the first one on which a probe kernel builds, runs and returns the right numbers. The
result is cached per ``(kind, platform)`` for the life of the process, and one device is opened
(context and profiling queue) at most once, however it was asked for.

Before the first platform query it calls `configure_opencl_env`, which registers a
pip-installed Intel CPU runtime with the ICD loader.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyopencl as cl

from .errors import DeviceError, FusecRuntimeError
from .host_memory import address, aligned_empty, host_alignment, shares_host_memory, use_host_buffer
from .invoker_cache import load_invoker
from .opencl_env import configure_opencl_env
from .program_cache import build_program

DeviceKind = Literal["auto", "gpu", "cpu"]
"""What `select_device` may be asked for."""

DEVICE_KINDS: tuple[DeviceKind, ...] = ("auto", "gpu", "cpu")

POCL_VENDOR = "pocl"
"""Substring of PoCL's platform vendor ("The pocl project")."""

PROBE_SOURCE = """\
__kernel void fusec_probe(__global const float4 *a, __global float4 *out) {
    size_t i = get_global_id(0);
    float4 x = a[i];
    out[i] = fmax(x * 2.0f - (float4)(i), 0.0f) + exp(x - x);
}

__kernel void fusec_address(__global const float *a, __global ulong *out) {
    out[0] = (ulong)a;
}
"""
"""``fusec_probe``: a kernel every usable device must build and run correctly: vector types, a
built-in function library call (exp) and work-item ids; every expected value is exact in
float32. ``fusec_address``: the address a kernel sees for a buffer (`host_pointers`)."""

PROBE_SIZE = 1024
"""Number of floats the probe reads and writes."""


@dataclass(frozen=True)
class DeviceCapabilities:
    """The device limits that code generation and launch configuration care about."""

    preferred_float_vector_width: int
    max_work_group_size: int
    local_mem_size: int
    """Bytes of ``__local`` memory per work-group."""
    compute_units: int
    global_mem_size: int
    max_mem_alloc_size: int
    """Largest single buffer, in bytes."""


@dataclass(frozen=True, eq=False)
class OpenCLDevice:
    """A probed, working device with its context and a profiling-enabled command queue."""

    device: cl.Device
    context: cl.Context
    queue: cl.CommandQueue
    description: str
    """One line naming the device, its type, platform and driver version."""
    capabilities: DeviceCapabilities
    key: tuple[str, ...]
    """Identity of the device within this process; part of every program cache key."""
    host_pointers: bool = False
    """Kernels use host arrays in place: a kernel given a ``CL_MEM_USE_HOST_PTR`` buffer over
    an aligned host array sees the array's own address (measured when the device is opened).
    Then what a kernel writes there is in the array once the queue has finished."""


@dataclass(frozen=True)
class DeviceReport:
    """One line of ``--list-devices``: a device and whether fusec can use it."""

    platform: str
    name: str
    type: str
    """"GPU", "CPU", "ACCELERATOR" or "OTHER"."""
    description: str
    problem: str | None
    """Why the device is not usable; None if its probe passed (or was not run)."""

    @property
    def usable(self) -> bool:
        """Whether the device passed its probe."""
        return self.problem is None


@dataclass(frozen=True)
class _Candidate:
    """A device found on a platform, before it is probed."""

    device: cl.Device
    platform_index: int
    device_index: int

    @property
    def key(self) -> tuple[str, ...]:
        platform = self.device.platform
        return (
            str(self.platform_index),
            str(self.device_index),
            platform.name.strip(),
            self.device.name.strip(),
            self.device.driver_version.strip(),
        )


_lock = threading.RLock()
_selected: dict[tuple[str, str | None], OpenCLDevice] = {}
_opened: dict[tuple[str, ...], OpenCLDevice] = {}


def select_device(kind: DeviceKind = "auto", platform: str | None = None) -> OpenCLDevice:
    """The fastest working device of `kind`, optionally on a platform whose name or vendor
    contains `platform` (case-insensitive, e.g. "intel", "pocl", "nvidia").

    Raises DeviceError listing every platform and device tried, and why each was rejected.
    """
    if kind not in DEVICE_KINDS:
        raise DeviceError(f"unknown device kind '{kind}'; expected one of {DEVICE_KINDS}")
    with _lock:
        cached = _selected.get((kind, platform))
        if cached is not None:
            return cached
        tried: list[str] = []
        for candidate in _candidates(kind, platform, tried):
            try:
                selected = _open(candidate)
            except FusecRuntimeError as error:
                tried.append(f"{_label(candidate.device)}: {error}")
                continue
            _selected[(kind, platform)] = selected
            return selected
        wanted = f"kind '{kind}'" + (f" on platform '{platform}'" if platform else "")
        tried.extend(configure_opencl_env().notes)
        raise DeviceError(f"no working OpenCL device of {wanted}", tried=tried)


def list_devices(probe: bool = True) -> list[DeviceReport]:
    """Every OpenCL device visible to this process, best first; probed unless `probe` is False.

    Never raises for a broken device: its report says what is wrong.
    """
    problems: list[str] = []
    reports: list[DeviceReport] = []
    with _lock:
        for candidate in _candidates("auto", None, problems):
            problem = None
            if probe:
                try:
                    _open(candidate)
                except FusecRuntimeError as error:
                    problem = str(error)
            device = candidate.device
            reports.append(
                DeviceReport(
                    platform=device.platform.name.strip(),
                    name=device.name.strip(),
                    type=_device_type(device),
                    description=describe(device),
                    problem=problem,
                )
            )
    return reports


def describe(device: cl.Device) -> str:
    """One line naming a device, its type, platform and driver version."""
    platform = device.platform
    return (
        f"{device.name.strip()} [{_device_type(device)}, {device.max_compute_units} CUs]"
        f" on {platform.name.strip()}, driver {device.driver_version.strip()}"
    )


def device_kind(device: cl.Device) -> DeviceKind:
    """``"cpu"`` for a CPU device, else ``"gpu"``: the kind that `select_device` takes to
    choose it again (what ``"auto"`` chose, named)."""
    return "cpu" if device.type & cl.device_type.CPU else "gpu"


def capabilities(device: cl.Device) -> DeviceCapabilities:
    """Read the limits of `device` that fusec uses."""
    return DeviceCapabilities(
        preferred_float_vector_width=device.preferred_vector_width_float,
        max_work_group_size=device.max_work_group_size,
        local_mem_size=device.local_mem_size,
        compute_units=device.max_compute_units,
        global_mem_size=device.global_mem_size,
        max_mem_alloc_size=device.max_mem_alloc_size,
    )


def _candidates(kind: str, platform: str | None, tried: list[str]) -> list[_Candidate]:
    """Devices of `kind` on matching platforms, best first; rejected platforms go to `tried`."""
    configure_opencl_env()
    try:
        platforms = cl.get_platforms()
    except cl.Error as error:
        tried.append(f"no OpenCL platform found: {error}")
        return []
    wanted = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU}.get(kind, cl.device_type.ALL)
    found: list[_Candidate] = []
    for platform_index, cl_platform in enumerate(platforms):
        name = cl_platform.name.strip()
        if platform and not _platform_matches(cl_platform, platform):
            tried.append(f"platform '{name}': does not match '{platform}'")
            continue
        try:
            devices = cl_platform.get_devices(device_type=wanted)
        except cl.Error:
            devices = []
        if not devices:
            tried.append(f"platform '{name}': no {kind} device")
            continue
        found.extend(
            _Candidate(device, platform_index, index) for index, device in enumerate(devices)
        )
    return sorted(found, key=_rank)


def _rank(candidate: _Candidate) -> tuple[int, int, int, int]:
    """Sort key: device type first, then vendor preference, then discovery order."""
    device = candidate.device
    type_order = [cl.device_type.GPU, cl.device_type.ACCELERATOR, cl.device_type.CPU]
    type_rank = next((i for i, t in enumerate(type_order) if device.type & t), len(type_order))
    vendor = f"{device.platform.vendor} {device.platform.name}".lower()
    if POCL_VENDOR in vendor:
        vendor_rank = 2
    elif "intel" in vendor:
        vendor_rank = 0
    else:
        vendor_rank = 1
    return (type_rank, vendor_rank, candidate.platform_index, candidate.device_index)


def _open(candidate: _Candidate) -> OpenCLDevice:
    """Context, queue and passing probe for a candidate; opened once per process."""
    key = candidate.key
    opened = _opened.get(key)
    if opened is not None:
        return opened
    device = candidate.device
    try:
        context = cl.Context(devices=[device])
        queue = cl.CommandQueue(
            context, device, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
    except cl.Error as error:
        raise DeviceError(f"cannot create a context and queue: {error}") from error
    opened = OpenCLDevice(device, context, queue, describe(device), capabilities(device), key)
    try:
        program = _probe(opened)
        opened = dataclasses.replace(opened, host_pointers=_uses_host_pointers(opened, program))
    except cl.Error as error:
        raise DeviceError(f"probe failed: {error}") from error
    _opened[key] = opened
    return opened


def _probe(device: OpenCLDevice) -> cl.Program:
    """Build and run the probe kernel; raise DeviceError unless the numbers are right."""
    load_invoker()  # the first kernel call of the process: a damaged PyOpenCL cache is skipped
    program = build_program(device.context, device.device, PROBE_SOURCE, ())
    host_in = np.arange(PROBE_SIZE, dtype=np.float32)
    work_item = np.arange(PROBE_SIZE, dtype=np.float32) // 4
    expected = np.maximum(host_in * 2.0 - work_item, 0.0) + 1.0
    host_out = np.zeros_like(host_in)
    flags = cl.mem_flags
    try:
        buffer_in = cl.Buffer(
            device.context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=host_in
        )
        buffer_out = cl.Buffer(device.context, flags.WRITE_ONLY, host_out.nbytes)
        kernel = cl.Kernel(program, "fusec_probe")
        kernel(device.queue, (PROBE_SIZE // 4,), None, buffer_in, buffer_out)
        cl.enqueue_copy(device.queue, host_out, buffer_out)
        device.queue.finish()
    except cl.Error as error:
        raise DeviceError(f"probe kernel failed to run: {error}") from error
    if not np.array_equal(host_out, expected):
        wrong = int(np.count_nonzero(host_out != expected))
        raise DeviceError(f"probe kernel gave {wrong} wrong values out of {PROBE_SIZE}")
    return program


HOST_POINTER_PROBE_BYTES = (64 << 10) + 4
"""Large enough for Intel's CPU runtime to copy a misaligned array (it uses small ones in
place), not a multiple of a cache line."""


def _uses_host_pointers(device: OpenCLDevice, program: cl.Program) -> bool:
    """Whether a kernel sees an aligned host array's own address (see `host_pointers`)."""
    if not shares_host_memory(device.device):
        return False
    array = aligned_empty((HOST_POINTER_PROBE_BYTES // 4,), np.dtype(np.float32),
                          host_alignment(device.device))
    seen = np.zeros(1, np.uint64)
    flags = cl.mem_flags
    buffer_out = cl.Buffer(device.context, flags.WRITE_ONLY, seen.nbytes)
    cl.Kernel(program, "fusec_address")(device.queue, (1,), None,
                                         use_host_buffer(device.context, array, read_only=True),
                                         buffer_out)
    cl.enqueue_copy(device.queue, seen, buffer_out)
    device.queue.finish()
    return int(seen[0]) == address(array)


def _platform_matches(platform: cl.Platform, wanted: str) -> bool:
    """Whether `wanted` is a case-insensitive substring of the platform's name or vendor."""
    return wanted.lower() in f"{platform.name} {platform.vendor}".lower()


def _device_type(device: cl.Device) -> str:
    for flag, name in (
        (cl.device_type.GPU, "GPU"),
        (cl.device_type.CPU, "CPU"),
        (cl.device_type.ACCELERATOR, "ACCELERATOR"),
    ):
        if device.type & flag:
            return name
    return "OTHER"


def _label(device: cl.Device) -> str:
    """Short name for error lists: platform / device [type]."""
    return f"{device.platform.name.strip()} / {device.name.strip()} [{_device_type(device)}]"
