"""``fusec-bench -w torch_bert`` (and ``torch_gpt2``, ``torch_llama``): whole Hugging Face models
through the torch backend as named workloads of fusec-bench (`fusec.bench.whole_models`), one
row of `fusec.bench.torch_models`' harness each. On the CPU here, the model made small."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from fusec.bench import suite, torch_models, whole_models  # noqa: E402
from fusec.bench.harness import Settings  # noqa: E402
from fusec.tools.fusec_bench import main  # noqa: E402


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setitem(whole_models.OVERRIDES, "layers", 1)
    monkeypatch.setitem(whole_models.OVERRIDES, "batch", 1)
    monkeypatch.setitem(whole_models.OVERRIDES, "seq", 16)


def test_a_whole_model_runs_as_a_named_workload_of_fusec_bench(small, capsys):
    """The row is checked against eager and timed against eager and Inductor; the JSON
    document carries it, and nothing but the document is on stdout."""
    with pytest.raises(SystemExit) as exit_:
        main(["--device", "cpu", "-w", "torch_bert", "--repeat", "2", "--json", "-q"])
    assert exit_.value.code == 0
    document = json.loads(capsys.readouterr().out)
    summary = document["torch_bert"]  # beside the table's workloads, as the probes are
    assert summary["status"] == "ok", summary
    row = summary["row"]
    assert row["model"] == "bert" and row["dtype"] == "f32"
    assert row["fusec_maxdiff"] <= 1e-4 and row["fusec_ms"] > 0 and row["inductor_ms"] > 0
    lines = whole_models.whole_model_lines(summary)
    assert lines[0].startswith("torch_bert: BERT-base, 1 layers, B=1 S=16")
    assert "fusec/inductor" in lines[1] and lines[2].startswith("bert   f32")


def test_the_whole_models_run_only_when_named():
    assert not set(suite.WHOLE_MODELS) & set(suite.plan([], "cpu").specials)
    assert suite.plan(["torch_gpt2"], "gpu").specials == ["torch_gpt2"]


def test_a_wrong_output_is_a_problem_of_the_run(monkeypatch):
    """A fusec runner that differs from eager has no time; the run reports it (fusec-bench
    exits non-zero on a problem)."""
    def wrong(args):
        assert args.models == "llama" and args.dtypes == "f16" and args.reduce_overhead
        return [{"model": "llama", "dtype": "f16", "summary": "Llama", "fusec_maxdiff": 1.0,
                 "fusec_error": "differs from eager by 1 (tol 0.02)", "eager_ms": 1.0}]

    monkeypatch.setattr(torch_models, "run", wrong)
    summary = whole_models.run_whole_model("torch_llama", Settings(device="gpu", repeat=2))
    assert summary["status"] == "wrong" and "differs from eager" in summary["reason"]
    result = suite.SuiteResult(extra={"torch_llama": summary})
    assert result.problems() == [f"torch_llama: fusec: wrong: {summary['reason']}"]
    assert whole_models.whole_model_lines(summary)[0].endswith(
        "wrong: fusec_error: differs from eager by 1 (tol 0.02)")


def test_an_unknown_option_is_refused():
    with pytest.raises(ValueError, match="no option 'nope'"):
        torch_models.arguments(nope=1)
