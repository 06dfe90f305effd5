"""bench/results holds small summaries (issue 32): the index is up to date, the folder stays
under `MAX_BYTES`, every result file the docs and the source cite is there, and no generated
PTX or binary (``.ptx``, ``.bin``, ``.cubin``) is tracked anywhere in the repository (test
inputs are text in the tests: `tests.codegen.ptx_inputs`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from fusec.bench import results_index

ROOT = Path(__file__).resolve().parents[2]
MAX_BYTES = 2 * 1024 * 1024
GENERATED = re.compile(r"\.(ptx|bin|cubin)$", re.IGNORECASE)
CITING = ("README.md", "docs", "bench/README.md", "knobs.py", "codegen", "lowering", "runtime",
          "placement", "compiler", "bench", "passes", "frontends", "tools")


def test_the_index_is_up_to_date() -> None:
    assert results_index.index_text() == results_index.INDEX.read_text(), (
        f"bench/results/INDEX.md is out of date; run `{results_index.COMMAND}`")


def test_the_folder_is_small() -> None:
    total = sum(p.stat().st_size for p in results_index.RESULTS.rglob("*") if p.is_file())
    assert total <= MAX_BYTES, f"bench/results holds {total} bytes; keep summaries, not dumps"


def cited_results() -> set[str]:
    names: set[str] = set()
    for entry in CITING:
        path = ROOT / entry
        files = [path] if path.is_file() else [*path.rglob("*.py"), *path.rglob("*.md")]
        for file in files:
            names |= set(re.findall(r"bench/results/([\w.*-]+[\w*])", file.read_text()))
    return names


def test_every_cited_result_is_there() -> None:
    names = cited_results()
    assert len(names) > 20  # the pages do cite results
    missing = sorted(n for n in names if not list(results_index.RESULTS.glob(n)))
    assert not missing, f"cited but not in bench/results: {missing}"


def test_no_generated_file_is_tracked() -> None:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    generated = [p for p in listed if GENERATED.search(p)]
    assert not generated, generated
