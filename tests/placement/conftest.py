"""Two devices on a machine with one: the CPU OpenCL device opened twice, in two contexts, the
second one playing the accelerator. Values can only move between them through the host, as
between a CPU and a GPU. Every test gets an empty calibration cache of its own
(``XDG_CACHE_HOME``), so that a machine's real calibration cannot change a placement."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyopencl as cl
import pytest

from fusec.placement.devices import DevicePair
from fusec.runtime.device import OpenCLDevice, select_device


@pytest.fixture(scope="session")
def host() -> OpenCLDevice:
    return select_device("cpu")


@pytest.fixture(scope="session")
def second_context(host: OpenCLDevice) -> OpenCLDevice:
    context = cl.Context(devices=[host.device])
    queue = cl.CommandQueue(context, host.device,
                            properties=cl.command_queue_properties.PROFILING_ENABLE)
    return dataclasses.replace(host, context=context, queue=queue,
                               key=(*host.key, "second-context"))


@pytest.fixture(scope="session")
def pair(host: OpenCLDevice, second_context: OpenCLDevice) -> DevicePair:
    return DevicePair(host, second_context)


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path
