"""The f16 and bf16 BERT and Llama rows of fusec-bench: their programs are 16-bit throughout,
and fusec compiles them and agrees with the reference within the row's tolerance (small
shapes of the same writers; the full-size rows differ only in their sizes)."""

from __future__ import annotations

import numpy as np
import pytest

from fusec.bench.graph import parse
from fusec.bench.harness import OK, Settings, run_workload
from fusec.bench.workloads import (
    BF16_LAYER_TOLERANCE,
    F16_LAYER_TOLERANCE,
    select,
    tiny_workloads,
)
from fusec.dtypes import BF16_HOST

HOST_DTYPES = {"f16": np.dtype(np.float16), "bf16": BF16_HOST}
GRAPH_DTYPES = {"f16": "float16", "bf16": "bfloat16"}
TINY = {w.name: w for w in tiny_workloads()}


def tiny(name: str):  # type: ignore[no-untyped-def]
    return TINY[name]


@pytest.mark.parametrize("name", ["bert_b1_f16", "bert_b32_f16", "bert_b32_bf16",
                                  "llama_b1_f16", "llama_b32_f16", "llama_b32_bf16"])
def test_full_size_rows_are_16_bit_throughout(name: str) -> None:
    (workload,) = select([name], "gpu")
    graph = parse(workload.text, name)
    element = name.rsplit("_", 1)[1]
    assert workload.element == element
    assert {t.dtype for t in graph.inputs} == {GRAPH_DTYPES[element]}
    assert {graph.shapes[n].dtype for n in graph.outputs} == {GRAPH_DTYPES[element]}
    assert workload.tolerance == {"f16": F16_LAYER_TOLERANCE,
                                  "bf16": BF16_LAYER_TOLERANCE}[element]
    shapes = [t.shape for t in graph.inputs]
    inputs = workload.inputs([t.name for t in graph.inputs], [(1,) * len(s) for s in shapes])
    assert {a.dtype for a in inputs} == {HOST_DTYPES[element]}


def test_batch_32_rows_are_gpu_only_and_batch_1_rows_run_on_the_cpu() -> None:
    assert [w.name for w in select(["bert_b32_f16", "llama_b32_f16"], "cpu")] == []
    assert [w.name for w in select(["bert_b1_f16", "llama_b1_f16"], "cpu")] == [
        "bert_b1_f16", "llama_b1_f16"]
    # An exact name still selects only itself (no f16 row slips into an f32 run).
    assert [w.name for w in select(["bert_b32", "llama_b32"], "gpu")] == [
        "bert_b32", "llama_b32"]


@pytest.mark.parametrize("name", ["tiny_bert_f16", "tiny_bert_bf16", "tiny_llama_f16",
                                  "tiny_llama_bf16"])
def test_fusec_computes_a_16_bit_layer_as_the_reference_does(name: str) -> None:
    workload = tiny(name)
    result = run_workload(workload, [], Settings(repeat=1, warmup=0))
    (fusec,) = result.runners
    assert fusec.status == OK, fusec.reason
    assert fusec.error is not None and fusec.error <= workload.tolerance
