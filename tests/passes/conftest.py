"""Helpers for the transformer-fusion tests: compile a program through a pass spec and compare
what the numpy reference computes before and after."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.pipeline import run_pipeline
from fusec.reference.executor import find_function, random_inputs, run_function

# Fused ops round once where their decompositions round after every step: a few ulps apart.
# (rtol, atol relative to the largest magnitude of the expected result)
TOLERANCE = {np.dtype(np.float32): (1e-4, 1e-5), np.dtype(np.float16): (2e-2, 2e-2)}


def is_weight(name: str | None, shape: tuple[int, ...]) -> bool:
    return bool(name) and len(shape) >= 2 and (name.startswith("w") or name.endswith("_w"))


def inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    """The reference's random inputs, with weights (``%w...``, ``%..._w``) scaled by
    ``1/sqrt(K)`` as initialisers do: unscaled normal weights grow activations by ``sqrt(K)``
    per matmul, and deep random programs then reach ill-conditioned softmaxes and norms where
    a last-bit difference is amplified into a visible one."""
    fn = find_function(module)
    arrays = random_inputs(fn, seed)
    for i, (arg, array) in enumerate(zip(fn.body.block.args, arrays, strict=True)):
        if is_weight(arg.name_hint, array.shape):
            arrays[i] = (array / np.sqrt(array.shape[-2])).astype(array.dtype)
    return arrays


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
        return run_function(module, inputs(module, seed))

    def assert_same(
        self, expected: Sequence[np.ndarray], actual: Sequence[np.ndarray], context: str
    ) -> None:
        assert len(expected) == len(actual), context
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert e.shape == a.shape and e.dtype == a.dtype, f"result #{i}: {context}"
            rtol, atol = TOLERANCE.get(e.dtype, (0, 0))
            # Cancellation: a small entry of a large result keeps the large entries' absolute error.
            atol *= max(1.0, float(abs(e.astype(float)).max(initial=0)))
            np.testing.assert_allclose(
                a, e, rtol=rtol, atol=atol, err_msg=f"result #{i}: {context}"
            )


@pytest.fixture
def fusion() -> Fusion:
    return Fusion()


def _load_programs() -> ModuleType:
    """``transformer_programs.py`` beside this file (tests are not a package)."""
    path = Path(__file__).with_name("transformer_programs.py")
    spec = importlib.util.spec_from_file_location("transformer_programs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def programs() -> ModuleType:
    """The random transformer program generator (``program(seed)``, ``layers(n)``)."""
    return _load_programs()
