"""fusec's decoder with a Hugging Face model's weights (`fusec.bench.decoder_hf`) generates the
greedy tokens of that model's own ``generate`` (eager PyTorch, float32) for 32 steps, on the
OpenCL device: GPT-2 and Llama (grouped-query attention, rotary positions, SwiGLU), tiny random
configurations (`fusec.bench.hf_models`)."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch  # noqa: E402

import fusec  # noqa: E402
from fusec.bench.decoder import decoder_ir  # noqa: E402
from fusec.bench.decoder_hf import UnsupportedModel, decoder_from_hf  # noqa: E402
from fusec.bench.hf_models import build_model, greedy  # noqa: E402

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
BATCH, PROMPT, STEPS = 2, 8, 32


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_greedy_tokens_equal_hugging_face(kind: str) -> None:
    model = build_model(kind, "tiny", seed=0)
    vocab = model.config.vocab_size
    prompt = torch.randint(0, vocab, (BATCH, PROMPT), generator=torch.Generator().manual_seed(1))
    expected, logits = greedy(model, prompt, STEPS)
    top2 = logits.topk(2, dim=-1).values
    assert (top2[..., 0] - top2[..., 1]).min() > 1e-3, "a near tie: pick another seed"
    sizes, weights = decoder_from_hf(model, BATCH, PROMPT, PROMPT + STEPS)
    if kind == "llama":
        assert sizes.kv_heads < sizes.heads and sizes.style.positions == "rotary"
    text = decoder_ir(sizes)
    prefill = fusec.compile(text, "prefill", device=DEVICE, params=weights)
    step = fusec.compile(text, "step", device=DEVICE, params=weights)
    got = fusec.generate(prefill, step, prompt.numpy().astype(np.int32), STEPS)
    np.testing.assert_array_equal(got, expected.numpy())


def test_what_is_not_mapped_is_refused() -> None:
    model = build_model("gpt2", "tiny", activation_function="relu")
    with pytest.raises(UnsupportedModel, match="GPT-2 activation 'relu' is not a tanh GELU"):
        decoder_from_hf(model, 1, 4, 8)
    model = build_model("gpt2", "tiny")
    with pytest.raises(UnsupportedModel, match="a cache of 65 positions is longer than GPT-2's 64"):
        decoder_from_hf(model, 1, 4, 65)
    model = build_model("llama", "tiny", attention_bias=True)
    with pytest.raises(UnsupportedModel, match="Llama projections with biases are not mapped"):
        decoder_from_hf(model, 1, 4, 8)
