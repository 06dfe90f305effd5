"""The split-K ("flash-decoding") cache attention kernels against the one-query-per-work-item
kernel and the numpy reference: chunks of keys in work-groups, then the combine.

Positions 0 (one valid key), inside a chunk, on a chunk boundary and the last slot; GQA
ratios 1, 4 and 8; one and three new queries; a q read from a packed q/k/v row; f16. The cache
rows past the valid ones hold NaN: a chunk that reads them gives NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.cache_attention_split import (
    cache_attention_combine,
    cache_attention_split,
)
from fusec.reference.ops import cache_attention

D = 8


def run_split(launch, q, k, v, pos, heads, kv_heads, splits, q_stride=None, dtype="f32",  # noqa: ANN001, ANN201
              dim=D, group=64):
    batch, seq_q = q.shape[0], q.shape[1]
    seq_k = k.shape[1]
    first = cache_attention_split("split", batch, seq_q, seq_k, heads, kv_heads, dim,
                                  dim ** -0.5, splits, q_stride, 0, dtype, group)
    rows = batch * seq_q * heads
    parts = launch(first, {"q": q, "k": k, "v": v, "pos": np.array([pos], np.int32)},
                   {"partial": (rows, splits, dim), "stats": (rows, splits, 2)})
    second = cache_attention_combine("combine", rows, dim, splits, dtype)
    return launch(second, parts, {"out": (batch, seq_q, heads * dim)})["out"]


def poisoned(rng: np.random.Generator, shape: tuple[int, ...], valid: int) -> np.ndarray:
    x = rng.standard_normal(shape).astype(np.float32)
    x[:, valid:] = np.nan
    return x


@pytest.mark.parametrize(("heads", "kv_heads", "seq_q"), [(2, 2, 1), (4, 1, 3), (8, 1, 1)])
@pytest.mark.parametrize("pos", [0, 5, 15, 37])
def test_split_matches_reference(launch, heads: int, kv_heads: int, seq_q: int,  # noqa: ANN001
                                 pos: int) -> None:
    length, splits = 40, 4  # chunks of 10 keys: 15 - 1 + 1 keys end on a chunk boundary
    pos = min(pos, length - seq_q)
    rng = np.random.default_rng(pos + heads)
    q = rng.standard_normal((2, seq_q, heads * D)).astype(np.float32)
    k = poisoned(rng, (2, length, kv_heads * D), pos + seq_q)
    v = poisoned(rng, (2, length, kv_heads * D), pos + seq_q)
    got = run_split(launch, q, k, v, pos, heads, kv_heads, splits)
    expected = cache_attention(q, k, v, pos, heads, kv_heads, D, D ** -0.5)
    np.testing.assert_allclose(got, expected, atol=2e-6, rtol=1e-5)


def test_split_reads_q_from_a_packed_row(launch) -> None:  # noqa: ANN001
    rng = np.random.default_rng(3)
    heads, kv_heads, length, pos = 4, 2, 24, 9
    packed = rng.standard_normal((1, 2, (heads + 2 * kv_heads) * D)).astype(np.float32)
    k = poisoned(rng, (1, length, kv_heads * D), pos + 2)
    v = poisoned(rng, (1, length, kv_heads * D), pos + 2)
    got = run_split(launch, packed, k, v, pos, heads, kv_heads, 3, q_stride=packed.shape[-1])
    expected = cache_attention(packed[..., :heads * D], k, v, pos, heads, kv_heads, D,
                               D ** -0.5)
    np.testing.assert_allclose(got, expected, atol=2e-6, rtol=1e-5)


def test_split_f16(launch) -> None:  # noqa: ANN001
    rng = np.random.default_rng(4)
    heads, kv_heads, length, pos = 4, 1, 32, 20
    q = rng.standard_normal((1, 1, heads * D)).astype(np.float16)
    k = rng.standard_normal((1, length, kv_heads * D)).astype(np.float16)
    v = rng.standard_normal((1, length, kv_heads * D)).astype(np.float16)
    got = run_split(launch, q, k, v, pos, heads, kv_heads, 4, dtype="f16")
    expected = cache_attention(q.astype(np.float32), k.astype(np.float32),
                               v.astype(np.float32), pos, heads, kv_heads, D, D ** -0.5)
    np.testing.assert_allclose(got.astype(np.float32), expected, atol=2e-3, rtol=2e-3)


def test_split_head_wider_than_the_group(launch) -> None:  # noqa: ANN001
    """A head of 24 columns shared by a work-group of 16 (a head of 128 in groups of 64)."""
    rng = np.random.default_rng(5)
    heads, kv_heads, length, pos, dim = 2, 1, 30, 17, 24
    q = rng.standard_normal((1, 2, heads * dim)).astype(np.float32)
    k = poisoned(rng, (1, length, kv_heads * dim), pos + 2)
    v = poisoned(rng, (1, length, kv_heads * dim), pos + 2)
    got = run_split(launch, q, k, v, pos, heads, kv_heads, 3, dim=dim, group=16)
    expected = cache_attention(q, k, v, pos, heads, kv_heads, dim, dim ** -0.5)
    np.testing.assert_allclose(got, expected, atol=2e-6, rtol=1e-5)


def test_chunks_longer_than_the_work_group(launch) -> None:  # noqa: ANN001
    """A prefill's few long chunks (`cache_splits` with many query rows): 2 chunks of 150 keys
    for work-groups of 64, so each work-item scores several keys of its chunk."""
    rng = np.random.default_rng(6)
    heads, kv_heads, seq_q, length, pos = 4, 2, 5, 300, 250
    q = rng.standard_normal((2, seq_q, heads * D)).astype(np.float32)
    k = poisoned(rng, (2, length, kv_heads * D), pos + seq_q)
    v = poisoned(rng, (2, length, kv_heads * D), pos + seq_q)
    got = run_split(launch, q, k, v, pos, heads, kv_heads, 2, group=64)
    expected = cache_attention(q, k, v, pos, heads, kv_heads, D, D ** -0.5)
    np.testing.assert_allclose(got, expected, atol=2e-6, rtol=1e-5)


def test_the_split_cuts_fewer_chunks_when_query_rows_fill_the_gpu() -> None:
    """`cache_splits`: a decode step's few rows get a chunk per 64 keys; a prefill's thousands
    of rows as many chunks as give 8192 work-groups (bounding the partial sums), never a
    chunk over 4096 keys; a CPU none."""
    from fusec.lowering.template_ops import cache_splits

    class Options:
        device = "gpu"

    assert cache_splits(Options(), 640, 12) == 10          # GPT-2 step, batch 1
    assert cache_splits(Options(), 640, 96) == 10          # batch 8
    assert cache_splits(Options(), 640, 4096) == 2         # Llama-style prefill of 128
    assert cache_splits(Options(), 640, 32768) == 1
    assert cache_splits(Options(), 100_000, 32768) == 25   # chunks of at most 4096 keys
    Options.device = "cpu"
    assert cache_splits(Options(), 640, 12) == 0


@pytest.mark.parametrize("dim", [12, 16])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_key_rows_read_8_at_a_time_or_one_at_a_time(launch, dim: int,  # noqa: ANN001
                                                     dtype: str) -> None:
    """A head of 16 reads each key's row as 2 vectors of 8, a head of 12 element by element;
    both in each storage type, against float32 numpy on the stored values."""
    from fusec.dtypes import bf16_bits, bf16_to_f32

    rng = np.random.default_rng(dim)
    heads, kv_heads, length, pos = 4, 2, 40, 30
    values = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((1, 1, heads * dim), (1, length, kv_heads * dim),
                            (1, length, kv_heads * dim))]
    if dtype == "f16":
        stored = [a.astype(np.float16) for a in values]
        values = [a.astype(np.float32) for a in stored]
    elif dtype == "bf16":
        stored = [bf16_bits(a) for a in values]
        values = [bf16_to_f32(a) for a in stored]
    else:
        stored = values
    got = run_split(launch, *stored, pos, heads, kv_heads, 3, dtype=dtype, dim=dim)
    got = bf16_to_f32(got) if dtype == "bf16" else got.astype(np.float32)
    expected = cache_attention(*values, pos, heads, kv_heads, dim, dim ** -0.5)
    np.testing.assert_allclose(got, expected, atol={"f32": 2e-6, "f16": 2e-3, "bf16": 1e-2}[dtype],
                               rtol=1e-5 if dtype == "f32" else 1e-2)
