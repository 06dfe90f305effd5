"""Fixtures for the kernel template tests: a CPU OpenCL device and a launcher.

The device comes from `fusec.runtime.device.select_device("cpu")` (probe included); programs
are built through `fusec.runtime.program_cache.get_program`, so a build failure shows the log
and the source. Output buffers are filled with NaN before each launch, so an element a kernel
forgets to write fails the comparison.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import numpy as np
import pyopencl as cl
import pytest

from fusec.codegen.kernels.common import KernelSource
from fusec.runtime.device import OpenCLDevice, select_device
from fusec.runtime.program_cache import get_program

Launch = Callable[..., dict[str, np.ndarray]]

SCALAR_TYPES = {"int": np.int32, "float": np.float32}

NAN_BITS = {"float": (np.float32, np.nan), "half": (np.float16, np.nan),
            "ushort": (np.uint16, 0x7FC0), "int": (np.int32, -1), "uint": (np.uint32, 0xFFFFFFFF),
            "ulong": (np.uint64, 0xFFFFFFFFFFFFFFFF)}
"""Buffer element type -> host dtype and its NaN (bf16 buffers hold bit patterns; int
buffers -1, uint ones all ones)."""


def nan_filled(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    host_dtype, nan = NAN_BITS[dtype]
    return np.full(shape, nan, dtype=host_dtype)


@pytest.fixture(scope="session")
def cpu_device() -> OpenCLDevice:
    """The CPU device, or the kind named by ``FUSEC_TEST_DEVICE`` (``gpu`` on the GPU machine),
    on the platform named by ``FUSEC_TEST_PLATFORM`` if set (e.g. ``pocl``)."""
    kind = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
    return select_device(kind, os.environ.get("FUSEC_TEST_PLATFORM"))  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def launch(cpu_device: OpenCLDevice) -> Launch:
    """``launch(kernel, inputs, outputs)``: run `kernel` once.

    `inputs` maps each "in" buffer and scalar parameter to its value, `outputs` each "out"
    buffer to its shape; returns the output arrays by name. A kernel's scratch buffers
    (`KernelSource.scratch`) are made here as the program makes them (a zeroed one zero, the
    others NaN) and returned too, as flat arrays; `launches` runs the kernel that many times
    over the same buffers (what a second launch finds in the scratch counts).
    """

    def run(kernel: KernelSource, inputs: Mapping[str, object],
            outputs: Mapping[str, tuple[int, ...]], launches: int = 1) -> dict[str, np.ndarray]:
        context, queue = cpu_device.context, cpu_device.queue
        program = get_program(cpu_device, kernel.source, kernel.build_options)
        flags = cl.mem_flags
        values: list[object] = []
        results: dict[str, tuple[np.ndarray, cl.Buffer]] = {}
        scratch = {s.arg: s for s in kernel.scratch}
        outputs = {**outputs, **{s.arg: (s.nbytes // 4,) for s in kernel.scratch}}
        for arg in kernel.args:
            if arg.kind == "in":
                host = np.ascontiguousarray(inputs[arg.name])
                values.append(cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                                        hostbuf=host))
            elif arg.kind == "out":
                host = nan_filled(outputs[arg.name], arg.dtype)
                if arg.name in scratch and scratch[arg.name].zeroed:
                    host[...] = 0
                buffer = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR,
                                   hostbuf=host)
                results[arg.name] = (host, buffer)
                values.append(buffer)
            else:
                values.append(SCALAR_TYPES[arg.kind](inputs[arg.name]))
        assert set(inputs) | set(outputs) == {arg.name for arg in kernel.args}
        cl_kernel = cl.Kernel(program, kernel.name)
        cl_kernel.set_args(*values)
        for _ in range(launches):
            cl.enqueue_nd_range_kernel(queue, cl_kernel, kernel.global_size, kernel.local_size)
        for host, buffer in results.values():
            cl.enqueue_copy(queue, host, buffer)
        queue.finish()
        return {name: host for name, (host, _) in results.items()}

    return run
