"""Seeded random transformer programs (patterns mixed with distractors that must block them)
keep their results through the default pipeline and through ``unfuse``; the pipeline is
idempotent, and after ``unfuse`` no fused op is left. A failure names the seed and shows the IR.
"""

from __future__ import annotations

import pytest

from fusec.dialects.fused import FUSED_OPS

SEEDS = range(30)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_keeps_results(fusion, programs, seed: int) -> None:
    text = programs.program(seed)
    before = fusion.parse(text, f"random-{seed}")
    fused = fusion.compile(text, "default")
    unfused = fusion.compile(text, "default,unfuse")
    where = f"seed {seed}; program:\n{text}\n"
    for input_seed in (0, 1):
        expected = fusion.run(before, input_seed)
        fusion.assert_same(
            expected, fusion.run(fused, input_seed), f"{where}after default:\n{fused}"
        )
        fusion.assert_same(
            expected, fusion.run(unfused, input_seed), f"{where}after default,unfuse:\n{unfused}"
        )
    assert str(fusion.compile(str(fused), "default")) == str(fused), f"{where}not idempotent"
    left = [op.name for op in unfused.walk() if isinstance(op, FUSED_OPS)]
    assert not left, f"{where}unfuse left {left}"


def test_random_programs_exercise_every_fusion(fusion, programs) -> None:
    """The generator is not vacuous: across the seeds, every fused op appears."""
    seen: set[str] = set()
    for seed in SEEDS:
        fused = fusion.compile(programs.program(seed), "default")
        seen.update(op.name for op in fused.walk() if op.name.startswith("fused."))
    expected = {
        "fused.matmul_bias_act",
        "fused.residual_layer_norm",
        "fused.residual_rms_norm",
        "fused.swiglu",
        "fused.attention_block",
        "fused.transformer_layer",
    }
    assert expected <= seen, f"never produced: {sorted(expected - seen)}"
