"""The random program generator: every program it makes verifies, the same seed gives the
same program, and the minimizer's edits (cut an op, keep one output) keep programs valid."""

from __future__ import annotations

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.fuzz.generator import generate
from fusec.fuzz.inputs import make_inputs


def verifies(text: str) -> None:
    parse_module(make_context(), Source(text, "<generated>"))  # raises FusecError if not


def test_every_generated_program_verifies() -> None:
    ops = set()
    for seed in range(120):
        program = generate(seed, half=seed % 2 == 1)
        verifies(program.text())
        ops |= {op.name for op in program.ops}
    # the generator reaches every kind of op it knows
    for name in ("nn.matmul", "nn.layer_norm", "nn.rms_norm", "nn.softmax", "nn.where",
                 "nn.cmp", "nn.cast", "nn.reduce_max", "nn.reduce_mean", "nn.transpose",
                 "nn.reshape", "nn.narrow", "nn.concat", "nn.constant", "nn.pow", "nn.gelu"):
        assert name in ops


def test_same_seed_same_program_and_inputs() -> None:
    a, b = generate(7), generate(7)
    assert a.text() == b.text()
    for x, y in zip(make_inputs(a), make_inputs(b), strict=True):
        assert x.tobytes() == y.tobytes()
    assert generate(8).text() != a.text()


def test_cut_and_keep_one_output_stay_valid() -> None:
    for seed in range(15):
        program = generate(seed)
        for i in range(len(program.ops)):
            verifies(program.cut(i).text())
        for value in program.outputs:
            smaller = program.with_outputs([value])
            verifies(smaller.text())
            # an argument keeps its values when the program around it shrinks
            kept = dict(zip((a.name for a in program.args), make_inputs(program), strict=True))
            for arg, array in zip(smaller.args, make_inputs(smaller), strict=True):
                assert kept[arg.name].tobytes() == array.tobytes()


def test_edge_values_appear_in_inputs() -> None:
    import numpy as np

    seen_nan = seen_inf = seen_subnormal = False
    for seed in range(20):
        for array in make_inputs(generate(seed)):
            if array.dtype == np.float32:
                seen_nan |= bool(np.isnan(array).any())
                seen_inf |= bool(np.isinf(array).any())
                tiny = np.abs(array[np.isfinite(array)])
                seen_subnormal |= bool(((tiny > 0) & (tiny < np.finfo(np.float32).tiny)).any())
    assert seen_nan and seen_inf and seen_subnormal
