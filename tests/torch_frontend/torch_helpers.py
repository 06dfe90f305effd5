"""Run a module eagerly and through ``torch.compile(backend="fusec")``, with the report; modules
several tests compile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")


def compiled_run(module: Any, inputs: tuple[Any, ...], tmp_path: Path,
                 **options: Any) -> tuple[Any, Any, list[dict[str, Any]]]:
    """(eager output, fusec output, the report's graphs) for one call under inference mode."""
    torch._dynamo.reset()
    report = tmp_path / "report.json"
    compiled = torch.compile(module, backend="fusec",
                             options={"device": "cpu", "report": str(report), **options})
    with torch.inference_mode():
        expected = module(*inputs)
        actual = compiled(*inputs)
    return expected, actual, graphs_of(report)


def graphs_of(report: Path) -> list[dict[str, Any]]:
    return json.loads(report.read_text())["graphs"] if report.exists() else []


def assert_close(actual: Any, expected: Any, tol: float = 1e-4) -> None:
    if isinstance(expected, tuple | list):
        for a, e in zip(actual, expected, strict=True):
            assert_close(a, e, tol)
        return
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual.float(), expected.float(), atol=tol, rtol=tol)


def fused_total(graphs: list[dict[str, Any]], name: str) -> int:
    return sum(g["fused_ops"].get(name, 0) for g in graphs)


class AutocastInside(torch.nn.Module):
    """An autocast region inside forward, with a region that turns it off inside it: the
    products in bf16, GELU and softmax on their inputs' type, the inner Linear in f32."""

    def __init__(self):
        super().__init__()
        self.up, self.down = torch.nn.Linear(32, 64), torch.nn.Linear(64, 32)
        self.inner = torch.nn.Linear(32, 32)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.down(torch.nn.functional.gelu(self.up(x)))
            with torch.autocast("cpu", enabled=False):
                inner = self.inner(x * 2)
            scores = torch.matmul(h, h.transpose(0, 1)).softmax(-1)
        return scores, h + inner


def knob_at_each_call(monkeypatch: Any, function: str, knob: str) -> list[bool]:
    """The list to which each later call of ``fusec.compiler.torch_compile.<function>`` adds
    the value `knob` has during it (the function spied on through `monkeypatch`)."""
    from fusec import knobs
    from fusec.compiler import torch_compile

    seen: list[bool] = []
    original = getattr(torch_compile, function)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(knobs.value(knob))
        return original(*args, **kwargs)

    monkeypatch.setattr(torch_compile, function, spy)
    return seen
