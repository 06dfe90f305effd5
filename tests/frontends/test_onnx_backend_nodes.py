"""ONNX's own backend node tests (``onnx.backend.test.case.node.collect_testcases()``, each a
model with its inputs and expected outputs) for every op fusec's table converts: each case
either matches the expected outputs (atol 1e-4, rtol 1e-3; a bfloat16 output within one unit
in its last place, 2^-7, absolute and relative) or is refused at import with a
one-line error. A wrong answer, or any other exception, fails.

Inputs are given to the import as ``input_values`` too: where one decides a shape (Reshape's
shape, a reduction's axes...) the import takes its value (`Importer.input_value`).
``python tests/frontends/test_onnx_backend_nodes.py`` prints the pass rate and the refusals
grouped by class (`tally`).

On 2026-12-02 (onnx 1.23.2), 498 of 665 cases matched (74.9%; 193 before: 74 at opset 28 and
29 below 13 were refused on the opset alone, 118 passed shape operands as graph inputs, 122
had float64, int8/16, unsigned or bfloat16 inputs, 31 normalised over several axes or asked
for LayerNormalization's Mean/InvStdDev, 4 asked for Dropout's mask or ran it at ratio 0, 2
took the max/min of bools). The 167 refusals: 152 on element types fusec has no counterpart
for (float8/4, int4/2 and the other exotic types, strings, optionals), 4 integer Pow, 4
Dropout in training mode (random), 2 Dropout-10 (opset 11), 3 reductions over an empty axis,
and 2 single cases (GatherND batch_dims, an empty Slice). Leaving out the 152, 498 of 513
(97.1%) match (`element_types_known`; `test_coverage` asserts at least 90%). Later on
2026-12-02 opset 23's Attention and RotaryEmbedding joined the table: their 101 cases all
match (a bfloat16 output within one unit in its last place), 599 of 766 (78.2%; without the
152, 599 of 614, 97.6%).
`test_coverage` keeps that count from shrinking unnoticed.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx.backend.test.case.node import collect_testcases  # noqa: E402

from fusec.compiler.diagnostics import FusecError  # noqa: E402
from fusec.compiler.driver import compile  # noqa: E402
from fusec.compiler.onnx_driver import OnnxExecutable, import_onnx  # noqa: E402
from fusec.frontends.onnx_import import onnx_types  # noqa: E402
from fusec.frontends.onnx_table import ONNX_OPS  # noqa: E402

CASES = {
    case.name: case for case in collect_testcases()
    if case.model is not None and case.data_sets
    and {n.op_type for n in case.model.graph.node} <= set(ONNX_OPS)
    and {n.op_type for n in case.model.graph.node}
}
BF16_ATOL, BF16_RTOL = 2**-7, 2**-7  # one unit in the last place of a bfloat16 near 1
MATCHED: set[str] = set()
REFUSED: dict[str, str] = {}


def as_array(value: object) -> np.ndarray:
    """A case's input or output: some cases give a TensorProto (their float16 data)."""
    from onnx import TensorProto, numpy_helper

    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else value


def refusal_class(message: str) -> str:
    """A refusal's message without what differs between cases of one cause: the file and the
    node's name, quoted names, numbers other than those of type names."""
    said = message.split(": error: ", 1)[-1]
    said = re.sub(r"node '[^']*' \((\w+)\): ", r"\1: ", said)
    said = re.sub(r"'[^']*'", "'…'", said)
    return re.sub(r"\b\d+\b", "N", said)


def run_case(name: str) -> str | None:
    """None when the case ran and matched; the one-line message when import refused it."""
    case = CASES[name]
    inputs, expected = ([as_array(v) for v in values] for values in case.data_sets[0])
    names = [v.name for v in case.model.graph.input]
    try:
        imported = import_onnx(case.model, input_values=dict(zip(names, inputs, strict=True)))
    except FusecError as e:
        assert "\n" not in str(e) and ": error: " in str(e)
        return str(e)
    exe = OnnxExecutable(compile(imported.module, device="cpu", params=imported.params),
                         imported)
    outputs = exe(**dict(zip(exe.input_names, inputs, strict=True)))
    for got, want in zip(outputs, expected, strict=True):
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
        if want.dtype.name == "bfloat16":  # 8 bits of mantissa: rounded in another order
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                       atol=BF16_ATOL, rtol=BF16_RTOL, equal_nan=True)
        else:
            np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-3, equal_nan=True)
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_case(name: str) -> None:
    refusal = run_case(name)
    if refusal is None:
        MATCHED.add(name)
    else:
        REFUSED[name] = refusal


def test_coverage() -> None:
    """Run after the cases (pytest keeps file order): as many match as on 2026-12-02."""
    if len(MATCHED) < len(CASES) and not MATCHED:
        pytest.skip("the node cases did not run in this session")
    assert len(MATCHED) >= 599, tally()
    known = {name for name in CASES if element_types_known(CASES[name])}
    assert len(MATCHED & known) >= 0.9 * len(known), tally()  # issue 27's 90%


def element_types_known(case: object) -> bool:
    """Every element type of the case's graph inputs and outputs and of its casts' targets is
    one fusec computes in some type (`onnx_types`): not float8/float4/int4/int2, strings or
    optionals."""
    graph = case.model.graph  # type: ignore[attr-defined]
    values = [v.type for v in (*graph.input, *graph.output)]
    if any(not t.HasField("tensor_type") for t in values):
        return False
    types = {t.tensor_type.elem_type for t in values}
    types |= {a.i for n in graph.node if n.op_type == "Cast" for a in n.attribute if a.name == "to"}
    return types <= set(onnx_types())


def tally() -> str:
    """The pass rate (of all cases, and of those with element types fusec knows) and the
    refusals grouped by class (`refusal_class`), most frequent first, each with one case as an
    example."""
    classes = Counter(refusal_class(m) for m in REFUSED.values())
    example = {refusal_class(m): name for name, m in sorted(REFUSED.items(), reverse=True)}
    known = [name for name in CASES if element_types_known(CASES[name])]
    matched_known = len(MATCHED & set(known))
    lines = [f"{len(MATCHED)} of {len(CASES)} cases match ({100 * len(MATCHED) / len(CASES):.1f}%),"
             f" {len(REFUSED)} refused; of the {len(known)} cases with element types fusec "
             f"knows, {matched_known} match ({100 * matched_known / len(known):.1f}%):"]
    lines += [f"{n:4d}  {c}  (e.g. {example[c]})" for c, n in classes.most_common()]
    return "\n".join(lines)


if __name__ == "__main__":  # python tests/frontends/test_onnx_backend_nodes.py: the tally
    import warnings

    warnings.simplefilter("ignore")
    for case_name in sorted(CASES):
        test_node_case(case_name)
    sys.stdout.write(tally() + "\n")
