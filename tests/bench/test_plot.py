"""``fusec-bench --plot``: the chart is a valid image drawn from the JSON document, ratios are to
the best peer, and what cannot be drawn is a one-line error."""

from __future__ import annotations

import builtins
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fusec.bench.plot import PlotError, draw, ratios_to_best_peer
from fusec.tools.fusec_bench import main

DOC = {
    "device": "cpu", "pipeline": "default", "peers": ["numpy", "torch"],
    "workloads": [
        {"name": "softmax", "results": {
            "fusec": {"status": "ok", "median_ms": 2.0, "device_median_ms": 1.0},
            "numpy": {"status": "ok", "median_ms": 8.0},
            "torch": {"status": "ok", "median_ms": 4.0, "device_median_ms": 0.5}}},
        {"name": "sum", "results": {
            "fusec": {"status": "ok", "median_ms": 3.0, "device_median_ms": 2.0},
            "numpy": {"status": "ok", "median_ms": 1.5},
            "torch": {"status": "n/a", "reason": "not installed"}}},
        {"name": "no_peer_workload", "results": {"fusec": {"status": "ok", "median_ms": 1.0}}},
    ],
}


def test_ratios_are_to_the_best_peer() -> None:
    softmax, total, alone = DOC["workloads"]
    assert ratios_to_best_peer(softmax, kernel=False) == {"fusec": 0.5, "numpy": 2.0, "torch": 1.0}
    # kernel: fusec's kernel time against torch's kernel time (the best peer there)
    assert ratios_to_best_peer(softmax, kernel=True) == {"fusec": 2.0, "numpy": 16.0, "torch": 1.0}
    assert ratios_to_best_peer(total, kernel=False) == {"fusec": 2.0, "numpy": 1.0}
    assert ratios_to_best_peer(alone, kernel=False) == {}


def test_png_and_svg_are_valid_images(tmp_path: Path) -> None:
    png, svg = tmp_path / "b.png", tmp_path / "b.svg"
    draw(DOC, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    draw(DOC, str(svg))
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    text = svg.read_text()
    assert "softmax" in text and "no_peer_workload" not in text  # no peer, nothing to compare
    again = tmp_path / "c.svg"
    draw(DOC, str(again))
    assert again.read_text() == text  # deterministic
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PlotError, match=r"\.svg or \.png"):
        draw(DOC, str(tmp_path / "b.pdf"))
    with pytest.raises(PlotError, match="no workload has a peer result"):
        draw({"workloads": DOC["workloads"][2:]}, str(tmp_path / "b.png"))
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(PlotError, match=r"pip install 'fusec\[plot\]'"):
        draw(DOC, str(tmp_path / "b.png"))


def test_cli_draws_a_saved_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(DOC))
    with pytest.raises(SystemExit) as done:
        main(["--plot", str(tmp_path / "r.png"), "--from", str(saved)])
    assert done.value.code == 0
    assert (tmp_path / "r.png").stat().st_size > 1000
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SystemExit) as done:
        main(["--plot", str(tmp_path / "x.png"), "--from", str(tmp_path / "bad.json")])
    err = capsys.readouterr().err
    assert done.value.code == 1 and len(err.strip().splitlines()) == 1
    assert "not a fusec-bench JSON document" in err
    assert not (tmp_path / "x.png").exists()
