"""In-place ops through the backend: inputs changed in place are seen changed by PyTorch, once
per call (compiling does not apply the change a second time), and views of them are not
copies; Hugging Face greedy generation with a static KV cache (``index_copy_`` into the cache,
``cumulative_length.add_``) gives eager's tokens."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch_helpers import graphs_of  # noqa: E402


class Counter(nn.Module):
    """A static cache in small: a position counter and a buffer written at it, in place."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, cache, length):
        positions = torch.arange(x.shape[0]) + length.to(torch.int64)  # `to` is an alias here
        length.to(torch.int64).add_(x.shape[0])
        cache.index_copy_(0, positions, self.proj(x).relu())
        return (cache * 2).sum(0)


def test_inputs_changed_in_place_once_per_call(tmp_path):
    torch._dynamo.reset()
    torch.manual_seed(0)
    module = Counter().eval()
    compiled = torch.compile(module, backend="fusec",
                             options={"device": "cpu", "report": str(tmp_path / "r.json")})
    eager_cache, eager_length = torch.zeros(6, 8), torch.tensor(0)
    cache, length = torch.zeros(6, 8), torch.tensor(0)
    with torch.no_grad():
        for step in range(3):
            x = torch.randn(2, 8)
            expected = module(x, eager_cache, eager_length)
            actual = compiled(x, cache, length)
            assert int(length) == int(eager_length) == 2 * (step + 1)
            torch.testing.assert_close(cache, eager_cache)
            torch.testing.assert_close(actual, expected)
    graphs = graphs_of(tmp_path / "r.json")
    assert graphs and graphs[0]["partitions"] >= 1  # the Linear and the sum ran in fusec


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_static_cache_generation_tokens(tmp_path, kind):
    pytest.importorskip("transformers")
    from fusec.bench.hf_models import build_model

    torch._dynamo.reset()
    model = build_model(kind, "tiny")
    torch.manual_seed(0)
    ids = torch.randint(0, model.config.vocab_size, (1, 8))
    with torch.no_grad():
        expected = model.generate(ids, do_sample=False, max_new_tokens=16, min_new_tokens=16)
        model.forward = torch.compile(model.forward, backend="fusec", options={
            "device": "cpu", "report": str(tmp_path / "r.json")})
        actual = model.generate(ids, do_sample=False, max_new_tokens=16, min_new_tokens=16,
                                cache_implementation="static")
    assert actual.shape == (1, 24)
    assert actual.tolist() == expected.tolist()
    graphs = graphs_of(tmp_path / "r.json")
    assert len(graphs) == 2  # the prefill and the one-token step, each compiled once
    step = graphs[1]
    assert step["fused_ops"].get("nn.attention") == 2  # attention over the cache in fusec
    assert set(step["fallback_ops"]) <= {"aten.add", "aten.add_", "aten.index_copy_"}
