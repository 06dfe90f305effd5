"""A damaged PyOpenCL invoker cache (pytools' sqlite file under ``$XDG_CACHE_HOME/pytools``:
garbage, or a folder in its place) was an internal error at the first kernel call, exit 70; now
fusec-run warns (``--verbose``) and runs without PyOpenCL's caches. In subprocesses: the cache
is opened once per process, when ``pyopencl.invoker`` is first imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""


def fusec_run(cache: Path, program: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("PYOPENCL_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-c", "import sys; from fusec.tools.fusec_run import main; "
         "sys.exit(main())", str(program), "--device", "cpu", "--check", "--verbose"],
        env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("damage", ["garbage", "folder"])
def test_a_damaged_invoker_cache_is_skipped(tmp_path: Path, damage: str) -> None:
    program = tmp_path / "relu.mlir"
    program.write_text(PROGRAM)
    cache = tmp_path / "cache"
    first = fusec_run(cache, program)
    assert first.returncode == 0, first.stderr
    files = sorted((cache / "pytools").glob("*invoker*.sqlite"))
    assert files, sorted(p.name for p in cache.rglob("*"))
    for f in files:
        if damage == "garbage":
            f.write_bytes(b"not a database " * 200)
        else:
            f.unlink()
            f.mkdir()
    shutil.rmtree(cache / "fusec" / "opencl", ignore_errors=True)  # build the kernels again
    second = fusec_run(cache, program)
    assert second.returncode == 0, second.stderr
    assert "ok" in second.stdout
    warnings = [line for line in second.stderr.splitlines() if "invoker cache" in line]
    assert len(warnings) == 1 and warnings[0].startswith("fusec-run: warning: "), second.stderr
    assert "Traceback" not in second.stderr and "internal error" not in second.stderr


def test_invokers_are_kept_in_memory() -> None:
    """PyOpenCL reads a kernel's invoker back from sqlite for every ``cl.Kernel``; after
    `load_invoker` (which opening a device calls) a kernel name seen before is served from
    memory. Caught the mutation: `keep_in_memory` not called (no hits, every fetch a miss)."""
    import pyopencl as cl

    from fusec.runtime.device import select_device
    from fusec.runtime.program_cache import get_program

    device = select_device("cpu")  # its probe kernel calls load_invoker first
    invoker = sys.modules["pyopencl.invoker"]
    if getattr(invoker, "invoker_cache", None) is None:
        pytest.skip("PyOpenCL runs without its caches here (PYOPENCL_NO_CACHE)")
    fetch = invoker.invoker_cache._fetch
    program = get_program(device, "__kernel void fusec_twice(__global float *x) {"
                                  " x[get_global_id(0)] *= 2.0f; }")
    for _ in range(2):  # (the first generates and stores its invoker where it is new)
        cl.Kernel(program, "fusec_twice")
    before = fetch.cache_info()
    kernels = [cl.Kernel(program, "fusec_twice") for _ in range(4)]
    after = fetch.cache_info()
    assert after.maxsize > 0
    assert after.hits - before.hits == len(kernels) and after.misses == before.misses
