"""`passes/_view_tables.py`: the table of a chain of views, and the canonical chain
(`strided_view`) that reads a strided box of a contiguous source, on random transposes and
narrows of random shapes; a table that is not a strided box (a reversed axis) has none."""

from __future__ import annotations

import numpy as np
import pytest

from fusec.passes._view_tables import strided_view


def random_box(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray]:
    shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(2, 5)))
    table = np.arange(int(np.prod(shape))).reshape(shape)
    table = table.transpose(rng.permutation(len(shape)))
    for axis in range(table.ndim):
        if table.shape[axis] > 1 and rng.random() < 0.5:
            start = int(rng.integers(0, table.shape[axis]))
            length = int(rng.integers(1, table.shape[axis] - start + 1))
            table = np.take(table, range(start, start + length), axis=axis)
    return shape, table


@pytest.mark.parametrize("seed", range(40))
def test_a_strided_box_is_read_back_by_its_canonical_chain(seed: int) -> None:
    shape, table = random_box(np.random.default_rng(seed))
    flat = (int(np.prod(table.shape)),)
    for result in (table.shape, flat):
        chain = strided_view(table, shape, table.shape, result)
        assert chain is not None, (shape, table)
        np.testing.assert_array_equal(chain.table(int(np.prod(shape))), table.reshape(result))


def test_a_reversed_axis_is_not_a_strided_box() -> None:
    table = np.arange(12).reshape(3, 4)[:, ::-1]
    assert strided_view(table, (3, 4), (3, 4), (3, 4)) is None
