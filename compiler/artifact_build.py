"""``fusec-build``'s compile: a model file in, a deployable artifact's bytes out.

    built = build_artifact("examples/bert_layer.mlir", device="cpu")
    atomic_write("bert_layer.fusec", built.data)

The input (``nn`` IR, whose ``fusec.params`` weights are bound as ``fusec-run`` binds them, an
``.onnx`` model or a saved PyTorch ``ExportedProgram``, ``.pt2``, imported with its weights
and called with its own input names and dtypes) goes through the steps ``fusec.compile`` takes
for one device: the fusion pipeline, folding the bound weights, ``lower-opencl`` for that
device, the plan and the program build; `fusec.runtime.artifact_program.artifact_bytes` then
writes the plan, the program binary, the weights and the signature into one file. An artifact
holds one device's program: ``device="auto"`` builds for the device ``fusec.compile`` would
pick alone (no CPU/GPU split, which ``fusec.placement`` makes at compile time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.plan import ProgramPlan
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError
from fusec.compiler.driver import building, fuse_and_fold, load, lower
from fusec.compiler.fusion_stats import FusionReport, count
from fusec.compiler.onnx_driver import import_onnx, is_onnx_source, module_params
from fusec.compiler.pipeline import run_pipeline
from fusec.compiler.torch_export import import_exported_model, is_exported_file
from fusec.frontends.onnx_import import ImportedModel
from fusec.runtime.artifact_program import artifact_bytes
from fusec.runtime.device import OpenCLDevice, select_device


@dataclass(frozen=True)
class BuiltArtifact:
    data: bytes
    """The artifact file's bytes."""
    plan: ProgramPlan
    device: OpenCLDevice
    stats: FusionReport
    """What the fusion pipeline did (``--fusion-stats-json``)."""


def build_artifact(
    path: str,
    device: str = "auto",
    platform: str | None = None,
    pipeline: str = "default",
    shapes: Mapping[str, Sequence[int]] | None = None,
    function: str | None = None,
    launch_budget: int | None = None,
    launch_fusion: bool = True,
    allow_tf32: bool = False,
) -> BuiltArtifact:
    """The artifact of the model file at `path`; `FusecError` for bad input, the runtime's
    errors (`DeviceError`, `BuildError`, ...) for the device."""
    model_signature = None
    if is_onnx_source(path) or is_exported_file(path):
        imported = import_model_file(path, shapes)
        module, params = imported.module, imported.params
        model_signature = (imported.inputs, imported.outputs)
    else:
        if shapes:
            raise FusecError(f"{path}: error: --shape applies to ONNX models only")
        module = load(read_text(path), path)
        params = module_params(module, path) or {}
    dev = select_device(device, platform)  # type: ignore[arg-type]
    info = DeviceInfo.from_device(dev.device)
    before = count(module)
    if pipeline not in ("", "none"):
        run_pipeline(make_context(), module, pipeline, path)
    stats = FusionReport(path, before, count(module))
    _, bound = fuse_and_fold(module, function, "none", path, params or None)
    compiled = lower(module, function, "none", info, path, launch_budget, launch_fusion,
                     allow_tf32, bound=list(bound or {}))
    building(compiled.plan)
    data = artifact_bytes(compiled.plan, dev, info.kind, bound, path, model_signature)
    return BuiltArtifact(data, compiled.plan, dev, stats)


def import_model_file(path: str, shapes: Mapping[str, Sequence[int]] | None,
                      input_values: Mapping[str, np.ndarray] | None = None) -> ImportedModel:
    """The imported model of an ``.onnx`` file or a saved ``ExportedProgram`` (``.pt2``,
    imported through the PyTorch FX importer: PyTorch needed only then). ``input_values``
    gives an ONNX model's inputs that decide shapes (`import_onnx`)."""
    if is_onnx_source(path):
        return import_onnx(path, shapes, input_values=input_values)
    if shapes:
        raise FusecError(f"{path}: error: --shape applies to ONNX models only (an "
                         "ExportedProgram runs at the shapes it was exported with)")
    return import_exported_model(path)


def read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        raise FusecError(f"{path}: error: cannot read input: Is a directory") from None
    except OSError as e:
        raise FusecError(f"{path}: error: cannot read input: "
                         f"{e.strerror or e}") from None
    except UnicodeDecodeError:
        raise FusecError(f"{path}: error: input is not UTF-8 text") from None

