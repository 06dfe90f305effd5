"""The README is the entry page and every page of `docs/` is reached from it (issue 32).

The README stays short (at most `README_MAX_LINES`) and links every `docs/*.md`; every relative
link in the README and the pages names a file that exists, and an anchor (`page.md#section`) a
heading of that page, spelled as GitHub makes heading anchors.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_MAX_LINES = 300

LINK = re.compile(r"\]\(([^)\s]+)\)")
"""The target of a Markdown link or image: `[text](target)`."""


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def relative_links(path: Path) -> list[str]:
    """The link targets of `path` that point into the repository (not URLs, not mail)."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # links in code are not links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to
    `-`."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {anchor(m) for m in re.findall(r"^#+ (.*)$", text, flags=re.M)}


def test_readme_is_short() -> None:
    count = len((ROOT / "README.md").read_text().splitlines())
    assert count <= README_MAX_LINES, f"README.md has {count} lines; move text into docs/"


def test_there_are_pages() -> None:
    assert len(pages()) >= 5, [p.name for p in pages()]


def test_every_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / t.split("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    missing = [p.name for p in pages() if p.resolve() not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"


@pytest.mark.parametrize(
    "path", [ROOT / "README.md", *pages()], ids=lambda p: str(p.relative_to(ROOT))
)
def test_relative_links_resolve(path: Path) -> None:
    broken = []
    for target in relative_links(path):
        file, _, fragment = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor in {resolved.name}")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n[gone](missing.md) [here](#a-page) [web](https://x.org/y)\n"
                    "```\n[in code](nowhere.md)\n```\n")
    assert relative_links(page) == ["missing.md", "#a-page"]
    assert anchors(page) == {"a-page"}
    assert anchor("Placement: CPU/GPU auto-offload") == "placement-cpugpu-auto-offload"
