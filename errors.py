"""The exceptions a caller of a compiled program catches, whichever stage raises them.

`FusecRuntimeError` is the base of every failure while running a program (on an OpenCL device,
in `fusec.runtime`, or in the numpy reference, `fusec.reference`); `InputError` is the caller's
fault (arrays or arguments that do not fit). Both live here, at the root of the package, so
that the reference semantics need not import the OpenCL runtime. `str()` of each error is a
single line fit for a terminal; errors that carry more expose it through `details()`.
"""

from __future__ import annotations


class FusecRuntimeError(Exception):
    """Base class of every error raised while running a program."""

    def details(self) -> str:
        """Everything known about the failure; by default the one-line message."""
        return str(self)


class InputError(FusecRuntimeError):
    """The caller passed arrays or arguments that do not fit the compiled program."""
