"""Op locations stay exact with the linear-time parser (line index, tensor types looked up)."""

from __future__ import annotations

import pytest

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, LineIndex, Source, parse_module

OP = "  %v{i} = nn.relu %v{j} : tensor<4x8xf32> -> tensor<4x8xf32>\n"


def chain(n: int, last: str = "") -> str:
    body = "".join(OP.format(i=i + 1, j=i) for i in range(n))
    return (
        "func.func @f(%v0: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
        f"{body}{last}  func.return %v{n} : tensor<4x8xf32>\n}}\n"
    )


def naive_line_col(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_line_index_matches_counting() -> None:
    text = "ab\n\ncd\r\n  ef\n"
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        assert index.line_col(offset) == naive_line_col(text, offset), offset


def test_every_op_has_its_line_and_column() -> None:
    module = parse_module(make_context(), Source(chain(300), "c.mlir", line_offset=10))
    relus = [op for op in module.walk() if op.name == "nn.relu"]
    assert [(op.location.line.data, op.location.column.data) for op in relus] == [
        (12 + i, 3) for i in range(300)
    ]


@pytest.mark.parametrize(
    ("last", "message"),
    [
        # a verifier error after the type was cached: the cached type does not hide it
        (
            "  %bad = nn.relu %v300 : tensor<4x8xf32> -> tensor<4x9xf32>\n",
            "c.mlir:302:3: error: 'nn.relu'",
        ),
        # a dynamic dimension is not a cached spelling: the type parser reports it as before
        (
            "  %bad = nn.relu %v300 : tensor<4x?xf32> -> tensor<4x8xf32>\n",
            "c.mlir:302:",
        ),
        # a typo after a cached prefix
        ("  %bad = nn.relu %v300 : tensor<4x8xf32 -> tensor<4x8xf32>\n", "c.mlir:302:"),
    ],
)
def test_errors_late_in_a_long_file_are_located(last: str, message: str) -> None:
    with pytest.raises(FusecError) as e:
        parse_module(make_context(), Source(chain(300, last), "c.mlir"))
    assert str(e.value).startswith(message), str(e.value)


NARROW = (
    "  %n{i} = nn.narrow %v0 {{axis = 1 : i64, start = {start} : i64, length = 4 : i64}}"
    ' : tensor<4x8xf32> -> tensor<4x4xf32>\n'
)


def test_repeated_attribute_dicts_are_each_checked() -> None:
    """Attribute dictionaries are looked up by spelling after the first: each op still gets its
    own properties, and a cached dictionary that is wrong for its op (start 4 + length 4 fits
    the 8 columns of %v0, not the 6 of %v1) is reported at that op's own line."""
    lines = [NARROW.format(i=i, start=i % 5) for i in range(20)]
    bad = NARROW.format(i=99, start=4).replace("%v0", "%v1").replace("4x8xf32", "4x6xf32")
    head = "func.func @f(%v0: tensor<4x8xf32>, %v1: tensor<4x6xf32>) -> tensor<4x8xf32> {\n"
    tail = "  func.return %v0 : tensor<4x8xf32>\n}\n"
    module = parse_module(make_context(), Source(head + "".join(lines) + tail, "n.mlir"))
    starts = [op.properties["start"].value.data for op in module.walk() if op.name == "nn.narrow"]
    assert starts == [i % 5 for i in range(20)]
    lines.insert(15, bad)
    with pytest.raises(FusecError) as e:
        parse_module(make_context(), Source(head + "".join(lines) + tail, "n.mlir"))
    assert str(e.value).startswith("n.mlir:17:3: error: 'nn.narrow'"), str(e.value)


def test_locations_equal_checked_ones() -> None:
    """The parser builds locations without xDSL's parameter check: they are the same values."""
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

    module = parse_module(make_context(), Source(chain(3), "c.mlir", line_offset=4))
    relus = [op for op in module.walk() if op.name == "nn.relu"]
    for i, op in enumerate(relus):
        expected = FileLineColLoc(StringAttr("c.mlir"), IntAttr(6 + i), IntAttr(3))
        assert op.location == expected and hash(op.location) == hash(expected)
        assert type(op.location) is FileLineColLoc and str(op.location) == str(expected)
