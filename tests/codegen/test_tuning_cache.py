"""The tuning cache survives damage and sharing: a file that does not parse or an entry that
does not make plausible tiles is ignored with a warning; concurrent processes updating it keep
each other's entries (flock); an unwritable cache is a warning, not an error."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from fusec.codegen.kernels import tuning
from fusec.codegen.kernels.gemm import CPU_TILES

DEVICE = SimpleNamespace(name="Test CPU", driver_version="1.0",
                         platform=SimpleNamespace(name="Test Platform"))
KEY = tuning.device_key(DEVICE)  # type: ignore[arg-type]


def entry(tiles: dict) -> str:
    return json.dumps({KEY: {"gemm": {"tiles": tiles}}})


@pytest.mark.parametrize("text, reason", [
    ('{"Test Platform": ', "damaged tuning cache"),
    ("\x00\x01garbage", "damaged tuning cache"),
    (entry({"thread_m": 100000, "thread_n": 4}), "ignoring the damaged tuning entry"),
    (entry({"thread_m": "8"}), "ignoring the damaged tuning entry"),
    (entry({"thread_m": 0}), "ignoring the damaged tuning entry"),
    (entry({"no_such_field": 1}), "ignoring the damaged tuning entry"),
])
def test_damage_is_ignored_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                          text: str, reason: str) -> None:
    path = tmp_path / "tuning.json"
    path.write_text(text)
    with caplog.at_level(logging.WARNING, logger="fusec.cache"):
        assert tuning.cached_gemm_tiles(DEVICE, path) is None  # type: ignore[arg-type]
    assert any(reason in r.getMessage() for r in caplog.records)


def test_an_update_repairs_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "tuning.json"
    path.write_text(json.dumps({KEY: ["not", "a", "dict"], "other device": {"gemm": 1}}))
    tuning._update(path, KEY, {"tiles": {"thread_m": 2, "thread_n": 4}})
    data = json.loads(path.read_text())
    assert data[KEY] == {"gemm": {"tiles": {"thread_m": 2, "thread_n": 4}}}
    assert data["other device"] == {"gemm": 1}
    assert tuning.cached_gemm_tiles(DEVICE, path).thread_m == 2  # type: ignore[arg-type,union-attr]


def test_an_unwritable_cache_is_a_warning(tmp_path: Path,
                                          caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="fusec.cache"):
        tuning._update(blocker / "tuning.json", KEY, {"tiles": {}})
    assert any("cannot write the tuning cache" in r.getMessage() for r in caplog.records)


UPDATER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from fusec.codegen.kernels import tuning
    path, name = Path(sys.argv[1]), sys.argv[2]
    for i in range(30):
        tuning._update(path, name, {"round": i})
""")


def test_concurrent_updates_keep_every_device(tmp_path: Path) -> None:
    path = tmp_path / "tuning.json"
    names = [f"device {i}" for i in range(4)]
    children = [subprocess.Popen([sys.executable, "-c", UPDATER, str(path), name],
                                 stderr=subprocess.PIPE, text=True) for name in names]
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    data = json.loads(path.read_text())
    assert {name: data[name]["gemm"]["round"] for name in names} == dict.fromkeys(names, 29)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tuning.json", "tuning.json.lock"]


def test_the_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tuning.default_tuning_path() == tmp_path / "fusec" / "tuning.json"
    assert CPU_TILES in tuning.CPU_CANDIDATES and tuning.plausible(CPU_TILES)
    assert os.environ["XDG_CACHE_HOME"] == str(tmp_path)
