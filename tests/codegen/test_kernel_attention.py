"""The attention template against numpy (float64) on the CPU OpenCL device.

B=2, S=7, H=3, D=5 by default, with and without a key mask (batch 1 fully masked: zeros, no
NaN), causal, a packed qkv buffer read at offsets 0, H*D and 2*H*D, S_q != S_k, and small
query/key blocks so that several tiles and ragged last tiles are exercised. Tolerance:
rtol = atol = 1e-5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusec.codegen.kernels.attention import HeadsLayout, attention

TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def _reference(q, k, v, heads, dim, scale, mask, causal):
    batch, seq_q, _ = q.shape
    seq_k = k.shape[1]

    def split(t, seq):
        return t.astype(np.float64).reshape(batch, seq, heads, dim).transpose(0, 2, 1, 3)

    scores = split(q, seq_q) @ split(k, seq_k).transpose(0, 1, 3, 2) * scale
    visible = np.ones((batch, 1, seq_q, seq_k), dtype=bool)
    if mask is not None:
        visible &= (mask != 0)[:, None, None, :]
    if causal:
        visible &= np.tril(np.ones((seq_q, seq_k), dtype=bool))
    scores = np.where(visible, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0.0)) * visible
    total = weights.sum(axis=-1, keepdims=True)
    weights /= np.where(total > 0, total, 1.0)
    out = weights @ split(v, seq_k)
    return out.transpose(0, 2, 1, 3).reshape(batch, seq_q, heads * dim)


def _mask(batch, seq_k, rng, dtype=np.float32):
    mask = (rng.random((batch, seq_k)) > 0.3).astype(dtype)
    mask[0, 0] = 1
    if batch > 1:
        mask[1] = 0  # every key of batch 1 masked: its output is zeros
    return mask


CASES = {  # batch, seq_q, seq_k, heads, dim, causal, masked, block_q, block_k
    "plain": (2, 7, 7, 3, 5, False, False, None, None),
    "masked": (2, 7, 7, 3, 5, False, True, None, None),
    "causal": (2, 7, 7, 3, 5, True, False, None, None),
    "causal-masked": (2, 7, 7, 3, 5, True, True, None, None),
    "small-tiles": (2, 7, 7, 3, 5, False, True, 3, 2),
    "causal-small-tiles": (2, 9, 9, 2, 4, True, False, 4, 3),
    "cross": (2, 5, 11, 3, 5, False, True, 2, 4),
    "one-key": (1, 3, 1, 1, 1, False, False, None, None),
}


@pytest.mark.parametrize("case", CASES)
def test_attention_matches_numpy(launch, case):
    batch, seq_q, seq_k, heads, dim, causal, masked, block_q, block_k = CASES[case]
    rng = np.random.default_rng(seq_q * 31 + seq_k)
    width = heads * dim
    q = rng.standard_normal((batch, seq_q, width), dtype=np.float32)
    k = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
    v = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
    mask = _mask(batch, seq_k, rng) if masked else None
    scale = 1.0 / math.sqrt(dim)
    kernel = attention("attention_test", batch, seq_q, seq_k, heads, dim, scale, causal=causal,
                       has_mask=masked, block_q=block_q, block_k=block_k)
    inputs = {"q": q, "k": k, "v": v}
    if masked:
        inputs["mask"] = mask
    result = launch(kernel, inputs, {"out": (batch, seq_q, width)})["out"]
    expected = _reference(q, k, v, heads, dim, scale, mask, causal)
    np.testing.assert_allclose(result, expected, **TOLERANCE)
    if masked and batch > 1:
        assert np.all(result[1] == 0.0)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_reads_q_k_v_from_one_packed_buffer(launch, causal):
    batch, seq, heads, dim = 2, 7, 3, 5
    width = heads * dim
    rng = np.random.default_rng(5)
    qkv = rng.standard_normal((batch, seq, 3 * width), dtype=np.float32)
    mask = _mask(batch, seq, rng, dtype=np.uint8)
    kernel = attention(
        "attention_packed", batch, seq, seq, heads, dim, 0.3, causal=causal, has_mask=True,
        q_layout=HeadsLayout(row_stride=3 * width, column_offset=0),
        k_layout=HeadsLayout(row_stride=3 * width, column_offset=width),
        v_layout=HeadsLayout(row_stride=3 * width, column_offset=2 * width),
        mask_dtype="uchar", block_q=4, block_k=3,
    )
    result = launch(kernel, {"q": qkv, "k": qkv, "v": qkv, "mask": mask},
                    {"out": (batch, seq, width)})["out"]
    q, k, v = (qkv[..., i * width:(i + 1) * width] for i in range(3))
    expected = _reference(q, k, v, heads, dim, 0.3, mask, causal)
    np.testing.assert_allclose(result, expected, **TOLERANCE)


def test_attention_parameters_and_geometry():
    kernel = attention("attention_geometry", 2, 130, 130, 12, 64, 0.125, has_mask=True,
                       mask_dtype="int")
    assert [(arg.name, arg.kind, arg.dtype) for arg in kernel.args] == [
        ("q", "in", "float"), ("k", "in", "float"), ("v", "in", "float"),
        ("mask", "in", "int"), ("out", "out", "float")]
    assert kernel.local_size == (64, 1)
    assert kernel.global_size == (192, 24)  # ceil(130 / 64) * 64 queries, batch * heads


def test_attention_rejects_a_layout_narrower_than_a_row():
    with pytest.raises(ValueError, match="cannot hold"):
        attention("attention_bad", 1, 4, 4, 2, 3, 1.0, q_layout=HeadsLayout(row_stride=5))


@pytest.mark.parametrize(("seq", "window", "block_k"), [(19, 4, 8), (37, 1, 4), (12, 12, 4)],
                         ids=["window-4", "window-1", "window-all"])
def test_attention_with_a_sliding_window(launch, seq, window, block_k):
    """Mistral's sliding window: query ``i`` sees keys ``(i - window, i]`` (and the key mask);
    against a numpy band, with a mask that hides some rows' whole window (zeros there)."""
    batch, heads, dim = 2, 2, 8
    rng = np.random.default_rng(seq + window)
    q, k, v = (rng.standard_normal((batch, seq, heads * dim), dtype=np.float32)
               for _ in range(3))
    mask = _mask(batch, seq, rng)
    kernel = attention("attention_window", batch, seq, seq, heads, dim, 0.3, causal=True,
                       has_mask=True, window=window, block_k=block_k)
    got = launch(kernel, {"q": q, "k": k, "v": v, "mask": mask},
                 {"out": (batch, seq, heads * dim)})["out"]
    band = np.tril(np.ones((seq, seq), bool)) & ~np.tril(np.ones((seq, seq), bool), -window)
    masked = np.where(band[None, :, :, None], 1.0, 0.0)  # [1, S, S, 1]: per query, per key
    expected = np.stack([
        _reference(q[:, i:i + 1], k, v, heads, dim, 0.3, mask * masked[0, i, :, 0], False)[:, 0]
        for i in range(seq)], axis=1)
    np.testing.assert_allclose(got, expected, **TOLERANCE)
    with pytest.raises(ValueError, match="needs causal"):
        attention("attention_window_full", batch, seq, seq, heads, dim, 0.3, window=window)
