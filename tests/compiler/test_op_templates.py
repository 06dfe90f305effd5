"""The op-template fast path of the parser (`fusec.compiler.op_templates`) builds the same IR,
with the same locations, and reports the same errors as xDSL's parser on every input."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from xdsl.ir import Operation
from xdsl.printer import Printer

from fusec.bench.scaling import bert_chain
from fusec.compiler import diagnostics
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, LocatedParser, Source, parse_module, split_input

ROOT = Path(__file__).resolve().parents[2]
INPUTS = sorted(
    [*ROOT.glob("examples/**/*.mlir"), *ROOT.glob("lit_tests/**/*.mlir")], key=str
)


class SlowParser(LocatedParser):
    """The parser without templates: xDSL parses every op."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, use_templates=False, **kwargs)  # pyright: ignore


def dump(op: Operation) -> str:
    """Generic form with locations and name hints, and the users of every result."""
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True, print_debuginfo=True).print_op(op)
    index = {id(inner): i for i, inner in enumerate(op.walk())}
    for inner in op.walk():
        for r in inner.results:
            users = sorted((index[id(u.operation)], u.index) for u in r.uses)
            stream.write(f"\n{r.name_hint} {users}")
    return stream.getvalue()


def parse(source: Source, slow: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as m:
        if slow:
            m.setattr(diagnostics, "LocatedParser", SlowParser)
        try:
            return dump(parse_module(make_context(), source))
        except FusecError as e:
            return f"error: {e}"


def chunks(path: Path) -> list[Source]:
    return split_input(path.read_text(), path.name)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_ir_and_errors_as_xdsl_on_every_input(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for source in chunks(path):
        assert parse(source, False, monkeypatch) == parse(source, True, monkeypatch)


T4 = "tensor<4xf32>"
T8 = "tensor<8xf32>"
Q = "tensor<1x2x4xf32>"
HEADS = "{num_heads = 1 : i64, head_dim = 4 : i64}"
RELU = f"nn.relu %{{x}} : {T4} -> {T4}"


def program(*lines: str, args: str = f"%a: {T4}, %b: {T4}, %c: {T8}") -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return f"func.func @f({args}) -> {T4} {{\n{body}  func.return %a : {T4}\n}}\n"


# Each program spells one op twice or more: the first occurrence teaches the template, the later
# ones are built from it, or must go to xDSL's parser (and fail as it fails).
CASES = {
    "plain": program(
        "%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="r1"), "%r3 = "
        + RELU.format(x="b")
    ),
    "operand of another type": program("%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="c")),
    "operand defined below": program(
        "%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="r3"), "%r3 = " + RELU.format(x="b")
    ),
    "operand never defined": program("%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="zz")),
    "result defined twice": program("%r1 = " + RELU.format(x="a"), "%r1 = " + RELU.format(x="b")),
    "result used above": program(
        "%r1 = " + RELU.format(x="a"),
        f"%u = nn.add %r2, %a : {T4}, {T4} -> {T4}",
        "%r2 = " + RELU.format(x="b"),
    ),
    "result used above with another type": program(
        "%r1 = " + RELU.format(x="a"),
        f"%u = nn.add %r2, %c : {T8}, {T8} -> {T8}",
        "%r2 = " + RELU.format(x="b"),
    ),
    "uses itself": program("%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="r2")),
    "location on the next line": program(
        "%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="b"), 'loc("g.py":7:3)'
    ),
    "location on the line": program(
        "%r1 = " + RELU.format(x="a") + ' loc("g.py":7:3)',
        "%r2 = " + RELU.format(x="b") + ' loc("g.py":7:3)',
    ),
    "trailing comments": program(
        "%r1 = " + RELU.format(x="a") + "  // one", "%r2 = " + RELU.format(x="b") + " // two"
    ),
    "two ops on a line": program(
        "%r1 = " + RELU.format(x="a") + " %r2 = " + RELU.format(x="r1"),
        "%r3 = " + RELU.format(x="b") + " %r4 = " + RELU.format(x="r3"),
    ),
    "op over two lines": program(
        "%r1 = nn.relu %a", f"    : {T4} -> {T4}", "%r2 = nn.relu %b", f"    : {T4} -> {T4}"
    ),
    "result type on the next line": program(
        f"%r1 = nn.relu %a : {T4} ->", f"    {T4}", f"%r2 = nn.relu %b : {T4} ->", f"    {T8}"
    ),
    "a line that continues on the next": program(
        "%r1 = " + RELU.format(x="a"), "%r2 = " + RELU.format(x="b"), f", {T4}"
    ),
    "same operand twice": program(
        f"%s1 = nn.add %a, %a : {T4}, {T4} -> {T4}",
        f"%s2 = nn.add %b, %b : {T4}, {T4} -> {T4}",
        f"%s3 = nn.add %a, %b : {T4}, {T4} -> {T4}",
        f"%s4 = nn.add %s3, %s3 : {T4}, {T4} -> {T4}",
    ),
    "operands swapped": program(
        f"%s1 = nn.sub %a, %b : {T4}, {T4} -> {T4}", f"%s2 = nn.sub %b, %s1 : {T4}, {T4} -> {T4}"
    ),
    "attribute dictionary with a string": program(
        f'%g1 = nn.gelu %a {{approximate = "tanh"}} : {T4} -> {T4}',
        f'%g2 = nn.gelu %g1 {{approximate = "tanh"}} : {T4} -> {T4}',
        f'%g3 = nn.gelu %g2 {{approximate = "bad"}} : {T4} -> {T4}',
    ),
    "property of a wrong type": program(
        f"%n1 = nn.softmax %a {{axis = 0 : i64}} : {T4} -> {T4}",
        f"%n2 = nn.softmax %n1 {{axis = 0 : i64}} : {T4} -> {T4}",
        f"%n3 = nn.softmax %n2 {{axis = 0.0 : f32}} : {T4} -> {T4}",
    ),
    "verifier error in a later op": program(
        f"%n1 = nn.softmax %a {{axis = 0 : i64}} : {T4} -> {T4}",
        f"%n2 = nn.softmax %n1 {{axis = 0 : i64}} : {T4} -> {T4}",
        f"%n3 = nn.softmax %c {{axis = 0 : i64}} : {T4} -> {T4}",
    ),
    "generic form": program(
        f'%r1 = "nn.relu"(%a) : ({T4}) -> {T4}',
        f'%r2 = "nn.relu"(%r1) : ({T4}) -> {T4}',
        f'%r3 = "nn.relu"(%c) : ({T4}) -> {T4}',
    ),
    "generic form with properties": program(
        f'%n1 = "nn.softmax"(%a) <{{axis = 0 : i64}}> : ({T4}) -> {T4}',
        f'%n2 = "nn.softmax"(%n1) <{{axis = 0 : i64}}> : ({T4}) -> {T4}',
    ),
    "unknown op": program(f"%r1 = nn.nope %a : {T4} -> {T4}", f"%r2 = nn.nope %b : {T4} -> {T4}"),
    "optional operand": program(
        f"%q1 = nn.attention %q, %k, %v mask %m {HEADS} : {Q}, {Q}, {Q}, tensor<1x2xf32> -> {Q}",
        f"%q2 = nn.attention %q1, %k, %v mask %m {HEADS} : {Q}, {Q}, {Q}, tensor<1x2xf32> -> {Q}",
        f"%q3 = nn.attention %q2, %k, %v {HEADS} : {Q}, {Q}, {Q} -> {Q}",
        f"%q4 = nn.attention %q3, %k, %v {HEADS} : {Q}, {Q}, {Q} -> {Q}",
        f"%q5 = nn.attention %q4, %k, %v mask %q {HEADS} : {Q}, {Q}, {Q}, tensor<1x2xf32> -> {Q}",
        args=f"%a: {T4}, %q: {Q}, %k: {Q}, %v: {Q}, %m: tensor<1x2xf32>",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_ir_and_errors_as_xdsl_on_odd_input(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = Source(CASES[name], "t.mlir")
    assert parse(source, False, monkeypatch) == parse(source, True, monkeypatch)


class CountingParser(LocatedParser):
    hits: list[int] = []

    def parse_module(self, allow_implicit_module: bool = True):  # pyright: ignore
        try:
            return super().parse_module(allow_implicit_module)
        finally:
            CountingParser.hits.append(self.template_hits)


@pytest.mark.parametrize(
    ("name", "hits"),
    [
        ("plain", 2),
        ("operand of another type", 0),
        ("operand defined below", 1),  # %r3
        ("same operand twice", 1),  # %s4 from %s3's template
        ("optional operand", 2),
        ("generic form", 1),
        ("two ops on a line", 1),  # %r4, the rest of its line, as %r2
        ("op over two lines", 0),
    ],
)
def test_templates_are_used(name: str, hits: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases above do exercise the fast path (or not, where they must not)."""
    monkeypatch.setattr(diagnostics, "LocatedParser", CountingParser)
    CountingParser.hits = []
    try:
        parse_module(make_context(), Source(CASES[name], "t.mlir"))
    except FusecError:
        pass
    assert CountingParser.hits == [hits]


def test_bert_chain_is_built_from_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    source = Source(bert_chain(4), "chain.mlir")
    assert parse(source, False, monkeypatch) == parse(source, True, monkeypatch)
    monkeypatch.setattr(diagnostics, "LocatedParser", CountingParser)
    CountingParser.hits = []
    parse_module(make_context(), source)
    # the first layer teaches 14 templates (its last add and layer norm, and the second bias
    # add of width 64, repeat earlier ones); every op of the later layers is built from them
    assert CountingParser.hits == [4 * 17 - 14]
