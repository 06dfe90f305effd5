"""Weights held fixed both ways in fusec-bench: fusec binds a workload's `params` to the device,
ONNX Runtime gets them as initializers; every runner still agrees with the reference."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from fusec.bench import fusec_runner
from fusec.bench.graph import parse
from fusec.bench.harness import OK, Settings, check, reference_outputs, run_workload
from fusec.bench.peers import NumpyPeer, OnnxRuntimePeer
from fusec.bench.workloads import select


def tiny_bert():
    (workload,) = select(["tiny_bert"], "cpu")
    graph = parse(workload.text)
    inputs = workload.inputs([t.name for t in graph.inputs], [t.shape for t in graph.inputs],
                             0, 4096)
    return workload, graph, inputs


def test_bert_weights_are_params() -> None:
    workload, graph, _ = tiny_bert()
    names = {t.name for t in graph.inputs}
    assert set(workload.params) == names - {"hidden", "mask"}


def test_fusec_binds_the_params_and_calls_with_the_rest() -> None:
    workload, graph, inputs = tiny_bert()
    params = {t.name: a for t, a in zip(graph.inputs, inputs, strict=True)
              if t.name in workload.params}
    prepared = fusec_runner.prepare(workload.text, inputs, "cpu", "default", params)
    assert check(prepared.outputs(), reference_outputs(workload.text, inputs)) < 1e-3


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None
                    or importlib.util.find_spec("onnx") is None, reason="needs onnxruntime")
def test_onnx_model_holds_the_params_as_initializers() -> None:
    from fusec.bench.peer_onnx import to_onnx

    workload, graph, inputs = tiny_bert()
    fixed = {t.name: a for t, a in zip(graph.inputs, inputs, strict=True)
             if t.name in workload.params}
    model = to_onnx(graph, fixed)
    assert [i.name for i in model.graph.input] == ["hidden", "mask"]
    assert set(workload.params) <= {t.name for t in model.graph.initializer}


def test_every_runner_agrees_with_params_held_fixed() -> None:
    workload, _, _ = tiny_bert()
    peers = [NumpyPeer()]
    if importlib.util.find_spec("onnxruntime") and importlib.util.find_spec("onnx"):
        peers.append(OnnxRuntimePeer())
    result = run_workload(workload, peers, Settings(repeat=1, warmup=0))
    for runner in result.runners:
        assert runner.status in (OK, "n/a"), (runner.name, runner.reason)
    fusec = result.runner("fusec")
    assert fusec is not None and fusec.status == OK and np.isfinite(fusec.error or 0.0)
