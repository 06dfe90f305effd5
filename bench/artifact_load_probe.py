"""One fresh process's first result, timed by phase: run by `fusec.bench.artifact_load`.

    python -m fusec.bench.artifact_load_probe load model.fusec out.npy
    python -m fusec.bench.artifact_load_probe compile model.mlir out.npy

``load``: ``fusec.load`` and a first call, each step of the load timed by wrapping the
functions `fusec.runtime.artifact.load` calls (the load itself is the library's, unchanged;
those of `fusec.runtime.artifact_program` once `artifact.runtime_modules` has imported it);
then a second call, a profiled call (kernel time) and the blobs' checks alone. ``compile``:
``fusec.compile`` of the IR file (its ``fusec.params`` weights bound) and a first call. Either
prints one JSON line of seconds (``cpu``: the CPU time of all the process's threads, from its
start to the first result); the first output goes to the ``.npy`` file. The inputs are
drawn with a fixed seed after the load (not timed): hidden states, and a 0/1 key mask.

This module imports only the standard library at its top, so that what the process imports is
what the load or the compile does.
"""

from __future__ import annotations

import time

START = time.time()
"""When this module began to run: the interpreter's start-up is before it."""
START_CLOCK = time.perf_counter()

import functools  # noqa: E402 - after the start time, on purpose
import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402


class Phases:
    """Seconds spent in wrapped functions, by phase."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.add(phase, time.perf_counter() - began)
        return timed

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds


def inputs(names: list[str], shapes: list[tuple[int, ...]], dtypes: list[Any]) -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    return [(rng.random(s) > 0.1).astype(d) if "mask" in n else rng.standard_normal(s).astype(d)
            for n, s, d in zip(names, shapes, dtypes, strict=True)]


def probe_load(path: str, out: str) -> dict[str, Any]:
    import fusec
    from fusec.runtime import artifact, artifact_format

    imported = time.perf_counter()
    phases = Phases()
    artifact_format.read = phases.wrap("read", artifact_format.read)
    artifact_format.Artifact.blob = phases.wrap("wait", artifact_format.Artifact.blob)
    runtime_modules = artifact.runtime_modules

    def timed_runtime_modules() -> Any:  # the heavy imports; then wrap what the load calls
        began = time.perf_counter()
        program = runtime_modules()
        phases.add("runtime_imports", time.perf_counter() - began)
        program.decode = phases.wrap("manifest", program.decode)
        program.select_device = phases.wrap("device", program.select_device)
        program.adopt_binary = phases.wrap("adopt", program.adopt_binary)
        program.Executable.bind = phases.wrap("bind", program.Executable.bind)
        program.Executable = phases.wrap("executable", program.Executable)
        return program

    artifact.runtime_modules = timed_runtime_modules
    began = time.perf_counter()
    exe = fusec.load(path)
    loaded = time.perf_counter()
    drawing_cpu = time.process_time()
    args = inputs(exe.input_names, exe.input_shapes, exe.input_dtypes)
    drawn_cpu = time.process_time() - drawing_cpu  # the inputs' drawing is not counted
    drawn = time.perf_counter()
    outputs = exe(*args)
    first = time.perf_counter()
    first_wall = time.time()
    first_cpu = time.process_time()
    outputs = exe(*args)
    second = time.perf_counter()
    _, profile = exe.profile(*args)
    import numpy as np

    np.save(out, np.asarray(outputs[0]))
    seconds = dict(phases.seconds)  # the load's (what follows waits on checks too)
    check_began = time.perf_counter()
    artifact_format.read.__wrapped__(path).check()  # every blob's checksum, nothing else running
    checks = time.perf_counter() - check_began
    return {
        "start_wall": START, "first_wall": first_wall - (drawn - loaded),
        "imports": imported - START_CLOCK,
        "read": seconds["read"],
        "runtime_imports": seconds["runtime_imports"],
        "manifest": seconds["manifest"],
        "device": seconds["device"], "adopt": seconds.get("adopt", 0.0),
        "executable": seconds["executable"],
        "bind": seconds.get("bind", 0.0), "wait": seconds.get("wait", 0.0),
        "load": loaded - began, "first_call": first - drawn, "second_call": second - first,
        "cpu": first_cpu - drawn_cpu, "kernels": profile.kernel_seconds, "checks_alone": checks,
        "compiler_imported": any(m == "xdsl" or m.startswith(("xdsl.", "fusec.compiler"))
                                 for m in sys.modules),
    }


def probe_compile(path: str, out: str) -> dict[str, Any]:
    import numpy as np

    import fusec

    with open(path, encoding="utf-8") as f:
        text = f.read()
    began = time.perf_counter()
    exe = fusec.compile(text, filename=path, device="cpu")
    compiled = time.perf_counter()
    args = inputs(exe.input_names, exe.input_shapes, exe.input_dtypes)
    drawn = time.perf_counter()
    outputs = exe(*args)
    first = time.perf_counter()
    first_wall = time.time()
    np.save(out, np.asarray(outputs[0]))
    return {"start_wall": START, "first_wall": first_wall - (drawn - compiled),
            "imports_and_compile": compiled - START_CLOCK, "compile": compiled - began,
            "first_call": first - drawn}


def main(argv: list[str]) -> int:
    mode, path, out = argv
    probe = probe_load if mode == "load" else probe_compile
    print(json.dumps(probe(path, out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
