"""Exports small, randomly initialised Hugging Face models (and torch's own encoder) to ONNX the
way users export them: at the library's default attention implementation and at ``eager``, by
both of torch's exporters.

    python -m fusec.bench.export_hf OUT_DIR                      # the whole test matrix
    python -m fusec.bench.export_hf OUT_DIR --kind llama --attn sdpa --exporter dynamo

Needs torch, transformers and onnxscript (the dynamo exporter); fusec itself needs none of them.
The matrix (`matrix`): each architecture of `KINDS` (the real model class at a small width: 2
layers, width 32, 4 heads of 8; GQA with 2 key/value heads for Llama, Mistral, Qwen2 and Gemma;
Mistral with a sliding window of `WINDOW` keys, shorter than the sequence) x attention ``sdpa``
(transformers' default) and ``eager`` x exporter ``torchscript`` (opset 17) and ``dynamo``
(opset 18); torch's ``nn.TransformerEncoder`` by both exporters; Llama and Qwen2 in float16 by
both. File names: ``hf_KIND_ATTN_EXPORTER_opN.onnx`` (``_f16`` for half precision),
``torch_encoder_EXPORTER_opN.onnx``.

The inputs are ``input_ids`` and ``attention_mask`` (int64, batch 1, `SEQ` tokens; the encoder
takes ``x``, float ``[1, SEQ, 32]``, and a boolean ``key_padding_mask``); the output is
``last_hidden_state`` (``y``). Weights are seeded, so a re-export gives the same numbers (the
files' bytes may still differ between torch versions). Debug data (doc strings, the dynamo
exporter's stack traces) is stripped, so each file is under a hundred kilobytes.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

SEQ = 8
WINDOW = 4
"""Mistral's sliding window in the test config: shorter than `SEQ`, so it is a real band."""
KINDS = ("bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "qwen2", "gemma")
ATTENTIONS = ("sdpa", "eager")
EXPORTERS = {"torchscript": 17, "dynamo": 18}
HALF_KINDS = ("llama", "qwen2")
CAUSAL_KINDS = ("gpt2", "llama", "mistral", "qwen2", "gemma")


@dataclass(frozen=True)
class Export:
    """One file of the matrix."""

    kind: str  # a `KINDS` entry, or "encoder" for torch's nn.TransformerEncoder
    attn: str
    exporter: str
    opset: int
    half: bool = False

    @property
    def name(self) -> str:
        if self.kind == "encoder":
            return f"torch_encoder_{self.exporter}_op{self.opset}.onnx"
        half = "_f16" if self.half else ""
        return f"hf_{self.kind}_{self.attn}_{self.exporter}_op{self.opset}{half}.onnx"


def matrix() -> list[Export]:
    exports = [Export(kind, attn, exporter, opset)
               for kind in KINDS for attn in ATTENTIONS for exporter, opset in EXPORTERS.items()]
    exports += [Export("encoder", "", exporter, opset) for exporter, opset in EXPORTERS.items()]
    exports += [Export(kind, "sdpa", exporter, opset, half=True)
                for kind in HALF_KINDS for exporter, opset in EXPORTERS.items()]
    return exports


def small_config(kind: str, attn: str):  # type: ignore[no-untyped-def]
    """A config of the real architecture at a small width (2 layers, 4 heads of 8)."""
    import transformers  # type: ignore[import-not-found]

    common = {"vocab_size": 64, "max_position_embeddings": 32, "attn_implementation": attn}
    if kind in ("bert", "roberta"):
        cls = transformers.BertConfig if kind == "bert" else transformers.RobertaConfig
        if kind == "roberta":  # positions start after the padding id
            common |= {"max_position_embeddings": 40, "pad_token_id": 1}
        return cls(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=64, **common)
    if kind == "distilbert":
        return transformers.DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                             **common)
    if kind == "gpt2":
        return transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4,
                                       n_positions=32, attn_implementation=attn)
    decoder = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
               "intermediate_size": 64, **common}
    if kind == "llama":
        return transformers.LlamaConfig(num_key_value_heads=2, **decoder)
    if kind == "mistral":
        return transformers.MistralConfig(num_key_value_heads=2, sliding_window=WINDOW,
                                          **decoder)
    if kind == "qwen2":
        return transformers.Qwen2Config(num_key_value_heads=2, **decoder)
    if kind == "gemma":
        return transformers.GemmaConfig(num_key_value_heads=2, head_dim=8, **decoder)
    raise ValueError(f"unknown model kind {kind!r}; expected one of {', '.join(KINDS)}")


def model_class(kind: str):  # type: ignore[no-untyped-def]
    import transformers  # type: ignore[import-not-found]

    return {"bert": transformers.BertModel, "roberta": transformers.RobertaModel,
            "distilbert": transformers.DistilBertModel, "gpt2": transformers.GPT2Model,
            "llama": transformers.LlamaModel, "mistral": transformers.MistralModel,
            "qwen2": transformers.Qwen2Model, "gemma": transformers.GemmaModel}[kind]


def hf_module(spec: Export, config=None, seq: int = SEQ):  # type: ignore[no-untyped-def]
    """The model of `spec` (at `small_config`, or `config`), its example inputs of `seq`
    tokens, input and output names."""
    import torch  # type: ignore[import-not-found]

    torch.manual_seed(0)
    model = model_class(spec.kind)(config or small_config(spec.kind, spec.attn)).eval()
    if spec.half:
        model = model.half()
    extra = {"use_cache": False} if spec.kind in CAUSAL_KINDS else {}

    class Wrapped(torch.nn.Module):  # returns the tensor alone, not a ModelOutput
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):  # type: ignore[no-untyped-def]
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra)
            return out.last_hidden_state

    ids = torch.randint(2, 64, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, -2:] = 0
    return Wrapped().eval(), (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"]


def encoder_module():  # type: ignore[no-untyped-def]
    """torch's nn.TransformerEncoder (MultiheadAttention with its packed in_proj), 2 layers."""
    import torch  # type: ignore[import-not-found]

    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # the fused kernel has no ONNX export
    layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0,
                                             batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, x, key_padding_mask):  # type: ignore[no-untyped-def]
            return self.encoder(x, src_key_padding_mask=key_padding_mask)

    x = torch.randn(1, SEQ, 32)
    pad = torch.zeros(1, SEQ, dtype=torch.bool)
    pad[0, -2:] = True
    return Wrapped().eval(), (x, pad), ["x", "key_padding_mask"], ["y"]


def export(spec: Export, path: Path, config=None,  # type: ignore[no-untyped-def]
           seq: int = SEQ) -> None:
    """Writes `spec`'s model (at `config` where given, `seq` tokens) to `path`."""
    import torch  # type: ignore[import-not-found]

    module, args, inputs, outputs = encoder_module() if spec.kind == "encoder" else hf_module(
        spec, config, seq)
    with torch.no_grad():
        torch.onnx.export(module, args, str(path), input_names=inputs, output_names=outputs,
                          opset_version=spec.opset, dynamo=(spec.exporter == "dynamo"),
                          external_data=False)
    strip_debug_info(path)


def strip_debug_info(path: Path) -> None:
    """Drops what only debugging reads (doc strings, the dynamo exporter's per-node stack traces
    and metadata), which is most of a small model's file."""
    import onnx

    model = onnx.load(str(path))
    for node in model.graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
    for value in [*model.graph.value_info, *model.graph.input, *model.graph.output]:
        value.doc_string = ""
        del value.metadata_props[:]
    del model.graph.value_info[:]
    model.graph.doc_string = ""
    del model.metadata_props[:]
    onnx.save(model, str(path))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--kind", choices=(*KINDS, "encoder"), action="append")
    parser.add_argument("--attn", choices=ATTENTIONS, action="append")
    parser.add_argument("--exporter", choices=tuple(EXPORTERS), action="append")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for spec in matrix():
        if ((args.kind and spec.kind not in args.kind)
                or (args.attn and spec.kind != "encoder" and spec.attn not in args.attn)
                or (args.exporter and spec.exporter not in args.exporter)):
            continue
        path = args.out / spec.name
        try:
            export(spec, path)
            print(f"{path}: {path.stat().st_size} bytes")
        except Exception as error:  # noqa: BLE001 - report every export that fails
            failures += 1
            print(f"{path}: export failed: {type(error).__name__}: "
                  f"{str(error).splitlines()[0] if str(error) else ''}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
