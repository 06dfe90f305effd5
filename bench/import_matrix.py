"""The import matrix: for every ``.onnx`` file in a folder, whether fusec imports it, how far its
outputs are from ONNX Runtime's, how many kernel launches it runs per layer and how many
softmaxes the importer left unrecognised.

    python -m fusec.bench.import_matrix tests/frontends/models [--layers 2] [--device cpu]

Inputs are random (`feeds`): token ids in ``[2, 64)`` and an attention mask with the last three
keys padded, or normal floats and a boolean padding mask for a float model. The difference is
``max |fusec - ort|`` over the outputs, and "ok" when within the issue's tolerance (f32: atol
1e-4 times the largest magnitude of the reference, rtol 1e-3; f16: 2e-2). Launches are those of
the compiled executable (after launch fusion) divided by ``--layers``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

MASKED_KEYS = 3


def feeds(model: object, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    initializers = {i.name for i in model.graph.initializer}  # type: ignore[attr-defined]
    result: dict[str, np.ndarray] = {}
    for v in model.graph.input:  # type: ignore[attr-defined]
        if v.name in initializers:
            continue
        shape = [d.dim_value or 1 for d in v.type.tensor_type.shape.dim]
        elem = v.type.tensor_type.elem_type
        if elem == 7 and "mask" in v.name:
            array = np.ones(shape, np.int64)
            array[..., -MASKED_KEYS:] = 0
        elif elem == 7:
            array = rng.integers(2, 64, shape).astype(np.int64)
        elif elem == 9:
            array = np.zeros(shape, bool)
            array[..., -MASKED_KEYS:] = True
        else:
            dtype = {1: np.float32, 10: np.float16}[elem]
            array = rng.standard_normal(shape).astype(dtype)
        result[v.name] = array
    return result


def tolerance(expected: np.ndarray) -> tuple[float, float]:
    if expected.dtype == np.float16:
        return 2e-2, 2e-2
    return 1e-4 * max(float(np.abs(expected).max()), 1.0), 1e-3


def row(path: Path, layers: int, device: str) -> str:
    import onnx
    import onnxruntime as ort

    from fusec.compiler.diagnostics import FusecError
    from fusec.compiler.driver import compile as fusec_compile
    from fusec.compiler.onnx_driver import OnnxExecutable, import_onnx

    model = onnx.load(str(path))
    inputs = feeds(model)
    try:
        imported = import_onnx(model, filename=path.name)
    except FusecError as e:
        return f"{path.name:44} import failed: {str(e)[:150]}"
    fn = next(iter(imported.module.ops))
    softmax = sum(op.name == "nn.softmax" for op in fn.body.block.ops)  # type: ignore
    attention = sum(op.name == "nn.attention" for op in fn.body.block.ops)  # type: ignore
    exe = fusec_compile(imported.module, device=device, params=imported.params)
    ours = OnnxExecutable(exe, imported)(**inputs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = session.run(None, inputs)
    diff, ok = 0.0, True
    for a, b in zip(ours, theirs, strict=True):
        atol, rtol = tolerance(b)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        diff = max(diff, float(np.abs(a64 - b64).max()))
        ok = ok and bool(np.allclose(a64, b64, atol=atol, rtol=rtol))
    launches = len(exe.launches) / layers  # type: ignore[union-attr]
    return (f"{path.name:44} imports  {'ok  ' if ok else 'DIFF'} max diff {diff:.2e}  "
            f"launches/layer {launches:4.1f}  attention {attention}  softmax left {softmax}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    for path in sorted(args.folder.glob("*.onnx")):
        try:
            print(row(path, args.layers, args.device), flush=True)
        except Exception as e:  # noqa: BLE001 - one row per model, whatever fails
            print(f"{path.name:44} failed: {type(e).__name__}: {str(e)[:150]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
