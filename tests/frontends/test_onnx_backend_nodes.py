"""ONNX's own backend node tests (``onnx.backend.test.case.node.collect_testcases()``, each a
model with its inputs and expected outputs) for every op fusec's table converts: each case
either matches the expected outputs (atol 1e-4, rtol 1e-3) or is refused at import with a
one-line error. A wrong answer, or any other exception, fails.

On 2026-11-25, 145 cases ran and matched (with GatherND's two); the refusals were opsets below 13, input types fusec
does not compute in (int8/16, unsigned, float16, float64, strings, optionals), shape operands
given as graph inputs, GatherND with batch_dims, and LayerNormalization over several axes or with its extra outputs.
`test_coverage` keeps that count from shrinking unnoticed.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx.backend.test.case.node import collect_testcases  # noqa: E402

from fusec.compiler.diagnostics import FusecError  # noqa: E402
from fusec.compiler.driver import compile  # noqa: E402
from fusec.compiler.onnx_driver import OnnxExecutable, import_onnx  # noqa: E402
from fusec.frontends.onnx_ops import ONNX_OPS  # noqa: E402

CASES = {
    case.name: case for case in collect_testcases()
    if case.model is not None and case.data_sets
    and {n.op_type for n in case.model.graph.node} <= set(ONNX_OPS)
    and {n.op_type for n in case.model.graph.node}
}
MATCHED: set[str] = set()


def as_array(value: object) -> np.ndarray:
    """A case's input or output: some cases give a TensorProto (their float16 data)."""
    from onnx import TensorProto, numpy_helper

    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else value


def run_case(name: str) -> bool:
    """True when the case ran and matched; False when import refused it (one line)."""
    case = CASES[name]
    inputs, expected = ([as_array(v) for v in values] for values in case.data_sets[0])
    try:
        imported = import_onnx(case.model)
    except FusecError as e:
        assert "\n" not in str(e) and ": error: " in str(e)
        return False
    exe = OnnxExecutable(compile(imported.module, device="cpu", params=imported.params),
                         imported)
    outputs = exe(**dict(zip(exe.input_names, inputs, strict=True)))
    for got, want in zip(outputs, expected, strict=True):
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-3, equal_nan=True)
    return True


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_case(name: str) -> None:
    if run_case(name):
        MATCHED.add(name)


def test_coverage() -> None:
    """Run after the cases (pytest keeps file order): as many match as on 2026-11-25."""
    if len(MATCHED) < len(CASES) and not MATCHED:
        pytest.skip("the node cases did not run in this session")
    assert len(MATCHED) >= 145, len(MATCHED)
