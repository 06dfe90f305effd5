"""A gather of constant indices that reads a strided box of its source is that box's views.

``gather(x, [s, s + k, ..., s + (n-1) k]){axis}`` (GPT-J's even and odd elements, an ONNX
``Slice`` with a step exported as a ``Gather``), or any chain of views ending in such a gather,
reads ``x`` at flat indices that form a strided box (`_view_tables.view_table`, run on
``arange``). Its canonical chain (`_view_tables.strided_view`) is the source reshaped so that
the step is an axis of its own, narrowed there and reshaped back, which is how the same
computation is written by hand (``reshape(x, (.., n, k))``, ``narrow`` on the last axis): a
reshape of an input is a free view and a narrow an index map of ``fuse-elementwise``'s regions,
where the gather was a copy kernel. ``canonicalize-nn``'s rule ``strided gather``; a gather of
consecutive indices is ``narrow for gather`` (step 1), one the table does not make a strided
box of stays a gather::

    %i = nn.constant dense<[1, 3, 5, 7]>            %r = nn.reshape %x : 2x8 -> 2x4x2
    %g = nn.gather %x, %i {axis = 1} : 2x8 -> 2x4  ->  %n = nn.narrow %r {axis = 2, start = 1}
                                                    %g = nn.reshape %n : 2x4x1 -> 2x4
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from fusec.dialects import nn
from fusec.passes._util import producer, shape_of
from fusec.passes._view_tables import constant_data, strided_view, view_table
from fusec.passes.remarks import may_fuse

PASS = "canonicalize-nn"
RULE = "strided gather"


class StridedGather(RewritePattern):
    """``gather(x, constant indices)`` reading a strided box -> reshape, narrow, reshape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.GatherOp, rewriter: PatternRewriter) -> None:
        indices = constant_data(op.indices)
        if indices is None or indices.dtype.kind not in "iu" or indices.size < 2:
            return
        found = view_table(op.result)
        if found is None:
            return
        source, table = found
        result = tuple(shape_of(op.result))
        chain = strided_view(table, tuple(shape_of(source)), result, result)
        if chain is None or not may_fuse(PASS, op, f"canonical form '{RULE}'", verb="rewrote"):
            return
        ops = chain.build(source)
        for view in ops:
            view.location = op.location
            rewriter.insert(view)
        old = op.indices
        rewriter.replace(op, [], [ops[-1].results[0] if ops else source])
        constant = producer(old)
        if isinstance(constant, nn.ConstantOp) and not constant.result.uses:
            rewriter.erase(constant)
