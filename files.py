"""Writing a user's files so that nothing is lost: atomic outputs, never onto an input.

`atomic_write` writes a temporary file in the target's folder, flushes it to disk (fsync) and
renames it over the target, so a reader, a crash or a Ctrl-C sees the old file or the new one,
never a half-written one; the temporary file is removed on any failure or interruption. Only a
regular file (or a new path) is replaced that way: a symlink is followed (the link stays, its
target is replaced), and a device, FIFO or socket (``-o /dev/null``, a pipe) is written in place,
since a rename would put a regular file where ``/dev/null`` was.

`check_not_input` refuses an output path that names one of the run's own inputs (the same file
by path or by device and inode, through links), as gcc does ("input file is the same as output
file"): `fusec-run model.mlir -o model.mlir` would otherwise replace the program with its
outputs.

`check_distinct_outputs` refuses two outputs of one run that name one file (the second write
would replace the first); `check_writable` refuses, before a long run, an output that could not
be written after it (a missing or unwritable folder, a folder in its place).

All of them raise `OutputError`, whose message is one line, ``<path>: error: ...``.

`cache_dir` is where fusec's caches live: ``$XDG_CACHE_HOME/fusec`` (``~/.cache/fusec``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from typing import BinaryIO

Writer = Callable[[BinaryIO], None]
"""Writes the whole content into an open binary file (e.g. ``lambda f: np.savez(f, ...)``)."""


class OutputError(Exception):
    """An output that cannot or must not be written; ``str()`` is one line."""


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether the paths name one existing file (through links, by device and inode)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_not_input(
    output: str | os.PathLike[str] | None,
    inputs: Iterable[str | os.PathLike[str] | None],
) -> None:
    """Raises `OutputError` if ``output`` is one of ``inputs`` (``None`` and ``-`` are skipped:
    stdin and stdout are never files to lose)."""
    if output is None or str(output) == "-":
        return
    if not os.path.exists(output):
        return  # a new file cannot be an input
    if stat.S_ISCHR(os.stat(output).st_mode):
        return  # /dev/null as both input and output loses nothing
    for path in inputs:
        if path is None or str(path) == "-":
            continue
        if same_file(output, path):
            raise OutputError(f"{os.fspath(output)}: error: the output is an input of this run "
                              f"({os.fspath(path)}); it would be overwritten")


def check_distinct_outputs(
    outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
) -> None:
    """Raises `OutputError` if two of a run's ``(option, path)`` outputs name one file (through
    links too, or the same new path twice): the second write would replace the first. ``None``,
    ``-`` and a character device (``/dev/null``) are skipped."""
    seen: list[tuple[str, str | os.PathLike[str]]] = []
    for option, path in outputs:
        if path is None or str(path) == "-":
            continue
        if os.path.exists(path) and stat.S_ISCHR(os.stat(path).st_mode):
            continue
        for other_option, other in seen:
            if same_file(path, other):
                raise OutputError(f"{os.fspath(path)}: error: {other_option} and {option} name "
                                  "the same file; one output would overwrite the other")
        seen.append((option, path))


def check_writable(path: str | os.PathLike[str] | None) -> None:
    """Raises `OutputError` now if ``path`` could not be written later: its folder is missing,
    a folder stands in its place, or the folder is not writable. For tools that write only after
    a long run (a benchmark, a calibration, a program run), so a typo costs no run; ``None`` and
    ``-`` pass."""
    if path is None or str(path) == "-":
        return
    name = os.fspath(path)
    target = os.path.realpath(name)
    if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
        if stat.S_ISDIR(os.stat(target).st_mode):
            raise OutputError(f"{name}: error: cannot write output: Is a directory")
        return  # /dev/null, a FIFO: written in place
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise OutputError(f"{name}: error: cannot write output: No such file or directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{name}: error: cannot write output: Permission denied")


def atomic_write(
    path: str | os.PathLike[str],
    content: bytes | str | Writer,
    *,
    encoding: str = "utf-8",
) -> None:
    """Writes ``content`` (bytes, text, or a function that writes into a binary file) to
    ``path`` atomically; see the module docstring. Raises `OutputError` (one line) if the file
    cannot be written; on any exception, ``KeyboardInterrupt`` included, the old file is left
    as it was and no temporary file stays behind."""
    name = os.fspath(path)
    writer = _writer(content, encoding)
    target = os.path.realpath(name)
    try:
        if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
            with open(target, "wb") as f:  # /dev/null, a FIFO: no rename possible
                writer(f)
            return
        folder = os.path.dirname(target)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.",
                                   suffix=".tmp")
    except OSError as e:
        raise OutputError(f"{name}: error: cannot write output: {_reason(e)}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode(target))  # mkstemp makes it 0600
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise OutputError(f"{name}: error: cannot write output: {_reason(e)}") from None
        raise
    _sync_folder(folder)


def cache_dir(*parts: str) -> str:
    """``$XDG_CACHE_HOME/fusec/<parts>`` (``~/.cache/fusec/<parts>`` without the variable),
    not created."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fusec", *parts)


def new_file_mode(path: str) -> int:
    """The mode ``open(path, "w")`` would give: the existing file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _writer(content: bytes | str | Writer, encoding: str) -> Writer:
    if isinstance(content, str):
        data = content.encode(encoding)
        return lambda f: f.write(data) and None
    if isinstance(content, bytes | bytearray):
        raw = bytes(content)
        return lambda f: f.write(raw) and None
    return content


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _sync_folder(folder: str) -> None:
    """Flushes the rename itself to disk (best effort: not every file system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
