"""Greedy generation with a static KV cache (`fusec.generate`, examples/tiny_decoder.mlir) on
the OpenCL device: 32 tokens per sequence equal those of a plain numpy decoder that recomputes
attention over the whole sequence at every step (no cache), and the prefill and one step equal
the numpy reference of the IR.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import fusec
from fusec.compiler.driver import load
from fusec.errors import InputError
from fusec.reference.executor import run_function

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
EXAMPLE = Path(__file__).parents[2] / "examples" / "tiny_decoder.mlir"
B, V, C, H, KV, D, L, T, F, PROMPT = 2, 64, 32, 4, 2, 8, 2, 48, 64, 8
STEPS = 32


def weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)

    def vector(size: int, mean: float) -> np.ndarray:
        return (mean + 0.1 * rng.standard_normal(size)).astype(np.float32)

    w = {"wte": matrix(V, C) * 4, "wpe": matrix(T, C)}
    for i in range(L):
        w |= {f"ln1_g{i}": vector(C, 1), f"ln1_b{i}": vector(C, 0),
              f"wqkv{i}": matrix(C, (H + 2 * KV) * D), f"bqkv{i}": vector((H + 2 * KV) * D, 0),
              f"wo{i}": matrix(H * D, C), f"bo{i}": vector(C, 0),
              f"ln2_g{i}": vector(C, 1), f"ln2_b{i}": vector(C, 0),
              f"w1{i}": matrix(C, F), f"b1{i}": vector(F, 0),
              f"w2{i}": matrix(F, C), f"b2{i}": vector(C, 0)}
    return w | {"lnf_g": vector(C, 1), "lnf_b": vector(C, 0), "lm_head": matrix(C, V) * 4}


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def numpy_logits(w: dict[str, np.ndarray], tokens: np.ndarray) -> np.ndarray:
    """The last position's logits of the decoder over the whole sequence ``tokens`` ``[B, n]``
    in float64: causal attention, kv head ``h // (H / KV)`` for query head ``h``."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    n = tokens.shape[1]
    x = w["wte"][tokens] + w["wpe"][:n]
    causal = np.tril(np.ones((n, n), bool))
    for i in range(L):
        qkv = layer_norm(x, w[f"ln1_g{i}"], w[f"ln1_b{i}"]) @ w[f"wqkv{i}"] + w[f"bqkv{i}"]
        q = qkv[..., :H * D].reshape(B, n, H, D)
        k = qkv[..., H * D:(H + KV) * D].reshape(B, n, KV, D)
        v = qkv[..., (H + KV) * D:].reshape(B, n, KV, D)
        k, v = (np.repeat(t, H // KV, axis=2) for t in (k, v))
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D)
        scores = np.where(causal, scores, -np.inf)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ctx = np.einsum("bhqk,bkhd->bqhd", p, v).reshape(B, n, H * D)
        x = x + ctx @ w[f"wo{i}"] + w[f"bo{i}"]
        h = layer_norm(x, w[f"ln2_g{i}"], w[f"ln2_b{i}"])
        x = x + gelu_tanh(h @ w[f"w1{i}"] + w[f"b1{i}"]) @ w[f"w2{i}"] + w[f"b2{i}"]
    return layer_norm(x[:, -1], w["lnf_g"], w["lnf_b"]) @ w["lm_head"]


def numpy_generate(w: dict[str, np.ndarray], prompt: np.ndarray, steps: int) -> np.ndarray:
    """Greedy tokens, and the least gap between the best and second-best logit met."""
    tokens = prompt
    for _ in range(steps):
        logits = numpy_logits(w, tokens)
        top2 = np.sort(logits, axis=-1)[:, -2:]
        assert (top2[:, 1] - top2[:, 0]).min() > 1e-3, "a near tie: pick another seed"
        tokens = np.concatenate([tokens, logits.argmax(-1)[:, None]], axis=1)
    return tokens[:, prompt.shape[1]:].astype(np.int32)


@pytest.fixture(scope="module")
def programs() -> tuple[object, object, dict[str, np.ndarray]]:
    w = weights()
    text = EXAMPLE.read_text()
    prefill = fusec.compile(text, "prefill", device=DEVICE, params=w, filename=str(EXAMPLE))
    step = fusec.compile(text, "step", device=DEVICE, params=w, filename=str(EXAMPLE))
    return prefill, step, w


def test_greedy_tokens_equal_numpy(programs) -> None:  # noqa: ANN001
    prefill, step, w = programs
    prompt = np.random.default_rng(5).integers(0, V, (B, PROMPT)).astype(np.int32)
    got = fusec.generate(prefill, step, prompt, STEPS)
    np.testing.assert_array_equal(got, numpy_generate(w, prompt, STEPS))


def test_streamed_tokens_are_the_generated_ones(programs) -> None:  # noqa: ANN001
    prefill, step, _ = programs
    prompt = np.random.default_rng(6).integers(0, V, (B, PROMPT)).astype(np.int32)
    streamed: list[np.ndarray] = []
    got = fusec.generate(prefill, step, prompt, 4, stream=streamed.append)
    np.testing.assert_array_equal(np.concatenate(streamed, axis=1), got)


def test_prefill_and_step_equal_the_reference(programs) -> None:  # noqa: ANN001
    """One call of each on host arrays against the numpy reference of the IR (the caches
    updated in place, returned as the same arrays)."""
    prefill, step, w = programs
    module = load(EXAMPLE.read_text())
    rng = np.random.default_rng(7)
    caches = [np.zeros((B, T, KV * D), np.float32) for _ in range(2 * L)]
    prompt = rng.integers(0, V, (B, PROMPT)).astype(np.int32)
    every = [prompt, np.array(0, np.int32), *caches, *w.values()]
    expected = run_function(module, [a.copy() for a in every], "prefill")
    outputs = prefill(prompt, np.array(0, np.int32), *caches)
    assert all(out is cache for out, cache in zip(outputs, caches, strict=False))
    for out, ref in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(out, ref, atol=2e-5, rtol=1e-4)
    token, position = outputs[-2:]
    every = [token, position, *caches, *w.values()]
    expected = run_function(module, [a.copy() for a in every], "step")
    outputs = step(token, position, *caches)
    for out, ref in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(out, ref, atol=2e-5, rtol=1e-4)
    assert int(outputs[-1]) == PROMPT + 1


def test_a_program_without_the_convention_is_refused(programs) -> None:  # noqa: ANN001
    prefill, _, _ = programs
    text = """
func.func @f(%tokens: tensor<2x1xi32>, %pos: tensor<i32>) -> tensor<2x1xi32> {
  func.return %tokens : tensor<2x1xi32>
}"""
    plain = fusec.compile(text, device=DEVICE)
    with pytest.raises(InputError, match="the step program @f has no donated input"):
        fusec.generate(prefill, plain, np.zeros((B, PROMPT), np.int32), 2)


def test_a_step_shares_the_prefills_copies_of_the_weights() -> None:
    """``share_weights``: the step binds the prefill's device buffer of every weight it was
    given the same array of and stores alike (no second copy; its held bytes leave them out),
    generates the same tokens as a step with copies of its own, and takes a copy where the
    array is another object. A placed compile refuses the option in one line."""
    text = EXAMPLE.read_text()
    w = weights()
    prefill = fusec.compile(text, "prefill", device=DEVICE, params=w)
    shared = fusec.compile(text, "step", device=DEVICE, params=w, share_weights=prefill)
    own = fusec.compile(text, "step", device=DEVICE, params=w)
    alike = {n for n in shared.params
             if shared.inputs[n].spec.layout == prefill.inputs[n].spec.layout}
    assert shared.borrowed == alike and len(alike) > 10
    assert all(shared.params[n] is prefill.params[n] for n in shared.borrowed)
    assert not own.borrowed and own.held_bytes() - shared.held_bytes() >= sum(
        w[n].nbytes for n in shared.borrowed)
    prompt = np.random.default_rng(4).integers(0, V, (B, PROMPT)).astype(np.int32)
    np.testing.assert_array_equal(fusec.generate(prefill, shared, prompt, 8),
                                  fusec.generate(prefill, own, prompt, 8))
    other = dict(w, wte=w["wte"].copy())
    partly = fusec.compile(text, "step", device=DEVICE, params=other, share_weights=prefill)
    assert partly.borrowed == alike - {"wte"}
    assert partly.params["wte"] is not prefill.params["wte"]
    with pytest.raises(ValueError, match="share_weights applies to IR compiled for one device"):
        fusec.compile(text, "step", device="auto", params=w, share_weights=prefill)
