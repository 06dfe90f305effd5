"""The ``gather`` template builds for every axis size the IR allows (an axis of 2^31 made its
``clamp`` ambiguous on ``int``: a build error, exit 4, ``fusec-fuzz --models`` seed 5321), with
and without 64-bit atomics."""

from __future__ import annotations

import pytest

from fusec.codegen.kernels.gather import INDEX_SLOT_PLACEHOLDER, gather
from fusec.runtime.device import OpenCLDevice
from fusec.runtime.program_cache import get_program


@pytest.mark.parametrize("dim", [1, 7, 2**31 - 1, 2**31, 2**40])
@pytest.mark.parametrize("int64_atomics", [True, False])
def test_the_gather_kernel_builds(cpu_device: OpenCLDevice, dim: int,
                                  int64_atomics: bool) -> None:
    source = gather("g", 1, dim, 4, 3, "float", int64_atomics).source
    get_program(cpu_device, source.replace(INDEX_SLOT_PLACEHOLDER, "1"), ())
