"""What the ONNX importer tests share: run a model through fusec (fused and unfused), ONNX
Runtime and the numpy reference of the imported IR, and compare them."""

from __future__ import annotations

import os

import numpy as np

from fusec.compiler.driver import compile
from fusec.compiler.onnx_driver import OnnxExecutable, import_onnx
from fusec.reference.executor import run_function

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
ATOL, RTOL = 1e-4, 1e-3
"""The issue's tolerance for f32 models: per output, |ours - ort| <= ATOL + RTOL * |ort|."""


def random_feeds(model: object, seed: int = 0, vocab: int = 100) -> dict[str, np.ndarray]:
    """Random inputs for every graph input: normal floats, ids in ``[0, vocab)``, 0/1 masks
    (the first key always attended), random bools."""
    rng = np.random.default_rng(seed)
    initializers = {i.name for i in model.graph.initializer}  # type: ignore[attr-defined]
    feeds: dict[str, np.ndarray] = {}
    for v in model.graph.input:  # type: ignore[attr-defined]
        if v.name in initializers:
            continue
        shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
        elem = v.type.tensor_type.elem_type
        if elem == 7:
            if "mask" in v.name:
                array = rng.integers(0, 2, shape).astype(np.int64)
                array[..., 0] = 1
            else:
                array = rng.integers(0, vocab, shape).astype(np.int64)
        elif elem == 9:
            array = rng.integers(0, 2, shape).astype(bool)
        else:
            array = rng.standard_normal(shape).astype(np.float32)
        feeds[v.name] = array
    return feeds


def onnxruntime_outputs(model: object, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(),  # type: ignore[attr-defined]
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def fusec_outputs(model: object, feeds: dict[str, np.ndarray],
                  pipeline: str = "default") -> list[np.ndarray]:
    imported = import_onnx(model)
    exe = compile(imported.module, pipeline=pipeline, device=DEVICE, params=imported.params)
    return OnnxExecutable(exe, imported)(**feeds)


def reference_outputs(model: object, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The numpy reference semantics of the imported IR (weights as arguments)."""
    imported = import_onnx(model)
    fn = next(iter(imported.module.ops))
    args = []
    by_arg = {v.arg_name: feeds[v.onnx_name] for v in imported.inputs}
    for arg in fn.body.block.args:  # type: ignore[attr-defined]
        name = arg.name_hint
        value = by_arg[name] if name in by_arg else imported.params[name]
        args.append(value.astype(np.int32) if value.dtype == np.int64 else value)
    return run_function(imported.module, args)


def assert_close(ours: list[np.ndarray], theirs: list[np.ndarray], what: str,
                 atol: float = ATOL, rtol: float = RTOL) -> None:
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.shape == b.shape, f"{what} output {i}: shape {a.shape} != {b.shape}"
        if a.dtype == np.bool_ or b.dtype.kind in "iub":
            np.testing.assert_array_equal(a, b.astype(a.dtype), err_msg=f"{what} output {i}")
        else:
            np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=f"{what} output {i}")


def check_model(model: object, feeds: dict[str, np.ndarray] | None = None,
                atol: float = ATOL, rtol: float = RTOL) -> list[np.ndarray]:
    """fusec fused, fusec unfused and the numpy reference each agree with ONNX Runtime."""
    feeds = feeds if feeds is not None else random_feeds(model)
    expected = onnxruntime_outputs(model, feeds)
    fused = fusec_outputs(model, feeds, "default")
    assert_close(fused, expected, "fusec (default pipeline) vs onnxruntime", atol, rtol)
    assert_close(fusec_outputs(model, feeds, "none"), expected,
                 "fusec (no fusion) vs onnxruntime", atol, rtol)
    assert_close(reference_outputs(model, feeds), expected, "reference vs onnxruntime",
                 atol, rtol)
    for out, ref in zip(fused, expected, strict=True):
        assert out.dtype == ref.dtype
    return fused
