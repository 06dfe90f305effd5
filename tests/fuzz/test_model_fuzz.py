"""``fusec-fuzz --models``: mutants of ONNX model files through fusec-run and ONNX Runtime.

A fixed-seed budget on two small models (an embedding lookup with a mask, an MLP whose shape
comes from Shape/Gather/Concat) must pass; planted fusec-run jobs show that each kind of
failure is caught: a traceback, two lines, exit 70, a hang, a crash, a read of the bait file
outside the model's folder, and numbers that differ from ONNX Runtime's.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from fusec.bench.export_models import GraphBuilder  # noqa: E402
from fusec.fuzz.model_campaign import model_inputs, run_models  # noqa: E402
from fusec.fuzz.model_mutate import MODEL_MUTATIONS, OUTSIDE, mutate_model  # noqa: E402
from fusec.tools.fusec_fuzz import fusec_run_job  # noqa: E402


def embedding() -> object:
    g = GraphBuilder(0)
    ids = g.input("input_ids", [1, 5], "int64")
    mask = g.input("attention_mask", [1, 5], "int64")
    emb = g.op("Gather", g.weight("wte", [10, 4]), ids)
    keep = g.op("Unsqueeze", g.op("Cast", mask, to=1), g.const(np.array([-1], np.int64)))
    g.result(g.op("Softmax", g.op("Mul", emb, keep), axis=-1), "probs", [1, 5, 4])
    return g.model()


def mlp() -> object:
    g = GraphBuilder(0)
    x = g.input("input", [2, 3, 8])
    h = g.gelu_erf(g.linear(x, "fc1", 8, 16))
    flat = g.op("Reshape", h, g.op("Concat", g.dim(x, 0), g.const(np.array([-1], np.int64)),
                                   axis=0))
    g.result(g.op("MatMul", flat, g.weight("fc2.weight", [48, 4])), "logits", [2, 4])
    return g.model()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("seed_models")
    paths = []
    for build in (embedding, mlp):
        path = folder / f"{build.__name__}.onnx"
        onnx.save(build(), str(path))
        paths.append(path)
    return paths


def test_the_fixed_seed_budget_passes(models: list[Path]) -> None:
    report = run_models(0, 14, models, fusec_run_job, seconds=120)
    assert report.failures == [], report.failures
    assert report.mutants == 14
    assert report.refused and report.matched + len(report.lenient) + len(report.refused) == 14


def test_mutations_are_deterministic_and_all_used(models: list[Path]) -> None:
    model = onnx.load(str(models[0]))
    first = mutate_model(np.random.default_rng(5), model, "/x/outside.bin")
    again = mutate_model(np.random.default_rng(5), model, "/x/outside.bin")
    assert first == again
    kinds = {mutate_model(np.random.default_rng(s), model, "/x").what.split(":")[0]
             for s in range(200)}
    assert set(MODEL_MUTATIONS) <= kinds and {"truncate", "bytes"} <= kinds
    assert any(k.startswith("initializer '") for k in kinds)  # the external-data mutations


def test_inputs_follow_the_graph_inputs(models: list[Path]) -> None:
    inputs = model_inputs(onnx.load(str(models[0])), np.random.default_rng(0))
    assert sorted(inputs) == ["attention_mask", "input_ids"]
    assert inputs["input_ids"].dtype == np.int64 and inputs["input_ids"].max() < 4
    assert inputs["attention_mask"].reshape(-1).tolist() == [1, 1, 1, 1, 0]


PLANTED = f'''
import os
import signal
import time

import numpy as np


def fusec_job(folder):
    """What a broken fusec-run would do, by the mutant's seed (its folder m<seed>)."""
    seed = int(os.path.basename(folder)[1:])
    os.chdir(folder)
    if seed == 0:
        return 1, "", "Traceback (most recent call last):\\n  ...\\nKeyError: 'x'\\n"
    if seed == 1:
        return 1, "", "model.onnx: error: one\\nmodel.onnx: error: two\\n"
    if seed == 2:
        return 70, "", "fusec-run: internal error: KeyError 'x'\\n"
    if seed == 3:
        time.sleep(120)
    if seed == 4:
        os.kill(os.getpid(), signal.SIGSEGV)
    if seed == 5:
        with open("../{OUTSIDE}", "rb") as f:
            f.read(1)
        return 1, "", "model.onnx: error: nothing to see\\n"
    if seed == 6:
        np.savez("outputs.npz", out=np.zeros(3, np.float32))
        return 0, "", ""
    if seed == 7:
        np.savez("outputs.npz", out=np.ones(3, np.float32))
        return 0, "", ""
    return 1, "", "model.onnx: error: a clean refusal\\n"


def ort_job(folder):
    return "ok", {{"out": np.ones(3, np.float32)}}
'''


def test_each_kind_of_failure_is_caught(models: list[Path], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "planted_model_jobs.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))  # the spawned workers take sys.path along
    module = importlib.import_module("planted_model_jobs")
    try:
        report = run_models(0, 9, models, module.fusec_job, out=tmp_path / "failures",
                            seconds=10, ort_job=module.ort_job)
    finally:
        sys.modules.pop("planted_model_jobs", None)
    assert len(report.failures) == 7, report.failures
    assert "traceback" in report.failures[0] and "KeyError: 'x'" in report.failures[0]
    assert "2 lines on stderr" in report.failures[1]
    assert "exit 70" in report.failures[2]
    assert "no end within the time limit" in report.failures[3]
    assert "crashed: killed by SIGSEGV" in report.failures[4]
    assert "read a file outside the model's folder" in report.failures[5]
    assert "exit 0 but output 'out' differs from ONNX Runtime's" in report.failures[6]
    assert report.matched == 1 and len(report.refused) == 1
    assert (tmp_path / "failures" / "mutant-5" / "finding.txt").exists()


def test_outputs_are_compared_at_their_types_tolerance(tmp_path: Path) -> None:
    """f32 outputs within atol 1e-4 + rtol 1e-3 of ONNX Runtime's, 16-bit ones within 2e-2
    (`model_oracle.HALF_TOLERANCE`): a two-ulp f16 difference at 1.28 (the f16 Llama export's,
    in a model fuzz run) passes, which f32's tolerance refuses; ints exactly."""
    from fusec.fuzz.model_oracle import compare

    def outcome(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> str | None:
        np.savez(tmp_path / "out.npz", **got)
        return compare(tmp_path / "out.npz", want)

    want16 = np.array([-1.2832031, 1.0], np.float16)
    two_ulps = np.array([-1.2851562, 1.0], np.float16)
    assert outcome({"y": two_ulps}, {"y": want16}) is None
    assert outcome({"y": two_ulps.astype(np.float32)}, {"y": want16.astype(np.float32)})
    assert outcome({"y": np.array([-1.34, 1.0], np.float16)}, {"y": want16})  # ~0.06 off
    # f32: rtol 1e-3 of 10 (0.01) passes, 0.02 does not; atol 1e-4 near zero
    assert outcome({"y": np.float32([10.009, 0.0])}, {"y": np.float32([10.0, 5e-5])}) is None
    assert outcome({"y": np.float32([10.02, 0.0])}, {"y": np.float32([10.0, 0.0])})
    assert outcome({"i": np.int64([3])}, {"i": np.int64([4])})
