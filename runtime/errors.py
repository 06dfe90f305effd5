"""Exceptions raised by the OpenCL runtime.

Every runtime failure is a `FusecRuntimeError` (from `fusec.errors`, re-exported here with
`InputError`), so a tool can catch one class and turn it into a message and an exit code. `str()` of each error is a single line fit for a terminal; errors that
carry more (a build log, the kernel source) expose it through `details()`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fusec.errors import FusecRuntimeError, InputError

__all__ = ["BuildError", "DeviceError", "FusecRuntimeError", "InputError", "LaunchError"]


class DeviceError(FusecRuntimeError):
    """No usable OpenCL device was found, or the requested one does not work.

    `tried` holds one line per platform or device that was considered and why it was not
    used; `str()` joins them onto the summary line, `details()` puts one per line.
    """

    def __init__(self, summary: str, *, tried: Sequence[str] = ()) -> None:
        self.summary = summary
        """What was asked for and not found."""
        self.tried = tuple(tried)
        """One line per platform or device tried, with the reason it was rejected."""
        super().__init__(summary + "".join(f"; {line}" for line in self.tried))

    def details(self) -> str:
        """The summary, then every platform and device tried, one per line."""
        return "\n".join([self.summary, *(f"  {line}" for line in self.tried)])


def located(places: Sequence[str]) -> str:
    """``model.mlir:12:9: error: `` for the first place (``(and N more)`` after it), or ``""``."""
    if not places:
        return ""
    more = f" (and {len(places) - 1} more)" if len(places) > 1 else ""
    return f"{places[0]}{more}: error: "


class LaunchError(FusecRuntimeError):
    """A kernel could not be enqueued or failed while running.

    `str()` starts with the source location of the op the kernel computes where it is known
    (``model.mlir:12:9 (and 3 more): error: kernel 'f_fused4': ...`` for a merged launch)."""

    def __init__(self, message: str, *, kernel: str, argument: str | None = None,
                 places: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.kernel = kernel
        """Name of the kernel that failed."""
        self.argument = argument
        """The kernel argument at fault, where one is known."""
        self.places = tuple(places)
        """``file:line:col`` of the source op(s) the kernel computes."""

    def __str__(self) -> str:
        where = f"kernel '{self.kernel}'"
        if self.argument is not None:
            where += f", argument '{self.argument}'"
        return f"{located(self.places)}{where}: {self.args[0]}"

    def details(self) -> str:
        """The message, then every source op of the kernel, one per line."""
        return "\n".join([str(self), *(f"  from {p}" for p in self.places[1:])])


class BuildError(FusecRuntimeError):
    """The OpenCL compiler rejected a program.

    `str()` is a one-line summary (the device and the first error line of the log);
    `details()` adds the build options, the full log and the numbered kernel source, which is
    what is needed to reproduce the failure.
    """

    def __init__(self, *, device: str, log: str, source: str, options: Sequence[str] = (),
                 kernel: str | None = None, places: Sequence[str] = ()) -> None:
        self.kernel = kernel
        """The kernel whose source the compiler's first error is in, where it is known."""
        self.places = tuple(places)
        """``file:line:col`` of the source op(s) that kernel computes."""
        self.device = device
        """Description of the device the build was for."""
        self.log = log
        """The compiler's build log, as the OpenCL implementation returned it."""
        self.source = source
        """The OpenCL C source that failed to build."""
        self.options = tuple(options)
        """The build options passed to the compiler."""
        super().__init__(self._summary())

    def _summary(self) -> str:
        kernel = f"kernel '{self.kernel}': " if self.kernel else ""
        return (f"{located(self.places)}{kernel}OpenCL build failed on {self.device}: "
                f"{first_error_line(self.log)}")

    def in_kernel(self, kernel: str | None, places: Sequence[str]) -> BuildError:
        """This error, naming the kernel at fault and the source ops it computes."""
        return BuildError(device=self.device, log=self.log, source=self.source,
                          options=self.options, kernel=kernel, places=places)

    def details(self) -> str:
        """The summary, build options, full build log and numbered source."""
        numbered = "\n".join(
            f"{number:4d} | {line}" for number, line in enumerate(self.source.splitlines(), 1)
        )
        options = " ".join(self.options) or "(none)"
        sources = "".join(f"kernel '{self.kernel}' computes the op at {p}\n"
                          for p in self.places)
        return (
            f"{self._summary()}\n{sources}"
            f"build options: {options}\n"
            f"--- build log ---\n{self.log.rstrip()}\n"
            f"--- kernel source ---\n{numbered}"
        )


_STATUS_LINES = ("Compilation started", "Compilation failed", "Compilation done")
"""Progress lines that Intel's compiler writes around every log; never the useful line."""


def first_error_line(log: str) -> str:
    """The most telling single line of a compiler log.

    That is the first line mentioning an error, else the first line that is not a progress
    line, else the first line at all.
    """
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    telling = [line for line in lines if not line.startswith(_STATUS_LINES)]
    for line in telling:
        if "error" in line.lower():
            return line
    if telling:
        return telling[0]
    return lines[0] if lines else "(empty build log)"


_ERROR_AT = re.compile(r"(\d+):(\d+):\s*(?:fatal\s+)?error\b", re.IGNORECASE)
"""``5:10: error`` in a compiler log line (Intel: ``1:5:10: error: ...``; Clang-based others:
``<source>:5:10: error: ...``): the line and column of the error in the program source."""


def first_error_source_line(log: str) -> int | None:
    """The program source line of the compiler's first error, when its log says."""
    for line in log.splitlines():
        match = _ERROR_AT.search(line)
        if match:
            return int(match.group(1))
    return None
