"""The ONNX importer: an ``onnx.ModelProto`` in, an ``nn`` IR module and its weights out.

    model = load_model("bert.onnx")                       # one-line OnnxImportError if bad
    imported = import_model(model, shapes={"input_ids": [1, 128]}, filename="bert.onnx")
    imported.module                                       # builtin.module { func.func @main }
    imported.params                                       # weights, by argument name

The module holds one ``func.func @main``: its arguments are the graph inputs in graph order,
then one argument per weight too large to write inline (an initializer, or a constant folded
from initializers); its results are the graph outputs in graph order. Weights are values of
`ImportedModel.params`, which the driver binds (``params=``) so that a call takes the graph
inputs only; ``fusec-import`` writes them to ``OUT.params.npz`` and names that file in the
module attribute ``fusec.params``. Constants of at most `INLINE_ELEMENTS` elements, and splats
of any size, stay inline as ``nn.constant``.

Shapes are static: every graph input needs a fixed shape (``shapes`` fixes dynamic
dimensions). So the shape subgraphs of an export (Shape, Gather on shapes, Concat, Unsqueeze,
ConstantOfShape, Range...) are computed here while importing (`onnx_simplify`), and only the
tensor computation becomes IR. Then `onnx_patterns` rewrites the decompositions exporters write
(erf GELU, the attention subgraph) into the canonical ops the fusion passes match.

Element types: float32 is f32, float16 is f16 (weights, activations and casts stay in the
model's type), bool is i1, and the integers (int64, int32, int16, int8 and the unsigned ones)
become i32 (token ids and masks); a graph input or output of another integer type is converted
at the call boundary (`ImportedModel.inputs`: inputs range-checked, outputs narrowed modulo
their width, as ONNX's integer arithmetic wraps; a chain whose intermediate values leave the
model's type is not wrapped in between). float64 is computed in float32: a graph input or
output of float64 is converted at the call boundary, with one warning per model at import.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    ModuleOp,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from fusec.dialects import nn
from fusec.dialects.common import element_of, shape_of

INLINE_ELEMENTS = 16
"""Constants up to this many elements are written inline; larger ones become weights."""

MIN_OPSET = 13
MAX_OPSET = 25
"""The default-domain opsets the converters are written for."""

PARAMS_ATTRIBUTE = "fusec.params"
"""The module attribute naming the weights file, relative to the IR file."""


class OnnxImportError(ValueError):
    """A model that fusec cannot import; the message is one line naming what and where."""


# ONNX element type -> (numpy dtype of the model's data, IR element type)
ONNX_TYPES: dict[int, tuple[np.dtype, Attribute]] = {
    1: (np.dtype(np.float32), f32),  # FLOAT
    10: (np.dtype(np.float16), f16),  # FLOAT16
    6: (np.dtype(np.int32), i32),  # INT32
    7: (np.dtype(np.int64), i32),  # INT64: computed as i32
    9: (np.dtype(np.bool_), i1),  # BOOL
    3: (np.dtype(np.int8), i32),  # the narrower and unsigned integers: computed as i32 too
    5: (np.dtype(np.int16), i32),
    2: (np.dtype(np.uint8), i32),
    4: (np.dtype(np.uint16), i32),
    12: (np.dtype(np.uint32), i32),
    13: (np.dtype(np.uint64), i32),
    11: (np.dtype(np.float64), f32),  # FLOAT64: computed as f32, with a warning
}
BFLOAT16 = 16


def onnx_types() -> dict[int, tuple[np.dtype, Attribute]]:
    """`ONNX_TYPES` with bfloat16 (bf16; numpy's dtype from ``ml_dtypes``, which the onnx
    package installs, imported here rather than with fusec)."""
    if BFLOAT16 not in ONNX_TYPES:
        import ml_dtypes  # type: ignore[import-not-found]

        ONNX_TYPES[BFLOAT16] = (np.dtype(ml_dtypes.bfloat16), bf16)
    return ONNX_TYPES


COMPUTED_NARROWER = frozenset({11})
"""The ONNX element types computed in a type of less precision (a warning at import)."""
ONNX_TYPE_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
                   7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
                   13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16"}
"""ONNX's element type numbers (``TensorProto.DataType``), named in messages."""

# numpy kind of a folded constant -> the IR element type it is materialized as
IR_TYPES: dict[str, Attribute] = {"f": f32, "i": i32, "u": i32, "b": i1}


def ir_element_type(dtype: np.dtype) -> Attribute:
    if dtype == np.float16:
        return f16
    if dtype.name == "bfloat16":
        return bf16
    return IR_TYPES[dtype.kind]


def numpy_of_ir(t: Attribute) -> np.dtype:
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, BFloat16Type):
        import ml_dtypes  # type: ignore[import-not-found]

        return np.dtype(ml_dtypes.bfloat16)
    if t == i1:
        return np.dtype(np.bool_)
    return np.dtype(np.int32)


@dataclass(frozen=True)
class GraphValue:
    """A graph input or output: its ONNX name, the IR argument name, the dtype the caller uses
    (int64 for an int64 input, though the IR computes it as i32) and its static shape."""

    onnx_name: str
    arg_name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    value: np.ndarray | None = field(default=None, compare=False)
    """The value the import took for this input (``input_values``) because it decides shapes:
    the imported model computes for this value only, and a call must give it again."""


@dataclass
class ImportedModel:
    module: ModuleOp
    params: dict[str, np.ndarray]
    inputs: list[GraphValue]
    outputs: list[GraphValue]
    folded: int = 0
    """How many nodes were computed at import time."""
    report: list[str] = field(default_factory=list)
    """What the import recognised and left as written (`onnx_patterns.report`)."""


Value = SSAValue | np.ndarray
"""What an ONNX value is while importing: IR, or a constant known at import time."""


def sanitize(name: str) -> str:
    """An SSA name hint for an ONNX name: letters, digits and ``_``, never starting with a
    digit, and never ending in ``_<digits>`` (xDSL drops such a suffix from a name hint)."""
    clean = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "v"
    clean = re.sub(r"_+(\d+)$", r"\1", clean)
    return clean if not clean[0].isdigit() else f"v{clean}"




@dataclass
class Importer:
    """Walks the graph once, in its (topological) order; see the module docstring."""

    model: object  # onnx.ModelProto
    filename: str
    shapes: Mapping[str, Sequence[int]]
    opset: int = 0
    inline_elements: int = INLINE_ELEMENTS
    block: Block = field(default_factory=Block)
    values: dict[str, Value] = field(default_factory=dict)
    params: dict[str, np.ndarray] = field(default_factory=dict)
    materialized: dict[int, tuple[np.ndarray, SSAValue]] = field(default_factory=dict)
    """Each constant array already written as IR, by ``id``; the array is held so that its id
    cannot be reused by a later (temporary) array while the import runs."""
    constant_names: dict[int, str] = field(default_factory=dict)
    """The ONNX name of each constant array (the first one it had), for its argument name."""
    names: set[str] = field(default_factory=set)
    node: object = None  # the node being converted, for messages
    folded: int = 0
    origins: dict[Operation, str] = field(default_factory=dict)
    """The label of the ONNX node each op was converted from."""
    input_values: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Values of graph inputs given at import, used where an operand must be known."""
    given: dict[SSAValue, tuple[str, np.ndarray]] = field(default_factory=dict)
    """Each graph input argument with a value in `input_values`: its ONNX name and value."""
    specialized: dict[str, np.ndarray] = field(default_factory=dict)
    """The graph inputs whose given value was used: the import is specialized on them."""
    narrowed: list[str] = field(default_factory=list)
    """The graph inputs and outputs computed in a type of less precision, for the warning."""

    # --- messages -------------------------------------------------------------------------

    def error(self, message: str) -> OnnxImportError:
        """A one-line error about the node being converted (or the model)."""
        where = ""
        if self.node is not None:
            node = self.node
            label = node.name or (node.output[0] if node.output else "?")  # type: ignore
            where = f"node '{label}' ({node.op_type}): "  # type: ignore[attr-defined]
        return OnnxImportError(f"{self.filename}: error: {where}{message}")

    def warn_narrower(self, elem: int, name: str) -> None:
        """Notes graph value ``name`` when its ONNX element type ``elem`` is computed in a type
        of less precision (float64 in float32): one warning per model (`run`)."""
        if elem in COMPUTED_NARROWER:
            self.narrowed.append(f"'{name}' ({ONNX_TYPE_NAMES[elem]} in "
                                 f"{numpy_of_ir(ONNX_TYPES[elem][1])})")

    # --- building IR ----------------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        if self.node is not None:
            node = self.node
            self.origins[op] = node.name or node.output[0]  # type: ignore[attr-defined]
        return op.results[0]

    def unique(self, name: str) -> str:
        base, n = sanitize(name), 1
        candidate = base
        while candidate in self.names:
            candidate, n = f"{base}_v{n}", n + 1
        self.names.add(candidate)
        return candidate

    def add_argument(self, name: str, t: TensorType) -> SSAValue:
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = self.unique(name)
        return arg

    def tensor(self, value: Value, name: str = "const") -> SSAValue:
        """``value`` as IR: a constant is written inline when small or a splat, else it becomes
        a weight argument (once per array)."""
        if isinstance(value, SSAValue):
            return value
        key = id(value)
        if key in self.materialized:
            return self.materialized[key][1]
        name = self.constant_names.get(key, name)
        array = self.ir_array(value)
        t = TensorType(ir_element_type(array.dtype), array.shape)
        flat = array.reshape(-1)
        if array.size <= self.inline_elements or (array.size and (flat == flat[0]).all()):
            data = flat[:1] if array.size > self.inline_elements else flat
            items = [bool(x) for x in data] if array.dtype == np.bool_ else data.tolist()
            result = self.emit(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, items)))
        else:
            result = self.add_argument(name, t)
            self.params[result.name_hint or name] = array
        self.materialized[key] = (value, result)
        return result

    def ir_array(self, value: np.ndarray) -> np.ndarray:
        """A constant in the dtype the IR computes it in (int64 -> int32, float64 -> float32)."""
        if value.dtype.kind == "b":
            return np.array(value, order="C")
        if value.dtype.kind in "iu":
            if value.size and (value.max() > 2**31 - 1 or value.min() < -(2**31)):
                big = value.max() if value.max() > 2**31 - 1 else value.min()
                raise self.error(f"integer constant {big} does not fit in 32 bits")
            return np.array(value, np.int32, order="C")
        if value.dtype == np.float16 or value.dtype.name == "bfloat16":
            return np.array(value, order="C")
        if value.dtype.kind == "f":  # float32, and float64 constants computed in float32
            return np.array(value, np.float32, order="C")
        raise self.error(f"constant of dtype {value.dtype} is not supported")

    def input_value(self, value: SSAValue, what: str) -> np.ndarray:
        """The value given at import (``input_values``) of the graph input ``value``, used
        for an operand that must be known at import time (``what``); the import is then
        specialized on it. A one-line error when ``value`` is no such input."""
        if value in self.given:
            name, array = self.given[value]
            self.specialized[name] = array
            return array
        for name, arg in self.values.items():
            if arg is value and isinstance(value, BlockArgument):
                raise self.error(f"{what} is graph input '{name}', whose value decides the "
                                 f"result's shape: give it at import (input_values={{'{name}': "
                                 "...}, fusec-run's --inputs)")
        raise self.error(f"{what} must be a constant (computed from shapes and initializers)")

    # --- the walk -------------------------------------------------------------------------

    def run(self) -> ImportedModel:
        from onnx import numpy_helper

        from fusec.frontends.onnx_table import convert_node
        from fusec.frontends.onnx_simplify import fold_node

        graph = self.model.graph  # type: ignore[attr-defined]
        initializers = {init.name for init in graph.initializer}
        inputs = [self.graph_input(v) for v in graph.input if v.name not in initializers]
        for init in graph.initializer:
            try:
                self.store(init.name, numpy_helper.to_array(init))
            except Exception as e:  # external data missing, bad raw data
                raise self.error(f"cannot read initializer '{init.name}': {e}") from None
        for node in graph.node:
            self.node = node
            args: list[Value | None] = [
                None if name == "" else self.lookup(name) for name in node.input
            ]
            results = fold_node(self, node, args)
            if results is None:
                results = convert_node(self, node, args)
            else:
                self.folded += 1
            for name, value in zip(node.output, results, strict=False):
                if name:
                    self.store(name, value)
        self.node = None
        outputs: list[GraphValue] = []
        returned: list[SSAValue] = []
        for out in graph.output:
            value = self.tensor(self.lookup(out.name), out.name)
            returned.append(value)
            elem = out.type.tensor_type.elem_type
            if elem and (elem not in onnx_types() or ONNX_TYPES[elem][1] != element_of(value)):
                declared = ONNX_TYPE_NAMES.get(elem, f"element type {elem}")
                raise self.error(f"graph output '{out.name}' is declared {declared}, but the "
                                 f"graph computes {numpy_of_ir(element_of(value))} for it")
            self.warn_narrower(elem, out.name)
            dtype = ONNX_TYPES[elem][0] if elem in ONNX_TYPES else numpy_of_ir(
                element_of(value))
            outputs.append(GraphValue(out.name, f"result{len(outputs)}", dtype, shape_of(value)))
        inputs = [replace(v, value=self.specialized.get(v.onnx_name)) for v in inputs]
        if self.narrowed:
            warnings.warn(f"{self.filename}: graph values computed in less precision than the "
                          f"model's type: {', '.join(self.narrowed)}", stacklevel=2)
        self.block.add_op(func.ReturnOp(*returned))
        ftype = func.FunctionType.from_lists(
            [a.type for a in self.block.args], [v.type for v in returned]
        )
        fn = func.FuncOp("main", ftype, Region(self.block))
        module = ModuleOp([fn])
        return ImportedModel(module, self.params, inputs, outputs, self.folded)

    def store(self, name: str, value: Value) -> None:
        self.values[name] = value
        if isinstance(value, np.ndarray):
            self.constant_names.setdefault(id(value), name)

    def lookup(self, name: str) -> Value:
        if name not in self.values:
            raise self.error(f"input '{name}' is not defined before its use")
        return self.values[name]

    def graph_input(self, value_info: object) -> GraphValue:
        name: str = value_info.name  # type: ignore[attr-defined]
        ttype = value_info.type.tensor_type  # type: ignore[attr-defined]
        if not value_info.type.HasField("tensor_type"):  # type: ignore[attr-defined]
            raise self.error(f"graph input '{name}' is not a tensor")
        elem = ttype.elem_type
        if elem not in onnx_types():
            kind = ONNX_TYPE_NAMES.get(elem, f"element type {elem}")
            listed = ", ".join(ONNX_TYPE_NAMES[t] for t in ONNX_TYPES)
            raise self.error(f"graph input '{name}' is {kind}, which is not supported ({listed} "
                             "are)")
        self.warn_narrower(elem, name)
        dims: list[int] = []
        fixed = self.shapes.get(name)
        given = list(ttype.shape.dim)
        if fixed is not None:
            if len(fixed) != len(given):
                raise self.error(f"--shape {name}: {len(fixed)} dimensions given, the input "
                                 f"has {len(given)}")
            for d, f_ in zip(given, fixed, strict=True):
                if d.HasField("dim_value") and d.dim_value != f_:
                    raise self.error(f"--shape {name}: dimension {f_} differs from the model's "
                                     f"fixed {d.dim_value}")
            dims = list(fixed)
        else:
            for d in given:
                if not d.HasField("dim_value"):
                    label = d.dim_param or "?"
                    raise self.error(
                        f"graph input '{name}' has dynamic dimension '{label}'; fix it with "
                        f"--shape {name}=" + "x".join(
                            str(g.dim_value) if g.HasField("dim_value") else "N" for g in given)
                    )
                dims.append(d.dim_value)
        dtype, ir_type = ONNX_TYPES[elem]
        arg = self.add_argument(name, TensorType(ir_type, dims))
        self.values[name] = arg
        if name in self.input_values:
            array = np.asarray(self.input_values[name])
            if array.dtype != dtype or array.shape != tuple(dims):
                raise self.error(f"the value given for input '{name}' is {array.dtype} of "
                                 f"shape {list(array.shape)}; the input is {dtype} of shape "
                                 f"{dims}")
            self.given[arg] = (name, array)
        return GraphValue(name, arg.name_hint or name, dtype, tuple(dims))


def check_opset(model: object, filename: str) -> int:
    """The default domain's opset: any the installed onnx package knows. Whether each node's op
    is converted at that opset is `op_version_error`'s question, asked per converted node."""
    from onnx.defs import onnx_opset_version

    for entry in model.opset_import:  # type: ignore[attr-defined]
        if entry.domain in ("", "ai.onnx"):
            version = int(entry.version)
            if not 1 <= version <= onnx_opset_version():
                raise OnnxImportError(
                    f"{filename}: error: opset {version} is not supported (the installed onnx "
                    f"package knows opsets 1 to {onnx_opset_version()})")
            return version
    raise OnnxImportError(f"{filename}: error: the model imports no default-domain opset")


def op_version_error(op_type: str, opset: int) -> str | None:
    """None when the converters, written for opsets `MIN_OPSET` to `MAX_OPSET`, convert
    ``op_type`` as it is at ``opset``; else why not. Outside those opsets an op is converted
    when its version there (ONNX's ``since_version``) is the one of the nearest opset in
    range, or differs from it only in the element types it allows (same documentation,
    attributes with the same defaults, same inputs and outputs): the converters check
    element types themselves."""
    from onnx import defs

    nearest = min(max(opset, MIN_OPSET), MAX_OPSET)
    if nearest == opset:
        return None
    try:
        theirs = defs.get_schema(op_type, opset)
    except defs.SchemaError:
        return f"{op_type} is not defined at opset {opset}"
    try:
        ours = defs.get_schema(op_type, nearest)
    except defs.SchemaError:
        return f"{op_type} is not defined at opset {nearest}, the nearest fusec converts"
    if theirs.since_version == ours.since_version or contract(theirs) == contract(ours):
        return None
    return (f"{op_type}-{theirs.since_version} (opset {opset}) is not supported: fusec converts "
            f"{op_type}-{ours.since_version} (opsets {MIN_OPSET} to {MAX_OPSET}), which differs "
            "from it")


def contract(schema: object) -> tuple[object, ...]:
    """What an op schema says besides its element types: documentation, attributes (name,
    required, default) and the inputs and outputs (name, optional or variadic)."""
    attributes = sorted(
        (name, a.required, a.default_value.SerializeToString())
        for name, a in schema.attributes.items()  # type: ignore[attr-defined]
    )
    formals = [
        [(f.name, int(f.option)) for f in formals]
        for formals in (schema.inputs, schema.outputs)  # type: ignore[attr-defined]
    ]
    return (schema.doc, attributes, formals)  # type: ignore[attr-defined]


def import_model(
    model: object,
    shapes: Mapping[str, Sequence[int]] | None = None,
    filename: str = "<model>",
    inline_elements: int = INLINE_ELEMENTS,
    input_values: Mapping[str, np.ndarray] | None = None,
) -> ImportedModel:
    """Converts ``model`` (an ``onnx.ModelProto``) to ``nn`` IR; see the module docstring.
    ``input_values`` gives graph inputs' values (in the model's dtypes) for the operands
    that decide shapes (`Importer.input_value`); the others are not looked at."""
    from fusec.frontends.onnx_patterns import canonicalize

    opset = check_opset(model, filename)
    graph_inputs = {v.name for v in model.graph.input}  # type: ignore[attr-defined]
    for name in shapes or {}:
        if name not in graph_inputs:
            listed = ", ".join(sorted(graph_inputs)) or "none"
            raise OnnxImportError(f"{filename}: error: --shape names '{name}', which is not a "
                                  f"graph input (inputs: {listed})")
    importer = Importer(model, filename, shapes or {}, opset, inline_elements,
                        input_values=input_values or {})
    imported = importer.run()
    imported.report = canonicalize(imported.module, imported.params, importer.origins)
    return imported


CHECKER_MESSAGE = 300
"""The most characters of ONNX's checker message an error quotes."""


def load_model(path: str) -> object:
    """The model in ``path`` with its external data, checked; one-line errors."""
    import onnx

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise OnnxImportError(f"{path}: error: cannot read model: {e.strerror}") from None
    try:
        model = onnx.ModelProto()
        model.ParseFromString(data)
    except Exception:
        raise OnnxImportError(f"{path}: error: not an ONNX model (the protobuf does not parse; "
                              "truncated or corrupt file?)") from None
    if not model.HasField("graph") or not model.opset_import:
        raise OnnxImportError(f"{path}: error: not an ONNX model (no graph or no opset)")
    try:
        import os

        from onnx.external_data_helper import load_external_data_for_model

        load_external_data_for_model(model, os.path.dirname(os.path.abspath(path)))
    except Exception as e:  # a missing or short file: OSError, or onnx's ValidationError
        lines = str(e).strip().splitlines()
        what = getattr(e, "filename", None) or (lines[0] if lines else type(e).__name__)
        raise OnnxImportError(f"{path}: error: cannot read external data: {what}") from None
    try:
        onnx.checker.check_model(model)
    except Exception as e:  # the checker's message spans lines (a node printed in it): joined
        said = " ".join(str(e).split()) or type(e).__name__
        said = said if len(said) <= CHECKER_MESSAGE else said[:CHECKER_MESSAGE - 3] + "..."
        raise OnnxImportError(f"{path}: error: invalid ONNX model: {said}") from None
    return model


def params_attribute(module: ModuleOp, file_name: str) -> None:
    """Names the weights file in the module (``fusec.params``)."""
    module.attributes[PARAMS_ATTRIBUTE] = StringAttr(file_name)

