"""bench/torch_models.py's memory figure for the fusec runner (`fusec_held_bytes`), on the CPU
device: what fusec holds after a call counts its bound weights, so that the whole-model table
compares fusec's device memory, not only PyTorch's share of it, with eager's."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fusec.bench.torch_models import fusec_held_bytes  # noqa: E402


def test_held_bytes_count_the_weights_fusec_binds():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).eval()
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    torch._dynamo.reset()
    fn = torch.compile(model, backend="fusec", options={"device": "cpu"})
    x = torch.randn(8, 256)
    with torch.inference_mode():
        fn(x)
        held = fusec_held_bytes(lambda: fn(x))
    assert held >= weights


def test_nothing_held_without_a_fusec_call():
    assert fusec_held_bytes(lambda: None) == 0
