"""``torch.autocast`` regions inside a traced graph, made explicit casts.

    explicit_autocast(gm)     # gm: an aten graph (make_fx, pre-dispatch) with meta["val"]

A ``with torch.autocast(...)`` inside ``forward`` reaches the backend as two marker nodes,
``_enter_autocast(device, dtype, enabled, cache)`` and ``_exit_autocast(enter)``, around the
region's ops, which were traced without autocast: their ``meta["val"]`` say what they compute
in their inputs' types (a ``linear`` of f32 tensors says f32 where eager computes bf16).

This pass asks PyTorch's own autocast which casts each op of a region gets, so that it follows
PyTorch's op lists for every device and version (on the CPU in bf16: ``linear``, ``matmul``,
``bmm``, ``scaled_dot_product_attention`` in the region's type, the fp32-listed ops in f32; with
CUDA in f16 also ``softmax``, ``layer_norm``, ``exp``... in f32; ``cat`` at the widest type): it
runs the op on its fake inputs under the regions open at that point and records the casts
(``to``, ``_to_copy``) that reach a dispatch mode with one of the op's inputs, less those the op
makes without autocast (`autocast_casts`). Each becomes an explicit ``aten._to_copy`` node
before the op (one per input and type), and the op is run again on the cast inputs without
autocast: where that gives the type autocast gave, the op computes as eager's does wherever it
runs, in fusec or in PyTorch. ``meta["val"]`` is computed again for every op (under the regions
for theirs): the types change downstream of a region too.

When every op of a region was replayed so, the markers are removed (nothing is left to
PyTorch for them). An op that the replay does not reproduce, or that cannot be run on fake
inputs, is marked refused (``node.meta[REFUSED]``, the reason): the partitioner leaves it to
PyTorch, and the region's markers stay, so PyTorch runs it under autocast as eager does.

``torch.export`` keeps a region as a ``wrap_with_autocast`` call of a submodule; it is inlined
between the two markers first (`inline_autocast_calls`), so both routes are handled alike.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fusec.errors import error_line

REFUSED = "fusec_autocast_refused"
"""``node.meta`` key: why the op of an autocast region runs in PyTorch."""


def explicit_autocast(gm: Any) -> None:
    """Rewrites the autocast regions of ``gm`` in place; see the module docstring."""
    from torch.amp.autocast_mode import _enter_autocast, _exit_autocast

    inline_autocast_calls(gm)
    nodes = list(gm.graph.nodes)
    if not any(n.op == "call_function" and n.target is _enter_autocast for n in nodes):
        return
    fake_mode = fake_mode_of(nodes)
    open_regions: list[Any] = []
    refused: set[Any] = set()
    enters: list[Any] = []
    casts: dict[tuple[Any, Any], Any] = {}
    for node in nodes:
        if node.op != "call_function":
            continue
        if node.target is _enter_autocast:
            open_regions.append(node)
            enters.append(node)
            continue
        if node.target is _exit_autocast:
            open_regions.remove(node.args[0])
            continue
        if not open_regions:
            value = run(node, [], fake_mode)
            if value is not None:
                node.meta["val"] = value
            continue
        settings = [enter.args for enter in open_regions]
        reason = make_explicit(gm, node, settings, fake_mode, casts)
        if reason is not None:
            node.meta[REFUSED] = reason
            refused.update(open_regions)
    for node in reversed(nodes):
        if node.op == "call_function" and node.target is _exit_autocast \
                and node.args[0] not in refused:
            gm.graph.erase_node(node)
    for enter in enters:
        if enter not in refused:
            gm.graph.erase_node(enter)
    gm.recompile()


def inline_autocast_calls(gm: Any) -> None:
    """Each ``wrap_with_autocast(device, dtype, enabled, cache, submodule, *operands)`` (how
    ``torch.export`` keeps a region) becomes the submodule's nodes between the two markers that
    dynamo's graphs hold, nested regions inside it too."""
    import torch
    from torch.amp.autocast_mode import _enter_autocast, _exit_autocast

    wrap = getattr(torch.ops.higher_order, "wrap_with_autocast", None)
    graph = gm.graph
    while True:
        node = next((n for n in graph.nodes
                     if n.op == "call_function" and wrap is not None and n.target is wrap), None)
        if node is None:
            return
        device, dtype, enabled, cache, holder, *operands = node.args
        sub = getattr(gm, holder.target)
        values: dict[Any, Any] = dict(zip(
            [n for n in sub.graph.nodes if n.op == "placeholder"], operands, strict=True))
        with graph.inserting_before(node):
            enter = graph.call_function(_enter_autocast, (device, dtype, enabled, cache))
            for inner in sub.graph.nodes:  # the submodule's own submodules, under new names
                if inner.op == "get_attr":
                    name = unused_name(gm, inner.target)
                    setattr(gm, name, getattr(sub, inner.target))
                    values[inner] = graph.get_attr(name)
                    values[inner].meta = dict(inner.meta)
            outputs = graph.graph_copy(sub.graph, values)
            graph.call_function(_exit_autocast, (enter,))
        for user in list(node.users):
            user.replace_all_uses_with(outputs[user.args[1]])
            graph.erase_node(user)
        graph.erase_node(node)
        if not any(n.op == "get_attr" and n.target == holder.target for n in graph.nodes
                   if n is not holder):
            graph.erase_node(holder)


def unused_name(gm: Any, base: str) -> str:
    index = 0
    while hasattr(gm, f"{base}_{index}"):
        index += 1
    return f"{base}_{index}"


def make_explicit(gm: Any, node: Any, settings: list[tuple[Any, ...]], fake_mode: Any,
                  casts: dict[tuple[Any, Any], Any]) -> str | None:
    """Puts the casts autocast makes of ``node``'s inputs before it, as ``_to_copy`` nodes
    (shared by the ops that read one input in one type); sets its ``meta["val"]``. Returns
    why the op cannot be made explicit, else None."""
    import torch

    inputs = tensor_inputs(node)
    if any(not isinstance(i.meta.get("val"), torch.Tensor) for i in inputs):
        return "an input of an op inside torch.autocast has no traced value"
    try:
        wanted, expected = autocast_casts(node, inputs, settings, fake_mode)
    except Exception as e:  # noqa: BLE001 (any op PyTorch cannot run on fake inputs)
        first = error_line(e)
        return f"inside torch.autocast, the op could not be run on fake inputs: {first}"
    node.meta["val"] = expected
    for source, dtype in wanted:
        cast = casts.get((source, dtype))
        if cast is None:
            with gm.graph.inserting_before(node):
                cast = gm.graph.call_function(torch.ops.aten._to_copy.default, (source,),
                                              {"dtype": dtype})
            with fake_mode:
                cast.meta["val"] = source.meta["val"].to(dtype)
            casts[(source, dtype)] = cast
        node.replace_input_with(source, cast)
    replayed = run(node, [], fake_mode)
    if not same_types(replayed, expected):
        return ("inside torch.autocast, the op's result type is not that of its inputs cast "
                "as autocast casts them")
    return None


def autocast_casts(node: Any, inputs: list[Any], settings: list[tuple[Any, ...]],
                   fake_mode: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """The (input node, dtype) casts that autocast, with ``settings`` (the open regions'
    ``_enter_autocast`` arguments, outermost first), makes of ``node``'s inputs, and the
    op's value under autocast."""
    from torch.utils._python_dispatch import TorchDispatchMode

    by_id = {id(i.meta["val"]): i for i in inputs}

    class Casts(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen: Counter[tuple[Any, Any]] = Counter()

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            dtype = cast_dtype(func, args, kwargs)
            if dtype is not None and id(args[0]) in by_id and dtype != args[0].dtype:
                self.seen[(by_id[id(args[0])], dtype)] += 1
            return func(*args, **kwargs)

    plain, with_autocast = Casts(), Casts()
    run(node, [], fake_mode, plain, strict=True)
    value = run(node, settings, fake_mode, with_autocast, strict=True)
    return list(with_autocast.seen - plain.seen), value


def cast_dtype(func: Any, args: Any, kwargs: Any) -> Any:
    """The dtype that ``func`` (``aten.to`` or ``aten._to_copy``, any overload) casts its first
    argument to, or None for other ops and casts that keep the dtype unsaid. Autocast's casts
    reach a dispatch mode as ``to.dtype`` (pre-dispatch) or ``_to_copy`` (below it)."""
    import torch

    packet = getattr(func, "overloadpacket", None)
    if packet not in (torch.ops.aten.to, torch.ops.aten._to_copy) or not args:
        return None
    dtype = kwargs.get("dtype")
    if dtype is None:
        dtype = next((a for a in args[1:] if isinstance(a, torch.dtype)), None)
    return dtype


def run(node: Any, settings: list[tuple[Any, ...]], fake_mode: Any, mode: Any = None,
        strict: bool = False) -> Any:
    """``node``'s op on its inputs' ``meta["val"]`` under ``fake_mode`` and the autocast
    regions of ``settings`` (and the dispatch ``mode``); None where it cannot be run (unless
    ``strict``)."""
    import contextlib

    import torch

    missing = []

    def value_of(n: Any) -> Any:
        if "val" not in n.meta:
            missing.append(n)
        return n.meta.get("val")

    args = torch.fx.node.map_arg(node.args, value_of)
    kwargs = torch.fx.node.map_arg(node.kwargs, value_of)
    if missing:
        if strict:
            raise ValueError(f"no traced value for {missing[0].name}")
        return None
    with contextlib.ExitStack() as stack:
        stack.enter_context(fake_mode)
        for device, dtype, enabled, cache in settings:
            stack.enter_context(torch.autocast(device, dtype, enabled, cache))
        if mode is not None:
            stack.enter_context(mode)
        try:
            return node.target(*args, **kwargs)
        except Exception:
            if strict:
                raise
            return None


def tensor_inputs(node: Any) -> list[Any]:
    """The nodes ``node`` reads whose values are tensors."""
    import torch

    return [i for i in node.all_input_nodes if isinstance(i.meta.get("val"), torch.Tensor)]


def same_types(a: Any, b: Any) -> bool:
    """``a`` and ``b`` (tensors or nests of them) have the same structure and dtypes."""
    from torch.utils import _pytree as pytree

    leaves_a, spec_a = pytree.tree_flatten(a)
    leaves_b, spec_b = pytree.tree_flatten(b)
    return spec_a == spec_b and all(
        getattr(x, "dtype", type(x)) == getattr(y, "dtype", type(y))
        for x, y in zip(leaves_a, leaves_b, strict=True))


def fake_mode_of(nodes: list[Any]) -> Any:
    """The fake tensor mode the graph was traced with (a fresh one if none is found)."""
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import FakeTensorMode

    found = detect_fake_mode([n.meta.get("val") for n in nodes if "val" in n.meta])
    return found if found is not None else FakeTensorMode()
