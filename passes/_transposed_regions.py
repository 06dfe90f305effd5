"""A transpose of a region that is read elsewhere too becomes the region computed again in the
transpose's layout (``fuse-elementwise`` runs this after its view regions, see
``fuse_elementwise.py``)::

    %k = fused.elementwise %qkv, %cos, %sin {maps over (b, h, s, d)} ...    (returned: a cache)
    %t = nn.transpose %k {perm = [0, 2, 1, 3]}                               (read by attention)
  becomes
    %k = fused.elementwise %qkv, %cos, %sin {maps over (b, h, s, d)} ...
    %t = fused.elementwise %qkv, %cos, %sin {the same maps, over (b, s, h, d)} ...

A view region takes in a producer only when all its users are in the region, so a region whose
result is also returned (a decoder's rotated keys, returned head-major for its KV cache and read
position-major by attention) stayed materialised and its transpose was a copy kernel of its
own. Computing the region again costs its arithmetic once more and no launch: the new region
reads the region's inputs through its maps with the transpose's permutation applied (and its
``fused.index`` dimensions renamed), which is exact (the same scalar ops on the same values).
It also leaves the new region in the layout of its siblings (the query heads' rotary
embedding), which `_sibling_slices` then joins into one launch. Only one-result regions within
the fusion limits are copied; a transpose of anything else stays a copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from fusec.dialects import fused, nn
from fusec.dialects.common import ints_prop
from fusec.dialects.index_maps import IndexMap, to_affine
from fusec.passes._elementwise import Limits, steps
from fusec.passes._util import located_at, shape_of
from fusec.passes.remarks import may_fuse


def permuted(m: IndexMap, inverse: Sequence[int]) -> IndexMap:
    """``m`` (over the region's iteration dimensions) over the transpose's: the region's
    dimension ``p`` is the transpose's dimension ``inverse[p]``."""
    return tuple((None if d is None else inverse[d], c) for d, c in m)


def recompute_transposed(ops: Sequence[Operation], limits: Limits, pass_name: str) -> None:
    """Rewrites each ``transpose(region)`` whose region has other readers (see the module
    docstring)."""
    for op in ops:
        if not isinstance(op, nn.TransposeOp) or op.parent is None:
            continue
        region = op.input.owner
        if not isinstance(region, fused.ElementwiseOp) or len(region.results) != 1:
            continue
        if region.results[0].has_one_use() or steps(region) > limits.max_steps:
            continue
        if not may_fuse(pass_name, op, "the transposed region computed again in place of a "
                        "copy", verb="rewrote"):
            continue
        perm = ints_prop(op, "perm")
        inverse = [0] * len(perm)
        for k, p in enumerate(perm):
            inverse[p] = k
        rank = len(shape_of(op.result))
        maps = [to_affine(permuted(m, inverse), rank) for m in region.input_maps()]
        body = region.body.clone()
        for index in body.walk():
            if isinstance(index, fused.IndexOp):
                index.dim = IntegerAttr(inverse[index.dim.value.data], i64)
        again = located_at(fused.ElementwiseOp(list(region.inputs), op.result.type, body,
                                               maps), op)
        Rewriter.insert_op(again, InsertPoint.before(op))
        Rewriter.replace_op(op, [], [again.results[0]])
