"""Regression cases for the bugs the fuzzer found, each fixed; every saved case in ``cases/``
(a minimized program and its inputs, as ``fusec-fuzz --out`` writes them) must pass the oracle.

Found and fixed:
- ``arith.maximumf``/``minimumf`` were OpenCL ``fmax``/``fmin``, which drop a NaN operand:
  ``relu(NaN)`` was 0, ``max``/``min`` and ``reduce_max``/``reduce_min`` skipped NaN where numpy
  (the reference) propagates it.
- The CPU softmax's vector ``exp`` clamped its argument to ``[-87.3, 88.4]``: ``e^-inf`` (a masked
  entry) was 1.2e-38 instead of 0, so ``log(softmax)`` gave -87.9 instead of -inf and a comparison
  with a tiny threshold flipped; above the range it gave 2.4e38 instead of inf.
- Deeply nested input (``dense<[[[[...``, nested regions or types) crashed the parser with a
  RecursionError (an internal error, exit 70); now a one-line error at the token.
- A value used above its definition (two lines swapped) passed the verifier and crashed the
  lowering with a KeyError; now a one-line error at the use.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fusec
from fusec.compiler.driver import load
from fusec.fuzz.oracle import check
from fusec.reference.executor import find_function, run_function

CASES = Path(__file__).parent / "cases"


def both_pipelines(text: str, *args: np.ndarray) -> list[list[np.ndarray]]:
    """The outputs of the reference, the fused and the unfused program."""
    with np.errstate(all="ignore"):
        results = [run_function(load(text), list(args))]
    for pipeline in ("default", "none"):
        results.append(fusec.compile(text, pipeline=pipeline, device="cpu")(*args))
    return results


def unary(op: str, shape: str) -> str:
    t = f"tensor<{shape}xf32>"
    return (f"func.func @f(%x: {t}) -> {t} {{\n  %y = {op} %x : {t} -> {t}\n"
            f"  func.return %y : {t}\n}}\n")


@pytest.mark.parametrize("op", ["nn.relu", "nn.max", "nn.min"])
def test_nan_propagates_through_max_and_min(op: str) -> None:
    x = np.array([np.nan, -1.0, 2.0, np.nan, 0.0, -np.inf, np.inf, 3.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, np.nan, -0.5, 0.0, 0.0, 1.0], np.float32)
    t = "tensor<8xf32>"
    if op == "nn.relu":
        text, args = unary(op, "8"), (x,)
    else:
        text = (f"func.func @f(%x: {t}, %y: {t}) -> {t} {{\n  %z = {op} %x, %y : {t}, {t} -> {t}\n"
                f"  func.return %z : {t}\n}}\n")
        args = (x, y)
    ref, fused, unfused = (r[0] for r in both_pipelines(text, *args))
    assert np.isnan(ref).any()
    np.testing.assert_array_equal(fused, ref)
    np.testing.assert_array_equal(unfused, ref)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_nan_propagates_through_max_and_min_reductions(kind: str) -> None:
    x = np.arange(3 * 37, dtype=np.float32).reshape(3, 37)
    x[0, 5] = np.nan
    x[2, 36] = np.nan  # in the scalar remainder after the vector part
    text = ("func.func @f(%x: tensor<3x37xf32>) -> tensor<3xf32> {\n"
            f"  %y = nn.reduce_{kind} %x {{axes = array<i64: 1>}} : tensor<3x37xf32> -> "
            "tensor<3xf32>\n  func.return %y : tensor<3xf32>\n}\n")
    ref, fused, unfused = (r[0] for r in both_pipelines(text, x))
    assert np.isnan(ref[0]) and np.isnan(ref[2]) and not np.isnan(ref[1])
    np.testing.assert_array_equal(fused, ref)
    np.testing.assert_array_equal(unfused, ref)


def test_masked_softmax_entries_are_exactly_zero() -> None:
    x = np.random.default_rng(0).standard_normal((4, 24)).astype(np.float32)
    x[0, :5] = -np.inf
    x[1, 3] = -200.0  # e^(x - max) below the smallest subnormal: 0
    x[2, 7] = x[2].max() - 95.0  # a subnormal result: kept, not the smallest normal float
    t = "tensor<4x24xf32>"
    text = (f"func.func @f(%x: {t}) -> ({t}, {t}) {{\n  %s = nn.softmax %x : {t} -> {t}\n"
            f"  %l = nn.log %s : {t} -> {t}\n  func.return %s, %l : {t}, {t}\n}}\n")
    (ref_s, ref_l), fused, unfused = both_pipelines(text, x)
    for s, log in (fused, unfused):
        assert (s[0, :5] == 0).all() and s[1, 3] == 0
        assert 0 < s[2, 7] < np.finfo(np.float32).tiny
        assert np.isneginf(log[0, :5]).all()
        np.testing.assert_allclose(s, ref_s, rtol=1e-5, atol=1e-7)


def saved_cases() -> list[Path]:
    return sorted(CASES.glob("*.mlir"))


@pytest.mark.parametrize("case", saved_cases(), ids=lambda p: p.stem)
def test_saved_case_passes(case: Path) -> None:
    text = case.read_text()
    names = [a.name_hint for a in find_function(load(text)).body.block.args]
    with np.load(case.with_suffix(".npz")) as data:
        inputs = [data[n] for n in names]
    findings = [f for f in check(text, inputs, name=case.name) if f.failed]
    assert not findings, "\n".join(map(str, findings))


SQUARE_THEN_DIVIDE = """func.func @f(%x: tensor<8xi32>, %y: tensor<8xi32>)
    -> (tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) {
  %s = nn.mul %x, %x : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  %q = nn.div %y, %s : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  %n = nn.neg %q : tensor<8xi32> -> tensor<8xi32>
  %z = nn.add %n, %x : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  %d = nn.div %y, %x : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  func.return %q, %z, %d : tensor<8xi32>, tensor<8xi32>, tensor<8xi32>
}
"""

INT_EDGES_CHILD = """
import sys
import numpy as np
from tests.fuzz.test_regressions import SQUARE_THEN_DIVIDE, both_pipelines
lo, hi = -2**31, 2**31 - 1
# x * x wraps to 0 (INT_MIN, 65536) or to 1 (INT_MAX, -1); y / x has INT_MIN / -1 and 5 / 0
x = np.array([lo, 65536, hi, -1, 3, 0, 46341, lo], np.int32)
y = np.array([7, lo, lo, lo, hi, 5, lo, 0], np.int32)
ref, fused, unfused = both_pipelines(SQUARE_THEN_DIVIDE, x, y)
for got in (fused, unfused):
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)
print("ok")
"""


def test_int32_overflow_and_division_edges_run_in_a_child() -> None:
    """Fuzz seed 1839: ``y / (x * x)`` killed the process with SIGFPE in the CPU OpenCL
    runtime. Signed overflow is undefined in OpenCL C, so the compiler took ``x * x`` as never
    wrapping, turned the guard ``x * x == 0`` into ``x == 0``, and ``x = INT_MIN`` (whose square
    wraps to 0) reached ``idiv`` with a zero divisor. i32 add/sub/mul now wrap in ``uint`` and
    the division divides by a safe divisor. Run in a child so a crash fails this test only."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", INT_EDGES_CHILD], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "ok"
