"""Built OpenCL programs on disk, so that a second process skips the compiler.

An entry is the device binary of one program, keyed by a hash of the device's identity
(platform, device, device and driver versions), the build options and the source, under
``$XDG_CACHE_HOME/fusec/opencl`` (`fusec.files.cache_dir`). It is written atomically (a
temporary file, then a rename: concurrent writers of one key each write a whole entry, and an
interrupted one leaves none) and carries a checksum of its payload. Nothing read from the cache
is trusted: a truncated or corrupt entry, one of another format version, or a binary the driver
refuses is reported as a warning (logger ``fusec.cache``, which ``fusec-run --verbose`` shows),
removed and rebuilt. A cache folder that cannot be created, read or written (read-only, full
disk) only means building from source: a warning, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
from collections.abc import Sequence

import pyopencl as cl

from fusec.files import OutputError, atomic_write, cache_dir

log = logging.getLogger("fusec.cache")
log.addHandler(logging.NullHandler())  # silent unless a tool shows warnings (--verbose)

MAGIC = b"fusec-opencl-binary 1\n"
"""First bytes of an entry: the format and its version."""
HEADER = struct.Struct("<32sQ")
"""After the magic: the payload's SHA-256 and its length in bytes."""


def folder() -> str:
    return cache_dir("opencl")


def key(device: cl.Device, source: str, options: Sequence[str], salt: str = "") -> str:
    """The entry's name: a hash of everything the binary depends on (`salt`: what else made
    it, e.g. the version of the PTX patch, `fusec.codegen.ptx_patch`)."""
    parts = [MAGIC.decode(), *device_identity(device), " ".join(options), source]
    if salt:
        parts.append(salt)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def device_identity(device: cl.Device) -> tuple[str, ...]:
    """What a program binary is specific to: the platform (name, version), the device (name,
    version) and its driver's version."""
    return (device.platform.name, device.platform.version, device.name, device.version,
            device.driver_version)


def program_binary(program: cl.Program, device: cl.Device) -> bytes | None:
    """The built program's binary for `device`, or None where the driver gives none."""
    try:
        devices = program.get_info(cl.program_info.DEVICES)
        binaries = program.get_info(cl.program_info.BINARIES)
        binary = next(b for d, b in zip(devices, binaries, strict=True) if d == device)
    except (cl.Error, StopIteration):
        return None
    return bytes(binary) if binary else None


def path_of(name: str) -> str:
    return os.path.join(folder(), f"{name}.bin")


def encode(binary: bytes) -> bytes:
    return MAGIC + HEADER.pack(hashlib.sha256(binary).digest(), len(binary)) + binary


def decode(data: bytes) -> bytes:
    """The payload of an entry; ValueError saying what is wrong with it."""
    if not data.startswith(MAGIC):
        raise ValueError("not a fusec cache entry of this version")
    body = data[len(MAGIC):]
    if len(body) < HEADER.size:
        raise ValueError("truncated header")
    digest, length = HEADER.unpack_from(body)
    payload = body[HEADER.size:]
    if len(payload) != length:
        raise ValueError(f"truncated: {len(payload)} of {length} bytes")
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError("checksum mismatch")
    return payload


def discard(path: str, reason: str) -> None:
    log.warning("%s: damaged program cache entry (%s); rebuilding it", path, reason)
    with contextlib.suppress(OSError):
        os.unlink(path)


def load(context: cl.Context, device: cl.Device, source: str,
         options: Sequence[str], salt: str = "") -> cl.Program | None:
    """The program built from its cached binary, or None (no entry, or a damaged one)."""
    path = path_of(key(device, source, options, salt))
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("%s: cannot read the program cache (%s); building from source", path,
                    e.strerror or e)
        return None
    try:
        binary = decode(data)
    except ValueError as e:
        discard(path, str(e))
        return None
    try:
        return program_from_binary(context, device, binary, source, options)
    except cl.Error as e:
        discard(path, f"the driver refused the binary: {str(e).splitlines()[0]}")
        return None


def program_from_binary(context: cl.Context, device: cl.Device, binary: bytes, source: str,
                        options: Sequence[str]) -> cl.Program:
    """The program built from `binary`, a binary of `source` with `options` for `device`
    (cl.Error where the driver refuses it). It keeps `source` where PyOpenCL keeps a program's
    source: each ``cl.Kernel`` made from a program looks for it there, and on a program without
    one PyOpenCL's lookup first tries a kernel of that name in the driver (a failed
    ``clCreateKernel`` per kernel, found missing and discarded)."""
    program = cl.Program(context, [device], [binary])
    program._source = source  # PyOpenCL's attribute for it (`cl.Program.__init__`)
    program.build(options=list(options), devices=[device])
    return program


def store(program: cl.Program, device: cl.Device, source: str, options: Sequence[str],
          salt: str = "") -> None:
    """Writes the built program's binary (a warning, not an error, if it cannot)."""
    binary = program_binary(program, device)
    if binary is None:
        return
    path = path_of(key(device, source, options, salt))
    try:
        os.makedirs(folder(), exist_ok=True)
        atomic_write(path, encode(binary))
    except (OSError, OutputError) as e:
        log.warning("%s: cannot write the program cache (%s); going on without it", path,
                    getattr(e, "strerror", None) or e)
