"""The PyTorch FX importer: an aten-level ``torch.fx.GraphModule`` in, an ``nn`` IR module and
its weights out.

    imported = import_graph(gm, example_args, bound={0, 1}, filename="<torch graph>")
    imported.module                       # builtin.module { func.func @main }
    imported.params                       # the bound placeholders' values, by argument name

The graph is what ``make_fx(..., pre_dispatch=True)`` or ``torch.export`` give: ``aten`` ops
(``aten.linear``, ``aten.scaled_dot_product_attention``, ``aten.layer_norm``, ``aten.view``...)
at one concrete shape per input. Its placeholders become the arguments of ``@main`` in order;
those listed in ``bound`` (parameters and buffers, by placeholder position) become weights
(`ImportedGraph.params`, or inline constants when small, as the ONNX importer writes them)
that the driver binds once, the others are call inputs; bound integer and bool tensors
(position ids kept as buffers) are constants (`is_index_like`). ``get_attr``
nodes (constants, an unlifted module's parameters) become weights too. The graph's outputs, a
flat tuple of tensors, are ``@main``'s results in order.

A node whose tensor operands are all known at import time (``arange``, ``full``, masks built
from them) is computed here with PyTorch, and only the rest becomes IR; the converters of
`torch_ops` write the rest, reusing the builders of the ONNX converters (`onnx_ops`). Then
the decompositions the model wrote op by op are recognised as the ONNX import recognises
them (`onnx_patterns.canonicalize`): an attention written out (Hugging Face's ``eager``
implementation: ``softmax(q @ k^T * scale + mask) @ v``, the mask a constant causal triangle
or one built from a padding mask) becomes one ``nn.attention``, an RMSNorm written out
``nn.rms_norm``; ``ImportedGraph.report`` says what was recognised and what was not. A node
that no converter handles, or in a form one does not (`torch_ops.unsupported_reason` says
which), is a one-line `TorchImportError` naming the node; the dynamo backend asks
`unsupported_reason` first and leaves such nodes to PyTorch.

Element types: float32, float16 and bfloat16 are f32, f16 and bf16; bool is i1; int64 and
int32 are i32 (token ids): the caller narrows int64 inputs (range-checked) and widens the
outputs again (`ImportedGraph.outputs` keeps PyTorch's dtype). A bf16 host array is ``uint16``
bit patterns (`fusec.dtypes`). float64 and other element types are not supported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
    bf16,
    f16,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from fusec.dialects import nn
from fusec.dtypes import BF16_HOST
from fusec.frontends.onnx_import import INLINE_ELEMENTS, Importer
from fusec.frontends.onnx_patterns import canonicalize

TORCH_ELEMENT_TYPES: dict[str, Attribute] = {
    "torch.float32": f32, "torch.float16": f16, "torch.bfloat16": bf16,
    "torch.int64": i32, "torch.int32": i32, "torch.bool": i1,
}
"""PyTorch dtype (``str(dtype)``) -> the IR element type it is computed in."""

TORCH_HOST_DTYPES: dict[str, np.dtype] = {
    "torch.float32": np.dtype(np.float32), "torch.float16": np.dtype(np.float16),
    "torch.bfloat16": BF16_HOST, "torch.int64": np.dtype(np.int64),
    "torch.int32": np.dtype(np.int32), "torch.bool": np.dtype(np.bool_),
}
"""PyTorch dtype (``str(dtype)``) -> the numpy dtype a caller's array of it has: its own, but
bf16 as ``uint16`` bit patterns (`fusec.dtypes`). int64 stays int64 (narrowed at the call)."""


class TorchImportError(ValueError):
    """A graph or node that fusec cannot import; the message is one line naming it."""


@dataclass(frozen=True)
class GraphTensor:
    """A call input or an output of the imported graph: the argument name in the IR (inputs),
    PyTorch's dtype (``torch.int64`` for ids the IR computes as i32) and the static shape."""

    arg_name: str
    dtype: Any  # torch.dtype
    shape: tuple[int, ...]


@dataclass
class ImportedGraph:
    module: ModuleOp
    params: dict[str, np.ndarray]
    """The bound placeholders and the weights of ``get_attr`` nodes, by argument name."""
    inputs: list[GraphTensor]
    """The call inputs: placeholders not bound, in placeholder order."""
    bound: dict[int, str]
    """Placeholder position -> argument name, for the bound ones written as weight arguments
    (to bind them again; a small one written inline has none)."""
    outputs: list[GraphTensor]
    ops_in: int
    """The graph's ``call_function`` nodes (``getitem`` not counted)."""
    folded: int = 0
    """How many nodes were computed at import time."""
    report: list[str] = field(default_factory=list)
    """Lines for ``fusec-import --report``: what `onnx_patterns.canonicalize` recognised."""


def element_type_of(dtype: object) -> Attribute | None:
    """The IR element type of a PyTorch dtype, or None where fusec has none."""
    return TORCH_ELEMENT_TYPES.get(str(dtype))


def is_index_like(value: Any) -> bool:
    """A bound tensor of integers or bools (position ids, token type ids, masks kept as
    buffers): the importer treats it as a constant, so that what is computed from it alone
    is computed at import time (a change to it recompiles, as to any bound tensor)."""
    import torch

    return isinstance(value, torch.Tensor) and not value.is_floating_point()


def host_array(tensor: Any) -> np.ndarray:
    """A numpy array of a (CPU, dense) tensor's values in the dtype fusec's host arrays use
    for its IR element type: int64 narrowed to int32 (the caller checked the range), bf16 as
    ``uint16`` bits; over the tensor's memory where that needs no conversion."""
    import torch

    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    if tensor.dtype == torch.bfloat16:
        return np.from_dlpack(tensor.contiguous().view(torch.int16)).view(np.uint16)
    if tensor.dtype == torch.int64:
        return tensor.contiguous().numpy().astype(np.int32)
    return np.from_dlpack(tensor.contiguous())


@dataclass
class FxImporter(Importer):
    """Walks the graph once, in its (topological) order; see the module docstring."""

    fx_node: Any = None  # the torch.fx.Node being converted, for messages
    values_by_node: dict[Any, Any] = field(default_factory=dict)

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        if self.fx_node is not None:
            self.origins[op] = self.fx_node.name
        return op.results[0]

    def error(self, message: str) -> TorchImportError:  # type: ignore[override]
        where = ""
        if self.fx_node is not None:
            where = f"node '{self.fx_node.name}' ({op_name(self.fx_node.target)}): "
        return TorchImportError(f"{self.filename}: error: {where}{message}")

    def tensor(self, value: Any, name: str = "const") -> SSAValue:  # type: ignore[override]
        """``value`` as IR: an SSA value as it is; a constant tensor (or numpy array) inline when
        small or a splat, else as a weight argument (once per object)."""
        if isinstance(value, SSAValue):
            return value
        key = id(value)
        if key in self.materialized:
            return self.materialized[key][1]
        array, elem = self.constant_array(value)
        t = TensorType(elem, array.shape)
        flat = array.reshape(-1)
        if array.size <= self.inline_elements or (array.size and (flat == flat[0]).all()):
            data = flat[:1] if array.size > self.inline_elements else flat
            if array.dtype == np.bool_:
                items: list[Any] = [bool(x) for x in data]
            elif elem == bf16:
                import torch

                items = torch.from_numpy(data.view(np.int16)).view(torch.bfloat16).float().tolist()
            else:
                items = data.tolist()
            result = self.emit(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, items)))
        else:
            result = self.add_argument(name, t)
            self.params[result.name_hint or name] = array
        self.materialized[key] = (value, result)
        return result

    def constant_array(self, value: Any) -> tuple[np.ndarray, Attribute]:
        """A constant's host array and IR element type (int64 checked to fit in 32 bits)."""
        import torch

        if isinstance(value, np.ndarray):
            value = torch.from_numpy(np.ascontiguousarray(value))
        if not isinstance(value, torch.Tensor):
            raise self.error(f"expected a tensor, got {type(value).__name__}")
        if value.dtype == torch.float64:
            value = value.float()
        elem = element_type_of(value.dtype)
        if elem is None:
            raise self.error(f"constant of dtype {value.dtype} is not supported")
        if value.dtype == torch.int64 and value.numel():
            high, low = int(value.max()), int(value.min())
            if high > 2**31 - 1 or low < -(2**31):
                big = high if high > 2**31 - 1 else low
                raise self.error(f"integer constant {big} does not fit in 32 bits")
        return np.array(host_array(value), order="C", copy=True), elem


def op_name(target: object) -> str:
    """``aten.linear`` for ``torch.ops.aten.linear.default``; the name of any other target."""
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        return str(packet)
    return getattr(target, "__name__", str(target))


def counted_ops(gm: Any) -> int:
    """The graph's ``call_function`` nodes, tuple indexing (``getitem``) not counted."""
    import operator

    return sum(1 for n in gm.graph.nodes
               if n.op == "call_function" and n.target is not operator.getitem)


def import_graph(
    gm: Any,
    example_args: list[Any],
    bound: set[int] | frozenset[int] = frozenset(),
    filename: str = "<torch graph>",
    inline_elements: int = INLINE_ELEMENTS,
) -> ImportedGraph:
    """Converts ``gm`` at the shapes of ``example_args`` (one per placeholder) to ``nn`` IR;
    see the module docstring."""
    import torch
    from fusec.frontends.torch_ops import convert_node
    from torch.utils import _pytree as pytree

    imp = FxImporter(gm, filename, {}, inline_elements=inline_elements)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_args):
        raise TorchImportError(f"{filename}: error: the graph has {len(placeholders)} inputs, "
                               f"{len(example_args)} values were given")
    inputs: list[GraphTensor] = []
    bound_names: dict[int, str] = {}
    outputs: list[GraphTensor] = []
    for index, (node, value) in enumerate(zip(placeholders, example_args, strict=True)):
        imp.fx_node = node
        if not isinstance(value, torch.Tensor):
            raise imp.error(f"input of type {type(value).__name__} is not supported "
                            "(tensors only)")
        elem = element_type_of(value.dtype)
        if elem is None:
            raise imp.error(f"input of dtype {value.dtype} is not supported")
        if not all(type(d) is int for d in value.shape):
            raise imp.error(f"input of shape {list(value.shape)} has a dynamic dimension; "
                            "fusec compiles one static shape (export without dynamic_shapes)")
        if index in bound and is_index_like(value):  # ids, masks: computed with at import
            imp.values_by_node[node] = value.detach().cpu()
            continue
        if index in bound:  # a weight: inline when small or a splat, as constants are
            arg = imp.tensor(value, node.name)
            if arg.owner is imp.block:  # an argument
                bound_names[index] = arg.name_hint or node.name
        else:
            arg = imp.add_argument(node.name, TensorType(elem, list(value.shape)))
            assert arg.name_hint is not None
            inputs.append(GraphTensor(arg.name_hint, value.dtype, tuple(value.shape)))
        imp.values_by_node[node] = arg
    returned: list[SSAValue] = []
    for node in gm.graph.nodes:
        imp.fx_node = node
        if node.op == "get_attr":
            imp.values_by_node[node] = fetch_attribute(gm, node.target)
        elif node.op == "call_function":
            result = convert_node(imp, node)
            if result is not None and not isinstance(result, SSAValue | tuple | list):
                imp.folded += 1
            imp.values_by_node[node] = result
        elif node.op == "output":
            leaves = pytree.tree_leaves(node.args[0])
            for leaf in leaves:
                imp.fx_node = leaf if isinstance(leaf, torch.fx.Node) else node
                value = imp.values_by_node.get(leaf) if isinstance(leaf, torch.fx.Node) else leaf
                meta = leaf.meta.get("val") if isinstance(leaf, torch.fx.Node) else None
                ir = imp.tensor(value, "output")
                dtype = meta.dtype if meta is not None else value.dtype  # type: ignore[union-attr]
                returned.append(ir)
                shape = tuple(ir.type.get_shape())  # type: ignore[attr-defined]
                outputs.append(GraphTensor(f"result{len(outputs)}", dtype, shape))
        elif node.op != "placeholder":
            raise imp.error(f"{node.op} nodes are not supported (call_function only)")
    imp.fx_node = None
    imp.block.add_op(func.ReturnOp(*returned))
    remove_unused(imp.block)
    ftype = func.FunctionType.from_lists([a.type for a in imp.block.args],
                                         [v.type for v in returned])
    module = ModuleOp([func.FuncOp("main", ftype, Region(imp.block))])
    report = canonicalize(module, imp.params, imp.origins)
    return ImportedGraph(module, imp.params, inputs, bound_names, outputs, counted_ops(gm),
                         imp.folded, report)


def remove_unused(block: Block) -> None:
    """Erases the ops whose results nothing reads (views that later views looked through)."""
    for op in reversed(list(block.ops)):
        if op.results and all(not r.uses for r in op.results):
            block.erase_op(op)


def fetch_attribute(gm: Any, target: str) -> Any:
    """The tensor a ``get_attr`` node names (``"layer.weight"``), detached, on the host: what
    the importer computes with constants it computes on the CPU, whatever device the graph's
    tensors are on (a CUDA buffer met by a CPU ``arange`` would fail the import)."""
    value = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value.detach().cpu()

