"""``nn.cache_update``, ``nn.cache_attention`` and ``nn.argmax`` on the OpenCL device against
the numpy reference and against a plain numpy attention over the first ``pos + i + 1`` keys.

One compiled step serves every position (``pos`` is a device scalar), so each program is run
at several positions: 0, a middle one and the last slot the new tokens fit in. GQA ratios 1, 4
and 8, one new token and several. The cache rows past the new tokens hold NaN and infinities:
a kernel that reads them (or weights them by 0) gives NaN. The cache is donated, so it is
updated in place and returned as the same array.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import fusec
from fusec.compiler.check import compare
from fusec.compiler.driver import load
from fusec.dtypes import BF16_HOST, bf16_bits, bf16_to_f32
from fusec.errors import InputError
from fusec.reference.executor import run_function

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
BATCH, LENGTH, DIM = 2, 24, 8
TOLERANCE = {"f32": (2e-5, 1e-4), "f16": (3e-3, 3e-3), "bf16": (2e-2, 2e-2)}


def step_program(heads: int, kv_heads: int, seq: int, dtype: str) -> str:
    """Writes ``seq`` new keys and values at ``pos`` into donated caches, attends over them,
    and picks each new position's largest output column."""
    cache = f"tensor<{BATCH}x{LENGTH}x{kv_heads * DIM}x{dtype}>"
    new = f"tensor<{BATCH}x{seq}x{kv_heads * DIM}x{dtype}>"
    q = f"tensor<{BATCH}x{seq}x{heads * DIM}x{dtype}>"
    attrs = f"{{num_heads = {heads} : i64, num_kv_heads = {kv_heads} : i64, head_dim = {DIM} : i64}}"
    return f"""
func.func @step(%k_cache: {cache} {{fusec.aliasing_output = 0 : i64}},
                %v_cache: {cache} {{fusec.aliasing_output = 1 : i64}},
                %q: {q}, %k: {new}, %v: {new}, %pos: tensor<i32>)
    -> ({cache}, {cache}, {q}, tensor<{BATCH}x{seq}xi32>) {{
  %kc = nn.cache_update %k_cache, %k, %pos : {cache}, {new}, tensor<i32> -> {cache}
  %vc = nn.cache_update %v_cache, %v, %pos : {cache}, {new}, tensor<i32> -> {cache}
  %out = nn.cache_attention %q, %kc, %vc, %pos {attrs} : {q}, {cache}, {cache}, tensor<i32> -> {q}
  %token = nn.argmax %out : {q} -> tensor<{BATCH}x{seq}xi32>
  func.return %kc, %vc, %out, %token : {cache}, {cache}, {q}, tensor<{BATCH}x{seq}xi32>
}}"""


def plain_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, pos: int, heads: int,
                    kv_heads: int) -> np.ndarray:
    """Query ``i`` of head ``h`` over keys ``[0, pos + i]`` of kv head ``h // (heads /
    kv_heads)``, one row at a time in float64."""
    batch, seq, _ = q.shape
    out = np.zeros(q.shape, np.float64)
    group = heads // kv_heads
    for b in range(batch):
        for h in range(heads):
            g = h // group
            for i in range(seq):
                n = pos + i + 1
                keys = k[b, :n, g * DIM:(g + 1) * DIM].astype(np.float64)
                values = v[b, :n, g * DIM:(g + 1) * DIM].astype(np.float64)
                scores = keys @ q[b, i, h * DIM:(h + 1) * DIM].astype(np.float64) / np.sqrt(DIM)
                weights = np.exp(scores - scores.max())
                out[b, i, h * DIM:(h + 1) * DIM] = weights / weights.sum() @ values
    return out


def host(x: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bf16":
        return bf16_bits(x)
    return x.astype(np.float16 if dtype == "f16" else np.float32)


def widened(x: np.ndarray) -> np.ndarray:
    return bf16_to_f32(x) if x.dtype == BF16_HOST else x.astype(np.float32)


def poisoned_cache(rng: np.random.Generator, width: int, valid: int, dtype: str) -> np.ndarray:
    """A cache whose first ``valid`` rows are random and the rest NaN and infinities."""
    cache = rng.standard_normal((BATCH, LENGTH, width)).astype(np.float32)
    cache[:, valid:] = np.nan
    cache[:, valid + 1::3] = np.inf
    return host(cache, dtype)


@pytest.mark.parametrize(("heads", "kv_heads", "seq", "dtype"), [
    (2, 2, 1, "f32"), (4, 1, 5, "f32"), (8, 1, 1, "f32"), (8, 2, 3, "f32"),
    (4, 1, 3, "f16"), (4, 2, 1, "bf16"),
])
def test_step_matches_reference_and_plain_attention(heads: int, kv_heads: int, seq: int,
                                                    dtype: str) -> None:
    text = step_program(heads, kv_heads, seq, dtype)
    exe = fusec.compile(text, device=DEVICE)
    module = load(text)
    rng = np.random.default_rng(heads * 100 + kv_heads * 10 + seq)
    width = kv_heads * DIM
    atol, rtol = TOLERANCE[dtype]
    for pos in (0, LENGTH // 2 - 1, LENGTH - seq):
        k_cache = poisoned_cache(rng, width, pos, dtype)
        v_cache = poisoned_cache(rng, width, pos, dtype)
        q = host(rng.standard_normal((BATCH, seq, heads * DIM)), dtype)
        k = host(rng.standard_normal((BATCH, seq, width)), dtype)
        v = host(rng.standard_normal((BATCH, seq, width)), dtype)
        position = np.array(pos, np.int32)
        expected = run_function(module, [k_cache, v_cache, q, k, v, position])
        outputs = exe(k_cache, v_cache, q, k, v, position)
        assert outputs[0] is k_cache and outputs[1] is v_cache  # updated in place
        for result in compare(outputs[:3], expected[:3], atol, rtol):
            assert result.ok, f"pos {pos}: {result.describe(atol, rtol)}"
        assert np.isfinite(widened(outputs[2])).all()
        plain = plain_attention(widened(q), widened(k_cache), widened(v_cache), pos, heads,
                                kv_heads)
        np.testing.assert_allclose(widened(outputs[2]), plain, atol=atol * 4, rtol=rtol * 4)
        if dtype == "f32":  # ties are unlikely in f32; rounding may flip one in 16 bits
            np.testing.assert_array_equal(outputs[3], expected[3])


def test_rows_outside_the_update_are_kept() -> None:
    """cache_update writes exactly rows [pos, pos + S): the rest keeps its bits (NaN too)."""
    text = step_program(2, 2, 3, "f32")
    exe = fusec.compile(text, device=DEVICE)
    rng = np.random.default_rng(1)
    k_cache = poisoned_cache(rng, 2 * DIM, 10, "f32")
    before = k_cache.copy()
    v_cache = poisoned_cache(rng, 2 * DIM, 10, "f32")
    k = rng.standard_normal((BATCH, 3, 2 * DIM)).astype(np.float32)
    q = rng.standard_normal((BATCH, 3, 2 * DIM)).astype(np.float32)
    exe(k_cache, v_cache, q, k, k, np.array(7, np.int32))
    np.testing.assert_array_equal(k_cache[:, 7:10], k)
    np.testing.assert_array_equal(k_cache[:, :7], before[:, :7])
    np.testing.assert_array_equal(k_cache[:, 10:], before[:, 10:])


def test_out_of_range_position_is_an_error_in_the_reference() -> None:
    module = load(step_program(2, 2, 3, "f32"), "step.mlir")
    zeros = np.zeros((BATCH, LENGTH, 2 * DIM), np.float32)
    new = np.zeros((BATCH, 3, 2 * DIM), np.float32)
    for pos in (-1, LENGTH - 2):
        with pytest.raises(InputError, match=r"step.mlir:\d+:\d+: 'nn.cache_update' position "
                                             rf"{pos} is outside the cache: 3 rows at it "
                                             rf"need 0 <= pos <= {LENGTH - 3}"):
            run_function(module, [zeros, zeros, new, new, new, np.array(pos, np.int32)])


def test_out_of_range_position_writes_nothing_outside_the_cache() -> None:
    """The kernel keeps to the cache: rows that would fall past its end are not written."""
    text = step_program(2, 2, 3, "f32")
    exe = fusec.compile(text, device=DEVICE)
    k_cache = np.zeros((BATCH, LENGTH, 2 * DIM), np.float32)
    new = np.ones((BATCH, 3, 2 * DIM), np.float32)
    exe(k_cache, k_cache.copy(), new, new, new, np.array(LENGTH - 1, np.int32))
    assert (k_cache[:, :-1] == 0).all() and (k_cache[:, -1] == 1).all()


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_argmax_first_of_ties_and_nan(dtype: str) -> None:
    text = f"""
func.func @f(%x: tensor<4x6x{dtype}>) -> tensor<4xi32> {{
  %0 = nn.argmax %x : tensor<4x6x{dtype}> -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}}"""
    x = np.array([[1, 3, 3, 0, -1, 2], [-5, -4, -4, -6, -4, -7], [0, np.nan, 9, np.nan, 1, 1],
                  [2, 2, 2, 2, 2, np.inf]], np.float32)
    exe = fusec.compile(text, device=DEVICE)
    (got,) = exe(host(x, dtype))
    np.testing.assert_array_equal(got, [1, 1, 1, 5])
    np.testing.assert_array_equal(got, run_function(load(text), [host(x, dtype)])[0])


def test_split_attention_of_the_gpu_lowering() -> None:
    """The GPU's lowering (a cache of 300 keys split in 5 chunks of 64, two launches; the
    argmax by a work-group) planned and run on this device against the reference, at positions
    in the first, a middle and the last chunk, and at a chunk's last key."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import lower
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    cache, q = "tensor<1x300x8xf32>", "tensor<1x1x32xf32>"
    text = f"""
func.func @f(%q: {q}, %k: {cache}, %v: {cache}, %pos: tensor<i32>) -> ({q}, tensor<1x1xi32>) {{
  %0 = nn.cache_attention %q, %k, %v, %pos {{num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64}} : {q}, {cache}, {cache}, tensor<i32> -> {q}
  %1 = nn.argmax %0 : {q} -> tensor<1x1xi32>
  func.return %0, %1 : {q}, tensor<1x1xi32>
}}"""
    compiled = lower(load(text), device_info=DeviceInfo("gpu-shaped", is_cpu=False))
    assert [launch.kernel for launch in compiled.plan.launches] == [
        "f_cache_attention_split_0", "f_cache_attention_combine_1", "f_argmax_2"]
    exe = Executable(compiled.plan, select_device(DEVICE))  # type: ignore[arg-type]
    rng = np.random.default_rng(8)
    for pos in (3, 63, 255, 299):
        k, v = rng.standard_normal((2, 1, 300, 8)).astype(np.float32)
        k[:, pos + 1:] = v[:, pos + 1:] = np.nan
        args = [rng.standard_normal((1, 1, 32)).astype(np.float32), k, v,
                np.array(pos, np.int32)]
        expected = run_function(load(text), args)
        outputs = exe(*args)
        np.testing.assert_allclose(outputs[0], expected[0], atol=2e-6, rtol=1e-5)
        np.testing.assert_array_equal(outputs[1], expected[1])


def test_random_positions_are_in_range() -> None:
    """`random_inputs` (fusec-run, --check, --verify-fusion) draws a position that every cache
    op reading it accepts: here at most LENGTH - 5 (the 5 new rows of the update)."""
    from fusec.reference.executor import find_function, random_inputs

    fn = find_function(load(step_program(4, 1, 5, "f32")))
    drawn = {int(random_inputs(fn, seed)[-1]) for seed in range(40)}
    assert min(drawn) >= 0 and max(drawn) == LENGTH - 5 and len(drawn) > 5


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_gather_of_16_bit_embeddings(dtype: str) -> None:
    """A 16-bit embedding table (a decoder's in f16): the gather moves the bits exactly."""
    text = f"""
func.func @f(%table: tensor<10x6x{dtype}>, %ids: tensor<2x3xi32>) -> tensor<2x3x6x{dtype}> {{
  %0 = nn.gather %table, %ids : tensor<10x6x{dtype}>, tensor<2x3xi32> -> tensor<2x3x6x{dtype}>
  func.return %0 : tensor<2x3x6x{dtype}>
}}"""
    table = host(np.random.default_rng(2).standard_normal((10, 6)), dtype)
    ids = np.array([[0, 9, 3], [3, 1, 7]], np.int32)
    (got,) = fusec.compile(text, device=DEVICE)(table, ids)
    np.testing.assert_array_equal(got.view(np.uint16), table[ids].view(np.uint16))


@pytest.mark.parametrize("donated", [True, False])
def test_new_rows_read_from_a_packed_qkv_in_place(donated: bool) -> None:
    """k and v as slices of one packed q/k/v (``nn.narrow`` of its last axis) are written into
    the caches straight from it: no copy kernel for either slice, in place (donated caches)
    or into copies; the same caches and outputs as the reference at positions 0, a middle one
    and the last slot, with NaN past the new rows."""
    from fusec.compiler.driver import lower

    seq, heads, kv_heads = 2, 4, 2
    width, kv_width = heads * DIM, kv_heads * DIM
    packed = width + 2 * kv_width
    cache = f"tensor<{BATCH}x{LENGTH}x{kv_width}xf32>"
    new = f"tensor<{BATCH}x{seq}x{kv_width}xf32>"
    q = f"tensor<{BATCH}x{seq}x{width}xf32>"
    qkv = f"tensor<{BATCH}x{seq}x{packed}xf32>"
    keep = " {fusec.aliasing_output = 0 : i64}" if donated else ""
    keep_v = " {fusec.aliasing_output = 1 : i64}" if donated else ""
    attrs = f"{{num_heads = {heads} : i64, num_kv_heads = {kv_heads} : i64, head_dim = {DIM} : i64}}"
    text = f"""
func.func @step(%k_cache: {cache}{keep}, %v_cache: {cache}{keep_v}, %qkv: {qkv}, %pos: tensor<i32>)
    -> ({cache}, {cache}, {q}) {{
  %q = nn.narrow %qkv {{axis = 2 : i64, start = 0 : i64, length = {width} : i64}} : {qkv} -> {q}
  %k = nn.narrow %qkv {{axis = 2 : i64, start = {width} : i64, length = {kv_width} : i64}} : {qkv} -> {new}
  %v = nn.narrow %qkv {{axis = 2 : i64, start = {width + kv_width} : i64, length = {kv_width} : i64}} : {qkv} -> {new}
  %kc = nn.cache_update %k_cache, %k, %pos : {cache}, {new}, tensor<i32> -> {cache}
  %vc = nn.cache_update %v_cache, %v, %pos : {cache}, {new}, tensor<i32> -> {cache}
  %out = nn.cache_attention %q, %kc, %vc, %pos {attrs} : {q}, {cache}, {cache}, tensor<i32> -> {q}
  func.return %kc, %vc, %out : {cache}, {cache}, {q}
}}"""
    kernels = [launch.kernel for launch in lower(load(text)).plan.launches]
    assert not any("narrow" in k for k in kernels), kernels
    exe = fusec.compile(text, device=DEVICE)
    rng = np.random.default_rng(11)
    for pos in (0, 9, LENGTH - seq):
        k_cache, v_cache = rng.standard_normal((2, BATCH, LENGTH, kv_width)).astype(np.float32)
        k_cache[:, pos + seq:] = np.nan
        v_cache[:, pos + seq:] = np.inf
        args = [k_cache, v_cache, rng.standard_normal((BATCH, seq, packed)).astype(np.float32),
                np.array(pos, np.int32)]
        expected = run_function(load(text), [a.copy() for a in args])
        got = exe(*exe.spared(args))
        for name, g, e in zip(("k cache", "v cache", "out"), got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=name)
        np.testing.assert_array_equal(got[0][:, pos:pos + seq], args[2][:, :, width:width + kv_width])
        np.testing.assert_array_equal(got[1][:, pos:pos + seq], args[2][:, :, width + kv_width:])
