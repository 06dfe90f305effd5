"""`fusec.bench.decoder`: its IR is examples/tiny_decoder.mlir at the default sizes, verifies at
other sizes and types, and the timing run works on the CPU device."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusec.bench.decoder import STYLES, DecoderSizes, decoder_ir, main
from fusec.compiler.driver import load

EXAMPLE = Path(__file__).parents[2] / "examples" / "tiny_decoder.mlir"


def test_example_is_the_default_decoder() -> None:
    assert EXAMPLE.read_text() == decoder_ir(DecoderSizes())


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_other_sizes_verify(dtype: str, style: str) -> None:
    load(decoder_ir(DecoderSizes(batch=1, vocab=50, width=64, heads=8, kv_heads=1, layers=1,
                                 cache=20, ffn=128, prompt=5, dtype=dtype, style=STYLES[style])))


@pytest.mark.parametrize("style", sorted(STYLES))
def test_timing_run(capsys: pytest.CaptureFixture[str], style: str) -> None:
    main(["--steps", "3", "--repeats", "1", "--dtype", "f16", "--style", style])
    assert "tokens/s per sequence" in capsys.readouterr().out
