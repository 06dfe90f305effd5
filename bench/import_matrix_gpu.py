"""The import matrix at real width: BERT-base, GPT-2 small and a Llama-style model (TinyLlama's
widths: 2048 wide, 32 heads of 64, 4 key/value heads, FFN 5632), 2 layers each, exported at
transformers' default attention (``sdpa``) by both of torch's exporters, plus the Llama in
float16 by the TorchScript exporter (its residual stream stays float32); each imported by
fusec, run on ``--device`` and compared with ONNX Runtime (CPU provider), one row per file as
`import_matrix` prints it (imports, max diff and whether it is within the issue's tolerance,
launches per layer, softmaxes left).

    python -m fusec.bench.import_matrix_gpu OUT_DIR --device gpu            # the GPU machine
    python -m fusec.bench.import_matrix_gpu OUT_DIR --device cpu --width tiny  # its logic, here

Needs torch, transformers, onnxscript and onnxruntime. Each file is exported (unless OUT_DIR
already holds it) and checked in a process of its own with ``--timeout`` seconds (default
1200): a file that fails, crashes or runs out of time is its row, and the others go on. The
inputs are `import_matrix.feeds`' (batch 1, ``--seq`` tokens, default 128, the last three keys
padded). ``--width tiny`` uses the test matrix's configs (`export_hf.small_config`, width 32)
to check this script where no GPU is. Exit status 1 when any row is not "ok".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from fusec.bench.export_hf import EXPORTERS, Export, small_config

KINDS = ("bert", "gpt2", "llama")
WIDTHS = ("real", "tiny")


def exports() -> list[Export]:
    """The files: every kind at sdpa by both exporters, then Llama in f16 (TorchScript)."""
    files = [Export(kind, "sdpa", exporter, opset)
             for kind in KINDS for exporter, opset in EXPORTERS.items()]
    return [*files, Export("llama", "sdpa", "torchscript", EXPORTERS["torchscript"], half=True)]


def real_config(kind: str, attn: str):  # type: ignore[no-untyped-def]
    """The published widths of the architecture, 2 layers."""
    import transformers  # type: ignore[import-not-found]

    if kind == "bert":  # BERT-base: 768 wide, 12 heads, FFN 3072, vocabulary 30522
        return transformers.BertConfig(num_hidden_layers=2, attn_implementation=attn)
    if kind == "gpt2":  # GPT-2 small: 768 wide, 12 heads, vocabulary 50257
        return transformers.GPT2Config(n_layer=2, attn_implementation=attn)
    if kind == "llama":  # TinyLlama-1.1B's widths
        return transformers.LlamaConfig(
            hidden_size=2048, intermediate_size=5632, num_attention_heads=32,
            num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048,
            num_hidden_layers=2, attn_implementation=attn)
    raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


def check_one(out: Path, name: str, device: str, width: str, seq: int) -> int:
    """Exports the file `name` (unless present) and prints its row: the child process's work."""
    from fusec.bench.export_hf import export
    from fusec.bench.import_matrix import row

    spec = next(s for s in exports() if s.name == name)
    path = out / name
    if not path.exists():
        config = (real_config if width == "real" else small_config)(spec.kind, spec.attn)
        partial = path.with_suffix(".partial")
        export(spec, partial, config, seq)
        partial.rename(path)  # nothing half-written under the file's name
    line = row(path, 2, device)
    print(line, flush=True)
    return 0 if " ok " in line else 1


def run_all(out: Path, device: str, width: str, seq: int, timeout: float,
            only: list[str] | None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for spec in exports():
        if only and not any(word in spec.name for word in only):
            continue
        command = [sys.executable, "-m", "fusec.bench.import_matrix_gpu", str(out),
                   "--device", device, "--width", width, "--seq", str(seq), "--one", spec.name]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            print(f"{spec.name:44} timed out after {timeout:.0f} s", flush=True)
            failed += 1
            continue
        rows = [line for line in done.stdout.splitlines() if line.startswith(spec.name)]
        if rows:
            print(rows[-1], flush=True)
        else:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            print(f"{spec.name:44} failed: {why[:200]}", flush=True)
        failed += done.returncode != 0 or not rows
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("out", type=Path, help="folder of the exported files (kept)")
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--width", choices=WIDTHS, default="real")
    parser.add_argument("--seq", type=int, default=None,
                        help="tokens per input (default 128; 8 with --width tiny)")
    parser.add_argument("--timeout", type=float, default=1200.0,
                        help="seconds per file, its export included")
    parser.add_argument("--only", action="append",
                        help="only the files whose name holds this (repeatable)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process's file
    args = parser.parse_args(argv)
    seq = args.seq or (128 if args.width == "real" else 8)
    if args.one:
        return check_one(args.out, args.one, args.device, args.width, seq)
    return run_all(args.out, args.device, args.width, seq, args.timeout, args.only)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
