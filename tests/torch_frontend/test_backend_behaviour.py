"""The backend's contracts: unsupported ops left to PyTorch, a new shape compiled anew, 16-bit
modules and autocast regions, weights changed in place seen at once, autograd left to PyTorch,
int64 ids."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from torch_helpers import (  # noqa: E402
    AutocastInside,
    assert_close,
    compiled_run,
    fused_total,
    graphs_of,
    knob_at_each_call,
)


class WithCumsum(nn.Module):
    """cumsum has no converter: it runs in PyTorch between two fusec partitions."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)

    def forward(self, x):
        h = F.gelu(self.a(x))
        return self.b(torch.cumsum(h, dim=1)).softmax(-1)


def test_unsupported_op_is_partitioned(tmp_path):
    torch.manual_seed(0)
    model = WithCumsum().eval()
    expected, actual, graphs = compiled_run(model, (torch.randn(2, 6, 16),), tmp_path)
    assert_close(actual, expected)
    (graph,) = graphs
    assert graph["fallback_ops"] == ["aten.cumsum"]
    assert "aten.cumsum" in graph["fallback_reasons"]
    assert graph["partitions"] == 2


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(50, 16)
        self.norm = nn.RMSNorm(16, eps=1e-6)

    def forward(self, ids):
        return F.silu(self.norm(self.table(ids)))


def test_int64_ids_and_shape_changes(tmp_path):
    """Each new (batch, sequence) shape is compiled anew; results stay exact."""
    torch.manual_seed(1)
    model = Embedder().eval()
    report = tmp_path / "report.json"
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusec", dynamic=True,
                             options={"device": "cpu", "report": str(report)})
    with torch.inference_mode():
        for shape in ((2, 5), (3, 7), (2, 5)):
            ids = torch.randint(0, 50, shape)
            assert_close(compiled(ids), model(ids))
    graphs = graphs_of(report)
    assert [[2, 5] in g["input_shapes"] for g in graphs] == [True, False]
    assert [[3, 7] in g["input_shapes"] for g in graphs] == [False, True]
    assert graphs[-1]["specializations"] == 2


def test_int64_out_of_range_is_an_error(tmp_path):
    model = Embedder().eval()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusec", options={"device": "cpu"})
    with torch.inference_mode(), pytest.raises(Exception, match="32-bit range"):
        compiled(torch.tensor([[1, 2**40]]))


def test_float16_module(tmp_path):
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(approximate="tanh"), nn.Linear(64, 32),
                          nn.LayerNorm(32)).eval().half()
    x = torch.randn(4, 32).half()
    expected, actual, graphs = compiled_run(model, (x,), tmp_path)
    assert_close(actual, expected, tol=1e-2)
    assert graphs[0]["fallback_ops"] == []


def test_autocast_around_the_call(tmp_path):
    """f32 weights called under ``torch.autocast``: the graph fusec gets already holds the
    region's casts, so the products run in bf16 as eager's do and nothing falls back; the
    result's type and values are eager's (bf16 rounding)."""
    torch.manual_seed(3)
    x = torch.randn(4, 32)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32)).eval()
    torch._dynamo.reset()
    report = tmp_path / "report.json"
    compiled = torch.compile(model, backend="fusec",
                             options={"device": "cpu", "report": str(report)})
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = model(x)
        actual = compiled(x)
    graphs = graphs_of(report)
    assert expected.dtype == torch.bfloat16
    assert_close(actual, expected, tol=3e-2)
    assert graphs and all(g["fallback_ops"] == [] for g in graphs)
    assert fused_total(graphs, "fused.matmul_bias_act") >= 1


def test_autocast_region_inside_forward(tmp_path):
    """The region's ops get the casts eager's autocast gives them (asked of PyTorch's autocast
    op by op, made explicit casts): the results have eager's types (bf16 scores, the f32 sum of
    a bf16 and an f32 tensor) and values (bf16 rounding), and nothing is left to PyTorch."""
    torch.manual_seed(3)
    model = AutocastInside().eval()
    x = torch.randn(4, 32)
    expected, actual, graphs = compiled_run(model, (x,), tmp_path)
    assert [t.dtype for t in expected] == [torch.bfloat16, torch.float32]
    assert_close(actual, expected, tol=3e-2)
    assert graphs and all(g["fallback_ops"] == [] for g in graphs), graphs
    assert fused_total(graphs, "fused.matmul_bias_act") >= 1


def test_parameter_changed_in_place_is_seen(tmp_path):
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4)).eval()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusec", options={"device": "cpu"})
    x = torch.randn(3, 8)
    with torch.no_grad():
        assert_close(compiled(x), model(x))
        model[2].bias.add_(1.0)                      # bound as it is
        assert_close(compiled(x), model(x))
        model[0].weight.mul_(-2.0)                   # transposed at compile time: folded
        assert_close(compiled(x), model(x))
        state = {k: torch.randn_like(v) for k, v in model.state_dict().items()}
        model.load_state_dict(state)
        assert_close(compiled(x), model(x))
        model[2].weight.data = torch.randn(4, 8)     # new storage, same version counter
        assert_close(compiled(x), model(x))


def test_autograd_runs_eagerly_with_one_warning():
    model = nn.Linear(4, 4)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusec", options={"device": "cpu"})
    x = torch.randn(2, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = compiled(x)
        compiled(x)
    out.sum().backward()
    assert model.weight.grad is not None
    assert sum("inference only" in str(w.message) for w in caught) == 1


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder(tmp_path, norm_first):
    """In inference, the layers take PyTorch's fast path (one op per layer), written out."""
    torch.manual_seed(4)
    layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True,
                                       norm_first=norm_first, activation="gelu")
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 8, 32)
    expected, actual, graphs = compiled_run(model, (x,), tmp_path)
    assert_close(actual, expected)
    assert all(g["fallback_ops"] == [] for g in graphs)
    attention = sum(g["fused_ops"].get(name, 0) for g in graphs
                    for name in ("nn.attention", "fused.attention_block"))
    assert attention == 2


def test_knobs_are_set_for_each_compile(monkeypatch, tmp_path):
    """The backend's ``knobs`` option and ``fusec.compile(module, knobs=...)`` are in force
    whenever the graph is compiled (at its first call, after `torch.compile` or `fusec.compile`
    has returned), and only then; a bad knob is refused when the options are read."""
    import fusec
    from fusec import knobs

    monkeypatch.delenv("FUSEC_KNOB_GRAM_SPLIT_ON_GPU", raising=False)
    seen = knob_at_each_call(monkeypatch, "lower", "gram_split_on_gpu")
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU()).eval()
    x = torch.randn(2, 8)
    expected, actual, _ = compiled_run(model, (x,), tmp_path,
                                       knobs={"gram_split_on_gpu": "off"})
    assert_close(actual, expected)
    exe = fusec.compile(model, example_inputs=(x,), device="cpu",
                        knobs={"gram_split_on_gpu": False})
    with torch.inference_mode():
        assert_close(exe(x), expected)
    compiled_run(model, (x,), tmp_path)
    assert seen == [False, False, True]
    with pytest.raises(knobs.KnobError, match="^unknown knob 'nope'"):
        fusec.compile(model, example_inputs=(x,), device="cpu", knobs={"nope": True})
    with pytest.raises(Exception, match="fusec backend: knob 'attention_mma' takes true or"):
        compiled_run(model, (x,), tmp_path, knobs={"attention_mma": "maybe"})
    with pytest.raises(Exception, match="fusec backend: knobs takes a dict"):
        compiled_run(model, (x,), tmp_path, knobs=["gram_split_on_gpu=off"])


def test_bad_indices_are_found_on_the_host_before_the_kernels():
    """What the CUDA path does with the least and greatest values of an input that kernels
    index with (`check_indices`): nothing when they fit the axis, else the error the kernel's
    own check gives, naming the first bad position."""
    from fusec.codegen.plan import IndexCheck
    from fusec.compiler.torch_partition import TensorBridge, check_indices
    from fusec.errors import IndexOutOfRangeError

    check = IndexCheck(slot=1, indices="input 'ids'", shape=(2, 3), axis=0, dim=10, place=None,
                       input="ids")
    ids = torch.tensor([[1, 2, 3], [-10, 9, 0]])
    check_indices(ids, (-10, 9), [check])
    ids[1, 1] = 10
    ids[1, 2] = 12
    with pytest.raises(IndexOutOfRangeError, match=r"index 10 at position \[1, 1\] of input "
                                                   r"'ids'.*size 10"):
        check_indices(ids, (-10, 12), [check])
    ids[0, 0] = -11
    with pytest.raises(IndexOutOfRangeError, match=r"index -11 at position \[0, 0\]"):
        check_indices(ids, (-11, 12), [check])
    bridge = TensorBridge(device=None, cuda=True)
    computed = IndexCheck(slot=2, indices="the indices", shape=(3,), axis=0, dim=4, place=None)
    bridge.index_inputs([check], ["x", "ids"], overlap=True)
    assert bridge.checked == {1: [check]} and bridge.ordered
    bridge.index_inputs([check, computed], ["x", "ids"], overlap=True)
    assert not bridge.ordered  # computed indices are only seen by the kernel: the host waits
    bridge.index_inputs([check], ["x", "ids"], overlap=False)
    assert not bridge.ordered
    assert not TensorBridge(device=None, cuda=False).ordered


def test_overlap_option_is_checked():
    from fusec.compiler.diagnostics import FusecError
    from fusec.compiler.torch_partition import Options

    assert Options.parse({"overlap": False}).overlap is False
    with pytest.raises(FusecError, match="overlap takes True or False"):
        Options.parse({"overlap": "yes"})


def test_hold_weights_once_option_is_checked_and_on_by_default():
    from fusec.compiler.diagnostics import FusecError
    from fusec.compiler.torch_partition import Options

    assert Options.parse({}).hold_weights_once is True
    assert Options.parse({"hold_weights_once": False}).hold_weights_once is False
    with pytest.raises(FusecError, match="hold_weights_once takes True or False"):
        Options.parse({"hold_weights_once": 1})


def test_cuda_launch_options_are_checked():
    from fusec.compiler.diagnostics import FusecError
    from fusec.compiler.torch_partition import Options

    assert Options.parse({}).cuda_launch is True
    assert Options.parse({}).cuda_graphs is True
    assert Options.parse({"cuda_graphs": False}).cuda_graphs is False
    for name in ("cuda_launch", "cuda_graphs"):
        with pytest.raises(FusecError, match=f"{name} takes True or False"):
            Options.parse({name: "on"})


def test_fusec_log_prints_one_line_per_graph(tmp_path, monkeypatch, capfd):
    """``FUSEC_LOG=1``: one line on stderr per compiled graph, with its launches and how its
    weights are held."""
    from fusec.runtime.limits import format_bytes

    monkeypatch.setenv("FUSEC_LOG", "1")
    torch.manual_seed(0)
    model = WithCumsum().eval()
    expected, actual, (graph,) = compiled_run(model, (torch.randn(2, 6, 16),), tmp_path)
    assert_close(actual, expected)
    (line,) = [line for line in capfd.readouterr().err.splitlines() if line.startswith("fusec:")]
    assert f"-> {graph['kernel_launches']} kernel launches on" in line
    assert "1 op(s) left to PyTorch (aten.cumsum)" in line
    shared, copied = graph["weights_shared_bytes"], graph["weights_copied_bytes"]
    assert shared + copied > 0
    assert f"weights {format_bytes(shared)} held once, {format_bytes(copied)} copied;" in line
    # CPU tensors: every partition launched through OpenCL, and the report says why
    parts = graph["partitions"]  # the cumsum splits the graph in two
    assert parts == 2 and graph["launchers"] == {"opencl (the tensors are not CUDA tensors)": parts}
    assert f"launched through opencl (the tensors are not CUDA tensors) x{parts};" in line


def test_a_driver_that_refuses_the_ptx_leaves_the_partition_to_opencl(monkeypatch):
    """Where the CUDA driver cannot take the program (`CudaLaunches` raises a `DeviceError`),
    the partition launches through OpenCL and `launcher` (the report's ``launchers``) says
    why; where it can, the launches are used and named by the graphs option."""
    from types import SimpleNamespace

    from fusec.compiler import torch_partition
    from fusec.compiler.torch_partition import FusecPartition, Options
    from fusec.runtime import cuda_launch
    from fusec.runtime.errors import DeviceError

    def refusing(exe, graphs, checked_inputs, bounded):
        raise DeviceError("the CUDA driver cannot load the program's PTX: no kernel image")

    monkeypatch.setattr(torch_partition, "other_device", lambda args: None)
    monkeypatch.setattr(cuda_launch, "unsupported_reason", lambda exe: None)
    monkeypatch.setattr(cuda_launch, "CudaLaunches", refusing)
    exe = SimpleNamespace(plan=SimpleNamespace(index_checks=[]), input_names=["x"])
    part = SimpleNamespace(bridge=SimpleNamespace(cuda=True, checked={}), options=Options(),
                           exe=exe)
    assert FusecPartition.cuda_launches(part, []) is None
    assert part.launcher == ("opencl (the CUDA driver cannot load the program's PTX: no kernel "
                             "image)")
    made = []
    monkeypatch.setattr(cuda_launch, "CudaLaunches",
                        lambda exe, graphs, checked_inputs, bounded: made.append(graphs)
                        or "launches")
    assert FusecPartition.cuda_launches(part, []) == "launches"
    assert part.launcher == "cuda graph" and made == [True]
