"""Whole layers written in ``nn`` ops (``examples/``), fused by the default pipeline, run on the
CPU OpenCL device and match the numpy reference. Select them with ``pytest -m model``.

Inputs are drawn as a real model's would be: activations standard normal, weights scaled by
``1/sqrt(fan_in)``, norm scales near 1, an attention mask of 0/1 with a 1 in every row. The
outputs must satisfy ``max |out - ref| <= 1e-5 + 1e-4 * max |ref|`` (normwise: the layers sum
thousands of products in float32, the reference in float64).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fusec.compiler.check import compare, run_with_reference
from fusec.compiler.driver import load
from fusec.reference.executor import find_function, value_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ATOL, RTOL = 1e-5, 1e-4
DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")


def model_inputs(source: str, seed: int) -> list[np.ndarray]:
    """Inputs with realistic scales, by argument name and shape."""
    rng = np.random.default_rng(seed)
    fn = find_function(load(source))
    arrays = []
    for arg in fn.body.block.args:
        shape, dtype = value_spec(arg.type)
        name = arg.name_hint or ""
        if "mask" in name:
            mask = (rng.random(shape) < 0.8).astype(dtype)
            mask[..., 0] = 1
            arrays.append(mask)
        elif len(shape) == 2:  # a weight matrix [in, out]
            arrays.append((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype))
        elif len(shape) == 1:  # norm scales near 1, biases and shifts near 0
            base = 1.0 if name.endswith(("_g", "norm")) else 0.0
            arrays.append((base + 0.1 * rng.standard_normal(shape)).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


@pytest.mark.model
@pytest.mark.parametrize("example", ["bert_layer.mlir", "llama_block.mlir"])
def test_layer_matches_reference(example: str) -> None:
    source = (EXAMPLES / example).read_text()
    outputs, expected = run_with_reference(source, pipeline="default", device=DEVICE,
                                           args=model_inputs(source, seed=1))
    for result in compare(outputs, expected, ATOL, RTOL, normwise=True):
        assert result.ok, result.describe(ATOL, RTOL)
