"""Registering the pip-installed Intel CPU runtime with the ICD loader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fusec.runtime import opencl_env
from fusec.runtime.opencl_env import (
    ICD_FILE_NAME,
    configure_opencl_env,
    find_intel_cpu_runtime,
    write_icd_dir,
)

REPO = Path(__file__).resolve().parents[2]


def test_icd_dir_is_content_addressed_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    files = {ICD_FILE_NAME: b"/opt/lib/libintelocl.so\n", "pocl.icd": b"libpocl.so.2\n"}
    first = write_icd_dir(files)
    assert first is not None and first.parent == tmp_path / "fusec" / "icd"
    assert (first / ICD_FILE_NAME).read_bytes() == files[ICD_FILE_NAME]
    assert write_icd_dir(files) == first
    assert write_icd_dir({ICD_FILE_NAME: b"/other/libintelocl.so\n"}) != first
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".staging-")]


def test_user_setting_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCL_ICD_VENDORS", "/user/choice")
    env = configure_opencl_env.__wrapped__()
    assert env.icd_dir is None
    assert os.environ["OCL_ICD_VENDORS"] == "/user/choice"


def test_system_icds_are_copied_next_to_intel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if find_intel_cpu_runtime() is None:
        pytest.skip("Intel CPU OpenCL runtime not installed")
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "gpu.icd").write_text("/usr/lib/libsome-gpu-opencl.so.1\n")
    monkeypatch.setenv("OPENCL_VENDOR_PATH", str(vendors))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    env = configure_opencl_env.__wrapped__()
    assert env.icd_dir is not None
    assert sorted(p.name for p in env.icd_dir.iterdir()) == [ICD_FILE_NAME, "gpu.icd"]
    assert os.environ["OCL_ICD_VENDORS"] == str(env.icd_dir)


def test_fresh_process_finds_intel_without_any_environment(tmp_path: Path) -> None:
    """No OCL_ICD_VENDORS, no LD_LIBRARY_PATH, an empty cache: the Intel device still works."""
    if find_intel_cpu_runtime() is None:
        pytest.skip("Intel CPU OpenCL runtime not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("OCL_ICD_VENDORS", "LD_LIBRARY_PATH")}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    env["OPENCL_VENDOR_PATH"] = str(tmp_path / "no-system-vendors")
    script = (
        "from fusec.runtime.device import select_device\n"
        "print(select_device('cpu', 'intel').description)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Intel(R) OpenCL" in done.stdout


def test_missing_dependency_is_preloaded_from_another_folder(tmp_path: Path) -> None:
    """A split install: the driver's folder lacks libimf.so & co, which lie elsewhere."""
    library = find_intel_cpu_runtime()
    if library is None:
        pytest.skip("Intel CPU OpenCL runtime not installed")
    driver_dir, deps_dir = tmp_path / "driver", tmp_path / "deps"
    driver_dir.mkdir()
    deps_dir.mkdir()
    driver_files = [
        p
        for p in library.parent.glob("lib*.so*")
        if p.name.startswith(("libintelocl.so", "libcommon_clang.so", "libtbb.so"))
    ]
    dep_files = [
        library.parent / n for n in ("libimf.so", "libsvml.so", "libirng.so", "libintlc.so.5")
    ]
    try:
        for folder, files in ((driver_dir, driver_files), (deps_dir, dep_files)):
            for file in files:
                os.link(file, folder / file.name)
    except OSError as error:
        pytest.skip(f"cannot hard-link the runtime's libraries: {error}")
    script = (
        "import ctypes, sys\n"
        "from pathlib import Path\n"
        "from fusec.runtime.opencl_env import load_with_dependencies\n"
        f"driver = Path({str(driver_dir / 'libintelocl.so')!r})\n"
        "try:\n"
        "    ctypes.CDLL(str(driver)); sys.exit('loaded without help: test proves nothing')\n"
        "except OSError:\n"
        "    pass\n"
        f"print(load_with_dependencies(driver, [driver.parent, Path({str(deps_dir)!r})]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.strip() == "None"


def test_module_reads_environment_only_here() -> None:
    """The rest of the runtime must not read or set the environment."""
    for path in (REPO / "runtime").glob("*.py"):
        if path.name == "opencl_env.py":
            continue
        assert "os.environ" not in path.read_text(), f"{path.name} touches os.environ"
    assert opencl_env.__doc__ and "one place" in opencl_env.__doc__
