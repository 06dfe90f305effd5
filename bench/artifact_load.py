"""How fast a built artifact gives its first result: ``python -m fusec.bench.artifact_load
[--layers 12] [--runs 7] [--keep DIR]``.

Writes an N-layer BERT-base as ``nn`` IR with its weights (`fusec.bench.bert_model_ir`, B=1,
S=128, the model's defaults), builds its artifact for the CPU device (``fusec-build``'s
`build_artifact`), then times, each in a fresh process (`fusec.bench.artifact_load_probe`):

- ``--runs`` times, ``fusec.load(path)`` and a first call, by phase: the interpreter's
  start-up, the imports before the load (``fusec.runtime.artifact``: the standard library),
  mapping the file and checking its header and manifest (which starts the blobs' checks), the
  imports in the load (numpy, PyOpenCL, the runtime: `fusec.runtime.artifact_program`),
  decoding the plan and signature, opening the device, adopting the
  included binary, making the executable (kernels, buffers), binding the weights (waiting for
  their checksums, which background threads compute meanwhile), the first call; then, for
  scale, a second call, the kernel time of a profiled call, and the blobs' checks alone;
- ``--compile-runs`` times, compile-and-run: ``fusec.compile`` of the IR and a first call,
  over the kernel cache the load runs use (warm: no OpenCL build), and once more over an empty
  cache (``XDG_CACHE_HOME`` a new folder: the OpenCL build included).

Before the runs, the fusec modules a load imports are byte-compiled (``py_compile``), as
installing fusec does: in a checkout under ``PYTHONDONTWRITEBYTECODE`` (this machine's
sessions set it) each process would otherwise compile them from source again
(``--no-byte-compile`` keeps whatever ``__pycache__`` holds).

Every process's first output is compared with the first load run's (the same numbers). It
prints each phase's median and minimum over the runs, the first result counted from the
process's spawn, the ratio of compile-and-run to load-to-first-result, and the machine's load
average before and after: on a shared 2-core machine other work slows every phase, so read
the minimum beside the median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fusec.bench.bert_model_ir import write_model
from fusec.compiler.artifact_build import build_artifact
from fusec.files import atomic_write

PHASES = [
    ("start", "interpreter start-up (spawn to the first line)"),
    ("imports", "imports before the load: fusec.runtime.artifact"),
    ("read", "map the file, check header + manifest (SHA-256)"),
    ("runtime_imports", "imports in the load: numpy, PyOpenCL, runtime"),
    ("manifest", "decode plan and signature, binary's check"),
    ("device", "open the device (driver, context, probe)"),
    ("adopt", "adopt the included binary (no compile)"),
    ("executable", "executable: kernels, buffers, weights bound"),
    ("bind", "  of which binding the weights (in place)"),
    ("wait", "waiting for checksums, within the above"),
    ("load", "fusec.load in all"),
    ("first_call", "first call"),
    ("first_result", "spawn to first result"),
    ("cpu", "CPU time to first result, all threads"),
    ("second_call", "second call (for scale)"),
    ("kernels", "kernel time of a call (profiled)"),
    ("checks_alone", "all blobs' CRC-32 alone (threads)"),
]


def spawn(mode: str, path: str, out: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One fresh process of the probe; its JSON with ``first_result`` (spawn to result)."""
    began = time.time()
    done = subprocess.run([sys.executable, "-m", "fusec.bench.artifact_load_probe", mode, path,
                           out], capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{mode} {path}: the probe failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["start"] = result["start_wall"] - began
    result["first_result"] = result["first_wall"] - began
    return result


BYTE_COMPILE = """
import py_compile, sys
import fusec.runtime.artifact_program
files = sorted(f for n, m in list(sys.modules.items())
               if n.split(".")[0] == "fusec" and (f := getattr(m, "__file__", None) or "")
               and f.endswith(".py"))
for f in files:
    py_compile.compile(f, doraise=True)
print(len(files))
"""
"""Byte-compiles the fusec modules that ``fusec.load`` imports (`fusec.runtime.artifact` and
`fusec.runtime.artifact_program`), in a fresh process; prints how many."""


def byte_compile_load_modules() -> int:
    """How many fusec modules of the load were byte-compiled (see `BYTE_COMPILE`)."""
    done = subprocess.run([sys.executable, "-c", BYTE_COMPILE], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"byte-compiling the load's modules failed:\n{done.stderr}")
    return int(done.stdout.strip())


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def table(runs: Sequence[dict[str, Any]]) -> list[str]:
    lines = [f"{'phase':52s} {'median s':>9s} {'min s':>7s}"]
    for key, label in PHASES:
        values = [r[key] for r in runs]
        lines.append(f"{label:52s} {statistics.median(values):9.3f} {min(values):7.3f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--runs", type=int, default=7, help="Load runs (fresh processes).")
    parser.add_argument("--compile-runs", type=int, default=1,
                        help="Compile-and-run processes over the warm kernel cache.")
    parser.add_argument("--no-cold", action="store_true",
                        help="Skip the compile-and-run over an empty cache.")
    parser.add_argument("--keep", metavar="DIR", help="Write the model and artifact here.")
    parser.add_argument("--no-byte-compile", action="store_true",
                        help="Do not byte-compile the load's modules first.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fusec-artifact-load-") as scratch:
        folder = args.keep or scratch
        os.makedirs(folder, exist_ok=True)
        source = os.path.join(folder, f"bert{args.layers}.mlir")
        artifact = os.path.join(folder, f"bert{args.layers}.fusec")
        print(f"load average {load_average()} at the start, {os.cpu_count()} cpus", flush=True)
        write_model(source, args.layers, batch=1, seq=128)
        began = time.perf_counter()
        built = build_artifact(source, device="cpu")
        atomic_write(artifact, built.data)
        print(f"{args.layers}-layer BERT-base, B=1 S=128, on {built.device.description}: "
              f"artifact {len(built.data) / 1e6:.1f} MB, built in "
              f"{time.perf_counter() - began:.1f} s", flush=True)
        if not args.no_byte_compile:
            print(f"byte-compiled the {byte_compile_load_modules()} fusec modules that "
                  "fusec.load imports (as an install does)", flush=True)
        reference = os.path.join(folder, "reference.npy")
        runs = []
        for i in range(args.runs):
            out = reference if i == 0 else os.path.join(folder, "load.npy")
            runs.append(spawn("load", artifact, out))
            same = np.array_equal(np.load(out), np.load(reference))
            r = runs[-1]
            print(f"load run {i}: first result {r['first_result']:.3f} s (load "
                  f"{r['load']:.3f}, first call {r['first_call']:.3f}), same numbers {same}, "
                  f"compiler imported {r['compiler_imported']}, load average {load_average()}",
                  flush=True)
        compiles = []
        for i in range(args.compile_runs):
            out = os.path.join(folder, "compile.npy")
            compiles.append(spawn("compile", source, out))
            same = np.array_equal(np.load(out), np.load(reference))
            print(f"compile-and-run {i} (warm kernel cache): first result "
                  f"{compiles[-1]['first_result']:.3f} s, same numbers {same}", flush=True)
        cold = None
        if not args.no_cold:
            with tempfile.TemporaryDirectory(prefix="fusec-artifact-cache-") as cache:
                out = os.path.join(folder, "cold.npy")
                cold = spawn("compile", source, out, env={**os.environ, "XDG_CACHE_HOME": cache})
                same = np.array_equal(np.load(out), np.load(reference))
                print(f"compile-and-run (empty kernel cache): first result "
                      f"{cold['first_result']:.3f} s, same numbers {same}", flush=True)
    print()
    print(f"fusec.load + first call, {args.runs} fresh processes:")
    print("\n".join(table(runs)))
    first = statistics.median(r["first_result"] for r in runs)
    if compiles:
        warm = statistics.median(c["first_result"] for c in compiles)
        print(f"compile-and-run, warm kernel cache: {warm:.3f} s to first result, "
              f"{warm / first:.1f}x load-to-first-result ({first:.3f} s, medians)")
    if cold is not None:
        print(f"compile-and-run, empty kernel cache: {cold['first_result']:.3f} s, "
              f"{cold['first_result'] / first:.1f}x")
    print(f"load average {load_average()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
