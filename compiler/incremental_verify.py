"""Verification after each pass that checks only what the pass changed.

Verifying the whole module after each of the dozen passes of ``-p default`` cost as much as the
passes themselves. `IncrementalVerifier` remembers, for each op it verified, what its verifier
reads: its operands, properties, attributes and parent block (a value's type cannot change in
xDSL 0.74: a new type is a new value, hence a new operand).
On the next call it verifies only the ops that are new or whose record differs. Ops with regions
and terminators (whose checks read their neighbours: a function's body, a return's function) are
verified every time; there are few of them. Errors are the same one-line messages, in the same
order (innermost first), as a full verification gives. An op whose signature passed before is
not verified again (`SignatureVerifier`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.traits import IsTerminator

from fusec.compiler.diagnostics import verify_op
from fusec.compiler.signature_verify import SignatureVerifier

Record = tuple[object, ...]


def record_of(op: Operation) -> Record:
    """What ``op``'s verifier reads of it, compared by identity first (attributes are immutable:
    a changed value is a new object)."""
    return (
        tuple(op.operands),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
        op.parent,
    )


def always_verified(op: Operation) -> bool:
    return bool(op.regions) or op.has_trait(IsTerminator)


class IncrementalVerifier:
    """Verifies a module, then after each change only the ops that changed."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Operation, Record]] = {}
        self._filename = ""
        self._signatures = SignatureVerifier(lambda op: verify_op(op, self._filename))
        self.checked = 0
        """Ops verified by the last call (for tests and ``--timing``)."""

    def verify(self, module: ModuleOp, filename: str) -> None:
        """Raises `FusecError` (one line, at the op) for the first invalid op, innermost first."""
        seen = self._seen
        current: dict[int, tuple[Operation, Record]] = {}
        checked = 0
        self._filename = filename
        for op in module.walk(region_first=True):
            record = record_of(op)
            old = seen.get(id(op))
            if old is None or old[0] is not op or old[1] != record or always_verified(op):
                self._signatures.verify(op)
                checked += 1
            current[id(op)] = (op, record)
        self._seen = current
        self.checked = checked
