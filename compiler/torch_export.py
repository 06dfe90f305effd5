"""Saved PyTorch programs (``torch.export.save``'s ``.pt2`` files) in, ``nn`` IR out.

    imported = import_exported("model.pt2")          # IR + weights (fusec-import)
    model = import_exported_model("model.pt2")       # + the call's names and dtypes
                                                     # (fusec-build, fusec-run)

The program is loaded with ``torch.export.load`` and its graph imported by the PyTorch FX
importer (`fusec.frontends.torch_fx`, the one ``torch.compile(backend="fusec")`` uses) at the
shapes it was exported with, as exported (no decomposition: the importer takes the ops
``torch.export`` keeps whole, ``linear``, ``layer_norm``, ``scaled_dot_product_attention``).
Its parameters, buffers and constant tensors (``state_dict``, ``constants``) become the
weights; its user inputs the call's inputs. PyTorch is needed only here and is imported
lazily: without it, a ``.pt2`` input is one line (``install fusec[torch]``), as a file that
does not load or an op without a converter is.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from fusec.compiler.diagnostics import FusecError, verify_module
from fusec.errors import error_line
from fusec.frontends.onnx_import import GraphValue, ImportedModel
from fusec.frontends.torch_fx import (
    TORCH_HOST_DTYPES,
    ImportedGraph,
    TorchImportError,
    import_graph,
)

PT2_SUFFIX = ".pt2"
"""The suffix of a saved ``ExportedProgram`` (``torch.export.save``)."""


def is_exported_file(path: str) -> bool:
    """Whether `path` names a saved ``ExportedProgram`` (by its suffix)."""
    return path.endswith(PT2_SUFFIX)


def load_exported(path: str) -> Any:
    """The ``ExportedProgram`` saved at `path`; a one-line `FusecError` where PyTorch is not
    installed or the file does not load (not a zip, damaged, another format)."""
    try:
        import torch
    except ImportError:
        raise FusecError(f"{path}: error: importing an ExportedProgram needs PyTorch "
                         "(install fusec[torch]: pip install 'fusec[torch]')") from None
    with held_records("torch.export") as records:  # it logs a traceback, then tries again
        try:
            return torch.export.load(path)
        except Exception as e:
            error: BaseException = e
    # Where the last attempt's error only points at the log, the first attempt's says more.
    logged = [r.exc_info[1] for r in records if r.exc_info and r.exc_info[1] is not None]
    if "warnings above" in str(error):
        error = logged[0] if logged else ValueError("no exported program in the archive")
    raise FusecError(f"{path}: error: cannot load the ExportedProgram: "
                     f"{error_line(error)}") from None


@contextlib.contextmanager
def held_records(name: str) -> Iterator[list[logging.LogRecord]]:
    """Within the block, what the logger `name` reports is kept in the yielded list instead
    of being shown."""
    logger = logging.getLogger(name)
    records: list[logging.LogRecord] = []
    holder = logging.Handler()
    holder.emit = records.append  # type: ignore[method-assign]
    handlers, propagate = logger.handlers, logger.propagate
    logger.handlers, logger.propagate = [holder], False
    try:
        yield records
    finally:
        logger.handlers, logger.propagate = handlers, propagate


def import_exported(path: str, inline_elements: int | None = None) -> ImportedGraph:
    """The ``nn`` IR of a saved ``ExportedProgram`` (``torch.export.save``) at the shapes it
    was exported with: its parameters, buffers and constant tensors as weights; one-line
    `FusecError`s for a file that does not load or an op fusec cannot import."""
    return import_program(load_exported(path), path, inline_elements)


def import_exported_model(path: str) -> ImportedModel:
    """A saved ``ExportedProgram`` as a model (as `fusec.compiler.onnx_driver.import_onnx`
    gives an ONNX one, for ``fusec-build`` and ``fusec-run``): its IR, verified, and weights,
    called with the program's user inputs by their own names and dtypes (int64 ids narrowed
    at the call, bf16 as ``uint16`` bits) and giving ``result0``, ... in PyTorch's dtypes."""
    program = load_exported(path)
    imported = import_program(program, path)
    verify_module(imported.module, path)
    names = list(program.graph_signature.user_inputs)
    inputs = [GraphValue(name, t.arg_name, TORCH_HOST_DTYPES[str(t.dtype)], t.shape)
              for name, t in zip(names, imported.inputs, strict=True)]
    outputs = [GraphValue(t.arg_name, t.arg_name, TORCH_HOST_DTYPES[str(t.dtype)], t.shape)
               for t in imported.outputs]
    return ImportedModel(imported.module, imported.params, inputs, outputs, imported.folded)


def import_program(program: Any, path: str, inline_elements: int | None = None) -> ImportedGraph:
    """`import_exported` of a loaded program (`path` names it in errors)."""
    from torch.export.graph_signature import InputKind

    placeholders = [n for n in program.graph_module.graph.nodes if n.op == "placeholder"]
    values: list[Any] = []
    bound: set[int] = set()
    for i, (node, spec) in enumerate(zip(placeholders, program.graph_signature.input_specs,
                                         strict=True)):
        if spec.kind == InputKind.USER_INPUT:
            values.append(node.meta["val"])
            continue
        source = program.state_dict if spec.target in program.state_dict else program.constants
        if spec.target not in source:
            raise FusecError(f"{path}: error: input '{node.name}' ({spec.kind.name}) has no "
                             "value in the program")
        values.append(source[spec.target])
        bound.add(i)
    try:
        return import_graph(program.graph_module, values, bound, path,
                            **({} if inline_elements is None
                               else {"inline_elements": inline_elements}))
    except TorchImportError as e:
        raise FusecError(str(e)) from None
