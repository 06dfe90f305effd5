"""bench/torch_models.py's memory figure for the fusec runner (`fusec_held_bytes`), on the CPU
device: what fusec holds after a call counts its copies of bound weights, so that the
whole-model table compares fusec's device memory, not only PyTorch's share of it, with eager's
(weights bound over PyTorch's own memory are PyTorch's: the report's ``weights_shared_bytes``)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fusec.bench.torch_models import fusec_held_bytes, graph_ms, launch_bytes  # noqa: E402


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
        assert launch_bytes(lambda: fn(x)) == 0  # CPU tensors: nothing launched through CUDA
    (graph,) = json.loads(report.read_text())["graphs"]
    copied = graph["weights_copied_bytes"]
    assert copied + graph["weights_shared_bytes"] == weights
    assert held >= copied >= weights - sum(m.bias.nbytes for m in (model[0], model[2]))


def test_nothing_held_without_a_fusec_call():
    assert fusec_held_bytes(lambda: None) == 0


class FakeStorage:
    def __init__(self, pointer, nbytes):
        self.pointer, self.bytes = pointer, nbytes

    def data_ptr(self):
        return self.pointer

    def nbytes(self):
        return self.bytes


class FakeTensor:
    """What `model_torch_bytes` reads of a tensor (a CUDA one, without CUDA)."""

    def __init__(self, pointer, nbytes, cuda=True):
        self.storage, self.is_cuda = FakeStorage(pointer, nbytes), cuda

    def untyped_storage(self):
        return self.storage


class FakeModel:
    def __init__(self, params, buffers=()):
        self.params, self.bufs = list(params), list(buffers)

    def parameters(self):
        return iter(self.params)

    def buffers(self):
        return iter(self.bufs)


def test_model_bytes_count_each_storage_once_and_none_in_fusecs_pool():
    from types import SimpleNamespace

    from fusec.bench.torch_models import model_torch_bytes

    allocation = SimpleNamespace(pointer=SimpleNamespace(value=1 << 20), size=1 << 20)
    pool = SimpleNamespace(allocations_by_pointer={1 << 20: allocation})
    shared = FakeTensor(5000, 300)
    model = FakeModel([FakeTensor(1000, 100), shared, FakeTensor((1 << 20) + 64, 4096),
                       FakeTensor(9000, 7, cuda=False)], [shared])
    assert model_torch_bytes(model) == 100 + 300 + 4096  # wherever they lie
    assert model_torch_bytes(model, [pool]) == 100 + 300  # the moved one is fusec's
    assert model_torch_bytes(model, [SimpleNamespace()]) == 100 + 300 + 4096  # a CPU pool


def test_an_unknown_knob_to_flip_is_a_usage_error(capsys):
    from fusec.bench.torch_models import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--flip-knob", "nope"])
    assert exit_info.value.code == 2
    assert "unknown knob 'nope' (known: attention_cpu_vectors" in capsys.readouterr().err


def test_a_rows_baseline_is_what_earlier_rows_still_use_not_their_free_buffers():
    """`live_pool_bytes`: a buffer taken from a pool counts; one given back (free, which a
    later row may take again) does not, so that it counts against the row that follows."""
    from fusec.bench.torch_models import live_pool_bytes
    from fusec.runtime.device import select_device
    from fusec.runtime.device_array import device_queue

    pool = device_queue(select_device("cpu")).pool
    before = live_pool_bytes()
    buffer = pool.take(12288)
    assert live_pool_bytes() == before + 12288
    pool.give(12288, buffer)
    assert live_pool_bytes() == before


def test_graph_ms_is_the_kept_launches_replay_time_of_every_partition():
    """`graph_ms`: each partition's replay time with the launches it kept (dependent ones where
    it kept them, plain ones else), summed; None where one partition was not timed."""
    from types import SimpleNamespace

    dependent = SimpleNamespace(dependent=True, timings={False: 0.55, True: 0.52})
    plain = SimpleNamespace(dependent=False, timings={False: 0.34, True: 0.35})
    long_kernels = SimpleNamespace(dependent=False, timings={False: 2.0})  # not tried
    assert graph_ms([dependent]) == 0.52
    assert graph_ms([dependent, plain, long_kernels]) == pytest.approx(0.52 + 0.34 + 2.0)
    assert graph_ms([dependent, SimpleNamespace(dependent=False, timings={})]) is None
    assert graph_ms([]) is None
