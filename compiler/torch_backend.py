"""The dynamo backend: ``torch.compile(model, backend="fusec")``.

    compiled = torch.compile(model, backend="fusec",
                             options={"device": "auto", "report": "fusec.json"})
    with torch.inference_mode():
        logits = compiled(ids)

The backend is registered through the ``torch_dynamo_backends`` entry point of the package
(pyproject.toml), so it needs no ``import fusec``. Dynamo hands it a graph of torch functions
and the example inputs, parameters among them; each call then goes to `ShapeVariants`, which
traces the graph to aten ops at the call's concrete shapes (``make_fx``, pre-dispatch, so that
``linear``, ``layer_norm`` and ``scaled_dot_product_attention`` stay whole), partitions it
between fusec and PyTorch, and compiles the fusec partitions once per set of shapes
(`fusec.compiler.torch_partition`). Parameters and buffers are bound to the device once and
checked for changes on each call.

Options: ``device`` ("auto" | "gpu" | "cpu"; CUDA tensors always run on the GPU), ``report``
(a JSON path, `fusec.compiler.torch_report`), ``allow_tf32``, ``launch_budget`` (bytes one
merged launch may touch), ``pipeline`` (the fusion pipeline, default ``default``),
``max_variants`` (shape variants kept per graph, default 8), ``knobs`` (code-generation knobs
for its compiles by name, `fusec.knobs`: ``{"attention_mma": False}``). ``FUSEC_LOG=1`` prints
one line per compiled graph on stderr.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from fusec.compiler.torch_compile import ShapeVariants
from fusec.compiler.torch_partition import Options
from fusec.compiler.torch_report import Reporter

_graph_numbers = itertools.count()


def bound_positions(gm: Any, example_inputs: list[Any]) -> set[int]:
    """The placeholders that hold parameters or buffers: dynamo names them after their source
    (``L_self_modules_fc_parameters_weight_``, ``..._buffers_...``)."""
    import torch

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    bound: set[int] = set()
    for i, (node, value) in enumerate(zip(placeholders, example_inputs, strict=False)):
        name = str(node.target)
        if isinstance(value, torch.nn.Parameter) or "_parameters_" in name \
                or "_buffers_" in name:
            bound.add(i)
    return bound


def is_scalar(value: Any) -> bool:
    """A 0-d float64 tensor: how dynamo passes a Python float it did not specialise."""
    import torch

    return isinstance(value, torch.Tensor) and value.dim() == 0 and value.dtype == torch.float64


def with_placeholders(traced: Any, count: int, unused: set[int]) -> Any:
    """``traced`` taking ``count`` inputs again: placeholders that nothing reads put back at the
    positions in ``unused`` (so that the graph is called with dynamo's inputs)."""
    graph = traced.graph
    existing = iter([n for n in graph.nodes if n.op == "placeholder"])
    first = next(iter(graph.nodes))
    previous = None
    for i in range(count):
        if i not in unused:
            previous = next(existing)
            continue
        where = graph.inserting_after(previous) if previous is not None else (
            graph.inserting_before(first))
        with where:
            previous = graph.placeholder(f"scalar{i}")
    traced.recompile()
    return traced


def fusec_backend(gm: Any, example_inputs: list[Any], options: dict[str, Any] | None = None,
                  **_: Any) -> Any:
    """The backend function dynamo calls once per captured graph."""
    from torch.fx.experimental.proxy_tensor import make_fx

    parsed = Options.parse(options)
    reporter = Reporter(parsed.report, os.environ.get("FUSEC_LOG", "") not in ("", "0"))

    def trace(args: list[Any]) -> Any:
        # Dynamo passes Python floats it did not specialise as 0-d float64 tensors that the
        # graph reads with .item(): they are captured as constants (the variant's key holds
        # their values), the other inputs traced as fake tensors.
        scalars = {i: a for i, a in enumerate(args) if is_scalar(a)}

        def call(*rest: Any) -> Any:
            others = iter(rest)
            return gm(*(scalars[i] if i in scalars else next(others) for i in range(len(args))))

        traced = make_fx(call, pre_dispatch=True, tracing_mode="fake")(
            *(a for i, a in enumerate(args) if i not in scalars))
        return with_placeholders(traced, len(args), set(scalars))

    return ShapeVariants(trace, gm.forward, bound_positions(gm, example_inputs), parsed,
                         reporter, f"graph{next(_graph_numbers)}")
