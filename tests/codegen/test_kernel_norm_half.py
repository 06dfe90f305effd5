"""LayerNorm / RMSNorm templates on f16 and bf16 buffers (``dtype``): every shape of the
kernel (one work-item per row reading vectors, a row cached in registers, a row streamed twice)
against numpy in float64 on the same 16-bit inputs, the residual sum rounded to the type as the
add before the norm stores it. Tolerance: a few units of the output's last place (f16 2^-11,
bf16 2^-8) relative to the row's scale."""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.norm import layer_norm
from fusec.dtypes import bf16_bits, bf16_to_f32, round_bf16

SHAPES = [  # rows, cols, local_size: None is the CPU's one work-item per row
    (7, 129, None),
    (5, 768, None),
    (5, 768, 128),  # cached in registers
    (3, 300, 4),    # streamed (Welford)
]
TOLERANCE = {"f16": 3e-3, "bf16": 2.4e-2}


def rounded(x: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded to `dtype`, as float64."""
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float64)
    return round_bf16(x).astype(np.float64)


def host(x: np.ndarray, dtype: str) -> np.ndarray:
    return x.astype(np.float16) if dtype == "f16" else bf16_bits(x)


def as_float(x: np.ndarray) -> np.ndarray:
    return bf16_to_f32(x) if x.dtype == np.uint16 else x.astype(np.float32)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("rms", [False, True], ids=["layer", "rms"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}-ls{s[2]}")
def test_half_norm_matches_numpy(launch, shape, residual, rms, dtype):
    rows, cols, local_size = shape
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((rows, cols)) + 40).astype(np.float32)  # sums lose digits
    res = rng.standard_normal((rows, cols)).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal(cols)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(cols)).astype(np.float32)
    kernel = layer_norm("norm_half", rows, cols, 1e-5, residual=residual, rms=rms,
                        has_beta=not rms, local_size=local_size, dtype=dtype)
    inputs = {"x": host(x, dtype), "gamma": host(gamma, dtype)}
    v = rounded(x, dtype)
    if residual:
        inputs["residual"] = host(res, dtype)
        v = rounded((v + rounded(res, dtype)).astype(np.float32), dtype)
    if not rms:
        inputs["beta"] = host(beta, dtype)
        centred = v - v.mean(axis=-1, keepdims=True)
        expected = centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5)
        expected = expected * rounded(gamma, dtype) + rounded(beta, dtype)
    else:
        expected = v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + 1e-5)
        expected = expected * rounded(gamma, dtype)
    out = launch(kernel, inputs, {"out": (rows, cols)})["out"]
    assert out.dtype == (np.float16 if dtype == "f16" else np.uint16)
    error = np.abs(as_float(out).astype(np.float64) - expected).max()
    assert error <= TOLERANCE[dtype] * np.abs(expected).max()


def test_half_norm_signature_and_unknown_dtype():
    kernel = layer_norm("n", 2, 8, 1e-5, residual=True, dtype="bf16")
    assert {a.dtype for a in kernel.args} == {"ushort"}
    assert "__global const ushort *restrict x" in kernel.source
    with pytest.raises(ValueError, match="dtype 'i8'"):
        layer_norm("n", 2, 8, 1e-5, dtype="i8")
