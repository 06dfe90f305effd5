"""Runs a mutated model file through ``fusec-run`` and ONNX Runtime, each in a worker process,
and says what is wrong with the outcome (`judge`).

A `Worker` keeps one ``spawn``-ed process that takes jobs one at a time: `run_fusec` (the
``fusec-run`` entry point, handed in by ``fusec-fuzz``, in that process: ``MODEL --device cpu --inputs IN.npz -o OUT.npz``,
its stdout and stderr captured, its working folder the model's) or `run_onnxruntime` (a
session on the file, run on the same inputs). A job that outlives its time limit kills the
process (a hang); a process that dies is a crash; either way the next job starts a fresh
one. `ReadWatch` sees, through inotify, every open of a bait file outside the model's folder,
whichever code opens it (onnx reads external data in C++, past any Python audit hook).

The requirement of each mutant (`judge`): ``fusec-run`` ends in time, alive, and either exits
0 with ONNX Runtime's numbers (where ONNX Runtime accepts the file; atol 1e-4, rtol 1e-3) or
exits 1 with one line on stderr; never a traceback, an internal error (exit 70), another exit
code, or a read of the bait.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from .isolation import death

ATOL, RTOL = 1e-4, 1e-3
"""How close fusec's float32 outputs must be to ONNX Runtime's (the tolerance of the ONNX
tests)."""
HALF_TOLERANCE = 2e-2
"""Atol and rtol for 16-bit outputs (float16, bfloat16), as the ONNX tests' f16 exports take
(tests/frontends/test_hf_exports.py): the two runtimes round each op's result to 16 bits at
different places, so an output may differ by a few ulps (0.002 at 1.28 in f16: a model fuzz
run flagged the f16 Llama and Qwen2 exports for exactly that)."""


@dataclass(frozen=True)
class Outcome:
    """What one job did: its result, or that it timed out or killed its process."""

    result: Any = None
    timed_out: bool = False
    died: str | None = None


ToolMain = Callable[[list[str]], int]
"""A tool's entry point, ``main(argv) -> exit code`` (``fusec-run``'s, which ``fusec-fuzz``
hands in: fuzz/ does not import tools/)."""


def run_fusec(main: ToolMain, folder: str) -> tuple[int, str, str]:
    """``fusec-run model.onnx`` (its `main`) on the folder's inputs, in this process:
    (exit, out, err)."""
    os.chdir(folder)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["model.onnx", "--device", "cpu", "--inputs", "inputs.npz", "-o",
                     "outputs.npz"])
    return code, out.getvalue(), err.getvalue()


def run_onnxruntime(folder: str) -> tuple[str, dict[str, np.ndarray] | str]:
    """ONNX Runtime on the folder's model and inputs: ("ok", outputs by name) or ("refused",
    its first line)."""
    import onnxruntime

    os.chdir(folder)
    try:
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        session = onnxruntime.InferenceSession("model.onnx", options,
                                               providers=["CPUExecutionProvider"])
        with np.load("inputs.npz") as data:
            feeds = {k: data[k] for k in data.files}
        names = [o.name for o in session.get_outputs()]
        return "ok", dict(zip(names, session.run(names, feeds), strict=True))
    except Exception as e:  # any refusal: a malformed file, a failed kernel
        lines = str(e).strip().splitlines()
        return "refused", lines[0] if lines else type(e).__name__


STARTUP_SECONDS = 300.0
"""How long a worker may take to start (imports on a loaded machine), not counted in a job's
time limit."""


def serve(conn: Connection, job: Callable[[str], Any]) -> None:
    """The worker's loop: says it is ready, then a folder in, the job's result out; ``None``
    ends it. No core dumps: one of a crash takes seconds, counted as a hang."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    conn.send("ready")
    while True:
        folder = conn.recv()
        if folder is None:
            return
        conn.send(job(folder))


class Worker:
    """``worker(folder, seconds) -> Outcome``: `job` run in a process of its own."""

    def __init__(self, job: Callable[[str], Any]) -> None:
        self.job = job
        self.context = multiprocessing.get_context("spawn")
        self.process: Any = None
        self.conn: Connection | None = None

    def start(self) -> None:
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=serve, args=(child, self.job), daemon=True)
        self.process.start()
        child.close()
        if not self.conn.poll(STARTUP_SECONDS) or self.conn.recv() != "ready":
            raise RuntimeError(f"the fuzzing worker did not start within {STARTUP_SECONDS} s")

    def __call__(self, folder: str, seconds: float) -> Outcome:
        if self.process is None or not self.process.is_alive():
            self.start()
        assert self.conn is not None
        self.conn.send(folder)
        try:
            if self.conn.poll(seconds):
                return Outcome(self.conn.recv())
        except (EOFError, ConnectionError):
            pass
        self.stop()
        if self.process.exitcode == -signal.SIGKILL:  # ours: the job was still running
            return Outcome(timed_out=True)
        return Outcome(died=death(self.process.exitcode))  # (also one dying slowly)

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.kill()
        if self.process is not None:
            self.process.join()
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def close(self) -> None:
        if self.process is not None and self.process.is_alive() and self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(5)
        self.stop()


class ReadWatch:
    """Whether a file (the bait) was opened or read since the last `opened`, by any process
    (Linux inotify)."""

    IN_ACCESS, IN_OPEN, IN_NONBLOCK = 0x1, 0x20, 0o4000

    def __init__(self, path: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(self.IN_NONBLOCK)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, os.fsencode(path),
                                                 self.IN_ACCESS | self.IN_OPEN) < 0:
            raise OSError(ctypes.get_errno(), f"cannot watch {path} with inotify")

    def opened(self) -> bool:
        """Whether the file was opened since the last call (and forgets it)."""
        seen = False
        while True:
            try:
                seen |= bool(os.read(self.fd, 4096))
            except BlockingIOError:
                return seen

    def close(self) -> None:
        os.close(self.fd)


def judge(outcome: Outcome, read_outside: bool) -> str | None:
    """What is wrong with ``fusec-run``'s outcome on a mutant (None: it exited 0, or 1 with
    one line). Its numbers are compared separately (`compare`)."""
    if read_outside:
        return "read a file outside the model's folder"
    if outcome.timed_out:
        return "no end within the time limit"
    if outcome.died is not None:
        return f"crashed: {outcome.died}"
    code, _, err = outcome.result
    lines = err.strip().splitlines()
    if "Traceback" in err:
        return f"traceback: {lines[-1] if lines else ''}"
    if code not in (0, 1):
        return f"exit {code}: {lines[0] if lines else '(no message)'}"
    if len(lines) > 1:
        return f"{len(lines)} lines on stderr: {lines[0]} / {lines[1]}"
    if code == 1 and not lines:
        return "exit 1 without a message"
    return None


def compare(fusec_outputs: Path, expected: dict[str, np.ndarray]) -> str | None:
    """What differs between fusec's outputs file and ONNX Runtime's outputs (None: nothing)."""
    with np.load(fusec_outputs) as data:
        got = {k: data[k] for k in data.files}
    if sorted(got) != sorted(expected):
        return f"outputs {sorted(got)}, ONNX Runtime's {sorted(expected)}"
    for name, want in expected.items():
        have = got[name]
        if have.shape != want.shape:
            return (f"output '{name}' has shape {list(have.shape)}, ONNX Runtime's "
                    f"{list(want.shape)}")
        if want.dtype.kind in "biu" or have.dtype.kind in "biu":
            same = np.array_equal(have.astype(np.int64), want.astype(np.int64))
        else:
            half = want.itemsize == 2 or have.itemsize == 2
            atol, rtol = (HALF_TOLERANCE, HALF_TOLERANCE) if half else (ATOL, RTOL)
            same = np.allclose(have.astype(np.float64), want.astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)
        if not same:
            return f"output '{name}' differs from ONNX Runtime's"
    return None
