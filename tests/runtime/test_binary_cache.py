"""The on-disk program cache: what a later build reads back is never trusted. A truncated,
corrupt or foreign entry, or a binary the driver refuses, is a warning and a rebuild; an
unwritable cache folder is a warning; concurrent processes and an interrupted write leave a
valid entry or none."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest

from fusec.runtime import binary_cache
from fusec.runtime.device import select_device
from fusec.runtime.program_cache import build_program

SOURCE = """\
__kernel void triple(__global float *x) {
    x[get_global_id(0)] *= 3.0f;
}
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "fusec" / "opencl"


def build(source: str = SOURCE) -> cl.Program:
    device = select_device("cpu")
    return build_program(device.context, device.device, source, ())


def runs(program: cl.Program) -> bool:
    device = select_device("cpu")
    x = np.arange(8, dtype=np.float32)
    buffer = cl.Buffer(device.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                       hostbuf=x)
    program.triple(device.queue, (8,), None, buffer)
    cl.enqueue_copy(device.queue, x, buffer)
    return bool((x == 3 * np.arange(8)).all())


def entry(cache: Path, source: str = SOURCE) -> Path:
    """The entry of ``source`` (the device's probe may have its own)."""
    path = Path(binary_cache.path_of(binary_cache.key(select_device("cpu").device, source, ())))
    assert path.parent == cache and path.exists()
    return path


def test_a_build_is_cached_and_read_back(cache: Path) -> None:
    assert runs(build())
    path = entry(cache)
    device = select_device("cpu")
    loaded = binary_cache.load(device.context, device.device, SOURCE, ())
    assert loaded is not None and runs(loaded)
    assert binary_cache.decode(path.read_bytes())  # intact: magic, length, checksum
    assert not [p for p in cache.iterdir() if p.suffix == ".tmp"]


def test_a_program_from_a_binary_keeps_its_source(cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Where PyOpenCL looks for it: without it each ``cl.Kernel`` first tries a kernel named
    ``_source`` in the driver (`cl.Program.__getattr__`). Caught the mutation: the source not
    recorded in `program_from_binary` (``_source`` looked up once per kernel)."""
    build()
    device = select_device("cpu")
    loaded = binary_cache.load(device.context, device.device, SOURCE, ())
    assert loaded is not None
    looked_up: list[str] = []
    original = cl.Program.__getattr__

    def recorded(program: cl.Program, name: str) -> object:
        looked_up.append(name)
        return original(program, name)

    monkeypatch.setattr(cl.Program, "__getattr__", recorded)
    kernels = [cl.Kernel(loaded, "triple") for _ in range(3)]
    assert [k.function_name for k in kernels] == ["triple"] * 3
    assert looked_up == []
    assert runs(loaded)


def truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def flip(data: bytes) -> bytes:
    return data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:]


def garbage_header(data: bytes) -> bytes:
    return b"\x00" * 64 + data[64:]


def valid_checksum_wrong_binary(data: bytes) -> bytes:
    return binary_cache.encode(b"\x7fELF" + b"\x00" * 200)


@pytest.mark.parametrize("damage, reason", [
    (truncate, "truncated"), (flip, "checksum mismatch"),
    (garbage_header, "not a fusec cache entry"), (lambda d: b"", "not a fusec cache entry"),
    (valid_checksum_wrong_binary, "the driver refused the binary"),
])
def test_a_damaged_entry_is_rebuilt_with_a_warning(
    cache: Path, caplog: pytest.LogCaptureFixture, damage, reason: str
) -> None:
    build()
    path = entry(cache)
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="fusec.cache"):
        program = build()
    assert runs(program)
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith(f"{path}: damaged program cache entry (")
    assert reason in message and message.endswith("; rebuilding it")
    binary_cache.decode(entry(cache).read_bytes())  # replaced by an intact entry


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_cache_folder_is_a_warning(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache.mkdir(parents=True)
    cache.chmod(0o500)
    try:
        with caplog.at_level(logging.WARNING, logger="fusec.cache"):
            assert runs(build())
    finally:
        cache.chmod(0o700)
    (message,) = [r.getMessage() for r in caplog.records]
    assert "cannot write the program cache" in message and "going on without it" in message
    assert not list(cache.iterdir())


def test_a_cache_folder_that_is_a_file_is_a_warning(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="fusec.cache"):
        assert runs(build())
    assert any("cannot write the program cache" in r.getMessage() for r in caplog.records)


def test_an_interrupted_write_leaves_no_entry(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    select_device("cpu")  # the probe's entry, before the interruption is armed
    before = set(cache.glob("*")) if cache.exists() else set()

    def interrupted(fd: int) -> None:  # Ctrl-C after the data, before the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build()
    assert set(cache.glob("*")) == before  # no entry, no temporary file


CONCURRENT = textwrap.dedent("""
    import sys
    from fusec.runtime.device import select_device
    from fusec.runtime.program_cache import build_program
    device = select_device("cpu")
    source = sys.argv[1]
    for _ in range(5):
        build_program(device.context, device.device, source, ())
    print("ok")
""")


def test_concurrent_processes_leave_one_intact_entry(cache: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent.parent)}
    source = SOURCE.replace("3.0f", "5.0f")
    children = [subprocess.Popen([sys.executable, "-c", CONCURRENT, source], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(4)]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert out == "ok\n"
    binary_cache.decode(entry(cache, source).read_bytes())
    assert not [p for p in cache.iterdir() if p.suffix == ".tmp"]


def test_a_full_disk_is_a_warning(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                  caplog: pytest.LogCaptureFixture) -> None:
    def full(path: str, content: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(binary_cache, "atomic_write", full)
    with caplog.at_level(logging.WARNING, logger="fusec.cache"):
        assert runs(build(SOURCE.replace("3.0f", "(3.0f + 0.0f)")))
    assert any(r.getMessage().endswith("cannot write the program cache (No space left on "
                                       "device); going on without it") for r in caplog.records)


def test_a_salt_keys_an_entry_apart(cache: Path) -> None:
    """A patched binary (`fusec.codegen.ptx_patch`) is stored under the patch's version as
    salt: another version, or no patch, never reads it back."""
    device = select_device("cpu").device
    plain = binary_cache.key(device, SOURCE, ())
    assert binary_cache.key(device, SOURCE, (), "") == plain
    assert len({plain, binary_cache.key(device, SOURCE, (), "ptx-patch 1"),
                binary_cache.key(device, SOURCE, (), "ptx-patch 2")}) == 3
    program = build()
    binary_cache.store(program, device, SOURCE, (), "ptx-patch 2")
    assert binary_cache.load(program.context, device, SOURCE, (), "ptx-patch 1") is None
    assert binary_cache.load(program.context, device, SOURCE, (), "ptx-patch 2") is not None


def test_a_wgmma_mark_is_patched_only_on_nvidia(cache: Path) -> None:
    """The PTX patch is for NVIDIA's OpenCL: elsewhere a source that names the mark (here in a
    C comment) builds as it is."""
    source = "// FUSEC_WGMMA_STEP in a comment\n" + SOURCE
    assert runs(build(source))
