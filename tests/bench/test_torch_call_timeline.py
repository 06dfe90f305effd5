"""bench/torch_call_timeline.py on the CPU device: the steps of back-to-back calls of a model
compiled with the fusec backend are stamped and summed per call."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fusec.bench.torch_call_timeline import timeline  # noqa: E402


def test_each_call_is_taken_apart_into_its_steps():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64)).eval()
    torch._dynamo.reset()
    fn = torch.compile(model, backend="fusec", options={"device": "cpu"})
    x = torch.randn(4, 64)
    with torch.inference_mode():
        fn(x)
        result = timeline(lambda: fn(x), lambda: None, calls=6)
    assert set(result) == {"call", "outside", "partition", "to_fusec", "host_wait", "enqueue",
                           "to_torch", "wait_end_to_kernels_done",
                           "kernels_done_to_next_wait_end", "wall_per_call"}
    assert 0 < result["to_fusec"] <= result["partition"] <= result["call"]
    assert result["outside"] >= 0
    # The CPU device's calls take host arrays: no device enqueue, no kernels' end to watch.
    assert result["enqueue"] == result["wait_end_to_kernels_done"] == 0
