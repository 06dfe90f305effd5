"""Make a pip-installed Intel CPU OpenCL runtime visible to the OpenCL ICD loader.

This module is the one place where the fusec runtime reads or sets environment variables.

Why it exists: ``pip install intel-opencl-rt intel-cmplr-lib-rt`` puts Intel's CPU OpenCL driver
(``libintelocl.so``) and its dependencies (``libimf.so``, ``libsvml.so``, ``libintlc.so.5``,
``libtbb.so.12``, ...) into ``<prefix>/lib``, but the ICD file it ships
(``<prefix>/etc/OpenCL/vendors/intel-cpu.icd``) holds a placeholder path, so the ICD loader
never finds the driver. `configure_opencl_env` fixes that without root and without the user
exporting anything:

1. it locates ``libintelocl.so`` through the installed distribution's file list, falling back
   to the library folders of the active environment;
2. it checks that the library loads; the driver's RUNPATH is ``$ORIGIN``, so dependencies in
   the same folder resolve by themselves and no ``LD_LIBRARY_PATH`` is needed. Where they lie
   elsewhere (a split install), the missing ones are found and preloaded with ctypes, deepest
   first, so that the dynamic linker satisfies the driver's needs by soname;
3. it writes an ICD folder under the user cache (``$XDG_CACHE_HOME/fusec/icd/<hash>``, else
   ``~/.cache/fusec/icd/<hash>``) holding an ICD file with the real path plus copies of the
   system ICD files (``$OPENCL_VENDOR_PATH`` or ``/etc/OpenCL/vendors``), so that PoCL or a GPU
   driver stay visible. The folder is named after a hash of its contents and created by an
   atomic rename, so concurrent processes never see a half-written folder;
4. it sets ``OCL_ICD_VENDORS`` to that folder, but only if the user has not set it: a user
   who sets ``OCL_ICD_VENDORS`` keeps full control.

Call it before the first OpenCL platform query of the process (``fusec.runtime.device`` does).
Importing pyopencl first is harmless: the ICD loader reads the variable on the first query.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import os
import re
import shutil
import site
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

INTEL_LIBRARY = "libintelocl.so"
"""File name of Intel's CPU OpenCL driver."""

INTEL_DISTRIBUTIONS = ("intel-opencl-rt", "intel-cmplr-lib-rt", "tbb", "tcmlib")
"""Python distributions whose shared libraries the Intel driver may need."""

ICD_FILE_NAME = "fusec-intel-cpu.icd"
"""Name of the ICD file fusec writes for the Intel driver."""

INSTALL_HINT = "pip install intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0"
"""The command that installs the Intel CPU runtime into the active environment."""

_MISSING_LIBRARY = re.compile(r"([^\s:/]+\.so[.\d]*): cannot open shared object file")

_preloaded: list[ctypes.CDLL] = []
"""Handles of preloaded libraries, kept so that they stay loaded for the whole process."""


@dataclass(frozen=True)
class OpenCLEnv:
    """What `configure_opencl_env` found and did."""

    intel_library: Path | None
    """The Intel CPU driver found in this environment, if any."""
    icd_dir: Path | None
    """The ICD folder that ``OCL_ICD_VENDORS`` was set to by fusec, if it set it."""
    notes: tuple[str, ...]
    """One line per decision or problem, for `DeviceError` messages and ``--list-devices``."""


@cache
def configure_opencl_env() -> OpenCLEnv:
    """Register the pip-installed Intel CPU runtime with the ICD loader; runs once per process."""
    notes: list[str] = []
    user_vendors = os.environ.get("OCL_ICD_VENDORS")
    library = find_intel_cpu_runtime()
    if library is None:
        notes.append(f"Intel CPU OpenCL runtime not installed (to add it: {INSTALL_HINT})")
    else:
        problem = load_with_dependencies(library, library_search_dirs())
        if problem is not None:
            notes.append(f"Intel CPU runtime {library} does not load: {problem}")
            library = None
    if user_vendors:
        notes.append(f"OCL_ICD_VENDORS={user_vendors} set by the user; left unchanged")
        return OpenCLEnv(library, None, tuple(notes))
    if library is None:
        return OpenCLEnv(None, None, tuple(notes))

    system_icds = read_system_icds()
    if any(INTEL_LIBRARY in text.decode(errors="replace") for text in system_icds.values()):
        notes.append("the system ICD folder already lists an Intel CPU runtime; using that")
        return OpenCLEnv(library, None, tuple(notes))
    files = {ICD_FILE_NAME: f"{library}\n".encode(), **system_icds}
    icd_dir = write_icd_dir(files)
    if icd_dir is None:
        notes.append("no writable cache folder for the ICD file; Intel CPU runtime not registered")
        return OpenCLEnv(library, None, tuple(notes))
    os.environ["OCL_ICD_VENDORS"] = str(icd_dir)
    notes.append(f"OCL_ICD_VENDORS set to {icd_dir}")
    return OpenCLEnv(library, icd_dir, tuple(notes))


def find_intel_cpu_runtime() -> Path | None:
    """Path of ``libintelocl.so`` in the active Python environment, or None."""
    for path in _distribution_files("intel-opencl-rt"):
        if path.name == INTEL_LIBRARY and path.is_file():
            return path.resolve()
    for folder in library_search_dirs():
        candidate = folder / INTEL_LIBRARY
        if candidate.is_file():
            return candidate.resolve()
    return None


def library_search_dirs() -> list[Path]:
    """Folders that may hold the Intel runtime's shared libraries, most specific first."""
    folders: list[Path] = []
    for distribution in INTEL_DISTRIBUTIONS:
        folders.extend(
            path.parent for path in _distribution_files(distribution) if ".so" in path.name
        )
    folders.append(Path(sys.prefix) / "lib")
    folders.extend(Path(folder) for folder in site.getsitepackages())
    user_base = site.getuserbase()
    if user_base:
        folders.append(Path(user_base) / "lib")
    unique: list[Path] = []
    for folder in folders:
        resolved = folder.resolve()
        if resolved not in unique and resolved.is_dir():
            unique.append(resolved)
    return unique


def load_with_dependencies(library: Path, search_dirs: list[Path], depth: int = 0) -> str | None:
    """Load `library` with ctypes, first preloading any dependency the linker cannot find.

    Returns None on success, else the loader's one-line complaint.
    """
    tried: set[str] = set()
    while True:
        try:
            _preloaded.append(ctypes.CDLL(str(library)))
            return None
        except OSError as error:
            message = str(error)
        missing = _MISSING_LIBRARY.search(message)
        if missing is None or depth > 8:
            return message
        name = missing.group(1)
        found = next((folder / name for folder in search_dirs if (folder / name).is_file()), None)
        if found is None or name in tried:
            return message
        tried.add(name)
        problem = load_with_dependencies(found, search_dirs, depth + 1)
        if problem is not None:
            return problem


def read_system_icds() -> dict[str, bytes]:
    """The ICD files of the system vendors folder, by file name."""
    folder = Path(os.environ.get("OPENCL_VENDOR_PATH") or "/etc/OpenCL/vendors")
    icds: dict[str, bytes] = {}
    if not folder.is_dir():
        return icds
    for path in sorted(folder.glob("*.icd")):
        if path.name == ICD_FILE_NAME:
            continue
        try:
            icds[path.name] = path.read_bytes()
        except OSError:
            continue
    return icds


def write_icd_dir(files: dict[str, bytes]) -> Path | None:
    """Create (once) a content-addressed ICD folder holding `files`; None if nowhere writable."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    for root in _cache_roots():
        final = root / digest.hexdigest()[:16]
        if _holds(final, files):
            return final
        try:
            root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        except OSError:
            continue
        for name, content in files.items():
            (staging / name).write_bytes(content)
        try:
            staging.rename(final)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
        if _holds(final, files):
            return final
    return None


def _holds(folder: Path, files: dict[str, bytes]) -> bool:
    """Whether `folder` exists with exactly the expected ICD files and contents."""
    try:
        present = {path.name for path in folder.iterdir()}
        return present == set(files) and all(
            (folder / name).read_bytes() == content for name, content in files.items()
        )
    except OSError:
        return False


def _cache_roots() -> list[Path]:
    """Folders to hold ICD folders: the user cache, then a per-user temporary folder."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    user = f"fusec-{os.getuid()}" if hasattr(os, "getuid") else "fusec"
    return [base / "fusec" / "icd", Path(tempfile.gettempdir()) / user / "icd"]


def _distribution_files(name: str) -> list[Path]:
    """Absolute paths of the files an installed distribution recorded, or [] if absent."""
    try:
        distribution = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return []
    return [Path(str(distribution.locate_file(file))) for file in distribution.files or []]
