"""A small GEMM autotuner whose choice is cached per device on disk.

`autotune_gemm` builds the GEMM template with each candidate `GemmTiles`, times it on every shape
with OpenCL profiling events (median of a few launches after a warm-up), and returns the
candidate with the smallest total time. The choice is stored under the device's name in a JSON
file (``$XDG_CACHE_HOME/fusec/tuning.json``, ``~/.cache`` without the variable, unless a path
is given) and returned without timing on the next call; `cached_gemm_tiles` reads it without
tuning. Calling the tuner is optional: `gemm` never reads the cache itself.

The file is shared by every process: an update takes an exclusive ``flock`` on
``tuning.json.lock``, reads the file, changes its device's entry and replaces the file
atomically, so concurrent tuners of different devices keep each other's entries. A file that
does not parse, or an entry that does not make tiles, is ignored (a warning on the
``fusec.cache`` logger) and replaced by the next tuning; a cache that cannot be written
(read-only, full disk) leaves the tuned choice unsaved, with a warning, not an error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl

from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.kernels.gemm import (
    CPU_TILES,
    CPU_WIDE_TILES,
    GPU_LARGE_TILES,
    GPU_TILES,
    GemmTiles,
    gemm,
)
from fusec.files import OutputError, atomic_write, cache_dir

GemmShape = tuple[int, int, int, int, bool]
"""(batch, m, n, k, rhs_batched)."""

CPU_CANDIDATES = (
    CPU_TILES,
    CPU_WIDE_TILES,
    GemmTiles(thread_m=6, thread_n=32, vector_width=16, group_m=16, staging="rhs", block_k=256),
    GemmTiles(thread_m=8, thread_n=32, vector_width=16, group_m=32, staging="rhs", block_k=128),
    GemmTiles(thread_m=6, thread_n=16, vector_width=8, group_m=16, staging="rhs", block_k=1024),
    GemmTiles(thread_m=4, thread_n=24, vector_width=8, group_m=16, staging="rhs", block_k=256),
    GemmTiles(thread_m=6, thread_n=16, vector_width=8, group_m=32, staging="rhs", block_k=128),
    GemmTiles(thread_m=6, thread_n=16, vector_width=8),
)
GPU_CANDIDATES = (
    GPU_TILES,
    GPU_LARGE_TILES,
    GemmTiles(thread_m=8, thread_n=8, group_m=16, group_n=16, block_k=8, staging="both",
              vector_width=4),
    GemmTiles(thread_m=8, thread_n=8, group_m=16, group_n=16, block_k=8, staging="both"),
    GemmTiles(thread_m=8, thread_n=4, group_m=16, group_n=16, block_k=16, staging="both"),
)


log = logging.getLogger("fusec.cache")
log.addHandler(logging.NullHandler())


def default_tuning_path() -> Path:
    return Path(cache_dir("tuning.json"))


def device_key(device: cl.Device) -> str:
    """The name a device's choices are cached under: platform, device and driver."""
    return f"{device.platform.name.strip()} / {device.name.strip()} / {device.driver_version}"


def cached_gemm_tiles(device: cl.Device, path: Path | None = None) -> GemmTiles | None:
    """The tiles `autotune_gemm` chose for `device`, if it has run."""
    entry = _load(path or default_tuning_path()).get(device_key(device), {}).get("gemm")
    if not isinstance(entry, dict):
        return None
    try:
        tiles = GemmTiles(**entry["tiles"])
        if not plausible(tiles):
            raise ValueError(f"tiles beyond any the tuner tries: {tiles}")
        return tiles
    except (KeyError, TypeError, ValueError) as e:
        log.warning("%s: ignoring the damaged tuning entry of %s (%s)", path or
                    default_tuning_path(), device_key(device), e)
        return None


MAX_THREAD_TILE = 64
MAX_BLOCK_K = 4096


def plausible(tiles: GemmTiles) -> bool:
    """Whether cached tiles are sizes a tuner could have chosen (integers, per-work-item tiles up
    to `MAX_THREAD_TILE`, `block_k` up to `MAX_BLOCK_K`): an edited or damaged file must not
    make the GEMM template unroll a million-row tile."""
    sizes = (tiles.thread_m, tiles.thread_n, tiles.group_m, tiles.group_n, tiles.block_k,
             tiles.vector_width)
    return (all(type(v) is int for v in sizes)
            and max(tiles.thread_m, tiles.thread_n) <= MAX_THREAD_TILE
            and tiles.block_k <= MAX_BLOCK_K)


def autotune_gemm(
    ctx: cl.Context,
    queue: cl.CommandQueue,
    shapes: Sequence[GemmShape],
    candidates: Sequence[GemmTiles] | None = None,
    *,
    path: Path | None = None,
    repeats: int = 3,
    retune: bool = False,
) -> GemmTiles:
    """The fastest of `candidates` over `shapes` on the queue's device, cached on disk.

    Candidates the device cannot build or launch (too much local memory, too large a
    work-group) are skipped. Raises ValueError if none works.
    """
    path = path or default_tuning_path()
    device = queue.device
    if not retune:
        cached = cached_gemm_tiles(device, path)
        if cached is not None:
            return cached
    info = DeviceInfo.from_device(device, tuned=False)
    if candidates is None:
        candidates = CPU_CANDIDATES if info.is_cpu else GPU_CANDIDATES
    profiling = cl.CommandQueue(
        ctx, device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    timings: dict[str, float] = {}
    for tiles in candidates:
        try:
            timings[tiles.key()] = sum(
                _time_gemm(ctx, profiling, info, tiles, shape, repeats) for shape in shapes)
        except (cl.Error, ValueError):
            continue
    if not timings:
        raise ValueError(f"no GEMM tile candidate works on {info.name}")
    best = min(candidates, key=lambda tiles: timings.get(tiles.key(), float("inf")))
    _update(path, device_key(device), {
        "tiles": dataclasses.asdict(best),
        "shapes": [list(shape) for shape in shapes],
        "seconds": timings,
    })
    return best


def _time_gemm(ctx: cl.Context, queue: cl.CommandQueue, info: DeviceInfo, tiles: GemmTiles,
               shape: GemmShape, repeats: int) -> float:
    """Median kernel time in seconds of one candidate on one shape."""
    batch, m, n, k, rhs_batched = shape
    kernel = gemm("fusec_tune_gemm", batch, m, n, k, rhs_batched, tiles=tiles, device_info=info)
    program = cl.Program(ctx, kernel.source).build(options=list(kernel.build_options))
    cl_kernel = cl.Kernel(program, kernel.name)
    rng = np.random.default_rng(0)
    flags = cl.mem_flags
    lhs = rng.standard_normal((batch, m, k), dtype=np.float32)
    rhs = rng.standard_normal((batch if rhs_batched else 1, k, n), dtype=np.float32)
    buffers = (
        cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=lhs),
        cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=rhs),
        cl.Buffer(ctx, flags.WRITE_ONLY, batch * m * n * 4),
    )
    cl_kernel.set_args(*buffers)
    times = []
    for _ in range(repeats + 1):  # the first launch warms up
        event = cl.enqueue_nd_range_kernel(queue, cl_kernel, kernel.global_size,
                                           kernel.local_size)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-9)
    return float(np.median(times[1:]))


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        log.warning("%s: cannot read the tuning cache (%s); ignoring it", path, e)
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        log.warning("%s: damaged tuning cache (%s); ignoring it", path, e)
        return {}
    return data if isinstance(data, dict) else {}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``<path>.lock`` for the block (other processes wait)."""
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _update(path: Path, device: str, gemm_entry: dict[str, Any]) -> None:
    """Set the device's GEMM entry: under the lock, read the file, change the entry, replace
    the file atomically (see the module docstring). A warning if it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            data = _load(path)
            if not isinstance(data.get(device), dict):
                data[device] = {}
            data[device]["gemm"] = gemm_entry
            atomic_write(path, json.dumps(data, indent=2, sort_keys=True))
    except (OSError, OutputError) as e:
        log.warning("%s: cannot write the tuning cache (%s); the choice is not saved", path,
                    getattr(e, "strerror", None) or e)
