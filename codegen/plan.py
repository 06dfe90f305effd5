"""What the runtime executes: a compiled program as plain data (no IR).

The compiler (``fusec.codegen.program``) turns the kernel-level IR of one function into a
`ProgramPlan`: the OpenCL C source of all its kernels, the buffers to allocate (inputs,
intermediates that share memory slots, constants uploaded once), the launches in order, and
which buffers hold the caller's inputs and outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusec.errors import IndexOutOfRangeError


@dataclass(frozen=True)
class BufferSpec:
    """One device buffer of the program."""

    nbytes: int
    role: str
    """"input", "intermediate" (a memory slot shared by values whose lifetimes do not
    overlap), "output" (a returned value's own buffer), "constant", "index_errors" (where
    kernels record bad indices, `IndexCheck`; `data` is what it holds before any) or
    "zeroed" (a kernel's counters, `fusec.codegen.kernels.common.Scratch`: `data` its zeros
    when allocated, written by the kernels, which leave it zero)."""
    label: str
    """What it holds, for messages and --profile."""
    data: np.ndarray | None = None
    """The contents of a constant, uploaded once."""


StoredLayout = tuple[int | None, str | None]
"""How a bound input's buffer holds it: `ValueSpec.panels` and `ValueSpec.interleaved`."""


@dataclass(frozen=True)
class ValueSpec:
    """An argument or a result as the caller sees it."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    buffer: int
    """Index into `ProgramPlan.buffers`."""
    panels: int | None = None
    """Of an input bound at compile time that only GEMMs read as their B: the width of the
    column panels its buffer holds it in (`pack_panels`), None when it is stored as it is."""
    interleaved: str | None = None
    """Of a bound B whose GEMM computes a ``fused.swiglu`` in its epilogue
    (`fusec.codegen.swiglu_epilogue`): its two halves of columns interleaved pairwise
    (`interleave_halves`), ``"first"`` or ``"second"`` the half (the gate's) whose columns go
    to the even places; before the panels. None: its columns in their order."""

    donor: str | None = None
    """Of an output: the donated input whose buffer holds it (`fusec.dialects.donation`), the
    caller's array (or device array) of that input updated in place and returned as it."""

    @property
    def layout(self) -> StoredLayout:
        """How its buffer holds it (compared across programs that share weights)."""
        return (self.panels, self.interleaved)

    @property
    def repacked(self) -> bool:
        """Whether the buffer holds the value in another layout than its own (`stored`)."""
        return self.panels is not None or self.interleaved is not None

    @property
    def stored_axes(self) -> tuple[int, ...] | None:
        """Where the stored layout (`stored`) is a permutation of the value's axes: axis ``a``
        of the buffer's row-major array is axis ``stored_axes[a]`` of the value (as it is:
        the identity; panels of one column: ``(1, 0)``, a ``[K, N]`` B held ``[N, K]``).
        None for the others (wider panels, interleaved halves): no axis order gives them."""
        rank = len(self.shape)
        if self.interleaved is not None:
            return None
        if self.panels is None or (rank == 2 and self.panels == self.shape[1]):
            return tuple(range(rank))
        return (1, 0) if rank == 2 and self.panels == 1 else None

    def stored(self, array: np.ndarray) -> np.ndarray:
        """`array` (of this value's shape) with its elements in the order its buffer holds
        them, still of this value's shape (the buffer's bytes, not a matrix to index)."""
        if self.interleaved is not None:
            array = interleave_halves(array, self.interleaved)
        if self.panels is None:
            return array
        return pack_panels(array, self.panels).reshape(self.shape)


def interleave_halves(matrix: np.ndarray, even: str) -> np.ndarray:
    """``[..., 2F]`` with the columns of its two halves interleaved pairwise: column ``2 j`` is
    column ``j`` of the `even` half (``"first"``: ``j``, ``"second"``: ``F + j``), column
    ``2 j + 1`` column ``j`` of the other."""
    cols = matrix.shape[-1]
    if cols % 2 or even not in ("first", "second"):
        raise ValueError(f"cannot interleave the halves of {cols} columns, {even!r} half first")
    first, second = matrix[..., :cols // 2], matrix[..., cols // 2:]
    pairs = (first, second) if even == "first" else (second, first)
    return np.stack(pairs, axis=-1).reshape(matrix.shape)


def pack_panels(matrix: np.ndarray, width: int) -> np.ndarray:
    """A ``[K, N]`` matrix as ``N / width`` panels of its columns, ``[N / width, K, width]``,
    C-contiguous: element ``(k, j)`` at ``(j // width) * K * width + k * width + j % width``."""
    rows, cols = matrix.shape
    if cols % width:
        raise ValueError(f"{cols} columns do not split into panels of {width}")
    return np.ascontiguousarray(matrix.reshape(rows, cols // width, width).transpose(1, 0, 2))


@dataclass(frozen=True)
class LaunchSpec:
    """One kernel launch: the kernel, its buffer arguments in order, and its sizes."""

    kernel: str
    buffers: tuple[int, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    places: tuple[str, ...] = ()
    """``file:line:col`` of the source op(s) the kernel computes (several for merged launches
    or a kernel shared by several ops), for the messages of build and launch errors."""


INDEX_CLEAN = (1 << 63) - 1
"""A word of ``index_errors`` that holds no bad index (a kernel's ``atom_min`` lowers it)."""


@dataclass(frozen=True)
class IndexCheck:
    """A launch that checks its indices (a gather) and records the first bad one in its word,
    `slot`, of the program's ``index_errors`` buffer (`ProgramPlan.index_errors`): int64
    words, word 0 set to 1 by any bad index, each check's word ``(position << 32) |
    (uint32)value`` of its lowest bad position, `INDEX_CLEAN` while there is none."""

    slot: int
    indices: str
    """What holds the indices, for the message: ``input 'ids'``, or ``the indices``."""
    shape: tuple[int, ...]
    """The shape of the indices (a position is reported in it)."""
    axis: int
    dim: int
    """The size of the axis indexed."""
    place: str | None
    """``file:line:col`` of the op that indexes, where known."""
    input: str | None = None
    """The function input that holds the indices when the check reads all of it (through
    views): a caller that knows the input's least and greatest values can refuse a bad one
    before the kernels run (`fusec.compiler.torch_partition`). None for computed indices."""

    def error(self, word: int) -> IndexOutOfRangeError:
        """The error that this check's word `word` (not `INDEX_CLEAN`) stands for."""
        flat, value = word >> 32, word & 0xFFFFFFFF
        value -= (value >> 31) << 32  # the low half is a signed int
        position = []
        for d in reversed(self.shape):
            flat, rest = divmod(flat, d) if d else (flat, 0)
            position.append(rest)
        return IndexOutOfRangeError(indices=self.indices, position=tuple(reversed(position)),
                                    value=value, dim=self.dim, axis=self.axis, place=self.place)


def index_errors_initial(checks: int) -> np.ndarray:
    """The contents of an ``index_errors`` buffer of `checks` checks that recorded nothing."""
    words = np.full(1 + checks, INDEX_CLEAN, np.int64)
    words[0] = 0
    return words


@dataclass(frozen=True)
class KernelLines:
    """Where one kernel's OpenCL C lies in the program source (1-based, inclusive)."""

    kernel: str
    first: int
    last: int


@dataclass(frozen=True)
class ProgramPlan:
    """Everything needed to run one compiled function."""

    function: str
    source: str
    build_options: tuple[str, ...]
    buffers: tuple[BufferSpec, ...]
    inputs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    launches: tuple[LaunchSpec, ...]
    kernel_lines: tuple[KernelLines, ...] = ()
    """Each built kernel's lines in `source` (a compiler error at a line names its kernel)."""
    index_checks: tuple[IndexCheck, ...] = ()
    """The launches that check indices, by slot (1, 2, ...)."""
    index_errors: int | None = None
    """The ``index_errors`` buffer (role ``"index_errors"``, `IndexCheck`) where some launch
    checks indices; the runtime reads its word 0 after each call (`fusec.runtime.index_errors`)."""

    def kernel_at(self, line: int) -> str | None:
        """The kernel whose source holds ``line`` of `source`, if any."""
        return next((k.kernel for k in self.kernel_lines if k.first <= line <= k.last), None)

    def places_of(self, kernel: str) -> tuple[str, ...]:
        """``file:line:col`` of every source op whose launch runs ``kernel``, in order."""
        return tuple(dict.fromkeys(p for launch in self.launches if launch.kernel == kernel
                                   for p in launch.places))
