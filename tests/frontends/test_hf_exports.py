"""Real Hugging Face exports: `BertModel`, `DistilBertModel`, `GPT2Model` and `LlamaModel` (small
random-initialised configs of the real architectures, 2 layers), each exported by both of
PyTorch's exporters (TorchScript, ``dynamo=False``, and dynamo) at opsets 17 and 18, by
``bench/export_hf.py`` (torch 2.13, transformers 5.x). The files are in ``models/``.

Each imports, recognises its attention with its mask (key padding, and the causal triangle for
GPT-2 and Llama) as ``nn.attention``, and matches ONNX Runtime fused, unfused and in the numpy
reference, with padding in the mask.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx_helpers import (  # noqa: E402
    assert_close,
    fusec_outputs,
    onnxruntime_outputs,
    reference_outputs,
)

from fusec.compiler.onnx_driver import import_onnx  # noqa: E402

MODELS = Path(__file__).parent / "models"
FILES = sorted(MODELS.glob("hf_*.onnx"))
INVALID_FOR_ORT = {"hf_gpt2_dynamo_op17.onnx": "hf_gpt2_dynamo_op18.onnx"}
"""The dynamo exporter writes Split's opset-18 attribute ``num_outputs`` into GPT-2's opset-17
file, which ONNX Runtime rejects; fusec reads it, and is checked against ONNX Runtime on the
opset-18 file of the same weights."""

EXPECTED_OPS = {
    "bert": {"nn.attention": 2, "nn.gelu": 2, "nn.layer_norm": 5},
    "distilbert": {"nn.attention": 2, "nn.gelu": 2, "nn.layer_norm": 5},
    "gpt2": {"nn.attention": 2, "nn.gelu": 2, "nn.layer_norm": 5},
    "llama": {"nn.attention": 2, "nn.silu": 2, "nn.rms_norm": 5},
}


def feeds(batch: int = 1, seq: int = 8, seed: int = 0) -> dict[str, np.ndarray]:
    """Token ids and a mask with padding at the end (the first key always attended)."""
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, seq), np.int64)
    mask[0, -3:] = 0
    return {"input_ids": rng.integers(0, 64, (batch, seq)).astype(np.int64),
            "attention_mask": mask}


def kind_of(path: Path) -> str:
    return path.name.split("_")[1]


def test_every_export_is_present() -> None:
    names = {p.name for p in FILES}
    for kind in EXPECTED_OPS:
        for exporter in ("torchscript", "dynamo"):
            for opset in (17, 18):
                assert f"hf_{kind}_{exporter}_op{opset}.onnx" in names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_import_recognises_attention_and_norms(path: Path) -> None:
    fn = next(iter(import_onnx(onnx.load(str(path))).module.ops))
    ops = Counter(op.name for op in fn.body.block.ops)  # type: ignore[attr-defined]
    for name, count in EXPECTED_OPS[kind_of(path)].items():
        assert ops[name] == count, (name, dict(ops))
    assert ops["nn.softmax"] == 0 and ops["nn.erf"] == 0 and ops["nn.where"] == 0, dict(ops)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_matches_onnxruntime_fused_unfused_and_reference(path: Path) -> None:
    model = onnx.load(str(path))
    inputs = feeds()
    ort_model = onnx.load(str(MODELS / INVALID_FOR_ORT.get(path.name, path.name)))
    expected = onnxruntime_outputs(ort_model, inputs)
    assert_close(fusec_outputs(model, inputs, "default"), expected, f"{path.name} fused")
    assert_close(fusec_outputs(model, inputs, "none"), expected, f"{path.name} unfused")
    assert_close(reference_outputs(model, inputs), expected, f"{path.name} reference")
