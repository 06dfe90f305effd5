"""The register-tiled attention template against numpy (float64) on the CPU OpenCL device.

The cases of `test_kernel_attention` (masks with a fully masked batch, causal, S_q != S_k, one
key) plus shapes that leave ragged query blocks, key tiles and head-dimension columns (D not a
multiple of 4, nor of the columns a row of work-items covers), both tile configurations, a third
(16 x 4), K and V staged rather than prefetched, and a packed qkv buffer. The
one-query-per-work-item kernel runs on the same inputs: both agree with the reference and with
each other. Tolerance: rtol = atol = 1e-5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusec.codegen.kernels.attention import HeadsLayout, attention
from fusec.codegen.kernels.attention_tiled import (
    CONFIGS,
    attention_tiled,
    tiled_attention_config,
    tiled_attention_local_bytes,
)
from tests.codegen.test_kernel_attention import TOLERANCE, _mask, _reference

CASES = {  # batch, seq_q, seq_k, heads, dim, causal, masked
    "plain": (2, 7, 7, 3, 5, False, False),
    "masked": (2, 7, 7, 3, 5, False, True),
    "causal": (2, 7, 7, 3, 5, True, False),
    "causal-masked": (2, 7, 7, 3, 5, True, True),
    "cross": (2, 5, 11, 3, 5, False, True),
    "cross-causal": (1, 11, 5, 2, 8, True, False),
    "one-key": (1, 3, 1, 1, 1, False, False),
    "ragged-blocks": (1, 70, 70, 2, 12, True, True),
    "head-64": (1, 40, 37, 2, 64, True, False),
    "head-72": (1, 33, 45, 1, 72, False, True),
}


def _inputs(batch, seq_q, seq_k, heads, dim, masked, adversarial=False):
    rng = np.random.default_rng(seq_q * 31 + seq_k * 7 + dim)
    width = heads * dim
    q = rng.standard_normal((batch, seq_q, width), dtype=np.float32)
    k = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
    v = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
    if adversarial:  # large scores: the running max grows tile after tile, exp would overflow
        q *= 8.0
        k[:, :, :] *= np.linspace(0.5, 4.0, seq_k, dtype=np.float32)[None, :, None]
    mask = _mask(batch, seq_k, rng) if masked else None
    return q, k, v, mask


VARIANTS = (*((q, k, True) for q, k in CONFIGS), (16, 4, True), (*CONFIGS[0], False))
"""(query_threads, key_threads, prefetch): the default configurations, one with 4 output float4
per row of work-items (D = 64), all with K and V prefetched (the default), and the first with
K and V staged at the top of each tile instead."""


@pytest.mark.parametrize("variant", VARIANTS,
                         ids=[f"{q}x{k}{'-prefetch' if p else ''}" for q, k, p in VARIANTS])
@pytest.mark.parametrize("case", CASES)
def test_tiled_attention_matches_numpy_and_the_simple_kernel(launch, case, variant):
    batch, seq_q, seq_k, heads, dim, causal, masked = CASES[case]
    q, k, v, mask = _inputs(batch, seq_q, seq_k, heads, dim, masked)
    scale = 1.0 / math.sqrt(dim)
    inputs = {"q": q, "k": k, "v": v, **({"mask": mask} if masked else {})}
    outputs = {"out": (batch, seq_q, heads * dim)}
    tiled = attention_tiled("attention_tiled_test", batch, seq_q, seq_k, heads, dim, scale,
                            causal=causal, has_mask=masked, query_threads=variant[0],
                            key_threads=variant[1], prefetch=variant[2])
    simple = attention("attention_simple_test", batch, seq_q, seq_k, heads, dim, scale,
                       causal=causal, has_mask=masked)
    result = launch(tiled, inputs, outputs)["out"]
    expected = _reference(q, k, v, heads, dim, scale, mask, causal)
    np.testing.assert_allclose(result, expected, **TOLERANCE)
    np.testing.assert_allclose(result, launch(simple, inputs, outputs)["out"], **TOLERANCE)
    if masked and batch > 1:
        assert np.all(result[1] == 0.0)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("prefetch", [False, True], ids=["staged", "prefetched"])
def test_tiled_attention_survives_growing_large_scores(launch, causal, prefetch):
    batch, seq, heads, dim = 1, 100, 2, 16
    q, k, v, _ = _inputs(batch, seq, seq, heads, dim, False, adversarial=True)
    kernel = attention_tiled("attention_tiled_large", batch, seq, seq, heads, dim, 1.0,
                             causal=causal, query_threads=8, key_threads=8, prefetch=prefetch)
    result = launch(kernel, {"q": q, "k": k, "v": v}, {"out": (batch, seq, heads * dim)})["out"]
    assert np.all(np.isfinite(result))
    expected = _reference(q, k, v, heads, dim, 1.0, None, causal)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_tiled_attention_reads_q_k_v_from_one_packed_buffer(launch, causal):
    batch, seq, heads, dim = 2, 37, 3, 8
    width = heads * dim
    rng = np.random.default_rng(5)
    qkv = rng.standard_normal((batch, seq, 3 * width), dtype=np.float32)
    mask = _mask(batch, seq, rng, dtype=np.uint8)
    kernel = attention_tiled(
        "attention_tiled_packed", batch, seq, seq, heads, dim, 0.3, causal=causal, has_mask=True,
        q_layout=HeadsLayout(row_stride=3 * width, column_offset=0),
        k_layout=HeadsLayout(row_stride=3 * width, column_offset=width),
        v_layout=HeadsLayout(row_stride=3 * width, column_offset=2 * width),
        mask_dtype="uchar", query_threads=8, key_threads=8,
    )
    result = launch(kernel, {"q": qkv, "k": qkv, "v": qkv, "mask": mask},
                    {"out": (batch, seq, width)})["out"]
    q, k, v = (qkv[..., i * width:(i + 1) * width] for i in range(3))
    expected = _reference(q, k, v, heads, dim, 0.3, mask, causal)
    np.testing.assert_allclose(result, expected, **TOLERANCE)


def test_tiled_attention_geometry_and_local_memory():
    kernel = attention_tiled("attention_tiled_geometry", 32, 128, 128, 12, 64, 0.125,
                             causal=True)
    assert kernel.local_size == (128, 1)
    assert kernel.global_size == (2 * 128, 32 * 12)  # 64-query blocks, batch * heads
    assert tiled_attention_local_bytes(64, False, 16, 8) <= 49152
    assert tiled_attention_config(64, True, 49152, 1024) == (16, 8)
    assert tiled_attention_config(64, False, 32768, 1024) == (8, 8)
    assert tiled_attention_config(64, False, 32768, 32) is None
    assert tiled_attention_config(256, False, 49152, 1024) is None


def repeat_heads(t: np.ndarray, group: int, dim: int) -> np.ndarray:
    """``[B, S, KV*D] -> [B, S, KV*group*D]``: each head ``group`` times in a row."""
    b, s, width = t.shape
    return np.repeat(t.reshape(b, s, width // dim, dim), group, axis=2).reshape(b, s, -1)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_tiled_attention_groups_query_heads_over_fewer_kv_heads(launch, causal):
    """Grouped-query attention (4 query heads over 2 kv heads) read from one packed q|k|v
    buffer, as a Llama layer's fused projection writes it; the simple kernel agrees."""
    batch, seq, heads, kv_heads, dim = 2, 19, 4, 2, 8
    width, kv_width = heads * dim, kv_heads * dim
    rng = np.random.default_rng(11)
    qkv = rng.standard_normal((batch, seq, width + 2 * kv_width), dtype=np.float32)
    mask = _mask(batch, seq, rng)
    stride = width + 2 * kv_width
    layouts = {"q_layout": HeadsLayout(row_stride=stride, column_offset=0),
               "k_layout": HeadsLayout(row_stride=stride, column_offset=width),
               "v_layout": HeadsLayout(row_stride=stride, column_offset=width + kv_width)}
    common = (batch, seq, seq, heads, dim, 0.3)
    flags = {"causal": causal, "has_mask": True, "kv_heads": kv_heads, **layouts}
    inputs = {"q": qkv, "k": qkv, "v": qkv, "mask": mask}
    outputs = {"out": (batch, seq, width)}
    result = launch(attention_tiled("attention_tiled_gqa", *common, **flags, query_threads=8,
                                    key_threads=8), inputs, outputs)["out"]
    q, k, v = qkv[..., :width], qkv[..., width:width + kv_width], qkv[..., width + kv_width:]
    expected = _reference(q, repeat_heads(k, 2, dim), repeat_heads(v, 2, dim), heads, dim, 0.3,
                          mask, causal)
    np.testing.assert_allclose(result, expected, **TOLERANCE)
    simple = launch(attention("attention_simple_gqa", *common, **flags), inputs, outputs)["out"]
    np.testing.assert_allclose(simple, expected, **TOLERANCE)
