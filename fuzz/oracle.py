"""The differential oracle: a program, fused and unfused on a device, against the reference.

`check` runs the numpy reference (`fusec.reference`) on the program as written, then compiles
it with the ``default`` pipeline and with none (``none``: every `nn` op its own kernel), runs
both on the same inputs and compares each with the reference and the two with each other. NaN
and infinities must sit at the same places; finite values must agree within a tolerance scaled
by the output's largest finite magnitude (normwise: long sums round differently in different
orders). A compile error, a launch error or any exception is a finding too, as a mismatch is.
A `ResourceError` is not: a program too large for the device is a user error, and neither is
an element type the OpenCL backend does not support (`Finding.kind` ``unsupported``).

A mismatch is then traced to the first op that goes wrong (`localize`: every value made an
output, run unfused), and called ``inconclusive`` rather than a failure in four cases where
the numbers differ for a reason that is not a bug: the first op to differ is a comparison (or
a cast to ``i1``) whose operands agree within the tolerance but not bit for bit (a value within
rounding of the threshold falls on either side), or it is a norm, softmax, reduction or matmul
with an operand beyond ``sqrt(FLT_MAX)`` in magnitude, whose float32 squares and sums overflow
where the reference computes in float64, or its reference result alone changes beyond the
tolerance when its inputs move by a few float32 ulps (`ill_conditioned`: a sum that cancels to
near zero, then multiplied by infinity, has no reliable sign), or the kernel's result is what
the reference's own formula gives evaluated in float32 on the reference's operands
(`float32_range`: an intermediate that underflows to 0 in float32, then multiplied by
infinity, is NaN where float64 keeps it). Each excuse is about the first op to differ, on the
reference's operands: a kernel that computes wrongly is still a failure. Failing those (or
without ops to trace: a saved case's text), a mismatch is inconclusive when every element that
differs is one whose reference value moves beyond tolerance when the program's inputs move by
a few ulps (`ill_conditioned_elements`: an error within the tolerance of one op, such as a sum
of +-1e15 that loses its small terms, made large by the next).
"""

from __future__ import annotations

import traceback
import warnings
from dataclasses import dataclass

import numpy as np

from fusec.compiler.check import compare
from fusec.compiler.diagnostics import FusecError
from fusec.compiler.driver import compile, load
from fusec.reference.executor import find_function, run_function
from fusec.reference.ops import computing_in
from fusec.runtime.limits import ResourceError

from .program import Op, Program, Value

PIPELINES = ("default", "none")

TOLERANCE = {"f32": (1e-4, 1e-3), "f16": (2e-2, 2e-2), "i32": (0.0, 0.0), "i1": (0.0, 0.0)}
"""Output element type -> (atol, rtol), normwise."""


@dataclass(frozen=True)
class Finding:
    """One way a program failed: ``kind`` is ``crash``, ``error`` (a one-line error where
    none is expected) or ``mismatch``; ``where`` names the pipeline or pair compared."""

    kind: str
    where: str
    message: str

    @property
    def failed(self) -> bool:
        """Whether this is a failure (not ``unsupported`` or ``inconclusive``)."""
        return self.kind not in ("unsupported", "inconclusive")

    def __str__(self) -> str:
        return f"{self.kind} ({self.where}): {self.message}"

    @property
    def signature(self) -> tuple[str, str]:
        """What a minimized program must still show to count as the same failure."""
        return self.kind, self.where


def check(program: Program | str, inputs: list[np.ndarray], device: str = "cpu",
          name: str = "<fuzz>") -> list[Finding]:
    """Every finding for ``program`` (or a program's text, e.g. a saved regression case) on
    ``inputs`` (empty: it passed)."""
    text = program if isinstance(program, str) else program.text()
    try:
        module = load(text, name)
    except FusecError as e:
        return [Finding("error", "parse", str(e))]
    if isinstance(program, str):
        program = Program([], [], [_result_value(t, i) for i, t in
                                   enumerate(find_function(module).function_type.outputs.data)])
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = run_function(module, [a.copy() for a in inputs])
    except Exception as e:  # the reference itself failed
        return [Finding("crash", "reference", _describe(e))]
    findings: list[Finding] = []
    results: dict[str, list[np.ndarray]] = {}
    for pipeline in PIPELINES:
        try:
            exe = compile(module, pipeline=pipeline, device=device, filename=name)
            results[pipeline] = exe(*[a.copy() for a in inputs])
        except ResourceError:
            return []
        except FusecError as e:
            kind = "unsupported" if "not supported by the OpenCL backend" in str(e) else "error"
            findings.append(Finding(kind, pipeline, str(e)))
        except Exception as e:
            findings.append(Finding("crash", pipeline, _describe(e)))
    for pipeline, outputs in results.items():
        findings += _compare(f"{pipeline} vs reference", program, outputs, expected)
    if len(results) == 2:
        findings += _compare("default vs none", program, results["default"], results["none"])
    if any(f.kind == "mismatch" for f in findings):
        reason = localize(program, inputs, device) if program.ops else None
        if reason is None:
            reason = ill_conditioned_elements(text, program.outputs, inputs, results, expected)
        if reason is not None:
            findings = [Finding("inconclusive", f.where, f"{f.message}; {reason}")
                        if f.kind == "mismatch" else f for f in findings]
    return findings


DISCONTINUOUS = ("nn.cmp",)
RANGE_SENSITIVE = ("nn.layer_norm", "nn.rms_norm", "nn.softmax", "nn.matmul", "nn.reduce_sum",
                   "nn.reduce_mean")
FLOAT32_SQRT_MAX = 1.8e19
"""Past this magnitude a float32 square overflows."""


def localize(program: Program, inputs: list[np.ndarray], device: str) -> str | None:
    """Why a mismatch of ``program`` is not a bug, or None if it is one (see the module
    docstring): finds the first op whose unfused kernel result differs from the reference."""
    every = program.copy()
    every.outputs = [op.result for op in program.ops]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = run_function(load(every.text(), "<fuzz>"), [a.copy() for a in inputs])
        got = compile(every.text(), pipeline="none", device=device)(*[a.copy() for a in inputs])
    except Exception:
        return None
    ref = dict(zip((a.name for a in program.args), inputs, strict=True))
    ker = dict(ref)
    for op, want, have in zip(program.ops, expected, got, strict=True):
        ref[op.result.name], ker[op.result.name] = want, have
        if not _compare("", every, [have], [want], outputs=[op.result]):
            continue
        return _excuse(op, ref, ker, {o.result.name: o for o in program.ops})
    return None


def _excuse(op: Op, ref: dict[str, np.ndarray], ker: dict[str, np.ndarray],
            producers: dict[str, Op] | None = None) -> str | None:
    operands = [v.name for v in op.operands]
    if op.name in DISCONTINUOUS or (op.name == "nn.cast" and op.result.elem == "i1"):
        if any(not np.array_equal(ref[n], ker[n], equal_nan=True) for n in operands):
            return (f"first difference at {op.result.ref} = {op.name}, whose operands agree "
                    "within tolerance but not bit for bit")
    if op.name in RANGE_SENSITIVE:
        for n in operands:
            values = np.asarray(ref[n], np.float64)
            big = np.isfinite(values) & (np.abs(values) > FLOAT32_SQRT_MAX)
            if big.any():
                return (f"first difference at {op.result.ref} = {op.name}, whose operand %{n} "
                        f"holds {values[big].flat[0]:.3g}: float32 squares and sums overflow "
                        "(the reference computes in float64)")
    if ill_conditioned(op, ref):
        return (f"first difference at {op.result.ref} = {op.name}, whose reference result "
                f"changes beyond tolerance when its inputs change by {PERTURBATION_ULPS} float32 "
                "ulps (ill-conditioned: e.g. a sum cancelling to near 0, times infinity)")
    if float32_range(op, ref, ker):
        return (f"first difference at {op.result.ref} = {op.name}, whose reference evaluated "
                "in float32 (every step rounded to float32) gives the kernel's result: an "
                "intermediate under- or overflows float32 (the reference computes in float64)")
    culprit = float32_operand(op, ref, ker, producers or {})
    if culprit is not None:
        return (f"first difference at {op.result.ref} = {op.name}, right on the kernel's "
                f"operands; its operand {culprit.result.ref} = {culprit.name} differs within "
                "tolerance where that op evaluated in float32 gives the kernel's value (an "
                "intermediate under- or overflows float32), e.g. -0 for a subnormal, whose rsqrt "
                "is -inf, not NaN")
    return None


PERTURBATION_ULPS = 4
"""How far `ill_conditioned` moves each input element, relative to itself, in float32 ulps:
about what rounding in a different order does."""


def float32_range(op: Op, ref: dict[str, np.ndarray], ker: dict[str, np.ndarray]) -> bool:
    """Whether the kernel's result of ``op`` agrees with the reference's formula for ``op``
    evaluated in float32 (`computing_in`) on the reference's operands, where the reference in
    float64 does not: the difference is one of float32's range, which any float32 evaluation
    of the op has (seed 1431: ``x / rms`` underflows to 0 for a subnormal ``x`` in a row
    holding 1e15, and 0 times an infinite gamma is NaN where float64 gives -inf). A kernel that
    differs from that evaluation too is not excused; nor is one whose operands (computed by
    earlier kernels) differ: the operands are the reference's."""
    if op.result.elem != "f32":
        return False
    alone, names = _alone(op)
    try:
        module = load(alone.text(), "<op>")
        inputs = [ref[n] for n in names]
        with np.errstate(all="ignore"), warnings.catch_warnings(), computing_in(np.float32):
            warnings.simplefilter("ignore")
            narrow = run_function(module, inputs)
    except Exception:
        return False
    have, want = [ker[op.result.name]], [ref[op.result.name]]
    return not _compare("", alone, have, narrow) and bool(_compare("", alone, narrow, want))


def float32_operand(op: Op, ref: dict[str, np.ndarray], ker: dict[str, np.ndarray],
                    producers: dict[str, Op]) -> Op | None:
    """The producer of an operand of ``op`` that carries a float32 artefact into it, or None:
    when ``op``, evaluated by the reference on the kernel's operands, gives the kernel's result
    (``op``'s kernel is right), and every operand element where the kernel's value is not the
    reference's (bit for bit: the sign of a zero counts) is what the operand's producer gives
    evaluated in float32 on the reference's operands (to `SAME_ULPS` ulps; zeros with their
    sign). Seed 4055: rms_norm's ``x * rstd`` underflows in float32 (x = 1e-40 in a row holding
    1e15), so the kernel's result is -0 where the reference's is -5.7e-40, within tolerance;
    ``rsqrt`` of them is -inf and NaN. A sign of zero that float32 does not explain (a relu
    that keeps -0) is not excused."""
    names = list(dict.fromkeys(v.name for v in op.operands))
    differing = [n for n in names if not _same_bits(ker[n], ref[n]).all()]
    if not differing or any(n not in producers for n in differing):
        return None
    alone, _ = _alone(op)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            on_kernel = run_function(load(alone.text(), "<op>"), [ker[n] for n in names])
            if _compare("", alone, [ker[op.result.name]], on_kernel):
                return None
            for n in differing:
                producer = producers[n]
                producer_alone, inputs = _alone(producer)
                with computing_in(np.float32):
                    (narrow,) = run_function(load(producer_alone.text(), "<op>"),
                                             [ref[m] for m in inputs])
                off = ~_same_bits(ker[n], ref[n])
                if not _same_value(np.asarray(ker[n])[off], np.asarray(narrow)[off]).all():
                    return None
    except Exception:
        return None
    return producers[differing[0]]


SAME_ULPS = 4
"""How far (in ulps) a kernel's value may be from a float32 evaluation's and count as it."""


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where ``a`` and ``b`` hold the same value, zeros with the same sign, NaN as NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        return np.asarray(a == b)
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def _same_value(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`_same_bits`, or both finite, non-zero, of one sign and `SAME_ULPS` ulps apart."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        return np.asarray(a == b)
    with np.errstate(all="ignore"):
        near = (np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
                & (np.signbit(a) == np.signbit(b))
                & (np.abs(a - b) <= SAME_ULPS * np.spacing(np.maximum(np.abs(a), np.abs(b)))))
    return _same_bits(a, b) | near


def _alone(op: Op) -> tuple[Program, list[str]]:
    """A program of ``op`` alone, its operands its arguments, and their names."""
    names = list(dict.fromkeys(v.name for v in op.operands))
    values = {v.name: v for v in op.operands}
    return Program([values[n] for n in names], [op], [op.result]), names


def ill_conditioned(op: Op, ref: dict[str, np.ndarray], tries: int = 8) -> bool:
    """Whether the reference result of ``op`` alone changes beyond the tolerance when every
    finite float input element is moved by `PERTURBATION_ULPS` ulps of itself: then a float32
    kernel that rounds differently cannot be held to it (backward stability)."""
    alone, names = _alone(op)
    if not names:
        return False
    try:
        module = load(alone.text(), "<op>")
        inputs = [ref[n] for n in names]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = run_function(module, inputs)
            rng = np.random.default_rng(0)
            for _ in range(tries):
                moved = [_perturb(a, rng) for a in inputs]
                if _compare("", alone, run_function(module, moved), base):
                    return True
    except Exception:
        return False
    return False


def ill_conditioned_elements(text: str, outputs: list[Value], inputs: list[np.ndarray],
                             results: dict[str, list[np.ndarray]],
                             expected: list[np.ndarray], tries: int = 8) -> str | None:
    """Why the mismatches of the program ``text`` are not a bug, or None: when every element
    where a pipeline's result differs from the reference's (or fused from unfused) is one
    whose reference value itself changes beyond the tolerance when the program's inputs move by
    `PERTURBATION_ULPS` float32 ulps (seed 3425: a row sum of +-1e15 and small values cancels,
    within tolerance of the 1e15 sums, and ``tanh`` of it scaled by 0.18 has no reliable value).
    Element by element: a difference at an element the perturbations leave alone is a failure,
    e.g. the sign of ``-1 / relu(-0)``."""
    try:
        module = load(text, "<fuzz>")
        sensitive = [np.zeros(np.shape(e), bool) for e in expected]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rng = np.random.default_rng(0)
            for _ in range(tries):
                moved = run_function(module, [_perturb(a, rng) for a in inputs])
                for mask, got, want, value in zip(sensitive, moved, expected, outputs,
                                                  strict=True):
                    mask |= _differs(got, want, *TOLERANCE[value.elem])
        pairs = [(r, expected) for r in results.values()]
        if len(results) == 2:
            pairs.append((results["default"], results["none"]))
        for got_all, want_all in pairs:
            for mask, got, want, value in zip(sensitive, got_all, want_all, outputs, strict=True):
                if np.shape(got) != np.shape(want):
                    return None
                if (_differs(got, want, *TOLERANCE[value.elem]) & ~mask).any():
                    return None
    except Exception:
        return None
    return ("every differing element's reference value changes beyond tolerance when the "
            f"program's inputs change by {PERTURBATION_ULPS} float32 ulps (ill-conditioned "
            "there: e.g. a sum cancelling within tolerance of its large terms, then scaled or "
            "squashed elementwise)")


def _perturb(array: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if array.dtype.kind != "f":
        return array
    step = PERTURBATION_ULPS * float(np.finfo(array.dtype).eps)
    factor = 1 + step * rng.uniform(-1, 1, array.shape)
    with np.errstate(all="ignore"):
        moved = (array.astype(np.float64) * factor).astype(array.dtype)
    return np.where(np.isfinite(array), moved, array)


def _compare(where: str, program: Program, got: list[np.ndarray],
             want: list[np.ndarray], outputs: list | None = None) -> list[Finding]:
    findings = []
    values = program.outputs if outputs is None else outputs
    for i, (out, ref, value) in enumerate(zip(got, want, values, strict=True)):
        if out.shape != ref.shape or out.dtype != ref.dtype:
            findings.append(Finding("mismatch", where, f"result{i} is {out.dtype}{list(out.shape)}"
                                    f", expected {ref.dtype}{list(ref.shape)}"))
            continue
        atol, rtol = TOLERANCE[value.elem]
        (result,) = compare([out], [ref], atol, rtol, normwise=True)
        if not result.ok:
            findings.append(Finding("mismatch", where, f"result{i} ({value.type}): "
                                    + _first_difference(out, ref, atol, rtol)))
    return findings


def _differs(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Where ``out`` differs from ``ref``: NaN or an infinity against something else, or a
    finite difference beyond the normwise tolerance (scaled by ``ref``'s largest magnitude)."""
    a = np.asarray(out, np.float64)
    b = np.asarray(ref, np.float64)
    finite = np.isfinite(b)
    top = float(np.abs(b[finite]).max()) if finite.any() else 0.0
    with np.errstate(all="ignore"):
        close = np.isfinite(a) & finite & (np.abs(a - b) <= atol + rtol * top)
        return ~((np.isnan(a) & np.isnan(b)) | (a == b) | close)


def _first_difference(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> str:
    a = np.asarray(out, np.float64)
    b = np.asarray(ref, np.float64)
    bad = _differs(out, ref, atol, rtol)
    index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else ()
    count = int(bad.sum())
    return f"{count} element(s) differ, first at {list(index)}: got {a[index]!r}, " \
           f"expected {b[index]!r}"


def _describe(e: BaseException) -> str:
    frame = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}{where}"


def _result_value(t: object, index: int) -> Value:
    """A function result's type as a `Value` (for its element type's tolerance)."""
    shape = tuple(t.get_shape())  # type: ignore[attr-defined]
    elem = str(t.element_type)  # type: ignore[attr-defined]
    return Value(f"result{index}", elem, shape)
