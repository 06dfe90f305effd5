"""Every transformer fusion, and ``canonicalize-nn`` that they rely on, keeps what the program
computes: each case of the pass's lit test (positive and negative) gives the same numbers on
random inputs before the pass, after it, and after the pass followed by ``unfuse``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusec.compiler.diagnostics import split_input

LIT = Path(__file__).resolve().parents[2] / "lit_tests" / "passes"
PASSES = [
    "canonicalize-nn",
    "fuse-matmul-bias-act",
    "fuse-residual-layer-norm",
    "fuse-residual-rms-norm",
    "fuse-rms-norm-reshape",
    "fuse-shared-input-matmul",
    "fuse-swiglu-dual-matmul",
    "fuse-swiglu",
    "fuse-attention-block",
    "fuse-transformer-layer",
    "default",
]
# The lit file of the default pipeline's whole-layer cases.
LIT_FILE = {"default": "default-pipeline"}
SEEDS = (0, 1, 2)


def cases(name: str) -> list[tuple[str, str]]:
    path = LIT / f"{LIT_FILE.get(name, name)}.mlir"
    return [(name, chunk.text) for chunk in split_input(path.read_text(), str(path))]


@pytest.mark.parametrize("name", PASSES)
def test_pass_keeps_results(fusion, name: str) -> None:
    changed = 0
    for _, text in cases(name):
        before = fusion.parse(text)
        fused = fusion.compile(text, name)
        round_trip = fusion.compile(text, f"{name},unfuse")
        changed += str(fused) != str(before)
        for seed in SEEDS:
            expected = fusion.run(before, seed)
            fusion.assert_same(expected, fusion.run(fused, seed), f"{name}, seed {seed}:\n{fused}")
            fusion.assert_same(
                expected, fusion.run(round_trip, seed), f"{name},unfuse, seed {seed}:\n{round_trip}"
            )
    assert changed, f"no case of {name} fused anything: the test would prove nothing"


@pytest.mark.parametrize(
    "spec", ["fuse-matmul-bias-act{activations=gelu_tanh,sigmoid,tanh}", "default,unfuse,default"]
)
def test_options_and_reruns_keep_results(fusion, spec: str) -> None:
    for name in ("fuse-matmul-bias-act", "default"):
        for _, text in cases(name):
            before = fusion.parse(text)
            after = fusion.compile(text, spec)
            fusion.assert_same(fusion.run(before, 0), fusion.run(after, 0), f"{spec}:\n{after}")
