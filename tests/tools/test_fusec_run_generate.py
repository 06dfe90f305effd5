"""``fusec-run DECODER.mlir --generate STEPS``: greedy decoding from the command line
(`fusec.tools.run_generate`): the tokens printed or written, ``--check`` against the reference's
loop, and every bad input a one-line error with its exit code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusec.bench.decoder import DecoderSizes, decoder_ir, random_weights
from fusec.tools import run_generate
from fusec.tools.fusec_run import main

SIZES = DecoderSizes(batch=2, prompt=5, cache=24)


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("decoder")
    program = folder / "decoder.mlir"
    program.write_text(decoder_ir(SIZES))
    prompt = np.random.default_rng(1).integers(0, SIZES.vocab, (SIZES.batch, SIZES.prompt))
    arrays = folder / "decoder.npz"
    np.savez(arrays, tokens=prompt, **random_weights(SIZES))  # int64 tokens, as numpy makes
    return program, arrays


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def expected_tokens(program: Path, arrays: Path, steps: int) -> np.ndarray:
    import fusec

    weights = dict(np.load(arrays))
    prompt = weights.pop("tokens").astype(np.int32)
    text = program.read_text()
    prefill = fusec.compile(text, "prefill", device="cpu", params=weights)
    step = fusec.compile(text, "step", device="cpu", params=weights, share_weights=prefill)
    return fusec.generate(prefill, step, prompt, steps)


def test_tokens_printed_and_checked_against_the_reference(capsys, decoder) -> None:
    program, arrays = decoder
    code, out, err = run(capsys, str(program), "--generate", "12", "--inputs", str(arrays),
                         "--device", "cpu", "--check")
    assert code == 0, err
    lines = out.splitlines()
    want = expected_tokens(program, arrays, 12)
    assert lines[:2] == [" ".join(map(str, row)) for row in want]
    assert lines[2] == "check: 12 tokens x 2 sequences, the same as the reference's"


def test_tokens_written_to_an_npz(capsys, decoder, tmp_path: Path) -> None:
    program, arrays = decoder
    out_file = tmp_path / "out.npz"
    code, out, err = run(capsys, str(program), "--generate", "6", "--inputs", str(arrays),
                         "--device", "cpu", "-o", str(out_file))
    assert code == 0, err
    assert out == ""
    with np.load(out_file) as written:
        assert written.files == ["tokens"]
        np.testing.assert_array_equal(written["tokens"], expected_tokens(program, arrays, 6))


def test_both_programs_compiled_for_the_device_auto_chooses(capsys, decoder) -> None:
    """Without --device both programs go to the one device ``auto`` selects (the step shares
    the prefill's weights, which a placed compile refuses)."""
    program, arrays = decoder
    code, out, err = run(capsys, str(program), "--generate", "4", "--inputs", str(arrays))
    assert code == 0, err
    want = expected_tokens(program, arrays, 4)
    assert out.splitlines() == [" ".join(map(str, row)) for row in want]


def test_the_reference_loop_alone_gives_the_same_tokens(decoder) -> None:
    """The reference's loop, compared by --check, is a loop of its own: it agrees with the
    device's tokens, and a wrong cache update in it (the caches not fed back) would not."""
    import fusec
    from fusec.compiler.driver import load

    program, arrays = decoder
    weights = dict(np.load(arrays))
    prompt = weights.pop("tokens").astype(np.int32)
    text = program.read_text()
    prefill = fusec.compile(text, "prefill", device="cpu", params=weights)
    step = fusec.compile(text, "step", device="cpu", params=weights, share_weights=prefill)
    want = fusec.generate(prefill, step, prompt, 10)
    got = run_generate.reference_tokens(load(text), (prefill, step), weights, prompt, 10)
    np.testing.assert_array_equal(got, want)


def test_check_fails_when_the_tokens_differ(capsys, decoder, monkeypatch) -> None:
    program, arrays = decoder
    monkeypatch.setattr(run_generate, "reference_tokens",
                        lambda module, programs, weights, prompt, steps:
                        np.full((SIZES.batch, steps), -1, np.int32))
    code, _, err = run(capsys, str(program), "--generate", "3", "--inputs", str(arrays),
                       "--device", "cpu", "--check")
    assert code == 5
    assert err.strip().endswith("--check: the tokens differ from the reference's from step 0")


def bad_inputs(folder: Path, arrays: Path, change) -> Path:  # type: ignore[no-untyped-def]
    values = dict(np.load(arrays))
    change(values)
    path = folder / "bad.npz"
    np.savez(path, **values)
    return path


@pytest.mark.parametrize(("change", "message"), [
    (lambda v: v.pop("tokens"), "bad.npz: error: missing input 'tokens' (the prompt"),
    (lambda v: v.pop("wte"), "bad.npz: error: missing input 'wte' of @prefill"),
    (lambda v: v.update(tokens=v["tokens"][0]), "bad.npz: error: 'tokens' is int64[5]"),
    (lambda v: v.update(tokens=v["tokens"] * 0.5), "'tokens' is float64[2, 5]"),
    (lambda v: v.update(tokens=v["tokens"] + 2**40), "'tokens' holds values outside int32"),
    (lambda v: v.update(bogus=np.zeros(2)), "@prefill has no input 'bogus'"),
    (lambda v: v["tokens"].__setitem__((1, 2), 1000),
     "index 1000 at position [1, 2] of input 'tokens' is out of range"),
], ids=["no-prompt", "no-weight", "prompt-1d", "prompt-float", "prompt-huge", "unknown",
        "token-past-the-table"])
def test_bad_inputs_are_one_line_errors(capsys, decoder, tmp_path: Path, change,
                                        message: str) -> None:
    program, arrays = decoder
    code, out, err = run(capsys, str(program), "--generate", "3", "--inputs",
                         str(bad_inputs(tmp_path, arrays, change)), "--device", "cpu")
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert "Traceback" not in err


def test_a_file_without_the_two_functions(capsys, decoder, tmp_path: Path) -> None:
    _, arrays = decoder
    program = tmp_path / "one.mlir"
    program.write_text(decoder_ir(SIZES).replace("@step(", "@next("))
    code, _, err = run(capsys, str(program), "--generate", "3", "--inputs", str(arrays),
                       "--device", "cpu")
    assert code == 1
    assert "--generate needs the functions @prefill and @step" in err
    assert "@step not found (the file has @prefill, @next)" in err


@pytest.mark.parametrize(("argv", "message"), [
    (("--random", "0"), "--random: not with --generate"),
    (("--inputs", "x.npz", "--profile"), "--profile: not with --generate"),
    (("--inputs", "x.npz", "--function", "step"), "--function: not with --generate"),
    ((), "--generate needs --inputs IN.npz"),
    (("--inputs", "x.npz", "--generate", "0"), "0 is not in the range x>=1"),
])
def test_command_line_errors(capsys, decoder, argv: tuple[str, ...], message: str) -> None:
    program, _ = decoder
    code, _, err = run(capsys, str(program), "--generate", "3", *argv)
    assert code == 2
    assert message in err
