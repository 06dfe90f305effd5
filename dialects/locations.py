"""Source locations carried from the input through fusion and lowering, as MLIR carries them.

Every parsed op has a ``FileLineColLoc`` (``fusec.compiler.diagnostics``); a fused op takes a
``FusedLoc`` of the op it replaces (first: diagnostics and remarks name that one, `first_place`)
and of every op of the group it computes (``fusec.passes._util.located_at``), each op its
lowering adds (a launch, a template, the
``kernel.func`` it launches) takes the location of the op it lowers, and an op standing for
several (launches merged by ``fuse-launches``) gets a ``FusedLoc`` of theirs, as MLIR's
``FusedLoc`` after a fusion. The plan of a program keeps `file_line_cols` of each launch's
location, and a build or launch error names them on one line (``fusec.runtime.errors``)::

    model.mlir:12:9 (and 3 more): error: kernel 'f_fused4': ...
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    LocationAttr,
    NameLoc,
    NoneAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation


def file_line_col_leaves(loc: Attribute) -> Iterable[FileLineColLoc]:
    """The ``FileLineColLoc`` places ``loc`` is made of, in order."""
    if isinstance(loc, FileLineColLoc):
        yield loc
    elif isinstance(loc, FusedLoc):
        for inner in loc.locations.data:  # type: ignore[attr-defined]
            yield from file_line_col_leaves(inner)
    elif isinstance(loc, NameLoc):
        yield from file_line_col_leaves(loc.location)
    elif isinstance(loc, CallSiteLoc):
        yield from file_line_col_leaves(loc.callee)


def fuse_locations(locations: Iterable[Attribute]) -> LocationAttr:
    """One location standing for all of ``locations``: their distinct ``file:line:col``
    leaves in order, as a ``FusedLoc`` when there are several, the one when there is one,
    ``UnknownLoc`` when there is none."""
    distinct: Places = {}
    for loc in locations:
        add_places(distinct, loc)
    return location_of_places(distinct)


Places = dict[tuple[str, int, int], FileLineColLoc]
"""Distinct places by `place_key`, in the order they were added."""

_NO_METADATA = NoneAttr()


def add_places(places: Places, loc: Attribute) -> None:
    """Adds the places of ``loc`` that ``places`` lacks, in order."""
    if isinstance(loc, FileLineColLoc):  # the common case, without a generator
        places.setdefault((loc.filename.data, loc.line.data, loc.column.data), loc)
    elif not isinstance(loc, UnknownLoc):
        for leaf in file_line_col_leaves(loc):
            places.setdefault(place_key(leaf), leaf)


def location_of_places(places: Places) -> LocationAttr:
    """One location for ``places``: a ``FusedLoc`` of several, the one, or ``UnknownLoc``."""
    if not places:
        return UnknownLoc()
    if len(places) == 1:
        return next(iter(places.values()))
    return FusedLoc(ArrayAttr(tuple(places.values())), _NO_METADATA)


def place_key(leaf: FileLineColLoc) -> tuple[str, int, int]:
    """``(file, line, column)``: what two places are compared and sorted by (cheaper to hash
    than the attribute)."""
    return leaf.filename.data, leaf.line.data, leaf.column.data


def first_place(loc: Attribute) -> str | None:
    """``file:line:col`` of the first place ``loc`` stands for (of a fused op: the op it
    replaced, which `fuse_locations` puts first), or None."""
    leaf = next(iter(file_line_col_leaves(loc)), None)
    return None if leaf is None else f"{leaf.filename.data}:{leaf.line.data}:{leaf.column.data}"


def file_line_cols(loc: Attribute) -> tuple[str, ...]:
    """``file:line:col`` of each place ``loc`` stands for, in order, without repeats."""
    return tuple(dict.fromkeys(f"{leaf.filename.data}:{leaf.line.data}:{leaf.column.data}"
                               for leaf in file_line_col_leaves(loc)))


def stamp(ops: Iterable[Operation], loc: Attribute) -> None:
    """Gives each op of ``ops`` that has no location of its own the location ``loc``."""
    if isinstance(loc, UnknownLoc):
        return
    for op in ops:
        if isinstance(op.location, UnknownLoc):
            op.location = loc  # type: ignore[assignment]
