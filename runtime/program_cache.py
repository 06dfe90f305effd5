"""Build OpenCL programs once.

`get_program` keeps built programs in-process, keyed by (device identity, source, build
options), and returns the very same `cl.Program` object for the same key. Below it, fusec's
on-disk binary cache (`fusec.runtime.binary_cache`, ``$XDG_CACHE_HOME/fusec/opencl``) makes a
second process cheap; its entries are checksummed, written atomically, and a damaged one is
rebuilt with a warning (PyOpenCL's own disk cache is not used: it trusts what it reads).

A compiler failure raises `BuildError` carrying the device, options, build log and source.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Protocol

import pyopencl as cl

from fusec.codegen.ptx_patch import PATCH_VERSION, PtxPatchError, needs_patch, patch

from . import binary_cache
from .errors import BuildError


class BuildTarget(Protocol):
    """What a program is built for: an opened device (`fusec.runtime.device.OpenCLDevice`).

    A protocol rather than an import, so that this module, which `device` uses to build its
    probe, does not import `device` back."""

    @property
    def key(self) -> tuple[str, ...]: ...
    @property
    def context(self) -> cl.Context: ...
    @property
    def device(self) -> cl.Device: ...

ProgramKey = tuple[tuple[str, ...], str, tuple[str, ...]]
"""(device key, source, build options)."""

_lock = threading.Lock()
_programs: dict[ProgramKey, cl.Program] = {}


def get_program(
    device: BuildTarget, source: str, options: Sequence[str] = (), *, disk_cache: bool = True
) -> cl.Program:
    """The built program for `source` on `device`, compiled at most once per process.

    `options` are OpenCL build options, one per item (e.g. ``["-cl-fast-relaxed-math"]``);
    they are part of the key, as is the device. `disk_cache=False` bypasses the on-disk binary
    cache for a first build (the in-process cache still applies).
    """
    key: ProgramKey = (device.key, source, normalize_options(options))
    with _lock:
        program = _programs.get(key)
        if program is None:
            program = build_program(
                device.context, device.device, source, key[2], disk_cache=disk_cache
            )
            _programs[key] = program
        return program


def adopt_binary(device: BuildTarget, source: str, options: Sequence[str],
                 binary: bytes) -> bool:
    """Builds `binary`, a program binary of `source` and `options` for `device` (an
    artifact's, `fusec.runtime.artifact`), and makes it the program `get_program` gives for
    them in this process; False (nothing kept) where the driver refuses it."""
    key: ProgramKey = (device.key, source, normalize_options(options))
    with _lock:
        if key in _programs:  # built or adopted before in this process
            return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        try:
            program = binary_cache.program_from_binary(device.context, device.device, binary,
                                                       source, key[2])
        except cl.Error:
            return False
    with _lock:
        _programs.setdefault(key, program)
    return True


def build_program(
    context: cl.Context,
    device: cl.Device,
    source: str,
    options: Sequence[str],
    *,
    disk_cache: bool = True,
) -> cl.Program:
    """Compile `source` for one device, without the in-process cache; raise BuildError.

    With `disk_cache`, a binary cached by an earlier build (`binary_cache`) is used when it is
    intact, and a fresh build is cached.

    On NVIDIA's OpenCL a source holding Hopper ``wgmma`` comments (`ptx_patch.needs_patch`) is
    built, its PTX patched (`ptx_patch.patch`: the comments become instructions, the target
    sm_90a) and built again as a program binary; its cache entry is keyed by the patch's
    version too."""
    patching = needs_patch(source) and "NVIDIA" in device.platform.name.upper()
    salt = f"ptx-patch {PATCH_VERSION}" if patching else ""
    with warnings.catch_warnings():
        # Intel's compiler reports "Compilation started/done" even on success.
        warnings.simplefilter("ignore", cl.CompilerWarning)
        if disk_cache:
            cached = binary_cache.load(context, device, source, options, salt)
            if cached is not None:
                return cached
        program = cl.Program(context, source)
        # PyOpenCL takes cache_dir=False to skip its disk cache, though its stubs say str | None.
        no_cache: str | None = False  # pyright: ignore[reportAssignmentType]
        try:
            program.build(options=list(options), devices=[device], cache_dir=no_cache)
        except cl.Error as error:
            raise BuildError(
                device=f"{device.name.strip()} ({device.platform.name.strip()})",
                log=extract_build_log(str(error)),
                source=source,
                options=options,
            ) from error
        if patching:
            program = build_patched(context, device, program, source, options)
    if disk_cache:
        binary_cache.store(program, device, source, options, salt)
    return program


def build_patched(context: cl.Context, device: cl.Device, program: cl.Program, source: str,
                  options: Sequence[str]) -> cl.Program:
    """`program`'s PTX patched by `ptx_patch.patch` and built as a binary; raise BuildError."""
    where = f"{device.name.strip()} ({device.platform.name.strip()})"
    try:
        index = program.get_info(cl.program_info.DEVICES).index(device)
        ptx = bytes(program.get_info(cl.program_info.BINARIES)[index]).decode()
        patched = cl.Program(context, [device], [patch(ptx).encode()])
        patched.build(devices=[device])
    except PtxPatchError as error:
        raise BuildError(device=where, log=f"cannot patch the PTX: {error}", source=source,
                         options=options) from error
    except (cl.Error, UnicodeDecodeError) as error:
        raise BuildError(device=where, log=f"the patched PTX did not build: "
                         f"{extract_build_log(str(error))}", source=source,
                         options=options) from error
    return patched


def normalize_options(options: Sequence[str]) -> tuple[str, ...]:
    """Build options as a tuple of non-empty, stripped strings.

    A single string is split on whitespace, so ``"-D N=4 -Werror"`` and
    ``["-D", "N=4", "-Werror"]`` share one cache entry.
    """
    if isinstance(options, str):
        options = options.split()
    return tuple(option.strip() for option in options if option.strip())


def clear_program_cache() -> None:
    """Forget every program built in this process (the on-disk cache is left alone)."""
    with _lock:
        _programs.clear()


def cached_program_count() -> int:
    """How many programs the in-process cache holds."""
    with _lock:
        return len(_programs)


def extract_build_log(message: str) -> str:
    """The compiler log inside a PyOpenCL build error message.

    PyOpenCL formats a failure as ``clBuildProgram failed: ... Build on <device>:\\n\\n<log>``
    followed by ``(options: ...)`` and ``(source saved as ...)`` lines; this keeps the log
    and returns the whole message when that shape is not found.
    """
    _, marker, rest = message.partition("\n\nBuild on ")
    if not marker:
        return message
    _, _, log = rest.partition(":\n\n")
    kept = [
        line
        for line in log.splitlines()
        if not line.startswith(("(options: ", "(source saved as "))
    ]
    return "\n".join(kept).strip() or message
