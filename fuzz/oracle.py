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
reference's operands: a kernel that computes wrongly is still a failure.
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
    if program.ops and any(f.kind == "mismatch" for f in findings):
        reason = localize(program, inputs, device)
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
        return _excuse(op, ref, ker)
    return None


def _excuse(op: Op, ref: dict[str, np.ndarray], ker: dict[str, np.ndarray]) -> str | None:
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


def _first_difference(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> str:
    a = np.asarray(out, np.float64)
    b = np.asarray(ref, np.float64)
    finite = np.isfinite(b)
    top = float(np.abs(b[finite]).max()) if finite.any() else 0.0
    with np.errstate(all="ignore"):
        close = np.isfinite(a) & finite & (np.abs(a - b) <= atol + rtol * top)
        bad = ~((np.isnan(a) & np.isnan(b)) | (a == b) | close)
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
