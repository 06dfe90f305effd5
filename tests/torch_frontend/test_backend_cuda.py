"""The backend with CUDA tensors (`TensorBridge` over `fusec.runtime.cuda_interop`): run on the
GPU machine (`FUSEC_TEST_DEVICE=gpu python3 -m pytest tests/torch_frontend/test_backend_cuda.py`,
bench/gpu.sh torch-gpu), skipped where torch has no CUDA or OpenCL cannot share its memory.

Each input crosses with one wait on PyTorch's stream, int64 ones narrowed to int32 by the copy
and range-checked in that same wait; outputs are CUDA tensors over fusec's memory that stay
valid after later calls. A weight the GPU reads as it is moves into fusec's memory, the
parameter a view of it, and is held once (`fusec.compiler.torch_weights`)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402


def cuda_device():
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    from fusec.runtime.cuda_interop import unsupported_reason
    from fusec.runtime.device import select_device

    try:
        device = select_device("gpu")
    except Exception as e:  # no OpenCL GPU here
        pytest.skip(f"no OpenCL GPU: {e}")
    reason = unsupported_reason(device)
    if reason is not None:
        pytest.skip(reason)
    return device


class Embedder(nn.Module):
    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.table = nn.Embedding(50, 64, dtype=dtype)
        self.norm = nn.LayerNorm(64, dtype=dtype)
        self.out = nn.Linear(64, 32, dtype=dtype)

    def forward(self, ids, scale):
        return self.out(F.gelu(self.norm(self.table(ids)))) * scale


PATHS = {"cuda": {"cuda_graphs": False}, "cuda graph": {}, "opencl": {"cuda_launch": False}}
"""How the kernels are launched (`fusec.runtime.cuda_launch`, one ``cuLaunchKernel`` a kernel;
replayed from a CUDA graph, the default; through OpenCL), by the backend's options."""


def compiled(model, path="cuda", **options):
    """`model` through the backend on the GPU, launched by `path` (`PATHS`), more `options`."""
    torch._dynamo.reset()
    return torch.compile(model, backend="fusec",
                         options={"device": "gpu", **PATHS[path], **options})


LAUNCHER = {"cuda": "cuda", "cuda graph": "cuda graph",
            "opencl": "opencl (options cuda_launch=False)"}
"""The report's name for each path's launcher (``launchers``)."""


def assert_launched_by(report, path):
    import json

    for graph in json.loads(report.read_text())["graphs"]:
        assert set(graph["launchers"]) == {LAUNCHER[path]}, graph["launchers"]


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float16, 1e-2),
                                       (torch.bfloat16, 3e-2)])
def test_cuda_tensors_in_and_out(dtype, tol, path, tmp_path):
    cuda_device()
    torch.manual_seed(0)
    model = Embedder(dtype).eval().cuda()
    report = tmp_path / "report.json"
    fn = compiled(model, path, report=str(report))
    with torch.inference_mode():
        for _ in range(3):  # a graph is recorded at the first call and replayed after
            ids = torch.randint(0, 50, (4, 16), device="cuda")
            scale = torch.rand(32, device="cuda", dtype=dtype)
            got = fn(ids, scale)
            assert got.is_cuda and got.dtype == dtype
            torch.testing.assert_close(got, model(ids, scale), atol=tol, rtol=tol)
    assert_launched_by(report, path)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_outputs_outlive_later_calls(path):
    """A call's output keeps its values while later calls run (its memory is not reused)."""
    cuda_device()
    torch.manual_seed(1)
    model = Embedder().eval().cuda()
    fn = compiled(model, path)
    with torch.inference_mode():
        inputs = [(torch.randint(0, 50, (4, 16), device="cuda"),
                   torch.rand(32, device="cuda")) for _ in range(4)]
        outputs = [fn(*args) for args in inputs]
        for args, got in zip(inputs, outputs, strict=True):
            torch.testing.assert_close(got, model(*args), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_int64_outside_int32_is_refused_on_cuda(path):
    cuda_device()
    model = Embedder().eval().cuda()
    fn = compiled(model, path)
    with torch.inference_mode():
        fn(torch.randint(0, 50, (2, 8), device="cuda"), torch.ones(32, device="cuda"))
        ids = torch.randint(0, 50, (2, 8), device="cuda")
        ids[1, 3] = 2**40
        with pytest.raises(Exception, match="32-bit range"):
            fn(ids, torch.ones(32, device="cuda"))
        ids[1, 3] = -(2**33)
        with pytest.raises(Exception, match="32-bit range"):
            fn(ids, torch.ones(32, device="cuda"))
        ids[1, 3] = 7  # and the next good call is right
        torch.testing.assert_close(fn(ids, torch.ones(32, device="cuda")),
                                   model(ids, torch.ones(32, device="cuda")),
                                   atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_index_past_the_table_is_refused_on_cuda(path):
    """An id inside int32 but past the embedding table: the gather's own check refuses it."""
    cuda_device()
    model = Embedder().eval().cuda()
    fn = compiled(model, path)
    with torch.inference_mode():
        ids = torch.randint(0, 50, (2, 8), device="cuda")
        ids[1, 2] = 50
        with pytest.raises(Exception, match=r"index 50 at position \[1, 2\].*size 50"):
            fn(ids, torch.ones(32, device="cuda"))
        ids[1, 2] = -51
        with pytest.raises(Exception, match=r"index -51 at position \[1, 2\]"):
            fn(ids, torch.ones(32, device="cuda"))
        ids[1, 2] = 49  # and the call after the errors is right
        torch.testing.assert_close(fn(ids, torch.ones(32, device="cuda")),
                                   model(ids, torch.ones(32, device="cuda")),
                                   atol=1e-4, rtol=1e-4)


class Heavy(nn.Module):
    """Enough work per call (about a GFLOP) that PyTorch's next op would read stale memory if
    its stream were not ordered after fusec's kernels."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(100, 1024)
        self.up = nn.Linear(1024, 4096)
        self.down = nn.Linear(4096, 1024)

    def forward(self, ids):
        return self.down(F.gelu(self.up(self.table(ids))))


@pytest.mark.parametrize("overlap", [True, False])
def test_back_to_back_calls_read_finished_outputs(monkeypatch, overlap):
    """Outputs handed over before the kernels finish (``overlap``, the default) are read by
    PyTorch's next ops only once written: eight calls back to back, each output reduced at
    once on the stream, equal eager's; the ordered path is the one taken."""
    cuda_device()
    from fusec.runtime import cuda_interop

    taken = []
    original = cuda_interop.to_torch_all

    def recording(arrays, ordered=False):
        taken.append(ordered and cuda_interop.stream_order(arrays[0].device) is not None)
        return original(arrays, ordered)

    monkeypatch.setattr(cuda_interop, "to_torch_all", recording)
    torch.manual_seed(2)
    model = Heavy().eval().cuda()
    torch._dynamo.reset()
    fn = torch.compile(model, backend="fusec", options={"device": "gpu", "overlap": overlap,
                                                        "cuda_launch": False})
    with torch.inference_mode():
        inputs = [torch.randint(0, 100, (64, 128), device="cuda") for _ in range(8)]
        fn(inputs[0])
        sums = [fn(ids).double().sum(dim=-1) for ids in inputs]
        expected = [model(ids).double().sum(dim=-1) for ids in inputs]
    for got, want in zip(sums, expected, strict=True):
        torch.testing.assert_close(got, want, atol=1e-2, rtol=1e-4)
    assert taken and all(t == overlap for t in taken)


@pytest.mark.parametrize("path", ["cuda", "cuda graph"])
def test_back_to_back_cuda_launches_read_finished_outputs(path):
    """Kernels launched on PyTorch's stream: eight calls back to back, each output reduced at
    once on the stream, equal eager's, the outputs of distinct calls distinct tensors."""
    cuda_device()
    torch.manual_seed(2)
    model = Heavy().eval().cuda()
    fn = compiled(model, path)
    with torch.inference_mode():
        inputs = [torch.randint(0, 100, (64, 128), device="cuda") for _ in range(8)]
        fn(inputs[0])
        outputs = [fn(ids) for ids in inputs]
        sums = [out.double().sum(dim=-1) for out in outputs]
        expected = [model(ids).double().sum(dim=-1) for ids in inputs]
    assert len({out.data_ptr() for out in outputs}) == len(outputs)
    for got, want in zip(sums, expected, strict=True):
        torch.testing.assert_close(got, want, atol=1e-2, rtol=1e-4)


@pytest.mark.parametrize("path", ["cuda", "cuda graph"])
def test_cuda_launches_follow_the_callers_stream(path):
    """A call on a side stream, then one on the default stream: the kernels run on the
    stream current at the call, the second after the first (they share intermediates)."""
    cuda_device()
    torch.manual_seed(3)
    model = Heavy().eval().cuda()
    fn = compiled(model, path)
    with torch.inference_mode():
        ids = [torch.randint(0, 100, (64, 128), device="cuda") for _ in range(2)]
        fn(ids[0])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            first = fn(ids[0])
        second = fn(ids[1])
        torch.cuda.current_stream().wait_stream(side)
        torch.testing.assert_close(first, model(ids[0]), atol=1e-3, rtol=1e-3)
        torch.testing.assert_close(second, model(ids[1]), atol=1e-3, rtol=1e-3)


class Projections(nn.Module):
    """Returns a projection that later ops read too (16 MiB: 4096 rows of 1024 floats) and
    what they make of it: outputs large enough that each replay writes them in place."""

    def __init__(self):
        super().__init__()
        self.key = nn.Linear(256, 1024)
        self.out = nn.Linear(1024, 256)

    def forward(self, x):
        key = self.key(x)
        return key, self.out(F.gelu(key))


def hopper_device():
    cuda_device()
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("dependent launches need a Hopper GPU or later")


@pytest.mark.parametrize("dependent", [False, True])
@pytest.mark.parametrize("new_outputs", [True, False])
def test_graph_outputs_lie_in_a_new_block_each_call(monkeypatch, new_outputs, dependent):
    """Outputs of 8 MiB or more: each replay writes them into a block of its own, the graph's
    nodes that read or write them pointed at it (the knob ``cuda_graph_new_outputs``), and the
    graph holds no block of its own; off, the graph's block is copied out. Either way each
    call's outputs equal eager's after later calls ran, the kernels dependent launches or
    not (kept so, whatever the first call's timing finds: `cuda_launch.short_kernels` and
    `prefers_dependent`)."""
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime import cuda_launch

    if dependent:
        hopper_device()
        monkeypatch.setattr(cuda_launch, "short_kernels", lambda *args: True)
        monkeypatch.setattr(cuda_launch, "prefers_dependent", lambda *args: True)
    else:
        cuda_device()
    monkeypatch.setenv("FUSEC_KNOB_CUDA_GRAPH_NEW_OUTPUTS", "1" if new_outputs else "0")
    monkeypatch.setenv("FUSEC_KNOB_CUDA_DEPENDENT_LAUNCH", "1" if dependent else "0")
    torch.manual_seed(5)
    model = Projections().eval().cuda()
    fn = compiled(model, "cuda graph")
    with torch.inference_mode(), recorded_partitions() as calls:
        inputs = [torch.randn(4096, 256, device="cuda") for _ in range(4)]
        outputs = [fn(x) for x in inputs]
    launches = list({id(part): part.launches for part, _ in calls}.values())
    assert [(each.exec is not None, not each.handed) for each in launches] == \
        [(new_outputs, new_outputs)]
    assert all(each.dependent == dependent for each in launches)
    assert len({key.data_ptr() for key, _ in outputs}) == len(inputs)
    with torch.inference_mode():
        for x, got in zip(inputs, outputs, strict=True):
            for have, want in zip(got, model(x), strict=True):
                torch.testing.assert_close(have, want, atol=1e-4, rtol=1e-4)


def test_graph_blocks_take_turns_and_none_held_is_overwritten():
    """Outputs under 8 MiB lie in a block of a graph's own: a loop ``y = fn(x)`` holds the
    last call's outputs while it makes the next, so two graphs' blocks take turns and no call
    allocates or copies; a slice of an output kept, or outputs kept in a list, hold their
    block, and later calls leave their values as they were (a third graph's block copied)."""
    from fusec.bench.torch_partition_profile import recorded_partitions

    cuda_device()
    torch.manual_seed(6)
    model = Embedder().eval().cuda()
    fn = compiled(model, "cuda graph")
    with torch.inference_mode(), recorded_partitions() as calls:
        args = [(torch.randint(0, 50, (4, 16), device="cuda"), torch.rand(32, device="cuda"))
                for _ in range(8)]
        addresses = []
        for each in args:
            y = fn(*each)
            torch.testing.assert_close(y, model(*each), atol=1e-4, rtol=1e-4)
            addresses.append(y.data_ptr())
        kept = fn(*args[0])[1:3]  # a slice of an output holds its block
        kept_value = model(*args[0])[1:3]
        held = [fn(*each) for each in args[1:5]]
        torch.cuda.synchronize()
        for each, got in zip(args[1:5], held, strict=True):
            torch.testing.assert_close(got, model(*each), atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(kept, kept_value, atol=1e-4, rtol=1e-4)
    assert len(set(addresses)) == 2 and addresses[2:] == addresses[:-2], addresses
    launches = list({id(part): part.launches for part, _ in calls}.values())
    assert [(len(each.handed), each.copied is not None) for each in launches] == [(2, True)]


class Centred(Heavy):
    """As `Heavy`, its projection centred over the batch: the kernels after the projection
    read rows of it from every part of it, so one that started before the projection's last
    work-groups finished would read rows not yet written."""

    def forward(self, ids):
        hidden = F.gelu(self.up(self.table(ids)))
        return self.down(hidden - hidden.mean(dim=0, keepdim=True))


@pytest.mark.parametrize("path", ["cuda", "cuda graph"])
def test_dependent_launches_read_finished_outputs(monkeypatch, path):
    """Dependent launches (the knob ``cuda_dependent_launch``): each kernel may start while
    the kernel before it runs, and waits for it itself. Eight calls back to back, each kernel
    reading the one before's output, equal eager's. With graphs the first call times both
    and the rule (`cuda_launch.short_kernels`, `prefers_dependent`: 2% faster) is set aside here
    to keep them; without graphs the launches are plain ones, the knob on or not."""
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime import cuda_launch

    hopper_device()
    monkeypatch.setenv("FUSEC_KNOB_CUDA_DEPENDENT_LAUNCH", "1")
    monkeypatch.setattr(cuda_launch, "short_kernels", lambda *args: True)
    monkeypatch.setattr(cuda_launch, "prefers_dependent", lambda *args: True)
    torch.manual_seed(6)
    model = Centred().eval().cuda()
    fn = compiled(model, path)
    with torch.inference_mode(), recorded_partitions() as calls:
        inputs = [torch.randint(0, 100, (2, 16), device="cuda") for _ in range(8)]
        outputs = [fn(ids) for ids in inputs]
        expected = [model(ids) for ids in inputs]
    graphs = path == "cuda graph"
    assert calls and all(part.launches.dependent == graphs for part, _ in calls), [
        [(launch.kernel, launch.global_size, launch.local_size)
         for launch in part.exe.plan.launches] for part, _ in calls]
    assert all((c is not None) == graphs for part, _ in calls for c in part.launches.configs)
    if graphs:  # both graphs timed at the first call
        assert all(set(part.launches.timings) == {True, False} for part, _ in calls)
    for got, want in zip(outputs, expected, strict=True):
        torch.testing.assert_close(got, want, atol=1e-3, rtol=1e-3)


class Tables(nn.Module):
    """A table the GPU reads as it is and large enough to move into fusec's memory (a few
    MiB: the shared pool allocates in the driver's granules, typically 2 MiB, and a tensor is
    moved where its granules cost less than a copy), and a Linear whose weight and bias are
    copied (folded; too small to move)."""

    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.table = nn.Embedding(4096, 512, dtype=dtype)
        self.norm = nn.LayerNorm(512, dtype=dtype)
        self.out = nn.Linear(512, 256, dtype=dtype)

    def forward(self, ids):
        return self.out(self.norm(self.table(ids)))


def bound_table(fn, ids, table):
    """(start, size) of the shared allocation of the fusec device array bound over `table`'s
    memory in a partition that one call of `fn` runs, or None."""
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime.cuda_interop import shared_pool

    with torch.inference_mode(), recorded_partitions() as calls:
        fn(ids)
    for part, _ in calls:
        pool = shared_pool(part.exe.device)
        for array in part.exe.param_arrays.values():
            allocation = pool.allocation(array.buffer)
            if allocation is None:
                continue
            start, size = allocation.pointer.value, allocation.size
            if start <= table.data_ptr() and table.data_ptr() + table.nbytes <= start + size:
                return start, size
    return None


def launch_bytes(fn, ids):
    """The bytes the partitions' CUDA launches hold in PyTorch's memory, after a call of `fn`
    (`torch_models.launch_bytes`)."""
    from fusec.bench.torch_models import launch_bytes as held_by_launches

    with torch.inference_mode():
        return held_by_launches(lambda: fn(ids))


def held_once_run(model, ids, tmp_path, tol):
    """`model` through the backend with ``hold_weights_once``, called once on `ids` and checked
    against eager: (the compiled function, its report's graph, the bytes PyTorch's allocated
    memory dropped by)."""
    import gc
    import json

    with torch.inference_mode():
        expected = model(ids)
    gc.collect()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch._dynamo.reset()
    report = tmp_path / "report.json"
    fn = torch.compile(model, backend="fusec", options={
        "device": "gpu", "report": str(report), "hold_weights_once": True})
    with torch.inference_mode():
        got = fn(ids)
        torch.testing.assert_close(got, expected, atol=tol, rtol=tol)
    del got
    gc.collect()
    torch.cuda.synchronize()
    (graph,) = json.loads(report.read_text())["graphs"]
    return fn, graph, before - torch.cuda.memory_allocated()


def test_cuda_weights_stay_in_pytorchs_memory_when_asked():
    """With ``hold_weights_once`` off PyTorch keeps its parameters' memory: the table's
    address is the one it had, and the outputs are eager's."""
    cuda_device()
    torch.manual_seed(6)
    model = Tables().eval().cuda()
    pointer = model.table.weight.data_ptr()
    ids = torch.randint(0, 4096, (8, 64), device="cuda")
    fn = compiled(model, hold_weights_once=False)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-4, rtol=1e-4)
    assert model.table.weight.data_ptr() == pointer


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.bfloat16, 3e-2)])
def test_weights_are_held_once_on_cuda(tmp_path, dtype, tol):
    """The table is moved into fusec's memory: PyTorch's allocated bytes drop by about the
    report's ``weights_shared_bytes`` (at least the table's), the parameter (the same object,
    its values kept) lies inside the device array fusec binds, and the outputs are eager's."""
    cuda_device()
    torch.manual_seed(3)
    model = Tables(dtype).eval().cuda()
    table = model.table.weight
    values = table.detach().clone()
    ids = torch.randint(0, 4096, (8, 64), device="cuda")
    fn, graph, dropped = held_once_run(model, ids, tmp_path, tol)
    shared = graph["weights_shared_bytes"]
    assert shared >= table.nbytes and graph["weights_copied_bytes"] > 0
    assert dropped + launch_bytes(fn, ids) >= 0.9 * shared, (dropped, shared)
    assert model.table.weight is table
    torch.testing.assert_close(table.detach(), values, rtol=0, atol=0)
    assert bound_table(fn, ids, table) is not None
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=tol, rtol=tol)


def test_changes_in_place_are_seen_on_cuda():
    """After the first call, a change through ``.data`` (no version change: seen because the
    kernels read the parameter's memory), an in-place op and ``load_state_dict`` are seen by
    the next call, the table staying in the same fusec memory (not copied again); a replaced
    parameter is moved and bound at the next call."""
    cuda_device()
    torch.manual_seed(4)
    model = Tables().eval().cuda()
    ids = torch.randint(0, 4096, (8, 64), device="cuda")
    fn = compiled(model, hold_weights_once=True)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-4, rtol=1e-4)
    table = model.table.weight
    where = bound_table(fn, ids, table)
    pointer = table.data_ptr()
    assert where is not None
    table.data.mul_(2)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-4, rtol=1e-4)
    with torch.no_grad():
        table.add_(0.5)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-4, rtol=1e-4)
    model.load_state_dict({k: torch.randn_like(v) for k, v in model.state_dict().items()})
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-4, rtol=1e-4)
    assert table.data_ptr() == pointer and bound_table(fn, ids, table) == where
    model.table.weight = nn.Parameter(torch.randn(4096, 512, device="cuda"))
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-4, rtol=1e-4)
    assert bound_table(fn, ids, model.table.weight) is not None


def test_the_module_outlives_the_compiled_function_on_cuda():
    """Once the compiled function and dynamo's caches are gone, the moved table still holds
    its values (its memory kept alive by the tensor), the module computes what it did, and
    trains (the parameter is no inference tensor)."""
    import gc

    cuda_device()
    torch.manual_seed(5)
    model = Tables().eval().cuda()
    ids = torch.randint(0, 4096, (8, 64), device="cuda")
    values = model.table.weight.detach().clone()
    fn = compiled(model, hold_weights_once=True)
    with torch.inference_mode():
        expected = fn(ids).clone()
    assert bound_table(fn, ids, model.table.weight) is not None
    del fn
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.synchronize()
    torch.testing.assert_close(model.table.weight.detach(), values, rtol=0, atol=0)
    assert not model.table.weight.is_inference()
    out = model(ids)
    torch.testing.assert_close(out.detach(), expected, atol=1e-4, rtol=1e-4)
    out.square().mean().backward()
    assert model.table.weight.grad is not None


class LastHidden(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids).last_hidden_state


def wide_bert(dtype):
    """A 2-layer BERT of BERT-base's widths on CUDA: each GEMM's weight takes more than half a
    CUDA granule (2 MiB), so that holding it in fusec's shared memory costs less than a copy,
    and products of whole 128 x 128 tiles at B=2, S=128 (``wgmma``: B stored ``[N, K]``, as
    ``nn.Linear`` holds it). Every parameter perturbed: no bias is a splat written inline."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(7)
    config = transformers.BertConfig(vocab_size=1000, hidden_size=768, num_hidden_layers=2,
                                     num_attention_heads=12, intermediate_size=3072,
                                     max_position_embeddings=256)
    model = transformers.BertModel(config, add_pooling_layer=False).to(dtype).eval().cuda()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    return LastHidden(model)


def bound_spans(fn, *inputs):
    """(start, end) of each CUDA-shared allocation that a partition run by one call of `fn`
    binds as a device array."""
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime.cuda_interop import shared_pool

    with torch.inference_mode(), recorded_partitions() as calls:
        fn(*inputs)
    spans = set()
    for part, _ in calls:
        pool = shared_pool(part.exe.device)
        for array in part.exe.param_arrays.values():
            allocation = pool.allocation(array.buffer)
            if allocation is not None:
                spans.add((allocation.pointer.value, allocation.pointer.value + allocation.size))
    return spans


def inside(tensor, spans):
    return any(start <= tensor.data_ptr() and tensor.data_ptr() + tensor.nbytes <= end
               for start, end in spans)


def linear_weights(model):
    return {n: m.weight for n, m in model.named_modules() if isinstance(m, nn.Linear)}


def qkv_weights(model, layer):
    attention = model.model.encoder.layer[layer].attention.self
    return [attention.query.weight, attention.key.weight, attention.value.weight]


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 6e-2),
                                       (torch.float32, 1e-4)])
def test_linear_weights_are_held_once_on_cuda(tmp_path, monkeypatch, dtype, tol):
    """Every ``nn.Linear`` weight, folded (transposed; q, k and v concatenated) into a buffer
    that holds its bytes as a range, is moved into that buffer in fusec's memory, the
    Parameter a view of its range (q, k and v one after the other): only small tensors stay
    copied, PyTorch's allocated bytes drop by the bytes held once, the parameters keep their
    objects and values, and the outputs are eager's. f32 at B=8 (split TF32 on a Hopper GPU,
    the knob `wgmma_split_tf32`, or the FFMA kernel, both reading B ``[N, K]``, the FFMA one with
    the knob `ffma_b_k_major`, on here; at B=2 its products are split along K on the portable
    kernel, which reads B as it is)."""
    cuda_device()
    monkeypatch.setenv("FUSEC_KNOB_FFMA_B_K_MAJOR", "1")
    model = wide_bert(dtype)
    ids = torch.randint(0, 1000, (8 if dtype == torch.float32 else 2, 128), device="cuda")
    objects = [id(p) for p in model.parameters()]
    values = {k: v.clone() for k, v in model.state_dict().items()}
    fn, graph, dropped = held_once_run(model, ids, tmp_path, tol)
    shared, copied = graph["weights_shared_bytes"], graph["weights_copied_bytes"]
    weights = linear_weights(model)
    assert len(weights) == 12
    assert shared >= sum(w.nbytes for w in weights.values())
    # biases, norms, position embeddings: under 2 MiB in 16 bits, 4 MiB in f32
    assert copied < 2**20 * dtype.itemsize, (shared, copied)
    # what the CUDA launches hold in PyTorch's memory (intermediates, constants) is fusec's
    assert dropped + launch_bytes(fn, ids) >= 0.9 * shared, (dropped, shared)
    spans = bound_spans(fn, ids)
    for name, weight in weights.items():
        assert inside(weight, spans), name
    for layer in range(2):
        q, k, v = qkv_weights(model, layer)
        assert k.data_ptr() == q.data_ptr() + q.nbytes and v.data_ptr() == k.data_ptr() + k.nbytes
    assert [id(p) for p in model.parameters()] == objects
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, values[key], rtol=0, atol=0)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 6e-2)])
def test_llama_gate_and_up_weights_are_held_once_on_cuda(tmp_path, dtype, tol):
    """A Llama MLP's gate and up projections are one product with the SwiGLU in its epilogue
    on a Hopper GPU (`fusec.codegen.swiglu_epilogue`), whose B holds the two weights as they
    lie, transposed and one after the other (the kernel pairs their rows as it reads them): so
    both are moved into that buffer and held once, a change in place reaches the kernels,
    and the outputs are eager's."""
    transformers = pytest.importorskip("transformers")
    cuda_device()
    torch.manual_seed(12)
    # gate and up 4 MiB together: the shared pool's granules (2 MiB) cost less than a copy
    config = transformers.LlamaConfig(hidden_size=512, intermediate_size=2048,
                                      num_attention_heads=8, num_key_value_heads=4,
                                      num_hidden_layers=2, vocab_size=1000)
    model = LastHidden(transformers.LlamaModel(config).to(dtype).eval().cuda())
    ids = torch.randint(0, 1000, (2, 128), device="cuda")
    fn, graph, _ = held_once_run(model, ids, tmp_path, tol)
    mlps = [layer.mlp for layer in model.model.layers]
    spans = bound_spans(fn, ids)
    for mlp in mlps:
        gate, up = mlp.gate_proj.weight, mlp.up_proj.weight
        assert inside(gate, spans) and inside(up, spans)
        first, second = sorted((gate, up), key=lambda w: w.data_ptr())
        assert second.data_ptr() == first.data_ptr() + first.nbytes
    assert graph["weights_copied_bytes"] < sum(
        m.gate_proj.weight.nbytes for m in mlps), graph["weights_copied_bytes"]
    with torch.no_grad():
        mlps[0].up_proj.weight.mul_(0.5)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=tol, rtol=tol)


def test_changes_to_linear_weights_are_seen_on_cuda(monkeypatch):
    """Changes in place to weights held as ranges of fusec's buffers (through ``.data``, an
    in-place op) reach the kernels with no compile and nothing moved; ``load_state_dict``
    (which changes folded position embeddings too: compiled again) finds the weights where
    they lie and binds those buffers again, allocating no new shared memory; a replaced
    weight is moved and bound at the next call."""
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime.cuda_interop import shared_pool
    from tests.torch_frontend.test_backend_weights import counted_builds

    cuda_device()
    builds = counted_builds(monkeypatch)
    model = wide_bert(torch.float16)
    ids = torch.randint(0, 1000, (2, 128), device="cuda")
    fn = compiled(model, hold_weights_once=True)

    def check():
        with torch.inference_mode():
            torch.testing.assert_close(fn(ids), model(ids), atol=1e-2, rtol=1e-2)

    check()
    built = len(builds)
    weights = linear_weights(model)
    pointers = {n: w.data_ptr() for n, w in weights.items()}
    q, k, v = qkv_weights(model, 0)
    k.data.mul_(2)
    check()
    with torch.no_grad():
        v.add_(0.01)
        weights["model.encoder.layer.1.output.dense"].mul_(-1)
    check()
    assert len(builds) == built
    assert {n: w.data_ptr() for n, w in weights.items()} == pointers
    with torch.inference_mode(), recorded_partitions() as calls:
        fn(ids)
    pool = shared_pool(calls[0][0].exe.device)
    allocated = pool.allocated_bytes
    model.load_state_dict({key: value + 0.01 * torch.randn_like(value)
                           if value.is_floating_point() else value
                           for key, value in model.state_dict().items()})
    check()
    check()
    assert {n: w.data_ptr() for n, w in weights.items()} == pointers
    assert pool.allocated_bytes == allocated
    attention = model.model.encoder.layer[0].attention.self
    attention.key.weight = nn.Parameter(torch.randn_like(k) * 0.02)
    check()
    q, k, v = qkv_weights(model, 0)
    assert inside(k, bound_spans(fn, ids))
    assert k.data_ptr() == q.data_ptr() + q.nbytes and v.data_ptr() == k.data_ptr() + k.nbytes


def test_a_bert_outlives_the_compiled_function_on_cuda():
    """Once the compiled function and dynamo's caches are gone, the weights held as ranges of
    fusec's buffers keep their values (their views keep the memory alive), the module
    computes what it did, and trains."""
    import gc

    cuda_device()
    model = wide_bert(torch.float16)
    ids = torch.randint(0, 1000, (2, 128), device="cuda")
    values = {k: v.clone() for k, v in model.state_dict().items()}
    fn = compiled(model, hold_weights_once=True)
    with torch.inference_mode():
        expected = fn(ids).clone()
    assert inside(qkv_weights(model, 1)[2], bound_spans(fn, ids))
    del fn
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.synchronize()
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, values[key], rtol=0, atol=0)
    assert not any(p.is_inference() for p in model.parameters())
    out = model(ids)
    torch.testing.assert_close(out.detach(), expected, atol=1e-2, rtol=1e-2)
    out.float().square().mean().backward()
    assert qkv_weights(model, 0)[1].grad is not None


@pytest.mark.parametrize("as_held", [True, False], ids=["as-held", "transposed"])
def test_gpt2_conv1d_weights_on_cuda(tmp_path, as_held):
    """GPT-2's ``Conv1D`` weights are ``[K, N]``. With the knob `wgmma_b_as_held` (the default)
    the plan keeps them so and the ``wgmma`` products read them MN-major: each is held once,
    inside fusec's memory. Off, a ``wgmma`` product stores them ``[N, K]``: no range of a
    buffer holds one (`weight_placement`), so they stay copied, the copies in the
    CUDA-shared pool (`PartitionWeights.copies`), so that the CUDA launches hold no second
    copy in PyTorch's memory. Either way the token embeddings, read as they are, are held
    once, and the outputs are eager's, before and after a change in place."""
    import json

    transformers = pytest.importorskip("transformers")
    cuda_device()
    torch.manual_seed(8)
    config = transformers.GPT2Config(n_layer=2, n_embd=768, n_head=12, vocab_size=1000,
                                     n_positions=256)
    model = LastHidden(transformers.GPT2Model(config).half().eval().cuda())
    ids = torch.randint(0, 1000, (2, 128), device="cuda")
    with torch.inference_mode():
        expected = model(ids)
    torch._dynamo.reset()
    report = tmp_path / "report.json"
    fn = torch.compile(model, backend="fusec", options={
        "device": "gpu", "report": str(report), "hold_weights_once": True,
        "knobs": {"wgmma_b_as_held": as_held}})
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), expected, atol=1e-2, rtol=1e-2)
    (graph,) = json.loads(report.read_text())["graphs"]
    conv = [m.weight for m in model.modules() if type(m).__name__ == "Conv1D"]
    conv_bytes = sum(w.nbytes for w in conv)
    spans = bound_spans(fn, ids)
    assert len(conv) == 8 and inside(model.model.wte.weight, spans)
    if as_held:
        assert all(inside(w, spans) for w in conv)
        assert graph["weights_copied_bytes"] < conv_bytes // 4, graph["weights_copied_bytes"]
    else:
        assert graph["weights_copied_bytes"] >= conv_bytes
        assert not any(inside(w, spans) for w in conv)
    assert launch_bytes(fn, ids) < conv_bytes // 4, (launch_bytes(fn, ids), conv_bytes)
    with torch.no_grad():
        conv[0].mul_(0.5)
    with torch.inference_mode():
        torch.testing.assert_close(fn(ids), model(ids), atol=1e-2, rtol=1e-2)
    assert launch_bytes(fn, ids) < conv_bytes // 4, (launch_bytes(fn, ids), conv_bytes)


class Mover(nn.Module):
    """A 16-bit elementwise kernel whose accesses are 16-byte aligned in fusec's buffers: the
    knob ``gpu_half_vectors`` reads and writes it a ``uint4`` at a time."""

    def forward(self, x, y):
        return torch.tanh(x * y) + y


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_vectors_read_misaligned_inputs(path, dtype):
    """With ``gpu_half_vectors`` on, the kernel reads its inputs 16 bytes at a time: inputs
    that start 2, 6 and 8 bytes into their storage (slices PyTorch hands over as they are,
    contiguous) give eager's numbers on every launch path, never a misaligned access."""
    cuda_device()
    torch.manual_seed(5)
    fn = compiled(Mover(), path, knobs={"gpu_half_vectors": True})
    with torch.inference_mode():
        for start in (1, 3, 4, 0):
            base = torch.randn(8 * 64 + start, device="cuda", dtype=dtype)
            x = base[start:].view(8, 64)
            y = torch.randn(8, 64, device="cuda", dtype=dtype)
            assert x.is_contiguous() and x.data_ptr() % 16 == (2 * start) % 16
            torch.testing.assert_close(fn(x, y), Mover()(x, y), atol=3e-2, rtol=3e-2)
