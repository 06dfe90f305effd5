"""The pipeline's import rule, read from the source: each stage imports only the stages before it.

The folders are stages of one pipeline (see the README's layout table); a module may import its
own folder, the package root (`fusec`, `fusec.errors`) and the folders listed for it in
`ALLOWED`, nothing else; imports inside functions and under ``TYPE_CHECKING`` count too. No two
modules import each other at module level (a function-level import that resolves late, as the
lowering's table of op lowerings does, is not a cycle at import time).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ALLOWED: dict[str, set[str]] = {
    "dialects": set(),
    "reference": {"dialects"},
    "passes": {"dialects"},
    "frontends": {"dialects"},
    "lowering": {"dialects", "passes"},
    "codegen": {"dialects", "lowering"},
    "runtime": {"codegen"},
    "placement": {"dialects", "lowering", "codegen", "runtime"},
    "compiler": {
        "dialects", "reference", "passes", "frontends", "lowering", "codegen", "runtime",
        "placement",
    },
    "tools": {
        "dialects", "reference", "passes", "frontends", "lowering", "codegen", "runtime",
        "placement", "compiler", "bench", "fuzz",
    },
    "fuzz": {
        "dialects", "reference", "passes", "frontends", "lowering", "codegen", "runtime",
        "placement", "compiler",
    },
    "bench": {
        "dialects", "reference", "passes", "frontends", "lowering", "codegen", "runtime",
        "placement", "compiler",
    },
}
"""Stage folder -> the stage folders it may import."""


def fusec_imports(path: Path, *, module_level: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every absolute or relative import of a fusec module in `path`; with
    `module_level`, only the statements run when the module is imported."""
    tree = ast.parse(path.read_text(), str(path))
    inside = path.relative_to(ROOT).parts[:-1] if path.is_relative_to(ROOT) else path.parts[-2:-1]
    package = ["fusec", *inside]
    found: list[tuple[int, str]] = []
    nodes = tree.body if module_level else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("fusec")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and node.module.startswith("fusec"):
                module = node.module
            else:
                continue
            # `from fusec.dialects import nn` imports the module fusec.dialects.nn
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return found


def stage_of(module: str) -> str | None:
    """The stage folder of a fusec module, or None for the package root."""
    parts = module.split(".")
    if len(parts) < 2 or not (ROOT / parts[1]).is_dir():  # fusec.errors, fusec.__version__
        return None
    return parts[1]


def sources() -> list[Path]:
    return sorted(p for folder in ALLOWED for p in (ROOT / folder).rglob("*.py"))


def test_every_package_folder_is_a_stage_with_a_rule() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages == set(ALLOWED)


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_back_along_the_pipeline(path: Path) -> None:
    folder = path.relative_to(ROOT).parts[0]
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module} ({stage_of(module)} is not before"
        f" {folder})"
        for line, module in fusec_imports(path)
        if (stage := stage_of(module)) is not None
        and stage != folder
        and stage not in ALLOWED[folder]
    ]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    graph: dict[str, set[str]] = {}
    for path in sources():
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(["fusec", *rel.parts]).removesuffix(".__init__")
        graph[name] = set()
        for _, module in fusec_imports(path, module_level=True):
            graph[name].add(module)
            graph[name].add(module.rsplit(".", 1)[0])  # the module a name was taken from
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if dep not in graph:
                continue
            if state.get(dep) == 1:
                cycle = trail[trail.index(dep):] if dep in trail else [dep]
                raise AssertionError("import cycle: " + " -> ".join([*cycle, dep]))
            if dep not in state:
                visit(dep, [*trail, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_the_checker_sees_a_backward_import(tmp_path: Path) -> None:
    """The rule can fail: a relative and an absolute import of a later stage are both found."""
    module = tmp_path / "passes" / "bad.py"
    module.parent.mkdir()
    module.write_text("from fusec.runtime.device import x\nfrom ..lowering import y\n")
    stages = [stage_of(m) for _, m in fusec_imports(module)]  # fusec.runtime.device.x, ...
    assert stages == ["runtime", "lowering"]
    assert not {"runtime", "lowering"} & ALLOWED["passes"]


def readme_may_import() -> dict[str, set[str]]:
    """The README layout table's "may import" column, per package folder. "every stage" means
    every pipeline stage (the table's rows from `dialects/` to `compiler/`) but the folder itself;
    "but A and B" removes folders, further names after a comma add them."""
    rows = re.findall(r"^\| `(\w+)/` \|.*\| ([^|]*) \|$", (ROOT / "README.md").read_text(), re.M)
    order = [folder for folder, _ in rows]
    stages = order[: order.index("compiler") + 1]
    table: dict[str, set[str]] = {}
    for folder, column in rows:
        if folder not in ALLOWED:  # lit_tests, tests, examples, docs: not packages
            continue
        allowed: set[str] = set()
        for part in (p.strip() for p in column.split(",")):
            if part.startswith("every stage"):
                allowed |= set(stages) - {folder}
                if " but " in part:
                    allowed -= set(part.split(" but ", 1)[1].split(" and "))
            elif part != "nothing":
                allowed.add(part)
        table[folder] = allowed
    return table


def test_the_readme_layout_table_states_the_rule() -> None:
    """The README's table is what newcomers read; it must say what `ALLOWED` enforces."""
    assert readme_may_import() == ALLOWED
