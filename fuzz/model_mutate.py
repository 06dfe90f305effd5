"""Hostile ONNX model files made from good ones, for ``fusec-fuzz --models``.

`mutate_model` applies one random mutation to a copy of a model and returns the mutant as the
files of its folder: ``model.onnx`` and, for the external-data mutations, a data file beside
it (or a symbolic link pointing out of the folder, to `OUTSIDE`, which must never be read).
The mutations cover what a damaged or malicious file can hold: dimensions (0, negative, huge,
symbolic), element types (of inputs and initializers), attributes (changed, removed, of
another type), initializer sizes that disagree with their dims, node order, names (dangling,
duplicated, empty), op types, node inputs, external-data entries (outside the folder, past the
end of the file, missing), opset versions and domains, and the serialized bytes (truncated,
flipped). Each is deterministic in the random generator it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

OUTSIDE = "outside.bin"
"""A file in the campaign's folder, beside the mutants' folders: reading it is a failure."""

DATA_FILE = "weights.bin"

DIMS = (0, 1, 2, 3, 7, -1, -7, 2**31, 2**40, 10**15)
INTS = (-99, -5, -3, -2, -1, 0, 1, 2, 3, 5, 99, 2**31, -(2**40))
ELEMENT_TYPES = tuple(range(0, 27)) + (99,)
OPSETS = (1, 6, 9, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23, 99, 0, -1)
OP_TYPES = ("Add", "MatMul", "Gather", "Softmax", "Reshape", "Transpose", "Concat", "Where",
            "LayerNormalization", "Cast", "Unsqueeze", "Slice", "Relu", "Foo", "")


@dataclass
class Mutant:
    """One mutant: what was done to it, and the files of its folder (name -> bytes, or the
    target of a symbolic link for `links`)."""

    what: str
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)


Mutation = Callable[[np.random.Generator, object], str]
"""Changes a ModelProto in place; says what it did."""


def pick(rng: np.random.Generator, items: object) -> object:
    items = list(items)  # type: ignore[call-overload]
    return items[int(rng.integers(len(items)))]


def tensor_types(model: object) -> list[object]:
    """The tensor types of the graph's inputs, outputs and value_info entries."""
    g = model.graph  # type: ignore[attr-defined]
    return [v.type.tensor_type for v in [*g.input, *g.output, *g.value_info]
            if v.type.HasField("tensor_type")]


def input_dim(rng: np.random.Generator, model: object) -> str:
    types = [t for t in tensor_types(model) if t.shape.dim]
    if not types:
        return "no shaped values"
    t = pick(rng, types)
    dim = pick(rng, t.shape.dim)
    if rng.random() < 0.2:
        dim.dim_param = "N"
        return "a dimension made symbolic"
    value = int(pick(rng, DIMS))
    dim.dim_value = value
    return f"a dimension set to {value}"


def element_type(rng: np.random.Generator, model: object) -> str:
    types = tensor_types(model)
    g = model.graph  # type: ignore[attr-defined]
    if g.initializer and (not types or rng.random() < 0.5):
        init = pick(rng, g.initializer)
        init.data_type = int(pick(rng, ELEMENT_TYPES))
        return f"initializer '{init.name}' given element type {init.data_type}"
    if not types:
        return "no typed values"
    t = pick(rng, types)
    t.elem_type = int(pick(rng, ELEMENT_TYPES))
    return f"a value given element type {t.elem_type}"


def initializer_dims(rng: np.random.Generator, model: object) -> str:
    g = model.graph  # type: ignore[attr-defined]
    if not g.initializer:
        return "no initializers"
    init = pick(rng, g.initializer)
    if init.dims and rng.random() < 0.7:
        k = int(rng.integers(len(init.dims)))
        init.dims[k] = int(pick(rng, DIMS))
    else:
        init.dims.append(int(pick(rng, (1, 2, 3, 0))))
    return f"initializer '{init.name}' dims set to {list(init.dims)}"


def initializer_size(rng: np.random.Generator, model: object) -> str:
    g = model.graph  # type: ignore[attr-defined]
    if not g.initializer:
        return "no initializers"
    init = pick(rng, g.initializer)
    if init.raw_data:
        n = len(init.raw_data)
        cut = int(rng.integers(0, n + 8))
        init.raw_data = init.raw_data[:cut] if cut < n else init.raw_data + b"\x01" * (cut - n)
        return f"initializer '{init.name}' raw data resized from {n} to {len(init.raw_data)} bytes"
    for name in ("float_data", "int64_data", "int32_data", "double_data"):
        values = getattr(init, name)
        if len(values):
            del values[len(values) // 2:]
            return f"initializer '{init.name}' {name} halved"
    init.raw_data = b"\x00" * int(rng.integers(1, 9))
    return f"initializer '{init.name}' given stray raw data"


def attribute(rng: np.random.Generator, model: object) -> str:
    from onnx import AttributeProto, helper

    nodes = [n for n in model.graph.node if n.attribute]  # type: ignore[attr-defined]
    if not nodes:
        return "no attributes"
    node = pick(rng, nodes)
    attr = pick(rng, node.attribute)
    choice = rng.random()
    if choice < 0.2:
        node.attribute.remove(attr)
        return f"attribute '{attr.name}' of '{node.name}' removed"
    if choice < 0.35:
        replacement = helper.make_attribute(attr.name, 1.5)
        node.attribute.remove(attr)
        node.attribute.append(replacement)
        return f"attribute '{attr.name}' of '{node.name}' made a float"
    if choice < 0.45:
        node.attribute.append(helper.make_attribute("fusec_fuzz_bogus", 3))
        return f"a bogus attribute added to '{node.name}'"
    if attr.type == AttributeProto.INT:
        attr.i = int(pick(rng, INTS))
        return f"attribute '{attr.name}' of '{node.name}' set to {attr.i}"
    if attr.type == AttributeProto.INTS and len(attr.ints):
        k = int(rng.integers(len(attr.ints)))
        attr.ints[k] = int(pick(rng, INTS))
        return f"attribute '{attr.name}' of '{node.name}' set to {list(attr.ints)}"
    if attr.type == AttributeProto.FLOAT:
        attr.f = float(pick(rng, (float("nan"), float("inf"), -1.0, 0.0, 1e30)))
        return f"attribute '{attr.name}' of '{node.name}' set to {attr.f}"
    if attr.type == AttributeProto.TENSOR:
        attr.t.dims.append(3)
        return f"tensor attribute '{attr.name}' of '{node.name}' given a wrong dim"
    node.attribute.remove(attr)
    return f"attribute '{attr.name}' of '{node.name}' removed"


def node_order(rng: np.random.Generator, model: object) -> str:
    nodes = list(model.graph.node)  # type: ignore[attr-defined]
    if len(nodes) < 2:
        return "too few nodes"
    i = int(rng.integers(1, len(nodes)))
    j = int(rng.integers(0, i))
    nodes[i], nodes[j] = nodes[j], nodes[i]
    del model.graph.node[:]  # type: ignore[attr-defined]
    model.graph.node.extend(nodes)  # type: ignore[attr-defined]
    return f"nodes {j} and {i} swapped"


def names(rng: np.random.Generator, model: object) -> str:
    g = model.graph  # type: ignore[attr-defined]
    nodes = [n for n in g.node if n.input]
    choice = rng.random()
    if choice < 0.3 and nodes:
        node = pick(rng, nodes)
        k = int(rng.integers(len(node.input)))
        node.input[k] = "fusec_fuzz_missing"
        return f"input {k} of '{node.name}' renamed to an unknown value"
    if choice < 0.5 and len(g.node) > 1:
        a, b = (g.node[int(i)] for i in rng.choice(len(g.node), 2, replace=False))
        if a.output and b.output:
            b.output[0] = a.output[0]
            return f"'{b.name}' writes the output of '{a.name}' too"
    if choice < 0.65 and g.output:
        g.output[0].name = "fusec_fuzz_missing"
        return "the first graph output renamed to an unknown value"
    if choice < 0.8 and g.input:
        g.input[0].name = ""
        return "the first graph input's name emptied"
    if g.initializer and g.input:
        g.initializer[0].name = g.input[0].name
        return "an initializer named like a graph input"
    return "nothing renamed"


def op_type(rng: np.random.Generator, model: object) -> str:
    g = model.graph  # type: ignore[attr-defined]
    if not g.node:
        return "no nodes"
    node = pick(rng, g.node)
    old = node.op_type
    node.op_type = str(pick(rng, OP_TYPES))
    return f"'{node.name}' changed from {old} to {node.op_type or 'an empty op type'}"


def node_inputs(rng: np.random.Generator, model: object) -> str:
    g = model.graph  # type: ignore[attr-defined]
    nodes = [n for n in g.node if n.input]
    if not nodes:
        return "no node inputs"
    node = pick(rng, nodes)
    if rng.random() < 0.5:
        del node.input[-1]
        return f"the last input of '{node.name}' dropped"
    node.input.append(node.input[0])
    return f"an extra input given to '{node.name}'"


def opset(rng: np.random.Generator, model: object) -> str:
    choice = rng.random()
    imports = model.opset_import  # type: ignore[attr-defined]
    if choice < 0.7 and imports:
        version = int(pick(rng, OPSETS))
        imports[0].version = version
        return f"opset set to {version}"
    if choice < 0.85 and imports:
        imports[0].domain = "com.example.fuzz"
        return "the default opset's domain changed"
    del imports[:]
    return "opset imports removed"


MODEL_MUTATIONS: dict[str, Mutation] = {
    "dims": input_dim,
    "dtype": element_type,
    "initializer-dims": initializer_dims,
    "initializer-size": initializer_size,
    "attribute": attribute,
    "node-order": node_order,
    "names": names,
    "op-type": op_type,
    "node-inputs": node_inputs,
    "opset": opset,
}
"""Mutations of the ModelProto; `mutate_model` adds external data and byte-level ones."""


def external_data(rng: np.random.Generator, model: object, outside: str) -> Mutant:
    """An initializer moved to external data: sometimes well formed (a data file in the
    folder), else pointing out of the folder (`outside` is the absolute path of `OUTSIDE`),
    past the end of its file, or nowhere."""
    from onnx import TensorProto

    g = model.graph  # type: ignore[attr-defined]
    inits = [t for t in g.initializer if t.raw_data]
    if not inits:
        serialized = model.SerializeToString()  # type: ignore[attr-defined]
        return Mutant("no initializer with raw data", {"model.onnx": serialized})
    init = pick(rng, inits)
    data = bytes(init.raw_data)
    init.ClearField("raw_data")
    init.data_location = TensorProto.EXTERNAL
    files: dict[str, bytes] = {DATA_FILE: data}
    links: dict[str, str] = {}
    entries = {"location": DATA_FILE, "offset": "0", "length": str(len(data))}
    kind = str(pick(rng, ("valid", "parent", "absolute", "dotdot-inside", "link", "offset",
                          "length", "missing", "empty", "negative", "directory")))
    if kind == "parent":
        entries["location"] = f"../{OUTSIDE}"
    elif kind == "absolute":
        entries["location"] = outside
    elif kind == "dotdot-inside":
        entries["location"] = f"sub/../../{OUTSIDE}"
    elif kind == "link":
        entries["location"] = "link.bin"
        links["link.bin"] = f"../{OUTSIDE}"
    elif kind == "offset":
        entries["offset"] = str(len(data) + int(rng.integers(1, 100)))
    elif kind == "length":
        entries["length"] = str(len(data) * 2 + 1)
    elif kind == "missing":
        entries["location"] = "no_such_file.bin"
    elif kind == "empty":
        entries["location"] = ""
    elif kind == "negative":
        entries["offset"] = "-8"
    elif kind == "directory":
        entries["location"] = "."
    for key, value in entries.items():
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    files["model.onnx"] = model.SerializeToString()  # type: ignore[attr-defined]
    return Mutant(f"initializer '{init.name}' in external data ({kind}: "
                  f"{entries['location']!r}, offset {entries['offset']}, length "
                  f"{entries['length']})", files, links)


def mutate_model(rng: np.random.Generator, original: object, outside: str) -> Mutant:
    """One random mutation of a copy of `original` (a ModelProto), as the files of its folder
    (`outside`: the absolute path of the file no mutant may read)."""
    model = type(original)()
    model.CopyFrom(original)  # type: ignore[attr-defined]
    kind = str(pick(rng, [*MODEL_MUTATIONS, "external-data", "truncate", "bytes"]))
    if kind == "external-data":
        return external_data(rng, model, outside)
    if kind in MODEL_MUTATIONS:
        what = MODEL_MUTATIONS[kind](rng, model)
        return Mutant(f"{kind}: {what}", {"model.onnx": model.SerializeToString()})  # type: ignore
    data = bytearray(model.SerializeToString())  # type: ignore[attr-defined]
    if kind == "truncate":
        cut = int(rng.integers(0, len(data)))
        return Mutant(f"truncate: {len(data)} bytes cut to {cut}",
                      {"model.onnx": bytes(data[:cut])})
    flips = int(rng.integers(1, 9))
    for _ in range(flips):
        data[int(rng.integers(len(data)))] = int(rng.integers(256))
    return Mutant(f"bytes: {flips} random bytes overwritten", {"model.onnx": bytes(data)})
