"""How host arrays hold the 16-bit float element types, shared by every stage.

``f16`` is numpy's ``float16``. numpy has no bfloat16, so a ``bf16`` tensor is held on the host
as ``uint16`` arrays of its bit patterns (the top 16 bits of the float32 of the same value);
fusec has no 16-bit integer element type, so a ``uint16`` array always means bf16. The helpers
convert between those bit patterns and float32, rounding to nearest even as the kernels do.
"""

from __future__ import annotations

import numpy as np

BF16_HOST = np.dtype(np.uint16)
"""The numpy dtype of a bf16 tensor's host array: its bit patterns."""


def bf16_bits(x: object) -> np.ndarray:
    """The bf16 bit patterns of ``x`` (any float array), rounded to nearest even from float32;
    NaN stays a (quiet) NaN, infinities stay infinite."""
    f = np.asarray(x, np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    bits = np.where(np.isnan(f), (u >> 16) | 0x40, rounded)
    return bits.astype(np.uint16)


def bf16_to_f32(bits: object) -> np.ndarray:
    """The float32 values of bf16 bit patterns (exact)."""
    u = np.asarray(bits, np.uint16).astype(np.uint32) << 16
    return u.view(np.float32)


def round_bf16(x: object) -> np.ndarray:
    """``x`` rounded to bf16 (through float32), as float32 values."""
    return bf16_to_f32(bf16_bits(x))


def host_as_float(array: np.ndarray) -> np.ndarray:
    """An output or input array as float values: bf16 bit patterns (``uint16``) decoded,
    anything else unchanged."""
    array = np.asarray(array)
    return bf16_to_f32(array) if array.dtype == BF16_HOST else array
