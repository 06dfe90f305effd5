"""Deployable artifacts: a compiled program in one file, loaded without the compiler.

``fusec-build`` (`fusec.compiler.artifact_build`) compiles a model once and writes a
``.fusec`` file (the container: `fusec.runtime.artifact_format`; what it holds:
`fusec.runtime.artifact_program`). `load` reads it back and returns the `Executable` (or
`ModelExecutable`) that ``fusec.compile`` would have made, importing only the runtime, never
xDSL or the compiler.

This module imports the standard library and the container alone, so that `load` can start
on the file before the heavy imports: it maps the file and checks its header and manifest
(`ArtifactError`, one line, for a damaged file or one of another fusec), which starts the
blobs' checksums in background threads, and only then imports numpy, PyOpenCL and the
runtime (`runtime_modules`; the longest step of a load, which the checks now overlap, as
well as the device's opening) to open the program on a device
(`artifact_program.open_artifact`). No blob's bytes are used before their checksum is seen
to match, and every blob has been checked when `load` returns.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

from fusec import __version__

from . import artifact_format
from .artifact_format import ArtifactError

if TYPE_CHECKING:
    from .executable import Executable
    from .model_executable import ModelExecutable

__all__ = ["ArtifactError", "is_artifact", "load"]

SUFFIX = ".fusec"


def load(path: str | os.PathLike[str], device: str | None = None,
         platform: str | None = None) -> Executable | ModelExecutable:
    """The executable of the artifact at `path` on `device` (``"cpu"``, ``"gpu"``, ``"auto"``;
    None: the kind it was built for), called as ``fusec.compile``'s. See the module docstring."""
    name = os.fspath(path)
    art = artifact_format.read(name)  # the blobs' checksums are computed from now on
    check_version(name, art.manifest)
    return runtime_modules().open_artifact(name, art, device, platform)


def check_version(name: str, manifest: dict[str, Any]) -> None:
    """ArtifactError (one line naming both versions) unless this fusec built the artifact."""
    built_by = manifest.get("fusec_version")
    if built_by != __version__:
        raise ArtifactError(f"{name}: error: built by fusec {built_by}, this is fusec "
                            f"{__version__}; rebuild it with this fusec's fusec-build")


def runtime_modules() -> ModuleType:
    """`fusec.runtime.artifact_program`, imported (with numpy, PyOpenCL and the runtime) when
    a load first needs it, once the file's checks are under way."""
    from . import artifact_program

    return artifact_program


def is_artifact(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names an artifact: its suffix is ``.fusec`` or it starts with the magic."""
    name = os.fspath(path)
    if name.endswith(SUFFIX):
        return True
    try:
        with open(name, "rb") as f:
            return f.read(len(artifact_format.MAGIC)) == artifact_format.MAGIC
    except OSError:
        return False
