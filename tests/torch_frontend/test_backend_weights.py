"""A model's weights held once through the backend (`fusec.compiler.torch_weights`), on the CPU
device: each bound input that the executable stores as the tensor's own bytes is bound over
the tensor's memory (moved first into aligned memory where the device needs it), so fusec's
held bytes drop by those bytes; changes in place, replaced parameters and moves are seen; the
module stays whole after the compiled function is gone."""

from __future__ import annotations

import copy
import gc
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from torch_helpers import assert_close  # noqa: E402

from fusec.bench.torch_models import fusec_held_bytes  # noqa: E402
from fusec.bench.torch_partition_profile import recorded_partitions  # noqa: E402
from fusec.compiler import torch_partition, torch_weights  # noqa: E402
from fusec.runtime.host_memory import address  # noqa: E402

VOCAB = 500


def tiny_bert():
    """A 2-layer BERT whose every weight is random (the library's zero biases and unit norms
    would be splats, written inline rather than bound)."""
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=128,
                                     max_position_embeddings=32)
    model = transformers.BertModel(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    return model


class Hidden(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids).last_hidden_state


def compiled(model, tmp_path=None):
    torch._dynamo.reset()
    options = {"device": "cpu"}
    if tmp_path is not None:
        options["report"] = str(tmp_path / "report.json")
    return torch.compile(model, backend="fusec", options=options)


def called_once():
    """A tiny BERT, its ids and its compiled function, called once and checked against eager."""
    model = Hidden(tiny_bert())
    ids = torch.randint(0, VOCAB, (2, 16))
    fn = compiled(model)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    return model, ids, fn


def partitions(call):
    """The fusec partitions one ``call()`` runs."""
    with torch.inference_mode(), recorded_partitions() as calls:
        call()
    return list({id(part): part for part, _ in calls}.values())


def bound_over(part) -> dict[str, int]:
    """The bound inputs of a partition held over memory it was given, by name: the address."""
    return {name: address(host) for name, host in part.exe.param_hosts.items()}


@pytest.fixture(params=["device", "page"])
def alignment(request, monkeypatch):
    """``device``: the CPU device's own alignment (128 bytes: about half of PyTorch's tensors
    are used where they are, the others moved); ``page``: 4096 bytes, so that nearly every
    verbatim tensor is moved."""
    if request.param == "page":
        monkeypatch.setattr(torch_weights, "host_alignment", lambda device: 4096)
    return request.param


def test_verbatim_weights_are_held_once(tmp_path, monkeypatch, alignment):
    """The same model with copies (the in-place binding turned off) and held once: fusec's held
    bytes drop by the report's ``weights_shared_bytes``, at least the embedding table's; every
    input held so is over a parameter's memory; the outputs are eager's; the parameters are
    the same objects with the same values."""
    model = Hidden(tiny_bert())
    copied_model = copy.deepcopy(model)
    ids = torch.randint(0, VOCAB, (2, 16))
    with torch.inference_mode():
        expected = model(ids)
    objects = [id(p) for p in model.parameters()]
    values = {k: v.clone() for k, v in model.state_dict().items()}

    with monkeypatch.context() as off:
        off.setattr(torch_weights.PartitionWeights, "in_place", lambda self, *args: {})
        fn = compiled(copied_model)
        with torch.inference_mode():
            assert_close(fn(ids), expected)
            held_copied = fusec_held_bytes(lambda: fn(ids))
    fn = compiled(model, tmp_path)
    with torch.inference_mode():
        assert_close(fn(ids), expected)
        held_once = fusec_held_bytes(lambda: fn(ids))
    (graph,) = json.loads((tmp_path / "report.json").read_text())["graphs"]
    shared = graph["weights_shared_bytes"]
    table = model.model.embeddings.word_embeddings.weight
    assert shared >= table.nbytes and graph["weights_copied_bytes"] > 0
    assert held_copied - held_once == shared
    memory = {p.data_ptr() for p in model.parameters()}
    held = [a for part in partitions(lambda: fn(ids)) for a in bound_over(part).values()]
    assert table.data_ptr() in held and set(held) <= memory
    assert [id(p) for p in model.parameters()] == objects
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, values[k], rtol=0, atol=0)


def test_changes_in_place_are_seen_without_copies(alignment):
    """After the first call: a change through ``.data`` (no version change: seen only because
    the kernels read the parameter's memory) and in-place ops are seen by the next call, with
    nothing bound again (the same buffers over the same memory, the same held bytes);
    ``load_state_dict`` too (it changes folded weights as well: compiled again, the inputs
    bound over the same memory)."""
    model = Hidden(tiny_bert())
    ids = torch.randint(0, VOCAB, (2, 16))
    fn = compiled(model)

    def holding():
        with torch.inference_mode():
            held = fusec_held_bytes(lambda: fn(ids))
        return held, [{name: (where, part.exe.params[name].int_ptr)
                       for name, where in bound_over(part).items()}
                      for part in partitions(lambda: fn(ids))]

    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    first = holding()
    assert first[0] > 0 and any(first[1])
    embeddings = model.model.embeddings
    embeddings.word_embeddings.weight.data.mul_(2)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    with torch.no_grad():
        embeddings.LayerNorm.bias.add_(0.5)
        model.model.encoder.layer[1].output.LayerNorm.weight.mul_(-1)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    assert holding() == first
    state = {k: v + 0.1 * torch.randn_like(v) if v.is_floating_point() else v
             for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    held, bound = holding()
    assert held == first[0]
    assert [{n: a for n, (a, _) in part.items()} for part in bound] == \
        [{n: a for n, (a, _) in part.items()} for part in first[1]]


def test_weights_read_in_place_are_not_watched_for_versions(monkeypatch, alignment):
    """A call compares the versions of the bound tensors whose values fusec copied (folded
    ones) and not of those the kernels read where they lie (`FusecPartition.read_in_place`): an
    in-place change of one of those is read as it is, with no refresh; of a folded one, seen
    by its version and refreshed."""
    model, ids, fn = called_once()
    (part,) = partitions(lambda: fn(ids))
    states = part.states
    assert states.in_place and len(states.versioned) + len(states.in_place) == len(
        [i for i, (_, _, version) in states.held.items() if version >= 0])
    names = {id(p): n for n, p in model.named_parameters()}
    in_place = {names[id(states.held[i][0])] for i in states.in_place}
    assert "model.embeddings.LayerNorm.bias" in in_place
    refreshes = []
    refresh = torch_partition.FusecPartition.refresh
    monkeypatch.setattr(torch_partition.FusecPartition, "refresh",
                        lambda self, args, changed: (refreshes.append(changed),
                                                     refresh(self, args, changed)))
    with torch.no_grad():
        model.model.embeddings.LayerNorm.bias.add_(0.5)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    assert refreshes == []
    watched = {names[id(t)] for t in states.versioned}
    folded = next(n for n in sorted(watched) if n.endswith("query.weight"))
    with torch.no_grad():
        model.get_parameter(folded).mul_(-1)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    assert len(refreshes) == 1


def test_bound_tensors_find_what_changed():
    """`BoundTensors.changed`: a replaced tensor, new storage under the same tensor and a
    version change are found; a tensor read in place is not watched for versions."""
    tensors = [torch.zeros(3) for _ in range(4)]
    args = [*tensors, 7]  # a call input that is no bound tensor
    states = torch_partition.BoundTensors(args, {0, 1, 2, 3})
    assert states.changed(args) == []
    states.read_in_place({3})
    assert states.changed([*tensors[:1], torch.zeros(3), *tensors[2:], 7]) == [1]
    tensors[2].data = torch.ones(3)
    assert states.changed(args) == [2]
    states.update(args, 2)
    assert states.changed(args) == []
    tensors[0].add_(1)
    tensors[3].add_(1)  # read in place: not a change
    assert states.changed(args) == [0]


def test_a_replaced_parameter_is_bound_anew(alignment):
    """A new Parameter object (and new storage under the same object) is bound over its own
    memory at the next call."""
    model, ids, fn = called_once()
    embeddings = model.model.embeddings
    embeddings.word_embeddings.weight = nn.Parameter(torch.randn(VOCAB, 64))
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    held = [a for part in partitions(lambda: fn(ids)) for a in bound_over(part).values()]
    assert embeddings.word_embeddings.weight.data_ptr() in held
    embeddings.LayerNorm.weight.data = torch.randn(64)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    held = [a for part in partitions(lambda: fn(ids)) for a in bound_over(part).values()]
    assert embeddings.LayerNorm.weight.data_ptr() in held


def test_the_module_outlives_the_compiled_function(alignment):
    """Once the compiled function and dynamo's caches are gone, the module (its moved
    parameters among them) computes what it computed, with its values from before, and
    trains: no parameter became an inference tensor."""
    model = Hidden(tiny_bert())
    values = {k: v.clone() for k, v in model.state_dict().items()}
    ids = torch.randint(0, VOCAB, (2, 16))
    fn = compiled(model)
    with torch.inference_mode():
        expected = fn(ids).clone()
    del fn
    torch._dynamo.reset()
    gc.collect()
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, values[k], rtol=0, atol=0)
    assert not any(p.is_inference() for p in model.parameters())
    out = model(ids)
    assert_close(out.detach(), expected)
    out.square().mean().backward()
    assert model.model.embeddings.word_embeddings.weight.grad is not None


class Tied(nn.Module):
    """One table read as it is (an embedding) and transposed (folded into a copy), in two
    partitions on either side of a ``cumsum`` left to PyTorch."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(64, 32))
        self.norm = nn.LayerNorm(32)

    def forward(self, x, ids):
        scores = torch.cumsum(x @ self.table.t(), dim=-1)
        return self.norm(F.embedding(ids, self.table)) * scores.mean(-1, keepdim=True)


def test_a_move_is_no_change_to_a_partition_that_saw_the_tensor_before(monkeypatch):
    """The partition that folds the table is compiled before the one that moves it (to page
    alignment): at the next calls it takes the move for no change and is not compiled
    again; a real change to the table still reaches both."""
    monkeypatch.setattr(torch_weights, "host_alignment", lambda device: 4096)
    builds = counted_builds(monkeypatch)
    torch.manual_seed(5)
    model = Tied().eval()
    kept = []  # a table that happens to lie page-aligned (1 in 64) would not move: another
    while model.table.data_ptr() % 4096 == 0:
        kept.append(model.table.data)
        model.table.data = model.table.data.clone()
    first = model.table.data_ptr()
    x, ids = torch.randn(4, 32), torch.randint(0, 64, (4,))
    fn = compiled(model)
    with torch.inference_mode():
        assert_close(fn(x, ids), model(x, ids))
        assert_close(fn(x, ids), model(x, ids))
    assert model.table.data_ptr() != first and model.table.data_ptr() % 4096 == 0
    assert len(builds) == len(set(builds)) == 2
    with torch.no_grad():
        model.table.mul_(-0.5)
    with torch.inference_mode():
        assert_close(fn(x, ids), model(x, ids))


def qkv_biases(model, layer=0):
    attention = model.model.encoder.layer[layer].attention.self
    return [attention.query.bias, attention.key.bias, attention.value.bias]


def joint_host(part, tensors):
    """The name of the bound input of `part` whose host array holds `tensors` one after the
    other from its start (a folded weight's buffer shared with them), or None."""
    start = tensors[0].data_ptr()
    starts = [start + sum(t.nbytes for t in tensors[:i]) for i in range(len(tensors))]
    for name, host in part.exe.param_hosts.items():
        if address(host) == start and host.nbytes == sum(t.nbytes for t in tensors) and \
                [t.data_ptr() for t in tensors] == starts:
            return name
    return None


def counted_builds(monkeypatch):
    builds = []
    build = torch_partition.FusecPartition.build

    def counted(self, args):
        builds.append(self.name)
        return build(self, args)

    monkeypatch.setattr(torch_partition.FusecPartition, "build", counted)
    return builds


def test_folded_weights_are_held_as_ranges_of_their_buffer(tmp_path, alignment):
    """The q, k and v biases, concatenated and folded into one bound input stored as it is,
    are held once: moved into the buffer fusec binds, each the range of it that holds its
    values (the Parameter objects and values the same), counted in ``weights_shared_bytes``;
    the outputs are eager's. (The CPU's GEMMs keep their weights in panels: no range.)"""
    model = Hidden(tiny_bert())
    ids = torch.randint(0, VOCAB, (2, 16))
    objects = [id(p) for p in model.parameters()]
    values = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.inference_mode():
        expected = model(ids)
    fn = compiled(model, tmp_path)
    with torch.inference_mode():
        assert_close(fn(ids), expected)
    (part,) = partitions(lambda: fn(ids))
    for layer in range(2):
        biases = qkv_biases(model, layer)
        name = joint_host(part, biases)
        assert name is not None and name.startswith("fusec_folded")
        assert part.weights.parts[name] == 3 * 64 * 4
    (graph,) = json.loads((tmp_path / "report.json").read_text())["graphs"]
    assert graph["weights_shared_bytes"] >= model.model.embeddings.word_embeddings.weight.nbytes \
        + 2 * 3 * 64 * 4
    assert [id(p) for p in model.parameters()] == objects
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, values[k], rtol=0, atol=0)


def bert_after_one_call(monkeypatch):
    """The compiles counted (`counted_builds`), a tiny BERT, ids, and the model compiled and
    called once (checked against eager)."""
    builds = counted_builds(monkeypatch)
    model, ids, fn = called_once()
    return builds, model, ids, fn


def test_changes_to_weights_held_as_ranges_are_seen_without_a_compile(monkeypatch, alignment):
    """In-place changes to a bias held in a folded buffer (through ``.data``, no version
    change, and an in-place op) reach the kernels with no compile and nothing moved; a
    replaced bias is seen (compiled again, the new one and its neighbours held in one buffer
    again)."""
    builds, model, ids, fn = bert_after_one_call(monkeypatch)
    assert len(builds) == 1
    biases = qkv_biases(model)
    pointers = [b.data_ptr() for b in biases]
    biases[1].data.mul_(3)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    with torch.no_grad():
        biases[2].add_(0.5)
        biases[0].mul_(-1)
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    assert len(builds) == 1 and [b.data_ptr() for b in biases] == pointers
    attention = model.model.encoder.layer[0].attention.self
    attention.key.bias = nn.Parameter(torch.randn(64))
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    assert len(builds) == 2
    (part,) = partitions(lambda: fn(ids))
    assert joint_host(part, qkv_biases(model)) is not None


def test_a_replaced_bias_is_held_with_neighbours_bound_over_their_memory(monkeypatch,
                                                                         alignment):
    """After ``load_state_dict`` (a compile that finds the biases lying as their folded
    buffer holds them and binds it over their memory), a replaced bias is held in one buffer
    with its neighbours again: the last executable's hold on their memory goes before the
    compile that moves them (H200, 2026-12-02: with the old one alive the neighbours could
    not move and were held twice)."""
    builds, model, ids, fn = bert_after_one_call(monkeypatch)
    model.load_state_dict({key: value + 0.01 * torch.randn_like(value)
                           if value.is_floating_point() else value
                           for key, value in model.state_dict().items()})
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    compiles = len(builds)
    attention = model.model.encoder.layer[0].attention.self
    attention.key.bias = nn.Parameter(torch.randn(64))
    with torch.inference_mode():
        assert_close(fn(ids), model(ids))
    assert len(builds) == compiles + 1
    (part,) = partitions(lambda: fn(ids))
    assert joint_host(part, qkv_biases(model)) is not None


def test_a_variant_shares_the_buffer_its_weights_lie_in(monkeypatch, alignment):
    """A second set of shapes compiles the graph again: the biases lie as its folded input
    holds them (moved by the first), so it binds over their memory, moving nothing, and both
    variants read one buffer; a change in place reaches both."""
    builds = counted_builds(monkeypatch)
    model = Hidden(tiny_bert())
    short, long = torch.randint(0, VOCAB, (2, 8)), torch.randint(0, VOCAB, (2, 16))
    fn = compiled(model)
    with torch.inference_mode():
        assert_close(fn(short), model(short))
    pointers = [b.data_ptr() for b in qkv_biases(model)]
    with torch.inference_mode():
        assert_close(fn(long), model(long))
    assert [b.data_ptr() for b in qkv_biases(model)] == pointers
    hosts = [address(part.exe.param_hosts[joint_host(part, qkv_biases(model))])
             for call in (short, long) for part in partitions(lambda c=call: fn(c))]
    assert hosts == [pointers[0]] * 2
    built = len(builds)
    with torch.no_grad():
        qkv_biases(model)[1].mul_(2)
    with torch.inference_mode():
        assert_close(fn(short), model(short))
        assert_close(fn(long), model(long))
    assert len(builds) == built
