"""Turning a `Graph` into a Python function through an op table.

An op table maps a node kind to a *lowering*: a function of the node that returns the callable
computing it from its input arrays. `make_forward` lowers every node once and returns
``forward(*inputs) -> tuple of outputs``, a straight loop over the lowered steps that
``torch.compile`` traces like hand-written code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fusec.bench.graph import Graph, Node, Unsupported

Lowering = Callable[[Node], Callable[..., Any]]
OpTable = dict[str, Lowering]


def make_forward(graph: Graph, table: OpTable, library: str) -> Callable[..., tuple[Any, ...]]:
    """``forward(*inputs)`` computing `graph` with `table`; Unsupported names a missing op."""
    slot = {t.name: i for i, t in enumerate(graph.inputs)}
    steps: list[tuple[Callable[..., Any], tuple[int, ...]]] = []
    for node in graph.nodes:
        lower = table.get(node.kind)
        if lower is None:
            raise Unsupported(f"no {library} translation of nn.{node.kind}")
        steps.append((lower(node), tuple(slot[name] for name in node.inputs)))
        slot[node.output.name] = len(graph.inputs) + len(steps) - 1
    outputs = tuple(slot[name] for name in graph.outputs)

    def forward(*inputs: Any) -> tuple[Any, ...]:
        values = list(inputs)
        for fn, args in steps:
            values.append(fn(*[values[i] for i in args]))
        return tuple(values[i] for i in outputs)

    return forward
