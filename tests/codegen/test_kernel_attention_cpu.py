"""The CPU attention kernel on explicit float8 vectors (`attention_cpu`) against numpy (float64)
and against the one-query-per-work-item kernel, on the CPU OpenCL device.

Shapes exercise its edges: queries not a multiple of its rows per work-item (4) nor of its
block (64: two work-groups at 130), keys not a multiple of its key chunk (16), S_q != S_k both
ways under the causal limit, D a multiple of 8 but not 16 (8-column output chunks), grouped
kv heads, q/k/v read from one packed buffer, every mask dtype the lowering passes, a batch whose
keys are all masked (zeros), and adversarial magnitudes (scores of +-1e4: the softmax saturates
to one key per row).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusec.codegen.kernels.attention import HeadsLayout, attention
from fusec.codegen.kernels.attention_cpu import attention_cpu, why_not
from fusec.codegen.kernels.common import DeviceInfo
from tests.codegen.test_kernel_attention import _mask, _reference

TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}

CASES = {  # batch, seq_q, seq_k, heads, dim, causal, masked
    "plain": (2, 7, 7, 3, 8, False, False),
    "masked": (2, 13, 13, 2, 16, False, True),
    "causal": (2, 13, 13, 3, 8, True, False),
    "causal-masked": (2, 37, 37, 2, 24, True, True),
    "two-groups": (1, 130, 130, 2, 16, False, True),
    "two-groups-causal": (1, 130, 130, 1, 8, True, True),
    "cross-longer-keys": (2, 5, 37, 3, 8, False, True),
    "cross-causal-longer-keys": (1, 9, 40, 2, 8, True, False),
    "cross-causal-fewer-keys": (1, 40, 9, 2, 8, True, True),
    "one-key": (1, 3, 1, 1, 8, False, False),
}


def _inputs(batch, seq_q, seq_k, width, seed, magnitude=1.0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, seq_q, width), dtype=np.float32) * magnitude
    k = rng.standard_normal((batch, seq_k, width), dtype=np.float32) * magnitude
    v = rng.standard_normal((batch, seq_k, width), dtype=np.float32)
    return q, k, v, rng


@pytest.mark.parametrize("case", CASES)
def test_cpu_attention_matches_numpy_and_the_other_kernel(launch, case):
    batch, seq_q, seq_k, heads, dim, causal, masked = CASES[case]
    width = heads * dim
    q, k, v, rng = _inputs(batch, seq_q, seq_k, width, seq_q * 31 + seq_k)
    mask = _mask(batch, seq_k, rng) if masked else None
    scale = 1.0 / math.sqrt(dim)
    inputs = {"q": q, "k": k, "v": v, **({"mask": mask} if masked else {})}
    sizes = (batch, seq_q, seq_k, heads, dim, scale)
    ours = launch(attention_cpu("attention_cpu_test", *sizes, causal=causal, has_mask=masked),
                  inputs, {"out": (batch, seq_q, width)})["out"]
    theirs = launch(attention("attention_test", *sizes, causal=causal, has_mask=masked),
                    inputs, {"out": (batch, seq_q, width)})["out"]
    expected = _reference(q, k, v, heads, dim, scale, mask, causal)
    np.testing.assert_allclose(ours, expected, **TOLERANCE)
    np.testing.assert_allclose(ours, theirs, **TOLERANCE)
    if masked and batch > 1:
        assert np.all(ours[1] == 0.0)


@pytest.mark.parametrize("mask_dtype", [("uchar", np.uint8), ("int", np.int32),
                                        ("float", np.float32)], ids=lambda t: t[0])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_cpu_attention_reads_a_packed_buffer_with_grouped_kv_heads(launch, causal, mask_dtype):
    """q, k and v at offsets of one packed buffer, 4 query heads over 2 kv heads."""
    batch, seq, heads, kv_heads, dim = 2, 21, 4, 2, 8
    width, kv_width = heads * dim, kv_heads * dim
    row = width + 2 * kv_width
    rng = np.random.default_rng(9)
    packed = rng.standard_normal((batch, seq, row), dtype=np.float32)
    mask = _mask(batch, seq, rng, dtype=mask_dtype[1])
    kernel = attention_cpu(
        "attention_cpu_packed", batch, seq, seq, heads, dim, 0.3, causal=causal, has_mask=True,
        q_layout=HeadsLayout(row_stride=row, column_offset=0),
        k_layout=HeadsLayout(row_stride=row, column_offset=width),
        v_layout=HeadsLayout(row_stride=row, column_offset=width + kv_width),
        mask_dtype=mask_dtype[0], kv_heads=kv_heads)
    got = launch(kernel, {"q": packed, "k": packed, "v": packed, "mask": mask},
                 {"out": (batch, seq, width)})["out"]
    q = packed[..., :width]
    k, v = (np.repeat(packed[..., start:start + kv_width].reshape(batch, seq, kv_heads, dim),
                      heads // kv_heads, axis=2).reshape(batch, seq, width)
            for start in (width, width + kv_width))
    np.testing.assert_allclose(got, _reference(q, k, v, heads, dim, 0.3, mask, causal),
                               **TOLERANCE)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_cpu_attention_with_saturated_scores(launch, causal):
    """Scores of magnitude 1e4: exp of every score but a row's largest underflows to 0; no
    inf or NaN, and the result equals numpy's (the value row of each query's best key)."""
    batch, seq, heads, dim = 1, 19, 2, 8
    q, k, v, rng = _inputs(batch, seq, seq, heads * dim, 3, magnitude=30.0)
    mask = _mask(batch, seq, rng)
    kernel = attention_cpu("attention_cpu_big", batch, seq, seq, heads, dim, 1.0, causal=causal,
                           has_mask=True)
    got = launch(kernel, {"q": q, "k": k, "v": v, "mask": mask},
                 {"out": (batch, seq, heads * dim)})["out"]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, _reference(q, k, v, heads, dim, 1.0, mask, causal),
                               **TOLERANCE)


CPU = DeviceInfo(name="cpu", is_cpu=True, local_mem_size=262144, max_work_group_size=8192,
                 float_vector_width=8)


def test_which_attentions_take_the_cpu_kernel(set_knobs):
    assert why_not(CPU, "f32", 64, 128, 128) is None
    assert why_not(None, "f32", 64, 128, 128) == "not a CPU device"
    assert why_not(CPU, "f16", 64, 128, 128) == "f16 q/k/v (the kernel is f32)"
    assert why_not(CPU, "f32", 60, 128, 128) == "head_dim 60 is not a multiple of 8"
    assert why_not(CPU, "f32", 64, 128, 128, window=4) == "a sliding window or a KV cache"
    assert why_not(CPU, "f32", 64, 128, 4096) == "2113536 bytes of local memory needed"
    set_knobs(attention_cpu_vectors=False)
    assert why_not(CPU, "f32", 64, 128, 128) == "the knob attention_cpu_vectors is off"


def test_cpu_attention_geometry_and_rejections():
    kernel = attention_cpu("attention_cpu_geometry", 2, 130, 130, 12, 64, 0.125, has_mask=True,
                           mask_dtype="int")
    assert [(arg.name, arg.kind, arg.dtype) for arg in kernel.args] == [
        ("q", "in", "float"), ("k", "in", "float"), ("v", "in", "float"),
        ("mask", "in", "int"), ("out", "out", "float")]
    assert kernel.local_size == (16, 1)  # 64 queries per group, 4 per work-item
    assert kernel.global_size == (48, 24)  # 3 groups of queries, batch * heads
    with pytest.raises(ValueError, match="head_dim 12 is not a multiple of 8"):
        attention_cpu("attention_cpu_bad", 1, 4, 4, 2, 12, 1.0)
    with pytest.raises(ValueError, match="is f32, not f16"):
        attention_cpu("attention_cpu_half", 1, 4, 4, 2, 8, 1.0, dtype="f16")


@pytest.mark.parametrize("on", [True, False], ids=["knob-on", "knob-off"])
@pytest.mark.parametrize("pipeline", ["default", "none"])
def test_bert_layer_on_the_cpu_takes_the_kernel_where_the_knob_is_on(set_knobs, on, pipeline):
    """The small BERT layer, fused and unfused, through `fusec.compile` on the CPU: its
    attention launch is this kernel with the knob on and the one-query-per-item kernel with it
    off, and the outputs match the numpy reference either way."""
    from pathlib import Path

    import fusec
    from fusec.compiler.check import compare, run_with_reference

    set_knobs(attention_cpu_vectors=on)
    source = (Path(__file__).parents[2] / "examples" / "bert_layer_small.mlir").read_text()
    plan_source = fusec.compile(source, device="cpu", pipeline=pipeline).plan.source
    assert ("CPU vectors" in plan_source) == on
    assert "attention B=1 S_q=8 S_k=8 H=4 D=16" in plan_source
    outputs, expected = run_with_reference(source, seed=3, pipeline=pipeline, device="cpu")
    for result in compare(outputs, expected, 1e-5, 1e-4):
        assert result.ok, result.describe(1e-5, 1e-4)
