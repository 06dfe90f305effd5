"""The two measurements that are not a workload row: host overhead and compile time.

Host overhead (``--workload overhead``): two programs of tiny matmuls, one of 1 and one of
`CHAIN` in a dependent chain (matmuls never fuse with each other, so each is one kernel). The
cost of one more kernel in a call is ``(t_chain - t_one) / (CHAIN - 1)``, wall time, its own
(tiny) kernel time included; where fusec reports kernel time, the time beyond the kernels is
given too. PyTorch eager runs the same chain, for scale.

Compile time (``--workload compile``): a 12-layer BERT-base program (IR text) compiled by
``fusec.compile`` and called once, in a fresh process with empty caches (``XDG_CACHE_HOME``,
``POCL_CACHE_DIR`` and NVIDIA's ``CUDA_CACHE_PATH`` pointed at a new folder), then again in a
second fresh process over the same caches, which should hit them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import click

from fusec.bench.harness import Settings, WorkloadResult, run_workload
from fusec.bench.peers import Peer, first_line
from fusec.bench.program import ProgramWriter
from fusec.bench.workloads import Init, Workload, bert, bert_inits

CHAIN = 64
TINY = 16
COMPILE_LAYERS = 12


def matmul_chain(length: int, size: int = TINY) -> Workload:
    p = ProgramWriter(f"matmul_chain{length}")
    x, w = p.arg("x", [size, size]), p.arg("w", [size, size])
    for _ in range(length):
        x = p.matmul(x, w)
    p.ret(x)
    # Orthogonal-ish scaling keeps the values of a 64-deep chain finite and well away from 0.
    return Workload(name=f"overhead_{length}", summary=f"{length} matmuls {size}x{size}",
                    text=p.text(), inits={"w": Init(scale=1.0 / size**0.5)},
                    tolerance=1e-3, group="h")


def host_overhead(peers: list[Peer], settings: Settings) -> tuple[list[WorkloadResult],
                                                                   dict[str, Any]]:
    """Rows for the chains and the per-kernel figures derived from them."""
    repeat = Settings(**{**settings.__dict__, "repeat": max(settings.repeat, 20)})
    rows = [run_workload(matmul_chain(1), peers, repeat),
            run_workload(matmul_chain(CHAIN), peers, repeat)]
    summary: dict[str, Any] = {"chain": CHAIN, "size": TINY}
    for name in ["fusec", *(p.name for p in peers)]:
        one, chain = rows[0].runner(name), rows[1].runner(name)
        if one is None or chain is None or one.wall is None or chain.wall is None:
            continue
        per_kernel_us = (chain.wall.median_ms - one.wall.median_ms) / (CHAIN - 1) * 1e3
        entry: dict[str, Any] = {"per_kernel_us": per_kernel_us}
        if chain.device is not None:
            entry["beyond_kernels_per_kernel_us"] = (
                (chain.wall.median_ms - chain.device.median_ms) / CHAIN * 1e3)
        summary[name] = entry
    return rows, summary


def overhead_lines(summary: dict[str, Any]) -> list[str]:
    lines = [f"host overhead: cost of one more kernel in a call (chain of {summary['chain']} "
             f"{summary['size']}x{summary['size']} matmuls vs one)"]
    for name, entry in summary.items():
        if isinstance(entry, dict):
            text = f"  {name}: {entry['per_kernel_us']:.1f} us per kernel"
            if "beyond_kernels_per_kernel_us" in entry:
                text += f", {entry['beyond_kernels_per_kernel_us']:.1f} us beyond kernel time"
            lines.append(text)
    if "fusec" not in summary:
        lines.append("  fusec: n/a (see the overhead rows)")
    return lines


# --- copy bandwidth ---------------------------------------------------------------------------

COPY_SOURCE = """\
__kernel void bench_copy(__global const float4 *src, __global float4 *dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}
"""
COPY_MIB = {"cpu": 256, "gpu": 1024}


def copy_bandwidth(settings: Settings) -> dict[str, Any]:
    """GB/s (bytes read + written) of a plain float4 copy kernel on fusec's device, by
    profiling events: the ceiling the elementwise targets are measured against."""
    import numpy as np
    import pyopencl as cl

    from fusec.runtime.device import select_device
    from fusec.runtime.program_cache import get_program

    try:
        device = select_device(settings.device)  # type: ignore[arg-type]
    except Exception as error:  # noqa: BLE001 - reported, not raised
        return {"status": "n/a", "reason": first_line(error)}
    nbytes = COPY_MIB[settings.device] << 20
    kernel = cl.Kernel(get_program(device, COPY_SOURCE), "bench_copy")
    src = cl.Buffer(device.context, cl.mem_flags.READ_ONLY, nbytes)
    dst = cl.Buffer(device.context, cl.mem_flags.WRITE_ONLY, nbytes)
    cl.enqueue_copy(device.queue, src, np.ones(nbytes // 4, np.float32))
    kernel.set_args(src, dst)
    seconds = []
    for _ in range(max(settings.repeat, 10) + 2):
        event = cl.enqueue_nd_range_kernel(device.queue, kernel, (nbytes // 16,), None)
        event.wait()
        seconds.append((event.profile.end - event.profile.start) * 1e-9)
    median = sorted(seconds[2:])[len(seconds[2:]) // 2]
    return {"status": "ok", "bytes": 2 * nbytes, "median_ms": median * 1e3,
            "gb_per_s": 2 * nbytes / median / 1e9, "device": device.description}


def bandwidth_lines(summary: dict[str, Any]) -> list[str]:
    if summary["status"] != "ok":
        return [f"copy bandwidth: n/a: {summary['reason']}"]
    return [f"copy bandwidth (float4 copy kernel, {summary['bytes'] >> 21} MiB each way, "
            f"profiling events): {summary['gb_per_s']:.1f} GB/s on {summary['device']}"]


# --- compile time ---------------------------------------------------------------------------


def compile_probe(layers: int, device: str, pipeline: str) -> dict[str, Any]:
    """Runs in the child process: compile a `layers`-layer BERT and call it once."""
    start = time.perf_counter()
    from fusec.bench import fusec_runner

    compile_fn = fusec_runner.compile_function()
    imported = time.perf_counter()
    workload = bert_program(layers)
    from fusec.bench.graph import parse

    graph = parse(workload.text)
    inputs = workload.inputs([t.name for t in graph.inputs], [t.shape for t in graph.inputs])
    parsed = time.perf_counter()
    executable = compile_fn(workload.text, pipeline=pipeline, device=device)
    compiled = time.perf_counter()
    executable(*inputs)
    called = time.perf_counter()
    return {"import_s": imported - start, "compile_s": compiled - parsed,
            "first_call_s": called - compiled, "ir_chars": len(workload.text)}


def bert_program(layers: int) -> Workload:
    return Workload(name=f"bert{layers}", summary=f"{layers}-layer BERT-base, B=1 S=128",
                    text=bert(1, 128, layers=layers).text(), inits=bert_inits(layers, 768, 3072))


def run_child(layers: int, settings: Settings, cache: str) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": cache, "POCL_CACHE_DIR": os.path.join(cache, "pocl"),
           "CUDA_CACHE_PATH": os.path.join(cache, "nv")}
    command = [sys.executable, "-m", "fusec.bench.special", str(layers), settings.device,
               settings.pipeline]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return {"status": "failed", "reason": lines[-1] if lines else f"exit {done.returncode}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"status": "ok", "process_s": wall, **result}


def compile_time(settings: Settings, layers: int = COMPILE_LAYERS) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fusec-bench-cache-") as cache:
        cold = run_child(layers, settings, cache)
        warm = run_child(layers, settings, cache) if cold["status"] == "ok" else cold
    return {"layers": layers, "cold": cold, "warm": warm}


def compile_lines(summary: dict[str, Any]) -> list[str]:
    lines = [f"compile time: {summary['layers']}-layer BERT-base IR text -> built kernels + "
             "first call, each in a new process"]
    for which in ("cold", "warm"):
        entry = summary[which]
        if entry["status"] != "ok":
            lines.append(f"  {which}: {entry['status']}: {entry['reason']}")
            continue
        lines.append(
            f"  {which}: compile {entry['compile_s']:.2f} s + first call "
            f"{entry['first_call_s']:.2f} s (import {entry['import_s']:.2f} s, process "
            f"{entry['process_s']:.2f} s)")
    return lines


def main(argv: list[str]) -> int:
    """``python -m fusec.bench.special LAYERS DEVICE PIPELINE``: one compile probe, as JSON."""
    layers, device, pipeline = int(argv[0]), argv[1], argv[2]
    try:
        click.echo(json.dumps(compile_probe(layers, device, pipeline)))
    except Exception as error:  # noqa: BLE001 - the parent shows this line
        click.echo(f"error: {first_line(error)}", err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
