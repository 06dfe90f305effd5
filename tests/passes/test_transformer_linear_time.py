"""The default pipeline stays linear in program size.

A template of four blocks (a BERT layer, a SwiGLU FFN, a residual norm, three projections of one
input; about 35 ops) is stacked ``n`` times into one function by cloning, so building the
function costs no parsing. The pipeline (every pass, with the verification after each) runs on
``n`` and ``4n`` copies; its CPU time (this process only: the machine is shared, so wall time
also counts other people's work) may grow by at most ``RATIO_BOUND`` (4x is linear; the bound is
generous for cache and garbage-collector effects). Every layer must still fuse, so the test measures
real rewrites. Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import time

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue

from fusec.compiler.context import make_context
from fusec.compiler.pipeline import run_pipeline
from fusec.reference.executor import find_function

N = 150
RATIO_BOUND = 8.0


def stacked(fusion, programs, n: int) -> ModuleOp:
    """``n`` copies of the template, each reading the previous one's hidden state."""
    template = find_function(fusion.parse(programs.layers(4)))
    block = template.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    body = [op for op in block.ops if op is not ret]
    body_block = Block(arg_types=[a.type for a in block.args])
    for old, new in zip(block.args, body_block.args, strict=True):
        new.name_hint = old.name_hint
    hidden: SSAValue = body_block.args[0]
    for _ in range(n):
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, body_block.args, strict=True))
        mapping[block.args[0]] = hidden
        for op in body:
            body_block.add_op(op.clone(value_mapper=mapping))
        hidden = mapping[ret.operands[0]]
    body_block.add_op(func.ReturnOp(hidden))
    fn = func.FuncOp(
        "stacked", ([a.type for a in body_block.args], [hidden.type]), Region(body_block)
    )
    return ModuleOp([fn])


def timed_pipeline(module: ModuleOp) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of the default pipeline on ``module``."""
    cpu, wall = time.process_time(), time.perf_counter()
    run_pipeline(make_context(), module, "default")
    return time.process_time() - cpu, time.perf_counter() - wall


def test_default_pipeline_is_linear(fusion, programs) -> None:
    figures = []
    for n in (N, 4 * N):
        module = stacked(fusion, programs, n)
        ops = sum(1 for _ in module.walk())
        seconds, wall = timed_pipeline(module)
        layers = sum(1 for op in module.walk() if op.name == "fused.transformer_layer")
        assert layers == n, f"{n} copies: {layers} transformer layers fused"
        figures.append((n, ops, seconds, wall))
    (_, ops1, t1, w1), (_, ops2, t2, w2) = figures
    print(
        f"\ndefault pipeline: {ops1} ops in {t1:.2f} s CPU ({w1:.2f} s wall); {ops2} ops in "
        f"{t2:.2f} s CPU ({w2:.2f} s wall); ratio {t2 / t1:.2f} for {ops2 / ops1:.2f}x the ops"
    )
    assert t2 / t1 < RATIO_BOUND, figures
