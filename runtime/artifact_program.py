"""An artifact's program: written from a compiled plan, opened on a device.

`artifact_bytes` is ``fusec-build``'s last step (`fusec.compiler.artifact_build`): it writes
into one ``.fusec`` file (the container: `fusec.runtime.artifact_format`)

- the `ProgramPlan` (`fusec.runtime.plan_codec`): the OpenCL C source, buffers, launches;
- the device binary of the built program, where the driver gives one, and the identity of the
  device and driver it was built for (`binary_cache.device_identity`);
- the weights bound at compile time (``params``), each in the layout its buffer holds it in
  (`ValueSpec.stored`: a GEMM's B in column panels), bound as they are (on a CPU device in
  place: the file's memory is the weights' buffer);
- the signature: the inputs a call takes and the outputs, names, shapes and dtypes, and for an
  imported model its own names and dtypes (`fusec.runtime.model_executable`);
- fusec's version and the format version.

`open_artifact` is the rest of `fusec.runtime.artifact.load`, once the file is read (its
blobs' checksums being computed in background threads): it decodes the plan and signature
(`decode`), opens a device, adopts the binary into the program cache when the device and
driver are the ones it was built for (else it builds the program from the included source,
with a one-line note on stderr), binds each weight once its checksum has been seen to match,
and returns the `Executable` (or `ModelExecutable`) that ``fusec.compile`` would have made.
This module imports numpy, PyOpenCL and the runtime, never xDSL or the compiler;
`fusec.runtime.artifact` imports it only once the file's checks are under way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fusec import __version__
from fusec.codegen.plan import ProgramPlan

from . import artifact_format
from .artifact_format import ArtifactError
from .binary_cache import device_identity, program_binary
from .device import OpenCLDevice, select_device
from .executable import Executable
from .model_executable import ModelExecutable
from .plan_codec import PlanLayoutError, decode_plan, encode_plan
from .program_cache import adopt_binary, get_program

__all__ = ["SignatureValue", "artifact_bytes", "open_artifact"]


@dataclass(frozen=True)
class SignatureValue:
    """An input or output of a model as its caller sees it (`ModelValue`)."""

    onnx_name: str
    arg_name: str
    dtype: np.dtype
    shape: tuple[int, ...]


def artifact_bytes(
    plan: ProgramPlan,
    device: OpenCLDevice,
    device_kind: str,
    params: Mapping[str, np.ndarray] | None,
    source_name: str,
    model_signature: tuple[Sequence[Any], Sequence[Any]] | None = None,
) -> bytes:
    """The artifact of `plan` built for `device` (of kind ``"cpu"``/``"gpu"``), with its bound
    `params`; `model_signature` (inputs, outputs: `ModelValue`s) for an imported model.
    Builds the program (through the program cache) to include its binary."""
    program = get_program(device, plan.source, plan.build_options)
    binary = program_binary(program, device.device)
    plan_data, arrays = encode_plan(plan)
    params = dict(params or {})
    specs = {s.name: s for s in plan.inputs}
    for name, array in params.items():  # in the layout the input's buffer holds it in
        arrays[f"params/{name}"] = specs[name].stored(np.asarray(array))
    blobs = {"binary": binary} if binary is not None else {}
    bound = set(params)
    inputs = [SignatureValue(s.name, s.name, s.dtype, s.shape)
              for s in plan.inputs if s.name not in bound]
    outputs = [SignatureValue(s.name, s.name, s.dtype, s.shape) for s in plan.outputs]
    model = None
    if model_signature is not None:
        model_inputs, model_outputs = model_signature
        model = {"inputs": [value_data(v) for v in model_inputs],
                 "outputs": [value_data(v) for v in model_outputs]}
    manifest = {
        "fusec_version": __version__,
        "format_version": artifact_format.FORMAT_VERSION,
        "source": os.path.basename(source_name),
        "device": {
            "kind": device_kind,
            "description": device.description,
            "identity": list(device_identity(device.device)),
            "binary": "binary" if binary is not None else None,
        },
        "plan": plan_data,
        "params": sorted(params),
        "signature": {"inputs": [value_data(v) for v in inputs],
                      "outputs": [value_data(v) for v in outputs],
                      "model": model},
    }
    return artifact_format.encode(manifest, blobs, arrays)


def value_data(value: Any) -> dict[str, Any]:
    return {"name": value.onnx_name, "arg": value.arg_name, "dtype": np.dtype(value.dtype).str,
            "shape": [int(d) for d in value.shape]}


def value_of(data: Mapping[str, Any]) -> SignatureValue:
    return SignatureValue(str(data["name"]), str(data["arg"]), np.dtype(str(data["dtype"])),
                          tuple(int(d) for d in data["shape"]))


class CheckedArrays(Mapping[str, np.ndarray]):
    """An artifact's arrays ``PREFIX/NAME`` by ``NAME``, each read (`Artifact.array`) when it
    is asked for, so once its checksum has been seen to match: the weights of a loaded
    artifact, bound one by one as their checks end (`Executable` binds them in order)."""

    def __init__(self, artifact: artifact_format.Artifact, prefix: str, names: Sequence[str]):
        self.artifact = artifact
        self.prefix = prefix
        self.names = list(names)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.names:
            raise KeyError(name)
        return self.artifact.array(f"{self.prefix}/{name}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class LoadedArtifact:
    """What an artifact holds, decoded (before a device is chosen); its weights are read as
    their checksums are checked."""

    path: str
    artifact: artifact_format.Artifact
    plan: ProgramPlan
    params: CheckedArrays
    binary: bytes | None
    device_kind: str
    device_description: str
    device_identity: tuple[str, ...]
    model: tuple[list[SignatureValue], list[SignatureValue]] | None


def decode(name: str, art: artifact_format.Artifact) -> LoadedArtifact:
    """The decoded artifact `art` read from `name` (its version checked already,
    `fusec.runtime.artifact.check_version`); ArtifactError (one line) for a manifest this fusec
    cannot decode. A weight's blob is checked by the time it is read from
    `LoadedArtifact.params` (ArtifactError if damaged); the binary's is checked here."""
    manifest = art.manifest
    built_by = manifest.get("fusec_version")
    try:
        plan = decode_plan(manifest["plan"], art.array)
        params = CheckedArrays(art, "params", [str(p) for p in manifest["params"]])
        device = manifest["device"]
        binary_name = device["binary"]
        binary = bytes(art.blob(str(binary_name))) if binary_name is not None else None
        model_data = manifest["signature"]["model"]
        model = None if model_data is None else (
            [value_of(v) for v in model_data["inputs"]],
            [value_of(v) for v in model_data["outputs"]])
        loaded = LoadedArtifact(name, art, plan, params, binary, str(device["kind"]),
                                str(device["description"]),
                                tuple(str(s) for s in device["identity"]), model)
    except PlanLayoutError as e:
        raise ArtifactError(f"{name}: error: built by fusec {built_by} with another program "
                            f"plan layout than this fusec {__version__}'s ({e}); rebuild it "
                            "with this fusec's fusec-build") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ArtifactError(f"{name}: error: malformed manifest ({type(e).__name__}: "
                            f"{e})") from None
    return loaded


def open_artifact(name: str, art: artifact_format.Artifact, device: str | None = None,
                  platform: str | None = None) -> Executable | ModelExecutable:
    """The executable of `art`, read from `name`, on `device` (``"cpu"``, ``"gpu"``,
    ``"auto"``; None: the kind it was built for). See the module docstring."""
    loaded = decode(name, art)
    dev = select_device(device or loaded.device_kind, platform)  # type: ignore[arg-type]
    plan = loaded.plan
    same = device_identity(dev.device) == loaded.device_identity
    if not same:
        note(f"{loaded.path}: note: built for {loaded.device_description}; building its "
             f"kernels from source for {dev.description}")
    elif loaded.binary is not None and not adopt_binary(dev, plan.source, plan.build_options,
                                                        loaded.binary):
        note(f"{loaded.path}: note: the driver refused the included binary; building its "
             "kernels from source")
    exe = Executable(plan, dev, loaded.params, params_stored=True)  # binds each once checked
    loaded.artifact.check()  # and any blob not used: every one is intact when load returns
    if loaded.model is not None:
        return ModelExecutable(exe, *loaded.model)
    return exe


def note(line: str) -> None:
    """A one-line note on stderr (what a loader does that its caller may want to know)."""
    print(line, file=sys.stderr)
