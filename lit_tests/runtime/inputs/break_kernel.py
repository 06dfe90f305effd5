"""Runs a fusec tool with one kernel of every compiled program made unbuildable (a test hook).

    python break_kernel.py INDEX fusec-run model.mlir --device cpu

The kernel at position INDEX of the program's source (0: the first) gets a parameter of an
unknown type on its signature line, so the OpenCL compiler rejects it without moving any line:
what the tool then says about the failure (the kernel, its source op's file:line:col) is what
the lit test checks. Nothing in fusec reads this: it patches `PlanBuilder.build` in-process.
"""

from __future__ import annotations

import dataclasses
import re
import sys

from fusec.codegen import program


def break_kernel(plan: program.ProgramPlan, index: int) -> program.ProgramPlan:
    name = plan.kernel_lines[index].kernel
    source, count = re.subn(rf"\bvoid {name}\(", f"void {name}(planted_unknown_type planted, ",
                            plan.source)
    assert count == 1, name
    return dataclasses.replace(plan, source=source)


def main() -> int:
    index, tool, *argv = sys.argv[1:]
    build = program.PlanBuilder.build

    def broken_build(self: program.PlanBuilder, options: tuple[str, ...]) -> program.ProgramPlan:
        return break_kernel(build(self, options), int(index))

    program.PlanBuilder.build = broken_build  # type: ignore[method-assign]
    if tool == "fusec-run":
        from fusec.tools.fusec_run import main as tool_main
    else:
        raise SystemExit(f"break_kernel.py: unknown tool {tool}")
    return tool_main(argv)


if __name__ == "__main__":
    sys.exit(main())
