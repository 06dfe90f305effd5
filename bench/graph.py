"""A workload's program as a plain list of nodes, for translating it to the peers.

`parse` checks the IR text with fusec's own parser and verifier and returns a `Graph`: the
function's inputs, one `Node` per ``nn`` op (its kind without the ``nn.`` prefix, operand names,
properties as Python values, result shape) and the names it returns. The peers (numpy, PyTorch,
ONNX) translate nodes through their own op tables and never look at xDSL objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module


class Unsupported(Exception):
    """A program a translator cannot express; the message is the reason shown in the table."""


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    """numpy spelling: ``float32``, ``bool``, ``int32``, ..."""

    @property
    def nbytes(self) -> int:
        size = 2 if self.dtype == "bfloat16" else np.dtype(self.dtype).itemsize  # no numpy bf16
        return int(np.prod(self.shape, dtype=np.int64)) * size


@dataclass(frozen=True)
class Node:
    kind: str
    """The op name without its dialect: ``add``, ``layer_norm``, ``attention``."""
    inputs: tuple[str, ...]
    output: Tensor
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Graph:
    name: str
    inputs: tuple[Tensor, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[str, ...]
    shapes: dict[str, Tensor]
    """Every value by name."""
    params: frozenset[str] = frozenset()
    """Inputs held fixed from call to call (`Workload.params`): a peer may treat them as
    constants of the model (ONNX initializers)."""

    def flops(self) -> int:
        """Multiply-adds counted as two: matmuls and attention (scores and weighted sum)."""
        total = 0
        for node in self.nodes:
            if node.kind == "matmul":
                k = self.shapes[node.inputs[0]].shape[-1]
                total += 2 * k * int(np.prod(node.output.shape, dtype=np.int64))
            elif node.kind == "attention":
                q, key = self.shapes[node.inputs[0]].shape, self.shapes[node.inputs[1]].shape
                total += 4 * q[0] * q[1] * key[1] * q[2]
        return total

    def io_bytes(self) -> int:
        """The fewest bytes a call must move: every input read once, every output written once."""
        return sum(t.nbytes for t in self.inputs) + sum(
            self.shapes[name].nbytes for name in self.outputs)


def numpy_dtype(t: Attribute) -> str:
    if isinstance(t, IntegerType):
        width = t.width.data
        return "bool" if width == 1 else f"int{width}"
    return {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16"}[str(t)]


def tensor_of(name: str, value: SSAValue) -> Tensor:
    assert isinstance(value.type, TensorType)
    return Tensor(name, tuple(value.type.get_shape()), numpy_dtype(value.type.element_type))


def attr_value(attr: Attribute) -> Any:
    if isinstance(attr, IntegerAttr):
        width = attr.type.width.data if isinstance(attr.type, IntegerType) else 64
        return bool(attr.value.data) if width == 1 else int(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(int(v) for v in attr.get_values())
    if isinstance(attr, DenseIntOrFPElementsAttr):
        assert isinstance(attr.type, TensorType)
        shape = tuple(attr.type.get_shape())
        values = np.array(attr.get_values(), dtype=numpy_dtype(attr.type.element_type))
        return values.reshape(shape) if values.size > 1 or not shape else np.full(shape, values[0])
    raise Unsupported(f"attribute {attr}")


def parse(text: str, name: str = "<workload>") -> Graph:
    """The first function of `text` as a Graph (raises FusecError on invalid IR)."""
    module = parse_module(make_context(), Source(text, name))
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    names: dict[SSAValue, str] = {}
    inputs: list[Tensor] = []
    for i, arg in enumerate(fn.body.block.args):
        names[arg] = arg.name_hint or f"arg{i}"
        inputs.append(tensor_of(names[arg], arg))
    shapes = {t.name: t for t in inputs}
    nodes: list[Node] = []
    outputs: tuple[str, ...] = ()
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            outputs = tuple(names[v] for v in op.operands)
            continue
        dialect, _, kind = op.name.partition(".")
        if dialect != "nn":
            raise Unsupported(f"op {op.name}")
        result = op.results[0]
        names[result] = f"v{len(nodes)}"
        out = tensor_of(names[result], result)
        shapes[out.name] = out
        attrs = {key: attr_value(value) for key, value in op.properties.items()}
        nodes.append(Node(kind, tuple(names[v] for v in op.operands), out, attrs))
    return Graph(fn.sym_name.data, tuple(inputs), tuple(nodes), outputs, shapes)
