"""The tensor-core attention kernel (`attention_mma`) against numpy (float64) and the
attention kernel that runs without tensor cores (one query per work-item on the
CPU, `attention_tiled` on the GPU), in f16 and bf16.

On the CPU (CI) the kernel runs with ``mma="emulated"`` (``mma.sync``, the row shuffles and the
16-bit packing in plain OpenCL C, by the PTX layouts); with ``FUSEC_TEST_MMA=ptx`` and
``FUSEC_TEST_DEVICE=gpu`` on the GPU machine the same tests run the real instructions.

Cases: causal and masked (batch 1 fully masked: zeros), S_q != S_k both ways, lengths that are
not multiples of the 64-query block or the 64-key tile (1, 17, 100, 128, 129), head_dim 16, 32,
64 and 128, q/k/v packed in one [B, S, 3*H*D] buffer as the Llama block and BERT layer read
it, and large scores whose running max grows tile after tile. The reference runs on the
16-bit inputs (exactly as the kernel reads them) in float64; the tolerance is a few roundings
of the 16-bit type relative to max |v| (P is rounded to 16 bits before P V, and the output
once).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from fusec.codegen.kernels.attention import HeadsLayout, attention
from fusec.codegen.kernels.attention_mma import attention_mma, local_bytes, why_not
from fusec.codegen.kernels.attention_tiled import attention_tiled
from fusec.codegen.kernels.common import DeviceInfo
from fusec.dtypes import bf16_bits, bf16_to_f32
from tests.codegen.test_kernel_attention import _mask, _reference

MMA = os.environ.get("FUSEC_TEST_MMA", "emulated")
TOLERANCE = {"f16": 3e-3, "bf16": 2.5e-2}
"""Max |out - reference| / max |v|."""

CASES = {  # batch, seq_q, seq_k, heads, dim, causal, masked, dtype
    "causal-17": (1, 17, 17, 2, 16, True, False, "f16"),
    "masked-100": (2, 100, 100, 1, 32, False, True, "bf16"),
    "one-query": (2, 1, 129, 1, 64, False, True, "f16"),
    "queries-past-keys": (1, 129, 17, 1, 64, True, False, "bf16"),
    "one-key": (1, 17, 1, 1, 16, False, False, "bf16"),
    "head-128": (1, 128, 128, 1, 128, True, True, "f16"),
}
"""Each case in one 16-bit type (each emulated kernel takes a second or more to build on the
CPU); both types on the GPU."""


def to_half(x: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's array of `x` in `dtype` and the float64 values it holds."""
    if dtype == "f16":
        h = x.astype(np.float16)
        return h, h.astype(np.float64)
    bits = bf16_bits(x)
    return bits, bf16_to_f32(bits).astype(np.float64)


def as_float(out: np.ndarray) -> np.ndarray:
    return (bf16_to_f32(out) if out.dtype == np.uint16 else out).astype(np.float64)


def _error(out: np.ndarray, expected: np.ndarray, v: np.ndarray) -> float:
    return float(np.abs(as_float(out) - expected).max()) / float(np.abs(v).max())


def _run(launch, dtype, batch, seq_q, seq_k, heads, dim, causal, masked, *, packed=False,
         adversarial=False, seed=0, scale=None, **options):
    """The mma kernel's output, the existing kernel's (same dtype), the reference's, and v."""
    rng = np.random.default_rng(seed)
    width = heads * dim
    scale = 1.0 / math.sqrt(dim) if scale is None else scale
    if packed:
        assert seq_q == seq_k
        qkv = rng.standard_normal((batch, seq_q, 3 * width), dtype=np.float32)
        if adversarial:
            qkv[..., :2 * width] *= 6.0
        qkv_h, qkv64 = to_half(qkv, dtype)
        q, k, v = (qkv64[..., i * width:(i + 1) * width] for i in range(3))
        inputs = {"q": qkv_h, "k": qkv_h, "v": qkv_h}
        layouts = {f"{w}_layout": HeadsLayout(row_stride=3 * width, column_offset=i * width)
                   for i, w in enumerate("qkv")}
    else:
        q32 = rng.standard_normal((batch, seq_q, width), dtype=np.float32)
        k32 = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
        v32 = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
        if adversarial:  # the running max grows key tile after key tile; exp would overflow
            q32 *= 8.0
            k32 *= np.linspace(0.5, 4.0, seq_k, dtype=np.float32)[None, :, None]
        (qh, q), (kh, k), (vh, v) = (to_half(x, dtype) for x in (q32, k32, v32))
        inputs = {"q": qh, "k": kh, "v": vh}
        layouts = {}
    mask = _mask(batch, seq_k, rng) if masked else None
    if masked:
        inputs["mask"] = mask
    common = (batch, seq_q, seq_k, heads, dim, scale)
    flags = {"causal": causal, "has_mask": masked, **layouts}
    outputs = {"out": (batch, seq_q, width)}
    kernel = attention_mma("attention_mma_test", *common, **flags, dtype=dtype, mma=MMA,
                           **options)
    got = launch(kernel, inputs, outputs)["out"]
    if MMA == "ptx":  # the GPU's kernel for 16-bit attention without tensor cores
        existing = attention_tiled("attention_tiled_half", *common, **flags, dtype=dtype)
    else:  # the CPU's (the tiled kernel takes 12 s to build on the CPU)
        existing = attention("attention_half", *common, **flags, dtype=dtype)
    other = launch(existing, inputs, outputs)["out"]
    expected = _reference(q, k, v, heads, dim, scale, mask, causal)
    return got, other, expected, v


CASE_TYPES = [(case, dtype) for case, sizes in CASES.items() for dtype in ("f16", "bf16")
              if dtype == sizes[-1] or MMA == "ptx"]


@pytest.mark.parametrize(("case", "dtype"), CASE_TYPES)
def test_mma_attention_matches_numpy_and_the_existing_kernel(launch, case, dtype):
    batch, seq_q, seq_k, heads, dim, causal, masked, _ = CASES[case]
    got, other, expected, v = _run(launch, dtype, *CASES[case][:-1], seed=seq_q + dim)
    assert np.all(np.isfinite(as_float(got)))
    error = _error(got, expected, v)
    assert error <= TOLERANCE[dtype], f"max error {error:.3g} of max |v|"
    assert _error(got, as_float(other), v) <= TOLERANCE[dtype]
    if masked and batch > 1:
        assert np.all(as_float(got)[1] == 0.0)  # every key of batch 1 masked


@pytest.mark.parametrize(("dtype", "causal", "masked"),
                         [("f16", True, False), ("bf16", False, True)],
                         ids=["llama-f16", "bert-bf16"])
def test_mma_attention_reads_q_k_v_from_one_packed_buffer(launch, dtype, causal, masked):
    """The Llama block's (causal) and the BERT layer's (key mask) reads of a packed qkv."""
    got, tiled, expected, v = _run(launch, dtype, 2, 128, 128, 2, 64, causal, masked,
                                   packed=True, seed=5)
    assert _error(got, expected, v) <= TOLERANCE[dtype]
    assert _error(got, as_float(tiled), v) <= TOLERANCE[dtype]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_mma_attention_survives_growing_large_scores(launch, causal):
    got, tiled, expected, v = _run(launch, "f16", 1, 129, 129, 1, 16, causal, False,
                                   adversarial=True, scale=1.0, seed=7)
    assert np.all(np.isfinite(as_float(got)))
    assert _error(got, expected, v) <= TOLERANCE["f16"]


def test_mma_attention_with_unaligned_rows_and_small_tiles(launch):
    """Row strides that are not whole 16-byte chunks (element reads), 32-key tiles, 2 warps."""
    dtype, batch, seq, heads, dim = "bf16", 2, 40, 1, 16
    rng = np.random.default_rng(3)
    qkv = rng.standard_normal((batch, seq, 3 * dim + 2), dtype=np.float32)
    qkv_h, qkv64 = to_half(qkv, dtype)
    layouts = {f"{w}_layout": HeadsLayout(row_stride=3 * dim + 2, column_offset=1 + i * dim)
               for i, w in enumerate("qkv")}
    mask = _mask(batch, seq, rng, dtype=np.uint8)
    kernel = attention_mma("attention_mma_odd", batch, seq, seq, heads, dim, 0.25, causal=True,
                           has_mask=True, mask_dtype="uchar", dtype=dtype, warps=2, block_k=32,
                           mma=MMA, **layouts)
    assert "vload8(0, k_head" not in kernel.source
    assert "cp.async x2" not in kernel.source.splitlines()[0]  # copies through registers
    got = launch(kernel, {"q": qkv_h, "k": qkv_h, "v": qkv_h, "mask": mask},
                 {"out": (batch, seq, dim)})["out"]
    q, k, v = (qkv64[..., 1 + i * dim:1 + (i + 1) * dim] for i in range(3))
    expected = _reference(q, k, v, heads, dim, 0.25, mask, True)
    assert _error(got, expected, v) <= TOLERANCE[dtype]


VARIANTS = [(False, False), (True, False), (False, True), (True, True)]
"""(ldmatrix, async_copy): K and V fragments by 32- and 16-bit reads of local memory and K and
V copied through registers; fragments by ldmatrix; copies by cp.async two tiles deep; both (the
default, which the other tests run)."""


@pytest.mark.parametrize(("ldmatrix", "async_copy"), VARIANTS,
                         ids=["plain", "ldmatrix", "cp.async", "ldmatrix-cp.async"])
def test_mma_attention_variants_match_numpy(launch, ldmatrix, async_copy):
    """Packed q/k/v, causal and masked, 129 keys: three key tiles, so both stages of the
    cp.async pipeline are filled and read, the last one ragged."""
    options = {"ldmatrix": ldmatrix, "async_copy": async_copy}
    got, _, expected, v = _run(launch, "f16", 2, 129, 129, 2, 32, True, True, packed=True,
                               seed=11, **options)
    assert _error(got, expected, v) <= TOLERANCE["f16"]
    source = attention_mma("a", 2, 129, 129, 2, 32, 0.5, causal=True, mma=MMA,
                           q_layout=HeadsLayout(192), k_layout=HeadsLayout(192, 64),
                           v_layout=HeadsLayout(192, 128), **options).source
    header = source.splitlines()[0]
    assert ("ldmatrix" in header) == ldmatrix and ("cp.async x2" in header) == async_copy
    assert ("v_at + 16 * n, &b0" in source) == ldmatrix


def test_mma_attention_ldmatrix_at_head_128_in_bf16(launch):
    """Every pair of 8-column V tiles of a 128-wide head; two stages do not fit 48 KiB there,
    so the copies stay one tile at a time."""
    got, _, expected, v = _run(launch, "bf16", 1, 70, 70, 1, 128, False, True, seed=12,
                               ldmatrix=True, async_copy=True)
    assert _error(got, expected, v) <= TOLERANCE["bf16"]


NVIDIA = DeviceInfo("H200", is_cpu=False, local_mem_size=49152, max_work_group_size=1024,
                    tensor_cores=("f16", "bf16", "tf32"))


def test_mma_attention_is_chosen_only_where_it_can_run(set_knobs):
    set_knobs(attention_mma=True)
    assert why_not(NVIDIA, "f16", 64, True) is None
    assert why_not(NVIDIA, "bf16", 128, False) is None
    assert "multiple of 16" in why_not(NVIDIA, "f16", 72, False)
    assert "f32" in why_not(NVIDIA, "f32", 64, False)
    assert "no bf16" in why_not(NVIDIA.__class__("old", False, 49152, 1024,
                                                 tensor_cores=("f16",)), "bf16", 64, False)
    assert "GPU" in why_not(DeviceInfo("cpu", is_cpu=True, tensor_cores=()), "f16", 64, False)
    assert "fit" in why_not(DeviceInfo("small", False, 16384, 1024,
                                       tensor_cores=("f16",)), "f16", 128, False)
    assert local_bytes(64, True) <= 49152
    set_knobs(attention_mma=False)
    assert "the knob attention_mma is off" in why_not(NVIDIA, "f16", 64, True)


def test_mma_attention_rejects_what_it_cannot_compute():
    with pytest.raises(ValueError, match="f16 or bf16"):
        attention_mma("a", 1, 4, 4, 1, 16, 1.0, dtype="f32")
    with pytest.raises(ValueError, match="multiples of 16"):
        attention_mma("a", 1, 4, 4, 1, 24, 1.0)


def test_mma_attention_groups_query_heads_over_fewer_kv_heads(launch):
    """Grouped-query attention: 4 query heads over 2 kv heads of 16 (f16, causal, a mask)."""
    batch, seq, heads, kv_heads, dim = 1, 40, 4, 2, 16
    rng = np.random.default_rng(3)
    (qh, q), (kh, k), (vh, v) = (
        to_half(rng.standard_normal((batch, seq, n * dim), dtype=np.float32), "f16")
        for n in (heads, kv_heads, kv_heads))
    mask = _mask(batch, seq, rng)
    kernel = attention_mma("attention_mma_gqa", batch, seq, seq, heads, dim, 0.25, causal=True,
                           has_mask=True, dtype="f16", mma=MMA, kv_heads=kv_heads)
    got = launch(kernel, {"q": qh, "k": kh, "v": vh, "mask": mask},
                 {"out": (batch, seq, heads * dim)})["out"]

    def repeated(t: np.ndarray) -> np.ndarray:
        return np.repeat(t.reshape(batch, seq, kv_heads, dim), 2, axis=2).reshape(batch, seq, -1)

    expected = _reference(q, repeated(k), repeated(v), heads, dim, 0.25, mask, True)
    assert _error(got, expected, v) <= TOLERANCE["f16"]
