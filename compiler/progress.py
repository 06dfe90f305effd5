"""Progress of a long compile on stderr: shown on a terminal once it has run about a second.

    fusec-opt: [12.3 s] pass 7/11: fuse-transformer-layer

The line is rewritten in place (``\\r``) and erased when the compile ends, so the terminal is
left as it was. When stderr is not a terminal (a log, a pipe, a test) nothing is written, unless
``--progress`` asks for it: then every step is one line of its own, from the start.
"""

from __future__ import annotations

import time
from typing import TextIO

SHOW_AFTER_S = 1.0


class Progress:
    """Reports named steps; quiet until ``delay`` seconds have passed."""

    def __init__(self, stream: TextIO, prog: str, live: bool, delay: float = SHOW_AFTER_S):
        self.stream = stream
        self.prog = prog
        self.live = live
        """True: one line rewritten in place (a terminal); False: a line per step."""
        self.delay = delay
        self.start = time.perf_counter()
        self._shown = False

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
        elapsed = time.perf_counter() - self.start
        if elapsed < self.delay:
            return
        line = f"{self.prog}: [{elapsed:.1f} s] {what}"
        if self.live:
            self.stream.write("\r\x1b[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._shown = True

    def done(self) -> None:
        """Erases the live line (a plain one stays)."""
        if self.live and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        self._shown = False
