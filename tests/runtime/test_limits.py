"""Resource limits are checked before allocating, and reported with the sizes on one line."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fusec.codegen.plan import BufferSpec, LaunchSpec, ProgramPlan
from fusec.runtime.limits import ResourceError, check_host_arrays, check_plan, format_bytes

GiB = 1 << 30


def device(global_mem: int = 16 * GiB, max_alloc: int = 4 * GiB, group: int = 256):
    caps = SimpleNamespace(global_mem_size=global_mem, max_mem_alloc_size=max_alloc,
                           max_work_group_size=group)
    return SimpleNamespace(capabilities=caps, device=SimpleNamespace(name=" Test Device "))


def plan(*buffers: tuple[str, int], local: tuple[int, ...] | None = None) -> ProgramPlan:
    specs = tuple(BufferSpec(n, role, f"%{role}{i}") for i, (role, n) in enumerate(buffers))
    launch = LaunchSpec("k0", tuple(range(len(specs))), (1024,), local)
    return ProgramPlan("f", "", (), specs, (), (), (launch,))


def test_format_bytes() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1023 B"
    assert format_bytes(40_000_000_000) == "37.3 GiB"
    assert format_bytes(5 << 40) == "5.0 TiB"


def test_inputs_larger_than_the_device() -> None:
    with pytest.raises(ResourceError) as e:
        check_plan(plan(("input", 40_000_000_000), ("output", 8)), device())  # type: ignore
    assert str(e.value) == "inputs need 37.3 GiB; the device 'Test Device' has 16.0 GiB"


def test_all_buffers_together_larger_than_the_device() -> None:
    p = plan(("input", 3 * GiB), ("intermediate", 3 * GiB), ("output", 3 * GiB))
    with pytest.raises(ResourceError, match=r"^@f needs 9.0 GiB of buffers \(input 3.0 GiB, "
                       r"intermediate 3.0 GiB, output 3.0 GiB\); the device 'Test Device' has "
                       r"8.0 GiB$"):
        check_plan(p, device(global_mem=8 * GiB))  # type: ignore[arg-type]


def test_one_buffer_larger_than_one_allocation() -> None:
    with pytest.raises(ResourceError, match="intermediate buffer '%intermediate0' needs 5.0 GiB; "
                       "the device 'Test Device' allocates at most 4.0 GiB in one buffer"):
        check_plan(plan(("intermediate", 5 * GiB)), device())  # type: ignore[arg-type]


def test_a_work_group_larger_than_the_device_launches() -> None:
    with pytest.raises(ResourceError, match="kernel 'k0' needs work-groups of 512 work-items; "
                       "the device 'Test Device' launches at most 256"):
        check_plan(plan(("input", 64), local=(16, 32)), device())  # type: ignore[arg-type]


def test_a_plan_that_fits_passes() -> None:
    check_plan(plan(("input", GiB), ("output", GiB), local=(16, 16)), device())  # type: ignore


def test_host_arrays() -> None:
    check_host_arrays("inputs", [100, 200], available=300)
    with pytest.raises(ResourceError, match="^inputs need 2.0 KiB; the host has 1.0 KiB of "
                       "memory available$"):
        check_host_arrays("inputs", [1024, 1024], available=1024)
    check_host_arrays("inputs", [np.float32().itemsize])  # the real machine has 4 bytes
