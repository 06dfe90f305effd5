"""fusec-opt as a program: what lit cannot say well.

Its help lists every option it has, --list-passes every pass and pipeline; ``-o`` writes files
with the usual permissions; and no mangled input, however bad, ends in a traceback, an internal
error or a hang: every run exits 0 or 1 with at most one line on stderr.
"""

from __future__ import annotations

import os
import random
import signal
import stat
from pathlib import Path

import pytest

from fusec.compiler.pipeline import NAMED_PIPELINES
from fusec.compiler.registry import get_all_passes
from fusec.tools.fusec_opt import cli, main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for param in cli.params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("-"):
                assert flag in out, f"--help does not mention {flag}"
    assert "Exit codes: 0 success, 1 bad input" in out


def test_list_passes_names_every_pass_and_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--list-passes")
    assert code == 0
    described = {line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")}
    assert described == set(get_all_passes()) | set(NAMED_PIPELINES)
    for line in out.splitlines():
        if not line.startswith(" "):
            assert line.split(":", 1)[1].strip(), f"no summary: {line}"


def test_output_file_has_the_usual_permissions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.mlir"
    old = os.umask(0o022)
    try:
        assert run(capsys, str(EXAMPLES[0]), "-o", str(out))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    out.chmod(0o600)  # an existing file keeps its mode
    assert run(capsys, str(EXAMPLES[0]), "-o", str(out))[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]  # no temporary left behind


def test_output_through_a_symlink_or_into_a_fifo_keeps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rename would replace the link, or the FIFO (or /dev/null), with a regular file."""
    target, link = tmp_path / "target.mlir", tmp_path / "link.mlir"
    target.write_text("")
    link.symlink_to(target)
    assert run(capsys, str(EXAMPLES[0]), "-o", str(link))[0] == 0
    assert link.is_symlink() and "builtin.module" in target.read_text()

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that opening it to write succeeds
    try:
        assert run(capsys, str(EXAMPLES[0]), "-o", str(fifo))[0] == 0
        assert b"builtin.module" in os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)


TOKENS = [
    "%x",
    "%0",
    "}",
    "{",
    "(",
    ")",
    ",",
    ":",
    "->",
    "=",
    '"',
    "<",
    ">",
    "[",
    "]",
    "^bb0",
    "tensor<?x4xf32>",
    "tensor<*xf32>",
    "f64",
    "i1",
    "0",
    "-1",
    "1.0e-5",
    "array<i64: 9>",
    "dense<1.0>",
    "nn.add",
    "fused.yield",
    "loc(",
    "#x",
    "!y",
    "\x00",
    "\xff",
    "é",
    "//",
    "// -----",
    "\n",
]


def mangle(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(words))
        action = rng.random()
        if action < 0.4:
            words[i] = rng.choice(TOKENS)
        elif action < 0.7:
            del words[i]
        else:
            words.insert(i, rng.choice(TOKENS))
    return " ".join(words)


def _timeout(*_: object) -> None:
    raise TimeoutError("fusec-opt hung")


@pytest.mark.parametrize("seed", range(3))
def test_mangled_input_never_crashes_or_hangs(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(seed)
    sources = [p.read_text() for p in EXAMPLES]
    sources.append((ROOT / "lit_tests" / "dialects" / "fused-roundtrip.mlir").read_text())
    path = tmp_path / "mangled.mlir"
    previous = signal.signal(signal.SIGALRM, _timeout)
    try:
        for _ in range(25):
            text = mangle(rng.choice(sources), rng)
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
            signal.alarm(60)  # a run takes milliseconds; an exponential lexer took minutes
            code, _, err = run(capsys, str(path), "--split-input-file", "-p", "default")
            signal.alarm(0)
            assert code in (0, 1), f"exit {code}: {err}\n--- input:\n{text}"
            assert len(err.splitlines()) <= 1, f"{err}\n--- input:\n{text}"
            assert "Traceback" not in err and "internal error" not in err, err
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_unterminated_string_in_a_long_line_does_not_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "quote.mlir"
    path.write_text('func.func @f() {\n  %0 = nn.constant {value " = ' + "x" * 60 + "}\n}\n")
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(60)
    try:
        code, _, err = run(capsys, str(path))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert code == 1
    assert err.startswith(f"{path}:2:") and "string literal" in err
