"""The generated parts of docs/ say what the registries say (`fusec.tools.docs_pages`).

A pass added, renamed or given a new option, or a docstring changed, without running
`python -m fusec.tools.docs_pages` (`make docs`) fails here, naming the page and the command.
"""

from __future__ import annotations

from pathlib import Path

from fusec.tools import docs_pages


def test_generated_pages_are_up_to_date() -> None:
    stale = docs_pages.stale_pages()
    assert not stale, (
        f"out of date: {', '.join(str(p.relative_to(docs_pages.ROOT)) for p in stale)}; "
        f"regenerate with `{docs_pages.COMMAND}` (or `make docs`)"
    )


def test_every_pass_has_a_section() -> None:
    from fusec.compiler.registry import get_all_passes

    text = (docs_pages.ROOT / "docs" / "passes.md").read_text()
    missing = [name for name in get_all_passes() if f"\n### {name}\n" not in text]
    assert not missing, missing


def test_a_changed_block_is_seen(tmp_path: Path) -> None:
    """The check can fail: a page whose block was edited by hand is stale, and the text around
    the markers survives a rewrite."""
    page = tmp_path / "docs" / "passes.md"
    page.parent.mkdir()
    block = docs_pages.passes_block()
    written = docs_pages.with_block("# Passes\n\nby hand\n", "passes", block)
    page.write_text(written.replace("fuse-swiglu", "fuse-swiglu-renamed", 1))
    assert docs_pages.stale_pages(tmp_path)[page] == written
    page.write_text(written)
    assert page not in docs_pages.stale_pages(tmp_path)
    assert written.startswith("# Passes\n\nby hand\n")


def test_docstrings_become_markdown() -> None:
    doc = ("Does ``x``.\n\n    %a = nn.add %x, %y\n  becomes\n    %b = fused.elementwise\n\n"
           "- a ``list``\n  item")
    assert docs_pages.markdown_of_docstring(doc) == (
        "Does `x`.\n\n```\n  %a = nn.add %x, %y\nbecomes\n  %b = fused.elementwise\n```\n\n"
        "- a `list`\n  item"
    )
