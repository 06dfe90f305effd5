"""The importer writes each constant array once: by identity, so a temporary array (a default
bias, a linearised index table) must never be mistaken for an earlier one whose id Python has
reused. Before the fix, the second call below returned the first array's IR value, silently."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import helper  # noqa: E402

from fusec.frontends.onnx_import import Importer  # noqa: E402


def test_temporary_constants_are_not_confused() -> None:
    imp = Importer(helper.make_model(helper.make_graph([], "g", [], [])), "m.onnx", {})
    values = [imp.tensor(np.arange(20, dtype=np.float32) * i) for i in range(1, 65)]
    assert len({id(v) for v in values}) == len(values)  # freed arrays' ids get reused
    for i, value in enumerate(values, start=1):
        assert imp.params[value.name_hint][1] == i  # type: ignore[attr-defined]


def test_the_same_array_is_written_once() -> None:
    imp = Importer(helper.make_model(helper.make_graph([], "g", [], [])), "m.onnx", {})
    weights = np.arange(20, dtype=np.float32)
    assert imp.tensor(weights) is imp.tensor(weights)
