"""Differential checks: a compiled program's outputs against the numpy reference executor.

``fusec-run --check`` and the runtime tests both use this: the reference runs the program as
written (before fusion), the OpenCL executable runs it fused and lowered, on the same inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from fusec.compiler.driver import compile, load
from fusec.runtime.executable import Executable
from fusec.dtypes import BF16_HOST, host_as_float
from fusec.reference.executor import find_function, random_inputs, run_function


TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (6e-2, 6e-2),
}
"""Default (atol, rtol) by output dtype: a 16-bit result is rounded at 2^-11 (f16) or 2^-8
(bf16) of its size, and the kernels round where the reference does not (and the other way
round), so their tolerances are a few of those units; other dtypes take float32's."""


def dtype_name(array: np.ndarray) -> str:
    """The element type name of an output for `TOLERANCES` (bf16 bit patterns: ``bfloat16``)."""
    dtype = np.asarray(array).dtype
    return "bfloat16" if dtype == BF16_HOST else dtype.name


def tolerance(array: np.ndarray, atol: float | None, rtol: float | None) -> tuple[float, float]:
    """``(atol, rtol)`` for an output: the given ones, or its dtype's default for a None."""
    default_atol, default_rtol = TOLERANCES.get(dtype_name(array), TOLERANCES["float32"])
    return (default_atol if atol is None else atol, default_rtol if rtol is None else rtol)


@dataclass(frozen=True)
class Comparison:
    """How far one output is from its reference value."""

    name: str
    max_abs: float
    max_rel: float
    ok: bool
    normwise: bool
    atol: float = 0.0
    rtol: float = 0.0
    dtype: str = "float32"

    def describe(self, atol: float | None = None, rtol: float | None = None) -> str:
        atol = self.atol if atol is None else atol
        rtol = self.rtol if rtol is None else rtol
        verdict = "ok" if self.ok else f"FAILED ({self.dtype}: atol {atol:g}, rtol {rtol:g})"
        rel = "max rel error (to max |ref|)" if self.normwise else "max rel error"
        return f"{self.name}: max abs error {self.max_abs:.3g}, {rel} {self.max_rel:.3g}: {verdict}"


def compare(
    outputs: list[np.ndarray],
    expected: list[np.ndarray],
    atol: float | None = None,
    rtol: float | None = None,
    normwise: bool = False,
) -> list[Comparison]:
    """Per output: the largest errors and whether they are within tolerance; a tolerance
    left None is the output dtype's (`TOLERANCES`). bf16 outputs (``uint16`` bit patterns) are
    compared by value.

    Elementwise (the default): ``|out - ref| <= atol + rtol * |ref|`` everywhere. Normwise:
    ``max |out - ref| <= atol + rtol * max |ref|``, the right measure for results of long sums
    (a layer of matmuls), where an element near zero carries the rounding error of its large
    terms. Either way NaN and infinities must sit at the same places.
    """
    results: list[Comparison] = []
    for i, (out, ref) in enumerate(zip(outputs, expected, strict=False)):
        out_atol, out_rtol = tolerance(out, atol, rtol)
        a = np.asarray(host_as_float(out), np.float64)
        b = np.asarray(host_as_float(ref), np.float64)
        finite = np.isfinite(b)
        same_specials = bool(np.array_equal(a[~finite], b[~finite], equal_nan=True))
        same_specials &= bool(np.all(np.isfinite(a[finite])))
        diff = np.abs(a[finite] - b[finite])
        scale = np.abs(b[finite])
        max_abs = float(diff.max()) if diff.size else 0.0
        if normwise:
            top = float(scale.max()) if scale.size else 0.0
            max_rel = max_abs / top if top else 0.0
            ok = max_abs <= out_atol + out_rtol * top
        else:
            rel = diff / np.maximum(scale, 1e-30)
            max_rel = float(rel.max()) if rel.size else 0.0
            ok = bool(np.all(diff <= out_atol + out_rtol * scale))
        results.append(Comparison(f"result{i}", max_abs, max_rel, same_specials and ok, normwise,
                                  out_atol, out_rtol, dtype_name(out)))
    return results


def run_with_reference(
    source: str | ModuleOp,
    seed: int = 0,
    pipeline: str = "default",
    device: str = "cpu",
    platform: str | None = None,
    function: str | None = None,
    args: list[np.ndarray] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The compiled program's outputs and the reference outputs, on ``args`` or on random
    inputs drawn with ``seed``."""
    module = load(source)
    fn = find_function(module, function)
    if args is None:
        args = random_inputs(fn, seed)
    expected = run_function(module, args, fn.sym_name.data)
    exe = compile(module, fn.sym_name.data, pipeline, device, platform)
    return exe(*spared(exe, args)), expected


def spared(exe: object, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`args` with a copy of each array a call of `exe` updates in place (`Executable.spared`:
    a donated input), so that the arrays keep the values a reference run reads."""
    return exe.spared(args) if isinstance(exe, Executable) else list(args)
