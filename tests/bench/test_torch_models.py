"""bench/torch_models.py's memory figure for the fusec runner (`fusec_held_bytes`), on the CPU
device: what fusec holds after a call counts its copies of bound weights, so that the
whole-model table compares fusec's device memory, not only PyTorch's share of it, with eager's
(weights bound over PyTorch's own memory are PyTorch's: the report's ``weights_shared_bytes``)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fusec.bench.torch_models import fusec_held_bytes  # noqa: E402


def test_held_bytes_count_the_weights_fusec_binds(tmp_path):
    """Every weight is bound, copied (the transposed Linear weights) or over its own memory
    (the biases); what fusec holds counts the copies."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).eval()
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    torch._dynamo.reset()
    report = tmp_path / "report.json"
    fn = torch.compile(model, backend="fusec", options={"device": "cpu", "report": str(report)})
    x = torch.randn(8, 256)
    with torch.inference_mode():
        fn(x)
        held = fusec_held_bytes(lambda: fn(x))
    (graph,) = json.loads(report.read_text())["graphs"]
    copied = graph["weights_copied_bytes"]
    assert copied + graph["weights_shared_bytes"] == weights
    assert held >= copied >= weights - sum(m.bias.nbytes for m in (model[0], model[2]))


def test_nothing_held_without_a_fusec_call():
    assert fusec_held_bytes(lambda: None) == 0
