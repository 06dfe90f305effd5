"""What the runtime executes: a compiled program as plain data (no IR).

The compiler (``fusec.codegen.program``) turns the kernel-level IR of one function into a
`ProgramPlan`: the OpenCL C source of all its kernels, the buffers to allocate (inputs,
intermediates that share memory slots, constants uploaded once), the launches in order, and
which buffers hold the caller's inputs and outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BufferSpec:
    """One device buffer of the program."""

    nbytes: int
    role: str
    """"input", "intermediate" (a memory slot shared by values whose lifetimes do not
    overlap), "output" (a returned value's own buffer) or "constant"."""
    label: str
    """What it holds, for messages and --profile."""
    data: np.ndarray | None = None
    """The contents of a constant, uploaded once."""


@dataclass(frozen=True)
class ValueSpec:
    """An argument or a result as the caller sees it."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    buffer: int
    """Index into `ProgramPlan.buffers`."""


@dataclass(frozen=True)
class LaunchSpec:
    """One kernel launch: the kernel, its buffer arguments in order, and its sizes."""

    kernel: str
    buffers: tuple[int, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None


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
