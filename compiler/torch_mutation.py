"""In-place ops in an aten graph: what must stay in PyTorch so that they mutate what they
mutate in eager, and which inputs they mutate.

    mutation = Mutations.of(gm)
    mutation.pinned            # nodes left to PyTorch, with why (`reason`)
    mutation.mutated_inputs    # placeholder positions whose tensor the graph changes in place

A graph traced without functionalization (``make_fx`` pre-dispatch, as the dynamo backend
traces) keeps the in-place ops a model writes: a static KV cache's
``keys.index_copy_(2, positions, k)`` and ``cumulative_length.add_(1)`` on tensors the graph
takes as inputs (or creates: ``zeros``). fusec has no in-place converter, so these run in
PyTorch; for them to act on the right tensor, at the right time:

- the chain of views from a mutated value back to the tensor it is a view of (its *base*:
  ``aten.to`` that changes nothing, ``view``, ``transpose``, ``slice``, a ``getitem`` of a
  ``split``..., an op whose schema returns an alias of its operand) is computed by PyTorch: a
  view computed by fusec is a new tensor, and an in-place op on it would leave the base
  unchanged;
- a base created in the graph (``zeros``) is not folded into a constant, which every call
  would share and mutate;
- a node that reads the base or one of its views and does not depend on the last mutation of
  it (a read before the update, or through a view taken before it) is computed by PyTorch at
  its place in the graph: in a fusec partition it could run after the mutation (a partition
  runs where its last node is), and see the updated values;
- the mutated inputs are call inputs, never weights bound once or constants, and the values
  computed with PyTorch while compiling (`compile_aten_graph`'s example values) are computed
  on copies of them, so that compiling does not apply the mutation a second time.

Reads that depend on the last mutation (``scaled_dot_product_attention`` of the updated
cache) may run in fusec: by then the tensor holds its final values.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any


def written_operands(node: Any) -> list[Any]:
    """The operand nodes an ``OpOverload`` node writes in place (its schema's ``Tensor(a!)``)."""
    import torch

    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return []
    written = []
    for index, argument in enumerate(target._schema.arguments):
        info = argument.alias_info
        if info is None or not info.is_write:
            continue
        value = node.args[index] if index < len(node.args) else node.kwargs.get(argument.name)
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, torch.fx.Node):
                written.append(item)
    return written


def aliased_operand(node: Any) -> Any | None:
    """The operand node whose memory ``node``'s result may share (a view, ``to`` that changes
    nothing, an in-place op's result, a ``getitem`` of a ``split``), or None."""
    import torch

    if node.op != "call_function":
        return None
    if node.target is operator.getitem:
        source = node.args[0]
        return source if isinstance(source, torch.fx.Node) and aliased_operand(source) \
            is not None else None
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        return None
    schema = target._schema
    if not schema.returns or schema.returns[0].alias_info is None:
        return None
    sets = schema.returns[0].alias_info.before_set
    for index, argument in enumerate(schema.arguments):
        info = argument.alias_info
        if info is not None and info.before_set & sets:
            value = node.args[index] if index < len(node.args) else node.kwargs.get(argument.name)
            if isinstance(value, torch.fx.Node):
                return value
    return None


@dataclass
class Mutations:
    """What the graph's in-place ops need (see the module docstring)."""

    pinned: dict[Any, str] = field(default_factory=dict)
    """Nodes that PyTorch computes, with the reason the report gives."""
    bases: set[Any] = field(default_factory=set)
    """The tensors mutated in place (placeholders or nodes that create them)."""
    mutated_inputs: set[int] = field(default_factory=set)
    """Placeholder positions of the mutated bases."""

    @staticmethod
    def of(gm: Any) -> Mutations:
        nodes = list(gm.graph.nodes)
        base: dict[Any, Any] = {}
        for node in nodes:
            source = aliased_operand(node)
            base[node] = base.get(source, source) if source is not None else node
        last: dict[Any, Any] = {}  # base -> its last mutation
        for node in nodes:
            for operand in written_operands(node):
                last[base.get(operand, operand)] = node
        found = Mutations()
        if not last:
            return found
        found.bases = set(last)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        found.mutated_inputs = {i for i, n in enumerate(placeholders) if n in last}
        after = {b: reachable(m) for b, m in last.items()}
        for node in nodes:
            if node.op != "call_function":
                continue
            for operand in node.all_input_nodes:
                b = base.get(operand, operand)
                if b in last and node not in after[b]:
                    found.pinned.setdefault(node, "reads a tensor that a later in-place op "
                                                  "changes (or is a view of it)")
        return found

    def example_inputs(self, args: list[Any]) -> list[Any]:
        """``args`` with the mutated inputs copied: what compiling computes with."""
        return [a.clone() if i in self.mutated_inputs else a for i, a in enumerate(args)]


def reachable(start: Any) -> set[Any]:
    """``start`` and every node that depends on it."""
    seen = {start}
    stack = [start]
    while stack:
        for user in stack.pop().users:
            if user not in seen:
                seen.add(user)
                stack.append(user)
    return seen
