"""ONNX models through the driver (`fusec.compiler.driver.compile` calls these):
``fusec.compile(model)`` and the weights files of imported IR.

    exe = fusec.compile("bert.onnx", shapes={"input_ids": [1, 128]})   # or an onnx.ModelProto
    (hidden,) = exe(input_ids=ids, attention_mask=mask)    # ONNX input names, ONNX dtypes
    outputs = exe.run({"input_ids": ids, ...})             # {ONNX output name: array}

The model is imported (`fusec.frontends.onnx_import`), its weights are bound to the device
(``params``), and `OnnxExecutable` speaks the model's language at the call boundary: inputs and
outputs by their ONNX names, int64 arrays in and out where the model has int64 (the IR computes
them as i32: an int64 input outside the i32 range is an `InputError`).

IR written by ``fusec-import`` names its weights file in the module attribute ``fusec.params``;
`module_params` reads it (relative to the IR file), so that ``fusec-run OUT.mlir`` and
``fusec.compile`` bind the weights without extra flags.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from fusec.compiler.diagnostics import FusecError, verify_module
from fusec.compiler import progress
from fusec.frontends.onnx_import import (
    INLINE_ELEMENTS,
    PARAMS_ATTRIBUTE,
    ImportedModel,
    OnnxImportError,
    import_model,
    load_model,
)
from fusec.placement.executor import PlacedExecutable
from fusec.runtime.executable import Executable
from fusec.runtime.model_executable import ModelExecutable

ONNX_SUFFIX = ".onnx"


def is_onnx_source(source: object) -> bool:
    """``source`` is an ``onnx.ModelProto`` or the path of a ``.onnx`` file."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, str):
        return source.endswith(ONNX_SUFFIX) and "\n" not in source
    return type(source).__name__ == "ModelProto"


def import_onnx(
    source: object,
    shapes: Mapping[str, Sequence[int]] | None = None,
    filename: str | None = None,
    inline_elements: int = INLINE_ELEMENTS,
    input_values: Mapping[str, np.ndarray] | None = None,
) -> ImportedModel:
    """The imported model of a ``ModelProto`` or ``.onnx`` path, verified (a model whose
    tensors the verifier rejects, e.g. too large to index, is a one-line error here, not IR
    that does not parse back); `FusecError` on bad input."""
    name = filename or (os.fspath(source) if isinstance(source, str | os.PathLike) else "<model>")
    try:
        if isinstance(source, str | os.PathLike):
            progress.step(f"reading {name}")
            model = load_model(os.fspath(source))
        else:
            model = source
        progress.step(f"importing {name}")
        imported = import_model(model, shapes, name, inline_elements, input_values)
        progress.step("verifying the imported IR")
        verify_module(imported.module, name)
        return imported
    except OnnxImportError as e:
        raise FusecError(str(e)) from None
    except ImportError as e:
        raise FusecError(f"error: importing ONNX needs the onnx package ({e.name} is missing: "
                         "pip install 'fusec[onnx]')") from None


def module_params(module: ModuleOp, filename: str) -> dict[str, np.ndarray] | None:
    """The weights named by the module's ``fusec.params`` attribute (a path relative to
    ``filename``'s folder), or None when it has none."""
    attr = module.attributes.get(PARAMS_ATTRIBUTE)
    if attr is None:
        return None
    if not isinstance(attr, StringAttr):
        raise FusecError(f"{filename}: error: the {PARAMS_ATTRIBUTE} attribute must be a string")
    folder = os.path.dirname(filename) if filename and not filename.startswith("<") else ""
    path = os.path.join(folder, attr.data)
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):  # one .npy array has no names
            raise ValueError("not an .npz archive")
        with loaded as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        reason = ("the file is empty" if isinstance(e, EOFError)
                  else getattr(e, "strerror", None) or str(e))
        raise FusecError(f"{filename}: error: cannot read the weights file {path} named by "
                         f"{PARAMS_ATTRIBUTE}: {reason}") from None


class OnnxExecutable(ModelExecutable):
    """An `Executable` of an imported model, called with the model's input names and dtypes
    (`fusec.runtime.model_executable`, which a loaded artifact of a model uses too)."""

    def __init__(self, exe: Executable | PlacedExecutable, imported: ImportedModel):
        super().__init__(exe, imported.inputs, imported.outputs)
