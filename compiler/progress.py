"""Progress of a long compile on stderr: shown on a terminal once it has run about a second.

    fusec-opt: [12.3 s] pass 7/11: fuse-transformer-layer
    fusec-run: [3.4 s] building the OpenCL program (9 kernels)

The line is rewritten in place (``\\r``) and erased when the compile ends, so the terminal is
left as it was; a step still running when the second is up (one long OpenCL build) is shown
then, by a timer. When stderr is not a terminal (a log, a pipe, a test) nothing is written,
unless ``--progress`` asks for it: then every step is one line of its own, from the start.

A tool makes one `Progress` and installs it with `reporting`; the stages it calls
(`fusec.compiler.pipeline` for each pass, `fusec.compiler.driver` around lowering and the
program build, the ONNX import) report their steps with `step`, which does nothing when no
progress is installed (a library call, ``fusec.compile``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TextIO

SHOW_AFTER_S = 1.0


class Progress:
    """Reports named steps; quiet until ``delay`` seconds have passed."""

    def __init__(self, stream: TextIO, prog: str, live: bool, delay: float | None = None):
        self.stream = stream
        self.prog = prog
        self.live = live
        """True: one line rewritten in place (a terminal); False: a line per step."""
        self.delay = SHOW_AFTER_S if delay is None else delay
        self.start = time.perf_counter()
        self._shown = False
        self._current: str | None = None
        """The step under way, shown by the timer if it is still running at ``delay``."""
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if live:
            self._timer = threading.Timer(self.delay, self._show_current)
            self._timer.daemon = True
            self._timer.start()

    @classmethod
    def for_stream(cls, stream: TextIO, prog: str, forced: bool) -> Progress | None:
        """A terminal's progress, a plain one when ``forced``, else None (quiet)."""
        if forced:
            return cls(stream, prog, live=False, delay=0.0)
        isatty = getattr(stream, "isatty", None)
        if isatty is not None and isatty():
            return cls(stream, prog, live=True)
        return None

    def step(self, what: str) -> None:
        with self._lock:
            self._current = what
            if time.perf_counter() - self.start >= self.delay:
                self._write(what)

    def _show_current(self) -> None:
        with self._lock:
            if self._current is not None and not self._shown:
                self._write(self._current)

    def _write(self, what: str) -> None:
        line = f"{self.prog}: [{time.perf_counter() - self.start:.1f} s] {what}"
        if self.live:
            self.stream.write("\r\x1b[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._shown = True

    def done(self) -> None:
        """Erases the live line (a plain one stays); no step is shown after this."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._current = None
            if self.live and self._shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            self._shown = False


_installed: list[Progress] = []


@contextlib.contextmanager
def reporting(progress: Progress | None) -> Iterator[Progress | None]:
    """Makes ``progress`` receive the `step` calls made inside the block (none if None), and
    ends it (`Progress.done`) when the block ends, however it ends."""
    if progress is None:
        yield None
        return
    _installed.append(progress)
    try:
        yield progress
    finally:
        _installed.pop()
        progress.done()


def current() -> Progress | None:
    """The progress `reporting` installed, if any."""
    return _installed[-1] if _installed else None


def step(what: str) -> None:
    """Reports ``what`` to the installed progress, if there is one."""
    progress = current()
    if progress is not None:
        progress.step(what)


def pause() -> None:
    """Erases the installed progress's line (a tool calls this before it prints); a later
    step shows it again."""
    progress = current()
    if progress is not None:
        progress.done()
