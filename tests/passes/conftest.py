"""Helpers for the transformer-fusion tests: compile a program through a pass spec and compare
what the numpy reference computes before and after."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.pipeline import run_pipeline
from fusec.runtime.reference import find_function, random_inputs, run_function
from xdsl.dialects.builtin import ModuleOp

# Fused ops round once where their decompositions round after every step: a few ulps apart.
# (rtol, atol relative to the largest magnitude of the expected result)
TOLERANCE = {np.dtype(np.float32): (1e-4, 1e-5), np.dtype(np.float16): (2e-2, 2e-2)}


@dataclass
class Fusion:
    """What the tests do with a program: compile it through a spec, run it, compare runs."""

    def parse(self, text: str, name: str = "<test>") -> ModuleOp:
        return parse_module(make_context(), Source(text, name))

    def compile(self, text: str, spec: str) -> ModuleOp:
        """``text`` after ``spec`` (each pass verified), as a fresh module."""
        module = self.parse(text)
        run_pipeline(make_context(), module, spec)
        return module

    def run(self, module: ModuleOp, seed: int) -> list[np.ndarray]:
        return run_function(module, random_inputs(find_function(module), seed))

    def assert_same(
        self, expected: Sequence[np.ndarray], actual: Sequence[np.ndarray], context: str
    ) -> None:
        assert len(expected) == len(actual), context
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert e.shape == a.shape and e.dtype == a.dtype, f"result #{i}: {context}"
            rtol, atol = TOLERANCE.get(e.dtype, (0, 0))
            # Cancellation: a small entry of a large result keeps the large entries' absolute error.
            atol *= max(1.0, float(abs(e.astype(float)).max(initial=0)))
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"result #{i}: {context}")


@pytest.fixture
def fusion() -> Fusion:
    return Fusion()
