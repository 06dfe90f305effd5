"""Exceptions raised by the OpenCL runtime.

Every runtime failure is a `FusecRuntimeError` (from `fusec.errors`, re-exported here with
`InputError`), so a tool can catch one class and turn it into a message and an exit code. `str()` of each error is a single line fit for a terminal; errors that
carry more (a build log, the kernel source) expose it through `details()`.
"""

from __future__ import annotations

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


class LaunchError(FusecRuntimeError):
    """A kernel could not be enqueued or failed while running."""

    def __init__(self, message: str, *, kernel: str, argument: str | None = None) -> None:
        super().__init__(message)
        self.kernel = kernel
        """Name of the kernel that failed."""
        self.argument = argument
        """The kernel argument at fault, where one is known."""

    def __str__(self) -> str:
        where = f"kernel '{self.kernel}'"
        if self.argument is not None:
            where += f", argument '{self.argument}'"
        return f"{where}: {self.args[0]}"


class BuildError(FusecRuntimeError):
    """The OpenCL compiler rejected a program.

    `str()` is a one-line summary (the device and the first error line of the log);
    `details()` adds the build options, the full log and the numbered kernel source, which is
    what is needed to reproduce the failure.
    """

    def __init__(self, *, device: str, log: str, source: str, options: Sequence[str] = ()) -> None:
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
        return f"OpenCL build failed on {self.device}: {first_error_line(self.log)}"

    def details(self) -> str:
        """The summary, build options, full build log and numbered source."""
        numbered = "\n".join(
            f"{number:4d} | {line}" for number, line in enumerate(self.source.splitlines(), 1)
        )
        options = " ".join(self.options) or "(none)"
        return (
            f"{self._summary()}\n"
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
