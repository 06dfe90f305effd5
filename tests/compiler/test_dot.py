"""``-t dot``: the drawing parses as DOT, shows each fused op as a cluster of the ops it replaced,
has one edge per use, and names the kernels each op lowered to."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pydot
import pytest

from fusec.compiler.diagnostics import FusecError
from fusec.compiler.dot import draw, human_bytes
from fusec.compiler.driver import load

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))


def fused(path: Path, pipeline: str = "default"):
    from fusec.compiler.context import make_context
    from fusec.compiler.pipeline import run_pipeline

    module = load(path.read_text(), str(path))
    run_pipeline(make_context(), module, pipeline, str(path))
    return module


def graph(text: str) -> pydot.Dot:
    graphs = pydot.graph_from_dot_data(text)
    assert graphs is not None and len(graphs) == 1, text
    return graphs[0]


def labels(g: pydot.Dot | pydot.Subgraph) -> list[str]:
    return [n.get_label().strip('"') for n in g.get_nodes() if n.get_label()]


def clusters(g: pydot.Dot) -> dict[str, pydot.Subgraph]:
    return {s.get_label().strip('"').split("\\n")[0]: s for s in g.get_subgraphs()}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
@pytest.mark.parametrize("pipeline", ["unfuse", "default"])
def test_every_example_parses_with_one_edge_per_use(path: Path, pipeline: str) -> None:
    module = fused(path, pipeline)
    functions = list(module.ops)  # a graph each (tiny_decoder.mlir has two)
    graphs = pydot.graph_from_dot_data(draw(module))
    assert graphs is not None and len(graphs) == len(functions)
    for fn, g in zip(functions, graphs, strict=True):
        # unfused: one edge per operand of every op; the return counts too
        if pipeline == "unfuse":
            uses = sum(len(op.operands) for op in fn.body.block.ops)
            assert len(g.get_edges()) == uses
            assert not g.get_subgraphs()


def test_mlp_clusters_show_the_ops_they_replaced() -> None:
    g = graph(draw(fused(ROOT / "examples/mlp.mlir")))
    found = clusters(g)
    assert sorted(found) == ["fused.matmul_bias_act", "fused.residual_layer_norm"]
    inner = [labels(s) for s in g.get_subgraphs()]
    assert [[lab.split("\\n")[0] for lab in ops] for ops in inner] == [
        ["nn.matmul", "nn.add", "nn.gelu"],
        ["nn.matmul", "nn.add"],
        ["nn.add", "nn.layer_norm"],
    ]
    # the residual edge from %x into the norm's add, labelled with its tensor
    x = next(n.get_name() for n in g.get_nodes() if (n.get_label() or "").startswith('"%x'))
    add = g.get_subgraphs()[2].get_nodes()[0].get_name()
    edge = [e for e in g.get_edges() if e.get_source() == x and e.get_destination() == add]
    assert len(edge) == 1 and edge[0].get_label() == '"8x64xf32, 2 KiB"'
    # a fused op's result leaves from the inner op that computes it
    pairs = {(e.get_source(), e.get_destination()) for e in g.get_edges()}
    gelu = g.get_subgraphs()[0].get_nodes()[2].get_name()
    matmul2 = g.get_subgraphs()[1].get_nodes()[0].get_name()
    norm = g.get_subgraphs()[2].get_nodes()[1].get_name()
    ret = next(n.get_name() for n in g.get_nodes() if n.get_label() == '"return"')
    assert (gelu, matmul2) in pairs and (norm, ret) in pairs


def test_kernels_name_each_ops_launches() -> None:
    text = draw(fused(ROOT / "examples/bert_layer_small.mlir"), kernels=True, device="gpu")
    g = graph(text)
    (layer,) = g.get_subgraphs()
    assert layer.get_label() == (
        '"fused.transformer_layer\\n1x8x64xf32\\nkernels: gemm x4, attention, layer_norm x2"'
    )
    unfused = graph(draw(fused(ROOT / "examples/bert_layer_small.mlir", "unfuse"), kernels=True))
    ops = labels(unfused)
    assert "nn.narrow\\n1x8x64xf32\\nno kernel (a view)" in ops
    assert any(lab.startswith("nn.add\\n1x8x192xf32\\nkernel: bert_layer_small_add_") for lab in ops)


def test_output_is_deterministic_and_leaves_the_module_alone() -> None:
    module = fused(ROOT / "examples/llama_block.mlir")
    before = str(module)
    first = draw(module, kernels=True)
    assert draw(module, kernels=True) == first
    assert str(module) == before


def test_kernel_level_ir_is_refused() -> None:
    module = fused(ROOT / "examples/mlp.mlir", "default,lower-opencl")
    with pytest.raises(FusecError, match="kernel-level IR"):
        draw(module)


def test_labels_are_quoted() -> None:
    from fusec.compiler.dot import quote

    assert quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert [human_bytes(n) for n in (0, 1023, 1024, 1536, 3 << 20)] == [
        "0 B", "1023 B", "1 KiB", "1.5 KiB", "3 MiB",
    ]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_renders_every_example() -> None:
    for path in EXAMPLES:
        text = draw(fused(path), kernels=True)
        done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0 and not done.stderr, (path, done.stderr)
        assert done.stdout.lstrip().startswith("<?xml")
