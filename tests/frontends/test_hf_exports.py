"""Models as users export them: small random configs of eight Hugging Face architectures (BERT,
RoBERTa, DistilBERT, GPT-2, Llama, Mistral, Qwen2, Gemma) at transformers' default attention
(``sdpa``) and at ``eager``, each by both of torch's exporters (TorchScript at opset 17, dynamo
at opset 18), torch's ``nn.TransformerEncoder``, and Llama and Qwen2 in float16; all made by
``bench/export_hf.py`` (torch 2.13, transformers 5.x) into ``models/``.

Each imports and matches ONNX Runtime fused and in the numpy reference of the imported IR, with
padding in the mask (f32: atol 1e-4 times the output's largest magnitude, rtol 1e-3; f16:
2e-2). Each recognises its attention as ``nn.attention`` with no softmax left (Mistral's with
its sliding window of 4 keys, the sequence is 8; torch's encoder with its padding mask), and
runs in at most `LAUNCHES_PER_LAYER` kernel launches per layer.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx_helpers import (  # noqa: E402
    DEVICE,
    assert_close,
    onnxruntime_outputs,
    reference_outputs,
)

from fusec.compiler.driver import compile  # noqa: E402
from fusec.compiler.onnx_driver import OnnxExecutable, import_onnx  # noqa: E402

MODELS = Path(__file__).parent / "models"
FILES = sorted([*MODELS.glob("hf_*.onnx"), *MODELS.glob("torch_encoder_*.onnx")])
KINDS = ("bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "qwen2", "gemma")
LEFT_AS_WRITTEN: dict[str, str] = {}
"""Architectures whose attention stays a softmax, and why."""

LAUNCHES_PER_LAYER = {"bert": 8.5, "roberta": 10, "distilbert": 8, "gpt2": 8.5, "llama": 10,
                      "mistral": 10, "qwen2": 10, "gemma": 10, "encoder": 7.5}
"""The most kernel launches of the compiled model (2 layers, embeddings and final norm
included) per layer, by architecture, as `bench/import_matrix.py` counts them (CPU device; a
layer of BERT, GPT-2 or the encoder is 7, the rest embeddings: RoBERTa's position ids take 6,
its token-type buffer none since `canonicalize-nn` reads a splat table as the splat; Gemma's
embedding scale none, moved onto the bound table). f16 exports alike: the TorchScript
exporter's f16 Llama and Qwen2 keep their residual stream in f32, and attention stores its
f16 result widened for the f32 output projection (`fuse-attention-cast`), the f16 down
projection its f32 residual sum (`fuse-matmul-epilogue`)."""


def kind_of(path: Path) -> str:
    return path.name.split("_")[1]


def feeds(model: object) -> dict[str, np.ndarray]:
    """Token ids and a mask with the last three keys padded (the encoder: normal floats and a
    boolean padding mask)."""
    rng = np.random.default_rng(0)
    names = [v.name for v in model.graph.input]  # type: ignore[attr-defined]
    if names == ["x", "key_padding_mask"]:
        pad = np.zeros((1, 8), bool)
        pad[0, -3:] = True
        return {"x": rng.standard_normal((1, 8, 32)).astype(np.float32),
                "key_padding_mask": pad}
    mask = np.ones((1, 8), np.int64)
    mask[0, -3:] = 0
    return {"input_ids": rng.integers(2, 64, (1, 8)).astype(np.int64), "attention_mask": mask}


def test_the_matrix_is_present() -> None:
    names = {p.name for p in FILES}
    for kind in KINDS:
        for attn in ("sdpa", "eager"):
            assert f"hf_{kind}_{attn}_torchscript_op17.onnx" in names
            assert f"hf_{kind}_{attn}_dynamo_op18.onnx" in names
    for kind in ("llama", "qwen2"):
        assert f"hf_{kind}_sdpa_torchscript_op17_f16.onnx" in names
        assert f"hf_{kind}_sdpa_dynamo_op18_f16.onnx" in names
    assert {"torch_encoder_torchscript_op17.onnx", "torch_encoder_dynamo_op18.onnx"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_import_recognises_attention(path: Path) -> None:
    fn = next(iter(import_onnx(onnx.load(str(path))).module.ops))
    ops = Counter(op.name for op in fn.body.block.ops)  # type: ignore[attr-defined]
    if kind_of(path) in LEFT_AS_WRITTEN:
        assert ops["nn.attention"] == 0 and ops["nn.softmax"] == 2, dict(ops)
    else:
        assert ops["nn.attention"] == 2 and ops["nn.softmax"] == 0, dict(ops)
    assert ops["nn.erf"] == 0, dict(ops)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_matches_onnxruntime_fused_and_reference(path: Path) -> None:
    model = onnx.load(str(path))
    inputs = feeds(model)
    expected = onnxruntime_outputs(model, inputs)
    if path.stem.endswith("_f16"):
        atol = rtol = 2e-2
    else:
        atol, rtol = 1e-4 * max(1.0, float(np.abs(expected[0]).max())), 1e-3
    imported = import_onnx(model)
    exe = compile(imported.module, device=DEVICE, params=imported.params)
    assert_close(OnnxExecutable(exe, imported)(**inputs), expected, f"{path.name} fused",
                 atol, rtol)
    ceiling = LAUNCHES_PER_LAYER[kind_of(path)]
    assert len(exe.launches) / 2 <= ceiling, f"{len(exe.launches)} launches for 2 layers"
    assert_close(reference_outputs(model, inputs), expected, f"{path.name} reference",
                 atol, rtol)
