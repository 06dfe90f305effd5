"""A BERT-base encoder of N layers as ``nn`` IR with its weights, as ``fusec-import`` writes a
model: the IR names its weights file in ``fusec.params``, so ``fusec-run``, ``fusec.compile``
and ``fusec-build`` bind the weights and a call takes the hidden states and the mask only.

    python -m fusec.bench.bert_model_ir bert12.mlir --layers 12     # + bert12.params.npz

The layers are `workloads.bert`'s (post-LN, erf GELU, a ``[B, S]`` key mask), the weights drawn
by `workloads.bert_inits` (seed 0).
"""

from __future__ import annotations

import argparse
import io
import os
import sys

import numpy as np

from fusec.bench.workloads import bert, bert_inits
from fusec.files import atomic_write


def write_model(path: str, layers: int, batch: int, seq: int, hidden: int = 768,
                heads: int = 12, ffn: int = 3072) -> None:
    """Writes the IR to `path` and its weights beside it (``<stem>.params.npz``)."""
    program = bert(batch, seq, layers, hidden, heads, ffn)
    inits = bert_inits(layers, hidden, ffn)
    rng = np.random.default_rng(0)
    weights = {a.name: inits[a.name].draw(rng, a.shape) for a in program.args
               if a.name not in ("hidden", "mask")}
    stem = path[:-5] if path.endswith(".mlir") else path
    params = f"{stem}.params.npz"
    archive = io.BytesIO()
    np.savez(archive, **weights)  # type: ignore[arg-type]
    atomic_write(params, archive.getvalue())
    text = (f'builtin.module attributes {{fusec.params = "{os.path.basename(params)}"}} {{\n'
            f"{program.text()}}}\n")
    atomic_write(path, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="The .mlir file to write (weights beside it).")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=128)
    args = parser.parse_args(argv)
    write_model(args.output, args.layers, args.batch, args.seq)
    return 0


if __name__ == "__main__":
    sys.exit(main())
