"""Program building: one build per key, and build errors that carry their evidence."""

from __future__ import annotations

import pyopencl as cl
import pytest
from fusec.runtime.device import select_device
from fusec.runtime.errors import BuildError, DeviceError
from fusec.runtime.program_cache import extract_build_log, get_program, normalize_options

SOURCE = """\
__kernel void scale(__global float *x, const float factor) {
    x[get_global_id(0)] *= factor;
}
"""

BROKEN = """\
__kernel void broken(__global float *x) {
    x[get_global_id(0)] = undeclared_fusec_name;
}
"""


def test_same_key_returns_same_program_object() -> None:
    device = select_device("cpu")
    first = get_program(device, SOURCE)
    assert get_program(device, SOURCE) is first
    assert isinstance(first, cl.Program)


def test_options_are_part_of_the_key() -> None:
    device = select_device("cpu")
    plain = get_program(device, SOURCE)
    fast = get_program(device, SOURCE, ["-cl-fast-relaxed-math"])
    assert fast is not plain
    assert get_program(device, SOURCE, "-cl-fast-relaxed-math") is fast


def test_disk_cache_can_be_bypassed() -> None:
    device = select_device("cpu")
    program = get_program(device, SOURCE, ["-DFUSEC_NO_DISK"], disk_cache=False)
    assert cl.Kernel(program, "scale").function_name == "scale"


def test_broken_kernel_raises_build_error_with_log_and_source() -> None:
    device = select_device("cpu")
    with pytest.raises(BuildError) as caught:
        get_program(device, BROKEN, ["-Werror"])
    error = caught.value
    assert "undeclared_fusec_name" in error.log
    assert error.source == BROKEN
    assert error.options == ("-Werror",)
    summary = str(error)
    assert "\n" not in summary
    assert summary.startswith("OpenCL build failed on ")
    details = error.details()
    assert "--- build log ---" in details
    assert "   2 |     x[get_global_id(0)] = undeclared_fusec_name;" in details


def test_normalize_options_splits_strings() -> None:
    assert normalize_options("-D N=4  -Werror") == ("-D", "N=4", "-Werror")
    assert normalize_options(["-Werror", " "]) == ("-Werror",)


def test_extract_build_log_keeps_only_the_log() -> None:
    message = (
        "clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\n"
        "Build on <pyopencl.Device 'cpu' on 'x' at 0x1>:\n\n"
        "1:2: error: bad\n\n(options: -Werror)\n(source saved as /tmp/a.cl)"
    )
    assert extract_build_log(message) == "1:2: error: bad"
    assert extract_build_log("something else") == "something else"


def test_invalid_option_is_a_build_error_on_every_cpu_device() -> None:
    for platform in ("intel", "pocl"):
        try:
            device = select_device("cpu", platform)
        except DeviceError:
            continue
        with pytest.raises(BuildError, match="-fusec-bogus-option"):
            get_program(device, SOURCE, ["-fusec-bogus-option"])
