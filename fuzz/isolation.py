"""The oracle in a child process, so that a program which kills its process (a signal in the
OpenCL runtime, as fuzz seed 1839 raised SIGFPE there) is one failing seed, not the end of the
campaign.

`ChildOracle` keeps one worker process (``spawn``: a forked OpenCL runtime is not safe) and
sends it each program with whether its inputs carry edge values; the worker makes the inputs
and runs the check (`fusec.fuzz.oracle.check` by default) and sends the findings back. If the
worker dies, the program gets a ``crash`` finding naming the signal or exit status, and the next
program starts a fresh worker.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from .inputs import make_inputs
from .oracle import Finding, check
from .program import Program

Check = Callable[[Program, list[np.ndarray], str], list[Finding]]

WHERE = "child process"
"""`Finding.where` of a program that killed the process it ran in."""


def serve(conn: Connection, check_fn: Check, device: str) -> None:
    """The worker's loop: ``(program, specials)`` in, findings out; ``None`` ends it."""
    while True:
        job = conn.recv()
        if job is None:
            return
        program, specials = job
        conn.send(check_fn(program, make_inputs(program, specials), device))


def death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode} while running the program"


class ChildOracle:
    """``oracle(program, specials) -> findings``, run in a worker process."""

    def __init__(self, device: str = "cpu", check_fn: Check = check) -> None:
        self.device = device
        self.check_fn = check_fn
        self.context = multiprocessing.get_context("spawn")
        self.process: Any = None
        self.conn: Connection | None = None

    def start(self) -> None:
        parent, child = self.context.Pipe()
        self.process = self.context.Process(target=serve, args=(child, self.check_fn, self.device),
                                            daemon=True)
        self.process.start()
        child.close()
        self.conn = parent

    def __call__(self, program: Program, specials: bool) -> list[Finding]:
        if self.process is None:
            self.start()
        assert self.conn is not None
        try:
            self.conn.send((program, specials))
            return self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self.process.join()
            finding = Finding("crash", WHERE, death(self.process.exitcode))
            self.conn.close()
            self.process = self.conn = None
            return [finding]

    def close(self) -> None:
        if self.process is not None and self.conn is not None:
            try:
                self.conn.send(None)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.process.join(timeout=10)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()
            self.conn.close()
        self.process = self.conn = None

    def __enter__(self) -> ChildOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
