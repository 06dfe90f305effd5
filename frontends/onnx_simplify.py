"""Import-time constant folding: nodes whose values are known while importing become constants.

Shapes are static, so ``Shape`` (and ``Size``) of any tensor is a constant; a node whose inputs
are all constants (initializers, ``Constant`` nodes, earlier folded results) is computed here by
ONNX's own reference implementation of its op, at the model's opset. That folds an export's
shape subgraphs (``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``, ``ConstantOfShape``,
``Range``, the causal-mask ``Trilu``/``Where`` chains) and computations on weights alone (a
transposed weight, a position-embedding lookup with constant positions), so that only the
computation on the graph inputs becomes IR. Folded weights still become weight arguments when
large (`Importer.tensor`).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from fusec.errors import error_line
from fusec.frontends.onnx_import import Importer, Value, shape_of
from fusec.frontends.onnx_ops import check_constant_indices

NEVER_FOLD = frozenset({
    "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
    "Multinomial", "If", "Loop", "Scan",
})
"""Ops whose result is not a function of their inputs, or that hold subgraphs."""

MAX_FOLDED_ELEMENTS = 1 << 26
"""A folded result larger than this is an error rather than memory exhausted at import."""


def fold_shape(node: object, x: SSAValue) -> np.ndarray:
    from onnx import helper

    shape = shape_of(x)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}  # type: ignore
    rank = len(shape)
    start = int(attrs.get("start", 0))
    end = int(attrs.get("end", rank))
    start, end = (max(0, min(rank, v + rank if v < 0 else v)) for v in (start, end))
    return np.array(shape[start:end], dtype=np.int64)


def fold_node(imp: Importer, node: object, args: list[Value | None]) -> list[Value] | None:
    """The node's outputs when they are known at import time, else None."""
    op_type: str = node.op_type  # type: ignore[attr-defined]
    domain: str = node.domain  # type: ignore[attr-defined]
    if domain not in ("", "ai.onnx") or op_type in NEVER_FOLD:
        return None
    if op_type == "Shape" and isinstance(args[0], SSAValue):
        return [fold_shape(node, args[0])]
    if op_type == "Size" and isinstance(args[0], SSAValue):
        return [np.array(int(np.prod(shape_of(args[0]))), dtype=np.int64)]
    if not all(a is None or isinstance(a, np.ndarray) for a in args):
        return None
    if op_type in FOLD_IN_NUMPY:
        return FOLD_IN_NUMPY[op_type](imp, node, args)  # type: ignore[arg-type]
    return evaluate(imp, node, args)  # type: ignore[arg-type]


def fold_gather_elements(imp: Importer, node: object, args: list[np.ndarray]) -> list[Value]:
    """GatherElements by ``np.take_along_axis``. onnx's reference gathers with ``np.choose``,
    which takes at most 64 choices, and its fallback then fails for any axis longer than 64
    (``cannot reshape array of size 1``): the TorchScript export of Hugging Face BERT gathers
    its ``token_type_ids`` buffer this way, so BERT at 128 tokens did not import."""
    from onnx import helper

    data, indices = args
    axis = next((int(helper.get_attribute_value(a)) for a in node.attribute  # type: ignore
                 if a.name == "axis"), 0)
    axis = axis + data.ndim if axis < 0 else axis
    size = data.shape[axis]
    check_constant_indices(imp, indices, size, f"axis {axis} of {list(data.shape)}")
    return [np.take_along_axis(data, np.where(indices < 0, indices + size, indices), axis)]


FOLD_IN_NUMPY = {"GatherElements": fold_gather_elements}
"""Ops folded with numpy where onnx's reference implementation computes them wrongly."""


def evaluate(imp: Importer, node: object, args: list[np.ndarray | None]) -> list[Value]:
    """Runs one node on constants with ``onnx.reference``, at the importer's opset."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    inputs = [name for name in node.input if name]  # type: ignore[attr-defined]
    outputs = [name for name in node.output if name]  # type: ignore[attr-defined]
    graph = helper.make_graph(
        [node],  # type: ignore[list-item]
        "fold",
        [helper.make_tensor_value_info(n, 0, None) for n in dict.fromkeys(inputs)],
        [helper.make_tensor_value_info(n, 0, None) for n in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", imp.opset)])
    feeds = {
        name: value for name, value in zip(node.input, args, strict=False)  # type: ignore
        if name and value is not None
    }
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception as e:
        first = error_line(e)
        raise imp.error(f"cannot compute at import time: {first}") from None
    folded: list[Value] = []
    for value in results:
        array = np.asarray(value)
        if array.size > MAX_FOLDED_ELEMENTS:
            raise imp.error(f"a constant of {array.size} elements is too large to fold")
        folded.append(array)
    named = iter(folded)
    return [next(named) if name else np.zeros(0) for name in node.output]  # type: ignore
