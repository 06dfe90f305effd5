"""`python -m fusec.bench.decoder_peers` on a tiny model on the CPU: it prints its table, writes
its JSON, and fusec's tokens and logits agree with eager's (no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from fusec.bench.decoder_peers import main  # noqa: E402


def test_tiny_llama_on_the_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "peers.json"
    assert main(["--model", "llama", "--size", "tiny", "--batch", "2", "--dtype", "f32",
                 "--prompt", "4", "--steps", "6", "--device", "cpu", "--peers", "fusec,eager",
                 "--repeats", "1", "--json", str(out)]) == 0
    assert "tok/s/seq" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["model"] == "llama" and result["steps"] == 6
    (batch,) = result["results"]
    fusec, eager = batch["runners"]
    assert (fusec["name"], eager["name"]) == ("fusec", "eager")
    assert fusec["tokens"] == "equal"
    assert fusec["logit_difference"] < 1e-4 * fusec["largest_logit"]
    assert fusec["peak_bytes"] > 0 and fusec["tokens_per_s_all"] > 0
    assert batch["ratios"]["eager"] > 0


def test_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--model", "llama", "--batch", "1,x"])
    assert exit_.value.code == 2
    assert "expected batch sizes like 1,8, got '1,x'" in capsys.readouterr().err
