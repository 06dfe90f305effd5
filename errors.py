"""The exceptions a caller of a compiled program catches, whichever stage raises them.

`FusecRuntimeError` is the base of every failure while running a program (on an OpenCL device,
in `fusec.runtime`, or in the numpy reference, `fusec.reference`); `InputError` is the caller's
fault (arrays or arguments that do not fit). Both live here, at the root of the package, so
that the reference semantics need not import the OpenCL runtime. `str()` of each error is a
single line fit for a terminal; errors that carry more expose it through `details()`.
"""

from __future__ import annotations


def error_line(error: BaseException) -> str:
    """The first line of `error`'s message (an OS error's ``strerror``), or its class name when
    it has none: what a one-line diagnostic that wraps another stage's exception quotes."""
    text = getattr(error, "strerror", None) or str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class FusecRuntimeError(Exception):
    """Base class of every error raised while running a program."""

    def details(self) -> str:
        """Everything known about the failure; by default the one-line message."""
        return str(self)


class InputError(FusecRuntimeError):
    """The caller passed arrays or arguments that do not fit the compiled program."""


class IndexOutOfRangeError(InputError):
    """An index outside ``[-dim, dim)`` (an ``nn.gather``'s; a negative index counts from the
    end). The numpy reference raises it at once; a compiled program when the call's results are
    waited for (`fusec.runtime.index_errors`). `str()` names the indices, the position of the
    first bad index (the lowest in row-major order) and its value."""

    def __init__(self, *, indices: str, position: tuple[int, ...], value: int, dim: int,
                 axis: int, place: str | None = None) -> None:
        self.indices = indices
        """What holds the indices: ``input 'ids'``, or ``the indices`` when computed."""
        self.position = position
        """The bad index's position in the indices tensor."""
        self.value = value
        self.dim = dim
        """The size of the axis indexed."""
        self.axis = axis
        self.place = place
        """``file:line:col`` of the op that indexes, where known."""
        where = f"{place}: error: " if place else ""
        super().__init__(f"{where}index {value} at position {list(position)} of {indices} is "
                         f"out of range for axis {axis} of size {dim} (valid: {-dim} to "
                         f"{dim - 1})")

    def renamed(self, indices: str) -> IndexOutOfRangeError:
        """This error with the indices called `indices` (an ONNX input's own name)."""
        return IndexOutOfRangeError(indices=indices, position=self.position, value=self.value,
                                    dim=self.dim, axis=self.axis, place=self.place)
