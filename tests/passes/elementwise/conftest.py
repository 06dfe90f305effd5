"""Shared helpers for the elementwise-fusion tests, as fixtures (test files cannot import each
other under ``--import-mode=importlib``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.pipeline import run_pipeline
from fusec.reference.executor import run_function

Compile = Callable[[str, str], ModuleOp]
Run = Callable[[ModuleOp, Sequence[np.ndarray]], list[np.ndarray]]


def compile_text(text: str, spec: str = "") -> ModuleOp:
    """Parses ``text`` and applies the pass pipeline ``spec`` (verified after each pass)."""
    ctx = make_context()
    module = parse_module(ctx, Source(text, "case.mlir"))
    run_pipeline(ctx, module, spec, "case.mlir")
    return module


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk()]


@pytest.fixture
def compile_ir() -> Compile:
    return compile_text


@pytest.fixture
def run_ref() -> Run:
    return lambda module, args: run_function(module, [np.asarray(a) for a in args])


@pytest.fixture
def names() -> Callable[[ModuleOp], list[str]]:
    return op_names
