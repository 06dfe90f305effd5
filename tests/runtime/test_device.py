"""Device selection: the probe, the ranking, the per-process cache and the errors."""

from __future__ import annotations

import pyopencl as cl
import pytest
from fusec.runtime import device as device_module
from fusec.runtime.device import DeviceReport, list_devices, select_device
from fusec.runtime.errors import DeviceError
from fusec.runtime.opencl_env import configure_opencl_env


@pytest.fixture
def fresh_device_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a test with empty device caches, so that probes really run."""
    monkeypatch.setattr(device_module, "_selected", {})
    monkeypatch.setattr(device_module, "_opened", {})


def test_cpu_device_passes_probe() -> None:
    chosen = select_device("cpu")
    assert chosen.device.type & cl.device_type.CPU
    assert "CPU" in chosen.description
    assert chosen.queue.properties & cl.command_queue_properties.PROFILING_ENABLE
    caps = chosen.capabilities
    assert caps.compute_units >= 1
    assert caps.max_work_group_size >= 1
    assert caps.local_mem_size > 0
    assert caps.preferred_float_vector_width >= 1


def test_auto_prefers_intel_cpu_runtime_over_pocl() -> None:
    if configure_opencl_env().intel_library is None:
        pytest.skip("Intel CPU OpenCL runtime not installed")
    if any(platform.get_devices(cl.device_type.GPU) for platform in _platforms_with_gpus()):
        pytest.skip("a GPU is present, so auto picks it")
    assert select_device("auto").device.platform.name.startswith("Intel")


def test_selection_is_cached_per_process() -> None:
    first = select_device("cpu")
    assert select_device("cpu") is first
    assert select_device("cpu", first.device.platform.name) is first


@pytest.mark.usefixtures("fresh_device_cache")
def test_second_selection_does_not_enumerate_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    enumerate_devices = device_module._candidates

    def counting(*args: object) -> object:
        calls.append("enumerated")
        return enumerate_devices(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(device_module, "_candidates", counting)
    first = select_device("cpu")
    assert select_device("cpu") is first
    assert calls == ["enumerated"]


def test_bogus_platform_lists_every_platform_tried() -> None:
    with pytest.raises(DeviceError) as caught:
        select_device("auto", platform="no-such-platform")
    message = str(caught.value)
    assert "\n" not in message
    assert "no-such-platform" in message
    for platform in cl.get_platforms():
        assert platform.name.strip() in message


def test_unknown_kind_is_a_device_error() -> None:
    with pytest.raises(DeviceError, match="unknown device kind 'fpga'"):
        select_device("fpga")  # type: ignore[arg-type]


@pytest.mark.usefixtures("fresh_device_cache")
def test_device_whose_probe_does_not_build_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device_module, "PROBE_SOURCE", "__kernel void fusec_probe( {")
    with pytest.raises(DeviceError) as caught:
        select_device("cpu")
    assert len(caught.value.tried) >= 1
    assert "OpenCL build failed" in str(caught.value)


@pytest.mark.usefixtures("fresh_device_cache")
def test_device_giving_wrong_answers_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = device_module.PROBE_SOURCE.replace("2.0f", "3.0f")
    monkeypatch.setattr(device_module, "PROBE_SOURCE", wrong)
    with pytest.raises(DeviceError, match="wrong values"):
        select_device("cpu")


def test_list_devices_reports_a_usable_cpu() -> None:
    reports = list_devices()
    assert all(isinstance(report, DeviceReport) for report in reports)
    assert any(report.usable and report.type == "CPU" for report in reports)


def _platforms_with_gpus() -> list[cl.Platform]:
    return [p for p in cl.get_platforms() if _has_gpu(p)]


def _has_gpu(platform: cl.Platform) -> bool:
    try:
        return bool(platform.get_devices(cl.device_type.GPU))
    except cl.Error:
        return False
