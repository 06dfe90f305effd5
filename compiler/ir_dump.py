"""The ``--print-ir-before``, ``--print-ir-after``, ``--print-ir-after-all`` and
``--print-ir-after-change`` options.

Each dump goes to stderr, headed as MLIR heads its dumps, then the module as ``fusec-opt``
prints it (custom or generic form)::

    // -----// IR Dump After fuse-matmul-bias-act //----- //
    builtin.module {
      ...
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def header(when: str, pass_name: str) -> str:
    return f"// -----// IR Dump {when} {pass_name} //----- //\n"


@dataclass
class IRDumper:
    """Writes the module to ``stream`` around the passes the options name."""

    stream: TextIO
    show: Callable[[ModuleOp], str]
    before: Collection[str] = ()
    after: Collection[str] = ()
    after_all: bool = False
    after_change: bool = False
    _last: str | None = field(default=None, init=False)

    @property
    def active(self) -> bool:
        return bool(self.before or self.after or self.after_all or self.after_change)

    def before_pass(self, p: ModulePass, module: ModuleOp) -> None:
        if p.name in self.before:
            self._write("Before", p.name, self.show(module))
        if self.after_change:
            self._last = self.show(module)

    def after_pass(self, p: ModulePass, module: ModuleOp) -> None:
        wanted = self.after_all or p.name in self.after
        if self.after_change:
            text = self.show(module)
            wanted = wanted or text != self._last
        elif wanted:
            text = self.show(module)
        if wanted:
            self._write("After", p.name, text)

    def _write(self, when: str, pass_name: str, text: str) -> None:
        self.stream.write(header(when, pass_name) + text)
        if not text.endswith("\n"):
            self.stream.write("\n")
        self.stream.flush()
