"""Verification after each pass that checks only what the pass changed.

Verifying the whole module after each of the dozen passes of ``-p default`` cost as much as the
passes themselves. `IncrementalVerifier` remembers, for each op it verified, what its verifier
reads: its operands, properties, attributes and parent block (a value's type cannot change in
xDSL 0.74: a new type is a new value, hence a new operand).
On the next call it verifies only the ops that are new or whose record differs (which includes
whether the op ends its block). An op with regions (whose checks read its body: a function's
``IsolatedFromAbove`` walks all of it) is verified again when it changed, when an op in its
regions changed, or when its direct children are not the same ops in the same order (one was
added, erased or moved); terminators (whose checks read their parent op) are verified every time. Errors are the same one-line messages, in the same
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
    """``op`` and what its verifier reads of it (copies of its attribute dictionaries)."""
    return (
        op,
        op._operands,  # pyright: ignore[reportPrivateUsage]
        dict(op.properties),
        dict(op.attributes),
        op.parent,
        op._next_op is None,  # pyright: ignore[reportPrivateUsage]  # ends its block?
    )


def is_record_of(record: Record, op: Operation) -> bool:
    """Whether ``record_of(op)`` would equal ``record``, without building it (most ops of a
    module are unchanged after a pass). Compared by identity first: attributes are immutable
    (a changed value is a new object) and xDSL replaces an op's operand tuple on every change."""
    return (
        record[0] is op
        and record[1] is op._operands  # pyright: ignore[reportPrivateUsage]
        and record[4] is op.parent
        and record[5] is (op._next_op is None)  # pyright: ignore[reportPrivateUsage]
        and record[2] == op.properties
        and record[3] == op.attributes
    )


class IncrementalVerifier:
    """Verifies a module, then after each change only the ops that changed."""

    def __init__(self) -> None:
        self._seen: dict[int, Record] = {}
        self._children: dict[int, list[int]] = {}
        self._current: dict[int, Record] = {}
        self._new_children: dict[int, list[int]] = {}
        self._terminators: dict[type[Operation], bool] = {}
        self._filename = ""
        self._signatures = SignatureVerifier(lambda op: verify_op(op, self._filename))
        self.checked = 0
        """Ops verified by the last call (for tests and ``--timing``)."""

    def verify(self, module: ModuleOp, filename: str) -> None:
        """Raises `FusecError` (one line, at the op) for the first invalid op, innermost first."""
        self._filename = filename
        self._current = {}
        self._new_children = {}
        self.checked = 0
        self._visit(module)
        self._seen = self._current
        self._children = self._new_children

    def _visit(self, op: Operation) -> bool:
        """Verifies what changed in ``op`` and inside it, innermost first (an op with regions
        after everything in them); whether anything did."""
        key = id(op)
        record = self._seen.get(key)
        changed = record is None or not is_record_of(record, op)
        if record is None or changed:
            record = record_of(op)
        if op.regions:
            children: list[int] = []
            for region in op.regions:
                for block in region.blocks:
                    # The linked list itself (`block.ops` iterates with a Python call per op).
                    child = block.first_op
                    while child is not None:
                        if self._visit(child):
                            changed = True
                        children.append(id(child))
                        child = child._next_op  # pyright: ignore[reportPrivateUsage]
            changed = changed or children != self._children.get(key)
            self._new_children[key] = children
        cls = type(op)
        terminator = self._terminators.get(cls)
        if terminator is None:
            terminator = self._terminators[cls] = op.has_trait(IsTerminator)
        if changed or terminator:
            self._signatures.verify(op)
            self.checked += 1
        self._current[key] = record
        return changed
