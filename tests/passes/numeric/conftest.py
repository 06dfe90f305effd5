"""Helpers for the numeric-fusion tests (fuse-row-reduce, fuse-multi-output,
fuse-matmul-epilogue), as a fixture: every program is run four ways on the same inputs and
each is compared with the numpy reference of the program as written:

  * fused by the default pipeline, on the OpenCL CPU device;
  * fused, then un-fused (``unfuse``: every fused op's ``decompose()``), on the device;
  * the numpy reference of the fused IR (the new ops' reference semantics);
  * the numpy reference of the un-fused IR.

Tolerances are ``atol + rtol * |ref|`` elementwise; NaN and infinities must sit at the same
places (``fusec.compiler.check.compare``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.driver import compile as fusec_compile
from fusec.compiler.driver import lower
from fusec.compiler.pipeline import run_pipeline
from fusec.reference.executor import run_function

CPU = DeviceInfo(name="test cpu", is_cpu=True)
GPU = DeviceInfo(name="test gpu", is_cpu=False, max_work_group_size=256)


def parse(text: str, spec: str = "") -> ModuleOp:
    ctx = make_context()
    module = parse_module(ctx, Source(text, "case.mlir"))
    run_pipeline(ctx, module, spec, "case.mlir")
    return module


@dataclass
class NumericCheck:
    """See the module docstring."""

    pipeline: str = "default"

    def top_ops(self, text: str, spec: str | None = None) -> list[str]:
        """The names of the ops of the (only) function after ``spec`` (default: the pipeline)."""
        module = parse(text, self.pipeline if spec is None else spec)
        fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
        return [op.name for op in fn.body.block.ops if op.name != "func.return"]

    def launches(self, text: str, spec: str | None = None,
                 device: DeviceInfo = CPU) -> int:
        """Kernel launches of the lowered program, as the graph passes leave them (launch
        fusion, which would merge what they leave, off)."""
        compiled = lower(parse(text), None, self.pipeline if spec is None else spec, device,
                         launch_fusion=False)
        return len(compiled.plan.launches)

    def run_all(self, text: str, args: Sequence[np.ndarray]) -> dict[str, list[np.ndarray]]:
        args = [np.asarray(a) for a in args]
        unfused_spec = f"{self.pipeline},unfuse"
        return {
            "fused on the device": fusec_compile(text, pipeline=self.pipeline, device="cpu")(*args),
            "unfused on the device": fusec_compile(text, pipeline=unfused_spec, device="cpu")(*args),
            "reference of the fused IR": run_function(parse(text, self.pipeline), args),
            "reference of the unfused IR": run_function(parse(text, unfused_spec), args),
        }

    def check(self, text: str, args: Sequence[np.ndarray],
              expected: Sequence[np.ndarray] | None = None,
              tol: tuple[float, float] = (1e-5, 1e-4), skip: Sequence[str] = ()) -> None:
        """Every way of running ``text`` (but those named in ``skip``) agrees with the reference
        of ``text`` as written and, when given, with ``expected`` (numpy written
        independently)."""
        args = [np.asarray(a) for a in args]
        reference = run_function(parse(text), args)
        targets = [("the reference", reference)]
        if expected is not None:
            targets.append(("numpy", [np.asarray(e) for e in expected]))
        atol, rtol = tol
        for how, outputs in self.run_all(text, args).items():
            if how in skip:
                continue
            for name, wanted in targets:
                for result in compare(outputs, wanted, atol, rtol):
                    assert result.ok, f"{how} vs {name}: {result.describe(atol, rtol)}"


@pytest.fixture
def numeric() -> NumericCheck:
    return NumericCheck()
