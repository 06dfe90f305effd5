"""`fusec.runtime.cuda_launch.OutputArena` on CPU tensors: where a graph replay's outputs lie in
one block; and the dependent-launch decision, against a stand-in for the graphs (the replay and
the launches themselves run on the GPU machine, tests/torch_frontend/test_backend_cuda.py)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fusec.codegen.plan import ValueSpec  # noqa: E402
from fusec.runtime.cuda_launch import OutputArena  # noqa: E402


def spec(name, shape, dtype):
    return ValueSpec(name, shape, np.dtype(dtype), buffer=0)


SPECS = [spec("a", (3, 5), "float32"), spec("b", (7,), "uint16"), spec("c", (2, 0), "float16"),
         spec("d", (), "int32"), spec("e", (33,), "bool"), spec("f", (4, 4), "float16")]


def test_each_output_has_its_own_aligned_bytes():
    arena = OutputArena(SPECS)
    spans = []
    for s, offset in zip(SPECS, arena.offsets, strict=True):
        assert offset % OutputArena.ALIGN == 0
        spans.append((offset, offset + s.dtype.itemsize * int(np.prod(s.shape))))
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert end <= start
    assert spans[-1][1] <= arena.nbytes < spans[-1][1] + OutputArena.ALIGN
    assert arena.nbytes % OutputArena.ALIGN == 0


def test_views_have_the_outputs_types_and_shapes_and_keep_apart():
    arena = OutputArena(SPECS)
    block = torch.zeros(arena.nbytes, dtype=torch.uint8)
    views = arena.views(block)
    assert [v.dtype for v in views] == [torch.float32, torch.bfloat16, torch.float16,
                                        torch.int32, torch.bool, torch.float16]
    assert [tuple(v.shape) for v in views] == [s.shape for s in SPECS]
    for i, view in enumerate(views):  # writing one leaves the others as they were
        view.fill_(1)
        for j, other in enumerate(views):
            if j != i and other.numel():
                assert not other.to(torch.float32).any(), (i, j)
        view.zero_()
    # a copy of the block gives the same values at the same places, in memory of its own
    views[0].copy_(torch.arange(15, dtype=torch.float32).reshape(3, 5))
    views[5].fill_(2.5)
    fresh = torch.empty_like(block)
    fresh.copy_(block)
    copies = arena.views(fresh)
    torch.testing.assert_close(copies[0], views[0])
    torch.testing.assert_close(copies[5], views[5])
    assert copies[0].data_ptr() != views[0].data_ptr()


def test_no_outputs_take_one_byte():
    assert OutputArena([]).nbytes == OutputArena.ALIGN
    assert OutputArena([]).views(torch.empty(OutputArena.ALIGN, dtype=torch.uint8)) == []


RUNS = [spec("k0", (3, 5), "float32"), spec("k1", (3, 5), "float32"), spec("k2", (3, 5), "float32"),
        spec("s", (), "int32"), spec("t", (), "int32"), spec("v0", (2, 64), "float16"),
        spec("v1", (2, 64), "float16"), spec("w", (2, 64), "uint16")]


def test_neighbours_of_one_type_and_shape_are_one_run_and_still_apart():
    arena = OutputArena(RUNS)
    assert [run[1] for run in arena.runs] == [3, 2, 2, 1]
    block = torch.zeros(arena.nbytes, dtype=torch.uint8)
    views = arena.views(block)
    assert [tuple(v.shape) for v in views] == [s.shape for s in RUNS]
    assert [v.dtype for v in views][-3:] == [torch.float16, torch.float16, torch.bfloat16]
    for view, offset in zip(views, arena.offsets, strict=True):  # each at its own offset
        assert view.data_ptr() - block.data_ptr() == offset
        assert view.is_contiguous()
    for i, view in enumerate(views):
        view.fill_(i + 1)
    for i, view in enumerate(views):
        assert (view.to(torch.float32) == i + 1).all(), i
    fresh = torch.empty_like(block)
    fresh.copy_(block)
    for i, view in enumerate(arena.views(fresh)):
        assert (view.to(torch.float32) == i + 1).all(), i


def test_a_block_is_free_only_when_no_tensor_over_it_is_alive():
    """`BlockGraph.free`, on a CPU block: false while an output, a slice of one or a view of
    the whole block is alive, true once they are gone (then the graph may write it again)."""
    from fusec.runtime.cuda_launch import BlockGraph

    arena = OutputArena(RUNS)
    recorded = BlockGraph(None, torch.zeros(arena.nbytes, dtype=torch.uint8))
    assert recorded.free()
    views = arena.views(recorded.block)
    assert not recorded.free()
    last = views[-1]
    del views
    assert not recorded.free()
    part = last[1, 2:]
    del last
    assert not recorded.free()
    del part
    assert recorded.free()
    whole = recorded.block.view(torch.float16)
    assert not recorded.free()
    del whole
    assert recorded.free()


def test_two_blocks_take_turns_and_a_third_is_copied_where_both_are_held(monkeypatch):
    """`CudaLaunches.free_block_graph`, its graphs stand-ins over CPU blocks: a loop ``y = f(x)``
    holds one call's outputs while it makes the next, so the first two graphs' blocks take
    turns; where a caller keeps both, none is free (the call copies a third's); with the knob
    ``cuda_graph_own_blocks`` off, never one."""
    from fusec.runtime.cuda_launch import HANDED_BLOCKS, BlockGraph, CudaLaunches

    arena = OutputArena(RUNS)
    launches = object.__new__(CudaLaunches)  # no GPU: only what the choice reads
    launches.own_blocks, launches.handed, launches.arena = True, [], arena
    recorded = []

    def block_graph(block=None):
        recorded.append(BlockGraph(None, torch.zeros(arena.nbytes, dtype=torch.uint8)))
        return recorded[-1]

    monkeypatch.setattr(launches, "block_graph", block_graph)

    def call():
        graph = launches.free_block_graph()
        return None if graph is None else arena.views(graph.block)

    y = call()
    first = y[0].data_ptr()
    for _ in range(6):  # y = f(x): the last call's outputs held while the next is made
        y = call()
    assert len(recorded) == HANDED_BLOCKS == 2
    kept = [y, call()]  # a caller keeps both
    del y
    assert call() is None and len(recorded) == 2
    freed = kept.pop(0)[0].data_ptr()  # one kept no more: its block is the next call's
    assert call()[0].data_ptr() == freed and first in {freed, kept[0][0].data_ptr()}
    launches.own_blocks = False
    assert launches.free_block_graph() is None


class Deciding:
    """A stand-in for the GPU parts of `CudaLaunches.decide_dependent`: each record notes
    whether the launches were dependent ones, each timing returns the figure given for it."""

    def __init__(self, times):
        self.times, self.recorded, self.forgotten = times, [], 0

    def install(self, monkeypatch, launches):
        monkeypatch.setattr(launches, "record",
                            lambda tensors, stream: self.recorded.append(launches.dependent))
        monkeypatch.setattr(launches, "time_replays",
                            lambda tensors, stream: self.times[launches.dependent])
        monkeypatch.setattr(launches, "forget_graph", self.forget)

    def forget(self):
        self.forgotten += 1


def deciding_launches():
    from fusec.runtime.cuda_launch import CudaLaunches

    launches = object.__new__(CudaLaunches)  # no GPU: only what the decision reads
    launches.launches = [None, None, None]
    launches.dependent_configs = ["config 0", "config 1", "config 2"]
    launches.timings, launches.deciding = {}, True
    launches.set_dependent(True)
    return launches


@pytest.mark.parametrize(("times", "dependent", "recorded"), [
    ({True: 0.020, False: 0.024}, True, [False, True]),
    ({True: 0.026, False: 0.024}, False, [False, True, False]),
    ({True: 0.0297, False: 0.030}, False, [False, True, False]),  # within 2%: plain launches
    ({True: 0.060, False: 0.062}, False, [False]),  # kernels of 20 us: not tried
], ids=["faster", "slower", "even", "long-kernels"])
def test_the_first_replay_keeps_the_faster_graph(monkeypatch, times, dependent, recorded):
    """`CudaLaunches.decide_dependent` (the knob `cuda_dependent_launch` with graphs): the graph
    recorded with plain launches and timed; where its 3 kernels are short (`SHORT_KERNEL_MS`:
    at most 0.030 ms a replay here) recorded with dependent launches and timed too, and those
    kept where faster, else the plain graph recorded again (the H200's batch 1 keeps them;
    batch 32's, BERT-base's 22 us kernels, were 3% faster in this timing but 5.6% slower back
    to back, so they are not tried)."""
    launches = deciding_launches()
    stand_in = Deciding(times)
    stand_in.install(monkeypatch, launches)
    launches.decide_dependent([], None)
    assert stand_in.recorded == recorded and stand_in.forgotten == len(recorded)
    assert launches.dependent is dependent and not launches.deciding
    assert launches.configs == (launches.dependent_configs if dependent else [None] * 3)
    assert launches.timings == {d: times[d] for d in sorted(set(recorded))}
