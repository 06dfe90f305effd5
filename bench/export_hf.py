"""Exports small, randomly initialised Hugging Face models to ONNX with both torch exporters.

    python -m fusec.bench.export_hf OUT_DIR [--opset 17 --opset 18] [--exporter torchscript|dynamo]

Needs torch, transformers (and onnxscript for the dynamo exporter); fusec itself needs none of them.
Each model is `BertModel`, `DistilBertModel`, `GPT2Model` or `LlamaModel` with the architecture of
the real one (embeddings, attention with its mask arithmetic, GELU or SwiGLU, LayerNorm or RMSNorm,
rotary embeddings for Llama) at a small width, so that the files are a few hundred kilobytes and the
tests that read them run in seconds. The inputs are `input_ids` and `attention_mask` (int64,
batch 1 unless --batch says otherwise, SEQ tokens); the output is `last_hidden_state`. Weights
are seeded, so a re-export gives the same numbers (the files' bytes may still differ between
torch versions).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SEQ = 8
KINDS = ("bert", "distilbert", "gpt2", "llama")
EXPORTERS = ("torchscript", "dynamo")


def small_config(kind: str):  # type: ignore[no-untyped-def]
    """A config of the real architecture at a small width (2 layers, 4 heads of 8)."""
    import transformers  # type: ignore[import-not-found]

    if kind == "bert":
        return transformers.BertConfig(
            vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=32, attn_implementation="eager")
    if kind == "distilbert":
        return transformers.DistilBertConfig(
            vocab_size=64, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
            max_position_embeddings=32, attn_implementation="eager")
    if kind == "gpt2":
        return transformers.GPT2Config(
            vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=32,
            attn_implementation="eager")
    if kind == "llama":
        return transformers.LlamaConfig(
            vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=4, intermediate_size=64, max_position_embeddings=32,
            attn_implementation="eager")
    raise ValueError(f"unknown model kind {kind!r}; expected one of {', '.join(KINDS)}")


def model_class(kind: str):  # type: ignore[no-untyped-def]
    import transformers  # type: ignore[import-not-found]

    return {"bert": transformers.BertModel, "distilbert": transformers.DistilBertModel,
            "gpt2": transformers.GPT2Model, "llama": transformers.LlamaModel}[kind]


def export(kind: str, exporter: str, opset: int, path: Path, seq: int = SEQ,
           batch: int = 1) -> None:
    import torch  # type: ignore[import-not-found]

    torch.manual_seed(0)
    model = model_class(kind)(small_config(kind)).eval()

    class Wrapped(torch.nn.Module):  # returns the tensor alone, not a ModelOutput
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):  # type: ignore[no-untyped-def]
            extra = {"use_cache": False} if kind in ("gpt2", "llama") else {}
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra)
            return out.last_hidden_state

    ids = torch.randint(0, 64, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, -2:] = 0
    with torch.no_grad():
        torch.onnx.export(Wrapped().eval(), (ids, mask), str(path),
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], opset_version=opset,
                          dynamo=(exporter == "dynamo"), external_data=False)
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
    onnx.save(model, str(path))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--opset", type=int, action="append")
    parser.add_argument("--exporter", choices=EXPORTERS, action="append")
    parser.add_argument("--kind", choices=KINDS, action="append")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for kind in args.kind or KINDS:
        for exporter in args.exporter or EXPORTERS:
            for opset in args.opset or (17, 18):
                batch = "" if args.batch == 1 else f"_b{args.batch}"
                path = args.out / f"hf_{kind}_{exporter}_op{opset}{batch}.onnx"
                try:
                    export(kind, exporter, opset, path, batch=args.batch)
                    print(f"{path}: {path.stat().st_size} bytes")
                except Exception as error:  # noqa: BLE001 - report every export that fails
                    failures += 1
                    print(f"{path}: export failed: {type(error).__name__}: "
                          f"{str(error).splitlines()[0] if str(error) else ''}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
