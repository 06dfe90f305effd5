"""Regression cases for the bugs the fuzzer found, each fixed; every saved case in ``cases/``
(a minimized program and its inputs, as ``fusec-fuzz --out`` writes them) must pass the oracle.

Found and fixed:
- ``arith.maximumf``/``minimumf`` were OpenCL ``fmax``/``fmin``, which drop a NaN operand:
  ``relu(NaN)`` was 0, ``max``/``min`` and ``reduce_max``/``reduce_min`` skipped NaN where numpy
  (the reference) propagates it.
- ... and ``fmax(-0, +0)`` is either zero: ``relu(-0)`` was -0 in the fused program, so
  ``y / relu(x)`` was +inf for a negative ``y`` (seed 1878). ``max``/``min`` (and their
  reductions) are now IEEE 754-2019 ``maximum``/``minimum`` in the kernels and the reference:
  -0 < +0 in either order (numpy's ``maximum`` returns the second of two zeros).
- The CPU softmax's vector ``exp`` clamped its argument to ``[-87.3, 88.4]``: ``e^-inf`` (a masked
  entry) was 1.2e-38 instead of 0, so ``log(softmax)`` gave -87.9 instead of -inf and a comparison
  with a tiny threshold flipped; above the range it gave 2.4e38 instead of inf.
- Deeply nested input (``dense<[[[[...``, nested regions or types) crashed the parser with a
  RecursionError (an internal error, exit 70); now a one-line error at the token.
- A value used above its definition (two lines swapped) passed the verifier and crashed the
  lowering with a KeyError; now a one-line error at the use.
- ``fuse-row-reduce`` took an ``nn.where`` with an ``i1`` mask into a ``fused.row_reduce``,
  whose kernel read f32 only: the default pipeline failed to lower (seeds 5971, 6004, saved
  below); the row_reduce kernel now reads each input in its own type.
- xDSL's parser asserted on ``dense<-2.5> : tensor<3x2xcomplex<f32>>`` (mutant 1457): an
  internal error; now a one-line error (``tests/corpus/malformed``).
- ``sqrt(gelu_tanh(a / b + c))`` (program 600508, saved below): the kernels and the reference
  computed ``0.5 x (1 + tanh(z))``, whose ``1 + tanh(z)`` cancels to 0 for very negative ``z``
  (below about -9 in float32, -19 in float64), so the value was -0 where it is a tiny negative
  and its ``sqrt`` -0 instead of NaN; both now compute ``x / (1 + exp(-2 z))``, the same value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fusec
from fusec.compiler.driver import load, lower
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


def test_gelu_tanh_of_very_negative_values_is_a_tiny_negative() -> None:
    """Where ``1 + tanh(z)`` would cancel (z below -9 in float32), fused, unfused and the
    reference give GELU's tiny negative value, not -0; in the range of float32's ``exp``."""
    x = np.array([-6.0, -7.0, -8.0, -9.0, -3.0, 0.5, 3.0, -0.0], np.float32)
    t = "tensor<8xf32>"
    text = (f'func.func @f(%x: {t}) -> {t} {{\n  %y = nn.gelu %x {{approximate = "tanh"}} : '
            f"{t} -> {t}\n  func.return %y : {t}\n}}\n")
    reference, fused, unfused = both_pipelines(text, x)
    for got in (reference[0], fused[0], unfused[0]):
        assert (got[:4] < 0).all(), got
        np.testing.assert_allclose(got, reference[0], rtol=1e-4, atol=0)


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


SIGNED_ZEROS_X = np.array([-0.0, 0.0, -0.0, 0.0, -1.0, 2.0, np.nan, 0.0], np.float32)
SIGNED_ZEROS_Y = np.array([0.0, -0.0, -0.0, 0.0, -0.0, 0.0, -0.0, np.nan], np.float32)
IEEE_SIGN = {  # the sign bit of IEEE 754-2019 maximum/minimum (-0 < +0) of the pairs above
    "max": [False, False, True, False, True, False, None, None],
    "min": [True, True, True, False, True, False, None, None],
}


def binary(op: str, t: str) -> str:
    return (f"func.func @f(%x: {t}, %y: {t}) -> {t} {{\n  %z = {op} %x, %y : {t}, {t} -> {t}\n"
            f"  func.return %z : {t}\n}}\n")


@pytest.mark.parametrize("repeat", [1, 5], ids=["8", "40"])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_signed_zeros_in_max_and_min(kind: str, repeat: int) -> None:
    """Fuzz seed 1878: ``max``/``min`` of +0 and -0 follow IEEE 754-2019 (and MLIR's
    ``arith.maximumf``): -0 < +0 whatever the operands' order, in the reference and in both
    pipelines; NaN still propagates. OpenCL's ``fmax`` returned its first operand, numpy's
    ``maximum`` its second. 40 elements: a vector part and a scalar remainder."""
    x, y = np.tile(SIGNED_ZEROS_X, repeat), np.tile(SIGNED_ZEROS_Y, repeat)
    want = IEEE_SIGN[kind] * repeat
    for got in both_pipelines(binary(f"nn.{kind}", f"tensor<{x.size}xf32>"), x, y):
        (z,) = got
        assert np.isnan(z[6::8]).all() and np.isnan(z[7::8]).all()
        signs = [None if np.isnan(v) else bool(np.signbit(v)) for v in z]
        assert signs == want
        expected = (np.maximum if kind == "max" else np.minimum)(x, y)
        np.testing.assert_array_equal(z, expected)  # equal as numbers; signs checked above


def test_relu_of_negative_zero_is_positive_zero() -> None:
    """Fuzz seed 1878: ``y / relu(-0)`` was +inf for a negative ``y`` in the fused program
    (``relu(-0)`` kept the sign), where the reference's ``max(-0, +0)`` is +0: -inf."""
    x = np.array([-0.0, 0.0, -1.0, np.nan, -0.0, 3.0, -np.inf, -0.0] * 5, np.float32)
    y = np.full(40, -2.0, np.float32)
    t = "tensor<40xf32>"
    text = (f"func.func @f(%x: {t}, %y: {t}) -> ({t}, {t}) {{\n"
            f"  %r = nn.relu %x : {t} -> {t}\n  %q = nn.div %y, %r : {t}, {t} -> {t}\n"
            f"  func.return %r, %q : {t}, {t}\n}}\n")
    for relu, quotient in both_pipelines(text, x, y):
        assert not np.signbit(relu[x == 0]).any()
        assert np.isneginf(quotient[x == 0]).all() and np.isneginf(quotient[x == -1]).all()
        assert np.isnan(relu[3::8]).all()


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("axis", [0, 1])
def test_signed_zeros_in_max_and_min_reductions(kind: str, axis: int) -> None:
    """A row of zeros reduces to +0 by ``max`` when any is +0, to -0 by ``min`` when any is -0,
    wherever in the row it sits (IEEE 754-2019; numpy's ``max`` depends on the order)."""
    x = np.full((5, 37), -0.0 if kind == "max" else 0.0, np.float32)
    other = 0.0 if kind == "max" else -0.0
    x[1, 0] = x[2, 36] = x[3, 17] = other  # first, last (scalar remainder), middle
    x[4, :] = other
    if axis == 0:
        x = np.ascontiguousarray(x.T)
    rows, cols = x.shape
    out = rows if axis == 1 else cols
    text = (f"func.func @f(%x: tensor<{rows}x{cols}xf32>) -> tensor<{out}xf32> {{\n"
            f"  %y = nn.reduce_{kind} %x {{axes = array<i64: {axis}>}} : "
            f"tensor<{rows}x{cols}xf32> -> tensor<{out}xf32>\n"
            f"  func.return %y : tensor<{out}xf32>\n}}\n")
    negative = [True, False, False, False, False] if kind == "max" else [False] + [True] * 4
    for (z,) in both_pipelines(text, x):
        assert (z == 0).all()
        assert np.signbit(z).tolist() == negative


@pytest.mark.parametrize("kind", ["max", "min"])
def test_signed_zeros_in_a_row_reduce(kind: str) -> None:
    """The same in a fused ``row_reduce`` (``-1 / reduce_<kind>(x)`` broadcast over the row, one
    kernel in the default pipeline): the quotient's infinity has the sign of the zero."""
    x = np.full((5, 37), -0.0 if kind == "max" else 0.0, np.float32)
    x[1, 0] = x[2, 36] = x[3, 17] = 0.0 if kind == "max" else -0.0
    x[4, :] = x[1, 0]
    y = np.full_like(x, -1.0)
    t, r = "tensor<5x37xf32>", "tensor<5x1xf32>"
    text = (f"func.func @f(%x: {t}, %y: {t}) -> {t} {{\n"
            f"  %m = nn.reduce_{kind} %x {{axes = array<i64: 1>, keepdims = true}} : {t} -> {r}\n"
            f"  %q = nn.div %y, %m : {t}, {r} -> {t}\n  func.return %q : {t}\n}}\n")
    assert "row_reduce of [5x37]" in lower(load(text), pipeline="default").plan.source
    positive = [False] + [True] * 4 if kind == "max" else [True] + [False] * 4
    minus_inf = np.broadcast_to(np.array(positive)[:, None], x.shape)  # -1 / +0 is -inf
    for (q,) in both_pipelines(text, x, y):
        assert np.isinf(q).all()
        np.testing.assert_array_equal(np.isneginf(q), minus_inf)


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
