"""Remarks: what a fusion pass says about each candidate it looked at, and the rewrite limit.

A fusion pattern that has matched the root of its group (a ``nn.add`` reading a matmul, a norm
reading an add, ...) and then stops at a guard calls `missed` with the op and the guard's reason;
just before it rewrites, it asks `may_fuse`, which counts the rewrite and says whether it may go
ahead. Both do nothing (and `may_fuse` says yes) unless the driver installed a `RemarkLog` with
`collecting`, as ``fusec-opt --remarks`` and ``--rewrite-limit`` do::

    model.mlir:12:9: remark: [fuse-matmul-bias-act] not fused: the matmul result has 2 uses
    model.mlir:14:9: remark: [fuse-matmul-bias-act] fused #3: fused.matmul_bias_act

Rewrites are numbered from 0 across the whole pipeline, in the order the passes make them
(deterministic: the walkers visit ops in program order). With a limit of ``N`` only rewrites
``0 .. N-1`` happen, as LLVM's ``-opt-bisect-limit``; the others are missed remarks saying so.
A greedy walker visits an op more than once, so a remark is kept once per op and reason, and a
missed remark about an op that the same pass fused later (or erased) is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.ir import Operation

from fusec.dialects.locations import first_place


@dataclass(frozen=True)
class Remark:
    kind: str
    """``missed`` or ``applied``."""
    pass_name: str
    where: str
    """``file:line:col`` of the op (or of its nearest located ancestor)."""
    message: str

    def __str__(self) -> str:
        return f"{self.where}: remark: [{self.pass_name}] {self.message}"


def location_of(op: Operation, fallback: str) -> str:
    node: Operation | None = op
    while node is not None:
        place = first_place(node.location)
        if place is not None:
            return place
        node = node.parent_op()
    return fallback


class RemarkLog:
    """Collects remarks and counts rewrites for one compile (``--split-input-file`` chunks go on
    counting: the limit is a command-line option, like the rest)."""

    def __init__(
        self,
        rewrite_limit: int | None = None,
        emit: Callable[[Remark], None] | None = None,
        filename: str = "<input>",
    ):
        self.rewrite_limit = rewrite_limit
        self.emit = emit
        self.filename = filename
        self.rewrites = 0
        """Rewrites asked for so far (made or refused by the limit)."""
        self.remarks: list[Remark] = []
        self._pending: dict[tuple[int, str], tuple[Operation, Remark]] = {}
        self._refused: dict[tuple[str, int], Operation] = {}
        self._order: list[tuple[str, tuple[int, str] | Remark]] = []

    def missed(self, pass_name: str, op: Operation, reason: str) -> None:
        key = (id(op), f"{pass_name}\0{reason}")
        if key in self._pending:
            return
        remark = Remark("missed", pass_name, location_of(op, self.filename), f"not fused: {reason}")
        self._pending[key] = (op, remark)
        self._order.append(("missed", key))

    def may_fuse(self, pass_name: str, op: Operation, what: str, verb: str = "fused") -> bool:
        refused = (pass_name, id(op))
        if refused in self._refused:  # the walker asks again for a rewrite it was refused
            return False
        index = self.rewrites
        self.rewrites += 1
        where = location_of(op, self.filename)
        if self.rewrite_limit is not None and index >= self.rewrite_limit:
            self._refused[refused] = op  # the op stays alive, so its id is not reused
            message = f"not fused: rewrite #{index} is beyond --rewrite-limit={self.rewrite_limit}"
            self.missed(pass_name, op, message.removeprefix("not fused: "))
            return False
        self._order.append(
            ("applied", Remark("applied", pass_name, where, f"{verb} #{index}: {what}"))
        )
        return True

    def end_pass(self) -> None:
        """Keeps the pass's remarks in the order they were made, dropping missed remarks about
        ops that are gone (fused after all, as the walker went round again)."""
        for kind, item in self._order:
            if kind == "applied":
                assert isinstance(item, Remark)
                remark = item
            else:
                assert isinstance(item, tuple)
                op, remark = self._pending[item]
                if op.parent is None:
                    continue
            self.remarks.append(remark)
            if self.emit is not None:
                self.emit(remark)
        self._pending.clear()
        self._order.clear()


_log: list[RemarkLog] = []


@contextmanager
def collecting(log: RemarkLog) -> Iterator[RemarkLog]:
    """Makes ``log`` receive the remarks of the passes run inside the block."""
    _log.append(log)
    try:
        yield log
    finally:
        _log.pop()


def current() -> RemarkLog | None:
    """The log `collecting` installed, if any."""
    return _log[-1] if _log else None


def missed(pass_name: str, op: Operation, reason: str) -> None:
    """A candidate rooted at ``op`` that ``pass_name`` did not fuse, and why (the guard)."""
    if _log:
        _log[-1].missed(pass_name, op, reason)


def may_fuse(pass_name: str, op: Operation, what: str, verb: str = "fused") -> bool:
    """Called once per rewrite, after every guard passed and before the first change: whether
    the rewrite (rooted at ``op``, making ``what``) may happen under the rewrite limit. The
    remark says ``<verb> #<n>: <what>`` (a canonicalization says ``rewrote``)."""
    return _log[-1].may_fuse(pass_name, op, what, verb) if _log else True
