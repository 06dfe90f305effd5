"""How `fusec-opt -p default` scales with program size: parse, passes, print, per op.

    python3 -m fusec.bench.scaling                     # 1,000 to 100,000 ops
    python3 -m fusec.bench.scaling --ops 1000 --ops 10000 --profile prof.out

The program is a chain of post-LN BERT layers (17 ``nn`` ops each, hidden 64, the weights shared
function arguments), written as text and run through the same steps as ``fusec-opt``: parse and
verify, the ``default`` pipeline (verifying after each pass), print. Times are CPU seconds of this
process (the machine is shared, so wall time also counts other people's work) and wall seconds;
``us/op`` is total CPU time per input op, which stays flat when every step is linear.
Every layer must fuse into one ``fused.transformer_layer``, so the passes do real work.
"""

# ruff: noqa: E501 - IR text is written one op per line

from __future__ import annotations

import cProfile
import gc
import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import click

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.incremental_verify import IncrementalVerifier
from fusec.compiler.pipeline import PipelineHooks, build_passes, run_passes

OPS_PER_LAYER = 17

_ARGS = (
    "%mask: tensor<1x8xf32>, %qkv_w: tensor<64x192xf32>, %qkv_b: tensor<192xf32>, "
    "%out_w: tensor<64x64xf32>, %out_b: tensor<64xf32>, %ln1_g: tensor<64xf32>, "
    "%ln1_b: tensor<64xf32>, %fc1_w: tensor<64x256xf32>, %fc1_b: tensor<256xf32>, "
    "%fc2_w: tensor<256x64xf32>, %fc2_b: tensor<64xf32>, %ln2_g: tensor<64xf32>, "
    "%ln2_b: tensor<64xf32>"
)

# One layer; {h} is the hidden state it reads, {i} its number (SSA names are unique per layer).
_LAYER = """\
  %qkv_mm{i} = nn.matmul {h}, %qkv_w : tensor<1x8x64xf32>, tensor<64x192xf32> -> tensor<1x8x192xf32>
  %qkv{i} = nn.add %qkv_mm{i}, %qkv_b : tensor<1x8x192xf32>, tensor<192xf32> -> tensor<1x8x192xf32>
  %q{i} = nn.narrow %qkv{i} {{axis = 2 : i64, start = 0 : i64, length = 64 : i64}} : tensor<1x8x192xf32> -> tensor<1x8x64xf32>
  %k{i} = nn.narrow %qkv{i} {{axis = 2 : i64, start = 64 : i64, length = 64 : i64}} : tensor<1x8x192xf32> -> tensor<1x8x64xf32>
  %v{i} = nn.narrow %qkv{i} {{axis = 2 : i64, start = 128 : i64, length = 64 : i64}} : tensor<1x8x192xf32> -> tensor<1x8x64xf32>
  %ctx{i} = nn.attention %q{i}, %k{i}, %v{i} mask %mask {{num_heads = 4 : i64, head_dim = 16 : i64}} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8xf32> -> tensor<1x8x64xf32>
  %attn_mm{i} = nn.matmul %ctx{i}, %out_w : tensor<1x8x64xf32>, tensor<64x64xf32> -> tensor<1x8x64xf32>
  %attn{i} = nn.add %attn_mm{i}, %out_b : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %res1_{i} = nn.add %attn{i}, {h} : tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  %h1_{i} = nn.layer_norm %res1_{i}, %ln1_g, %ln1_b {{eps = 1.0e-12 : f32}} : tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %fc1_mm{i} = nn.matmul %h1_{i}, %fc1_w : tensor<1x8x64xf32>, tensor<64x256xf32> -> tensor<1x8x256xf32>
  %fc1{i} = nn.add %fc1_mm{i}, %fc1_b : tensor<1x8x256xf32>, tensor<256xf32> -> tensor<1x8x256xf32>
  %act{i} = nn.gelu %fc1{i} : tensor<1x8x256xf32> -> tensor<1x8x256xf32>
  %fc2_mm{i} = nn.matmul %act{i}, %fc2_w : tensor<1x8x256xf32>, tensor<256x64xf32> -> tensor<1x8x64xf32>
  %fc2{i} = nn.add %fc2_mm{i}, %fc2_b : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %res2_{i} = nn.add %fc2{i}, %h1_{i} : tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  %out{i} = nn.layer_norm %res2_{i}, %ln2_g, %ln2_b {{eps = 1.0e-12 : f32}} : tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
"""


def bert_chain(layers: int) -> str:
    """A function of ``layers`` BERT layers in a chain (``17 * layers`` nn ops)."""
    parts = [f"func.func @chain(%hidden: tensor<1x8x64xf32>, {_ARGS}) -> tensor<1x8x64xf32> {{\n"]
    hidden = "%hidden"
    for i in range(layers):
        parts.append(_LAYER.format(h=hidden, i=i))
        hidden = f"%out{i}"
    parts.append(f"  func.return {hidden} : tensor<1x8x64xf32>\n}}\n")
    return "".join(parts)


@dataclass(frozen=True)
class Step:
    cpu: float
    wall: float


@dataclass(frozen=True)
class Row:
    ops: int
    parse: Step
    passes: Step
    print: Step

    @property
    def total_cpu(self) -> float:
        return self.parse.cpu + self.passes.cpu + self.print.cpu


T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, Step]:
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    return value, Step(time.process_time() - cpu, time.perf_counter() - wall)


def measure(layers: int) -> Row:
    """Parse, run ``default`` on and print a chain of ``layers`` BERT layers."""
    text = bert_chain(layers)
    ctx = make_context()
    passes = build_passes("default")
    verifier = IncrementalVerifier()
    hooks = PipelineHooks(verifier=verifier)
    gc.collect()
    module, parse = timed(lambda: parse_module(ctx, Source(text, "chain.mlir"), verifier.verify))
    _, run = timed(lambda: run_passes(ctx, module, passes, "chain.mlir", hooks=hooks))
    fused = sum(1 for op in module.walk() if op.name == "fused.transformer_layer")
    if fused != layers:
        raise SystemExit(f"scaling: {layers} layers but {fused} fused.transformer_layer ops")
    _, printed = timed(lambda: str(module))
    return Row(OPS_PER_LAYER * layers, parse, run, printed)


def table(rows: list[Row]) -> str:
    head = (
        "| nn ops | parse s | passes s | print s | total s CPU (wall) | us/op |\n"
        "|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {r.ops:,} | {r.parse.cpu:.2f} | {r.passes.cpu:.2f} | {r.print.cpu:.2f} | "
        f"{r.total_cpu:.2f} ({r.parse.wall + r.passes.wall + r.print.wall:.2f}) | "
        f"{1e6 * r.total_cpu / r.ops:.0f} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--ops",
    "sizes",
    type=click.IntRange(OPS_PER_LAYER),
    multiple=True,
    help="Program sizes in nn ops (repeatable; rounded down to whole layers). "
    "Default: 1000, 3000, 10000, 30000, 100000.",
)
@click.option("--profile", type=click.Path(dir_okay=False), help="cProfile the largest size here.")
def main(sizes: tuple[int, ...], profile: str | None) -> None:
    """Times parse, the default pipeline and print on growing BERT-layer chains."""
    sizes = sizes or (1_000, 3_000, 10_000, 30_000, 100_000)
    rows = []
    for ops in sorted(sizes):
        layers = ops // OPS_PER_LAYER
        if profile and ops == max(sizes):
            profiler = cProfile.Profile()
            row = profiler.runcall(measure, layers)
            profiler.dump_stats(profile)
        else:
            row = measure(layers)
        rows.append(row)
        print(f"scaling: {row.ops} ops, {row.total_cpu:.2f} s CPU", file=sys.stderr)
    out = io.StringIO()
    out.write(table(rows))
    click.echo(out.getvalue(), nl=False)


if __name__ == "__main__":
    main()
