"""Hugging Face BERT, GPT-2, Llama, Mistral, Qwen2 and Gemma (small random configurations) at
their default attention implementation (``sdpa``) and at ``eager`` (the attention written out:
``softmax(q @ k^T * scale + mask) @ v``), and torch's ``nn.TransformerEncoder``, through
``torch.compile(backend="fusec")``: the last hidden state equals eager's, attention runs as one
kernel per layer (with and without a padding mask), nothing is left to PyTorch, and the kernel
launches a layer adds (a 2-layer model's launches less a 1-layer model's) stay within the
ceilings measured on the CPU OpenCL device (`LAUNCHES_PER_LAYER`)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from torch_helpers import assert_close, compiled_run, fused_total, graphs_of  # noqa: E402

pytestmark = pytest.mark.model

DECODERS = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "gemma": "Gemma"}
"""Hugging Face's decoder families of one layout (RMSNorm, rotary embedding, grouped-query
attention, gated MLP), by the prefix of their config and model classes."""


def make_model(kind: str, layers: int, attention: str = "sdpa"):
    torch.manual_seed(0)
    if kind == "bert":
        config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=layers,
                                         num_attention_heads=4, intermediate_size=64,
                                         max_position_embeddings=32)
        model_class = transformers.BertModel
    elif kind == "gpt2":
        config = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=layers, n_head=4,
                                         n_positions=32, bos_token_id=0, eos_token_id=0)
        model_class = transformers.GPT2Model
    else:
        prefix = DECODERS[kind]
        config = getattr(transformers, f"{prefix}Config")(
            vocab_size=100, hidden_size=32, num_hidden_layers=layers, num_attention_heads=4,
            num_key_value_heads=2, head_dim=8, intermediate_size=64, max_position_embeddings=32)
        model_class = getattr(transformers, f"{prefix}Model")
    config._attn_implementation = attention
    model = model_class(config).eval()
    assert model.config._attn_implementation == attention
    return model


class LastHidden(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask=None):
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state


def make_encoder(layers: int):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True)
    return torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


LAUNCHES_PER_LAYER = {"bert": 7, "gpt2": 7, "llama": 9, "mistral": 9, "qwen2": 9, "gemma": 9,
                      "encoder": 7}
"""The launches one more layer adds, measured on the CPU OpenCL device (2 December), at
``sdpa`` and ``eager`` alike (the issue's bound is 10). The Llama family's two more than BERT:
its projections are not biased and its MLP is gated, so q/k/v, rotary and the GQA repeat fuse
into other kernels than BERT's."""

ATTENTION_OPS = ("nn.attention", "fused.attention_block", "fused.transformer_layer")
"""The fused ops that run a layer's attention (scores, softmax, context) in one kernel."""


def attentions(graphs) -> int:
    return sum(fused_total(graphs, name) for name in ATTENTION_OPS)


CASES = [(kind, attention) for kind in ("bert", "gpt2", *DECODERS)
         for attention in ("sdpa", "eager")] + [("encoder", "")]


@pytest.mark.parametrize(("kind", "attention"), CASES)
def test_launches_per_layer(tmp_path, kind, attention):
    launches = []
    for layers in (1, 2):
        if kind == "encoder":
            model, inputs = make_encoder(layers), (torch.randn(2, 8, 32),)
        else:
            model = LastHidden(make_model(kind, layers, attention))
            inputs = (torch.randint(0, 100, (2, 8)),)
        (tmp_path / str(layers)).mkdir()
        expected, actual, graphs = compiled_run(model, inputs, tmp_path / str(layers))
        assert_close(actual, expected)
        assert fused_total(graphs, "nn.attention") == layers
        assert all(g["fallback_ops"] == [] for g in graphs)
        launches.append(sum(g["kernel_launches"] for g in graphs))
    print(kind, attention, "launches", launches, "per layer", launches[1] - launches[0])
    assert launches[1] - launches[0] <= LAUNCHES_PER_LAYER[kind]


@pytest.mark.parametrize(("kind", "attention"), [
    ("bert", "sdpa"), ("bert", "eager"), ("gpt2", "sdpa"), ("gpt2", "eager"),
    ("llama", "sdpa"), ("llama", "eager")])
def test_hf_model_with_padding_mask(tmp_path, kind, attention):
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 6:] = 0
    model = LastHidden(make_model(kind, 2, attention))
    expected, actual, graphs = compiled_run(model, (ids, mask), tmp_path)
    assert_close(actual, expected)
    # the padding mask (and GPT-2's and Llama's causal triangle) recognised: one kernel each
    assert attentions(graphs) == 2
    assert all(g["fallback_ops"] == [] for g in graphs)


def test_half_precision_eager_attention(tmp_path):
    """Llama in f16 at ``eager``: its scores are widened to f32 for the softmax and the
    probabilities narrowed back before the product with v; the attention is still one kernel,
    and the output equals eager's at f16's tolerance."""
    model = LastHidden(make_model("llama", 2, "eager").half())
    ids = torch.randint(0, 100, (2, 8))
    expected, actual, graphs = compiled_run(model, (ids,), tmp_path)
    assert_close(actual, expected, tol=1e-2)
    assert fused_total(graphs, "nn.attention") == 2
    assert all(g["fallback_ops"] == [] for g in graphs)


CACHE_LAUNCHES_PER_LAYER = {"gpt2": 8, **{kind: 11 for kind in DECODERS}}
"""The launches one more decoder layer adds when the model is called as users call it, its KV
cache returned (`use_cache`, the default). The Llama family: two more than with the hidden
state alone, the keys rotated head-major for the cache and the values put out head-major (13
before the rotated keys' transpose was computed again, ``passes/_transposed_regions.py``, and
the values' narrow and transpose became one copy, 2 December). GPT-2: one more, its keys' and
values' copies one launch (9 while the two copies were joined into one region and cut apart
again by two more copies)."""


@pytest.mark.parametrize("kind", ["gpt2", *DECODERS])
def test_decoder_returning_its_cache(tmp_path, kind):
    """A decoder called as ``model(input_ids=...)``, the KV cache returned: the hidden state
    and every layer's keys and values equal eager's; launches per layer within the bound."""
    launches = []
    for layers in (1, 2):
        model = make_model(kind, layers)
        ids = torch.randint(0, 100, (2, 8))
        report = tmp_path / f"report{layers}.json"
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="fusec",
                                 options={"device": "cpu", "report": str(report)})
        with torch.inference_mode():
            expected, actual = model(input_ids=ids), compiled(input_ids=ids)
        assert_close(actual.last_hidden_state, expected.last_hidden_state)
        for want, got in zip(expected.past_key_values.layers, actual.past_key_values.layers,
                             strict=True):
            assert_close(got.keys, want.keys)
            assert_close(got.values, want.values)
        graphs = graphs_of(report)
        assert attentions(graphs) == layers
        launches.append(sum(g["kernel_launches"] for g in graphs))
    assert launches[1] - launches[0] <= CACHE_LAUNCHES_PER_LAYER[kind], launches
