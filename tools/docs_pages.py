"""The generated parts of the documentation pages, from the registries they describe.

    python -m fusec.tools.docs_pages            # rewrite them (`make docs`)
    python -m fusec.tools.docs_pages --check    # exit 1 when a page is out of date

A page holds its generated text between two marker lines, and only that text is rewritten:

    <!-- BEGIN GENERATED passes: python -m fusec.tools.docs_pages; do not edit by hand -->
    ...
    <!-- END GENERATED passes -->

`GENERATORS` names each block and the function that writes it: ``passes`` (docs/passes.md, from
`fusec.compiler.registry`: every pass with its options and its whole documentation, and the
named pipelines), ``ops`` (docs/dialects.md, from the `nn` and `fused` dialects: every op, its
fusion kind, operands, properties with their defaults and documentation) and ``knobs``
(docs/knobs.md, from `fusec.knobs`: every knob, its default, its variable and what it does).
The text around the markers is written by hand. The test `tests/docs/test_generated_pages.py`
fails when a block differs from what its generator writes.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path

from fusec.compiler.pipeline import NAMED_PIPELINES
from fusec.compiler.registry import PassInfo, pass_infos
from fusec.files import atomic_write
from fusec.knobs import KNOBS

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python -m fusec.tools.docs_pages"


def markdown_of_docstring(doc: str) -> str:
    """A docstring as Markdown: ``code`` becomes `code`, and a paragraph whose first line is
    indented (an IR example) a fenced block of that paragraph, dedented."""
    paragraphs = re.split(r"\n\s*\n", doc.strip("\n"))
    out = []
    for paragraph in paragraphs:
        lines = paragraph.split("\n")
        if lines[0].startswith("  "):
            indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
            out.append("```\n" + "\n".join(line[indent:] for line in lines) + "\n```")
        else:
            out.append(re.sub(r"``([^`]+)``", r"`\1`", paragraph))
    return "\n\n".join(out)


def options_text(info: PassInfo) -> str:
    """A pass's options as a pipeline spec writes them: ``max-steps=32 max-inputs=16``."""
    return " ".join(
        f"{o.name}" if o.default is None else f"{o.name}={o.default}" for o in info.options
    )


def passes_block() -> str:
    """docs/passes.md's reference: a table of every pass, each pass's documentation, the
    named pipelines."""
    infos = pass_infos()
    lines = [
        "## Reference: every pass",
        "",
        "Generated from the pass registry (`compiler/registry.py`: `GRAPH_PASSES` in `passes/`,",
        "`LOWERING_PASSES` in `lowering/`, and xDSL's); the same as `fusec-opt --list-passes`.",
        "",
        "| pass | options (defaults) | what it does |",
        "|---|---|---|",
    ]
    for info in infos:
        options = f"`{{{options_text(info)}}}`" if info.options else ""
        summary = re.sub(r"``([^`]+)``", r"`\1`", info.summary).replace("|", "\\|")
        lines.append(f"| [`{info.name}`](#{info.name}) | {options} | {summary} |")
    lines += ["", "### Named pipelines", ""]
    for name, (spec, doc) in sorted(NAMED_PIPELINES.items()):
        lines += [f"`{name}`: {doc}", "", "```", spec.replace(",", ", "), "```", ""]
    for info in infos:
        lines += [f"### {info.name}", "", f"`{info.module}`"]
        for option in info.options:
            kind = option.kind.replace("|", "\\|")
            default = "required" if option.default is None else f"default `{option.default}`"
            lines.append(f"- option `{option.name}`: {kind}, {default}")
        lines += ["", markdown_of_docstring(info.doc), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def property_default(value: object) -> str:
    """An op property's default as the IR writes it: ``0``, ``1.0e-05``, ``"none"``."""
    inner = getattr(value, "value", None)
    data = getattr(inner, "data", None) if inner is not None else getattr(value, "data", None)
    if isinstance(data, str):
        return f'"{data}"'
    if isinstance(data, float):
        return f"{data:.7g}"  # an f32 property: 1e-05, not 9.999999747378752e-06
    if isinstance(data, int) and not isinstance(data, bool):
        return str(data)
    return str(value)


def op_doc(cls: type) -> str:
    """An op's documentation: its own docstring, else its family's (`nn.BinaryOp`, ...)."""
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__")
        if doc and doc.strip() and klass.__module__.startswith("fusec."):
            if doc.strip().startswith("See the module docstring"):
                return inspect.cleandoc(sys.modules[klass.__module__].__doc__ or doc)
            return inspect.cleandoc(doc)
    return ""


def ops_block() -> str:
    """docs/dialects.md's reference: every op of `nn` and `fused` from its definition."""
    from fusec.dialects import fused, nn

    lines = []
    for dialect in (nn.NN, fused.Fused):
        lines += [f"### `{dialect.name}`", "",
                  "| op | kind | operands -> results | properties (defaults) | what it computes |",
                  "|---|---|---|---|---|"]
        for cls in dialect.operations:
            definition = cls.get_irdl_definition()
            operands = ", ".join(name + ("?" if type(d).__name__.startswith("Opt") else "")
                                 + ("..." if "Var" in type(d).__name__ else "")
                                 for name, d in definition.operands)
            results = ", ".join(name for name, _ in definition.results)
            props = ", ".join(
                name if d.default_value is None else f"{name} = {property_default(d.default_value)}"
                for name, d in definition.properties.items() if name != "operandSegmentSizes")
            kind = getattr(cls, "FUSION_KIND", None)
            kind_text = getattr(kind, "value", "") if kind is not None else ""
            summary = " ".join(op_doc(cls).split("\n\n")[0].split())
            summary = re.sub(r"``([^`]+)``", r"`\1`", summary).replace("|", "\\|")
            signature = f"{operands} -> {results}".replace("|", "\\|")
            lines.append(f"| `{cls.name}` | {kind_text} | {signature} | {props} | {summary} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def knobs_block() -> str:
    """docs/knobs.md's reference: a table of every knob, then each knob's whole documentation
    (what it does, the measurements behind its default)."""
    lines = [
        "| knob | default | environment | what it does |",
        "|---|---|---|---|",
    ]
    for k in KNOBS.values():
        summary = k.summary.replace("|", "\\|")
        lines.append(f"| [`{k.name}`](#{k.name}) | {'on' if k.default else 'off'} | "
                     f"`{k.env}` | {summary} |")
    for k in KNOBS.values():
        lines += ["", f"### {k.name}", "",
                  f"Default {'on' if k.default else 'off'}; `{k.env}`; read in `{k.where}`.", "",
                  k.doc]
    return "\n".join(lines) + "\n"


GENERATORS: dict[str, tuple[str, Callable[[], str]]] = {
    "passes": ("docs/passes.md", passes_block),
    "ops": ("docs/dialects.md", ops_block),
    "knobs": ("docs/knobs.md", knobs_block),
}
"""Block name -> (the page that holds it, the function that writes it)."""


def begin_marker(name: str) -> str:
    return f"<!-- BEGIN GENERATED {name}: {COMMAND}; do not edit by hand -->"


def end_marker(name: str) -> str:
    return f"<!-- END GENERATED {name} -->"


def with_block(page: str, name: str, block: str) -> str:
    """`page` with the text between `name`'s markers replaced by `block`; the markers and the
    block are appended when the page has no markers yet."""
    begin, end = begin_marker(name), end_marker(name)
    if begin not in page:
        return page.rstrip("\n") + f"\n\n{begin}\n{block}{end}\n"
    head, rest = page.split(begin, 1)
    if end not in rest:
        raise ValueError(f"'{begin}' without '{end}'")
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}{end}{tail}"


def stale_pages(root: Path = ROOT) -> dict[Path, str]:
    """Each page whose generated text differs from what its generator writes -> the new text."""
    stale: dict[Path, str] = {}
    for name, (page, generate) in GENERATORS.items():
        path = root / page
        current = stale.get(path, path.read_text() if path.exists() else "")
        updated = with_block(current, name, generate())
        if updated != (path.read_text() if path.exists() else ""):
            stale[path] = updated
    return stale


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = args == ["--check"]
    if args and not check:
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    stale = stale_pages()
    for path, text in stale.items():
        where = path.relative_to(ROOT)
        if check:
            print(f"{where}: out of date; run `{COMMAND}` (or `make docs`)", file=sys.stderr)
        else:
            atomic_write(path, text)
            print(f"{where}: rewritten")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
