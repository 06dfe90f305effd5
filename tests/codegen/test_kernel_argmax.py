"""The argmax kernel, one work-item per row and a work-group per row, against numpy: ties (the
first wins), NaN (the first NaN wins), infinities, rows shorter and longer than the group."""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.argmax import argmax
from fusec.dtypes import bf16_bits


def rows() -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (7, 150)).astype(np.float32)  # many ties
    x[1, 40] = x[1, 90] = np.nan
    x[2, :] = -np.inf
    x[3, 149] = np.inf
    x[4, 0] = 99
    x[5, 140:] = 50
    return x


@pytest.mark.parametrize("group", [1, 16, 64])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32"])
def test_argmax_matches_numpy(launch, group: int, dtype: str) -> None:  # noqa: ANN001
    x = rows()
    if dtype == "i32":
        x = np.nan_to_num(x, nan=7, posinf=1000, neginf=-1000).astype(np.int32)
    host = {"f32": x, "f16": x.astype(np.float16), "bf16": bf16_bits(x), "i32": x}[dtype]
    kernel = argmax("argmax", x.shape[0], x.shape[1], dtype, group)
    got = launch(kernel, {"x": host}, {"out": (x.shape[0],)})["out"]
    np.testing.assert_array_equal(got, np.argmax(x, axis=1))


def test_short_rows_in_a_wide_group(launch) -> None:  # noqa: ANN001
    x = np.array([[1, 5, 5], [2, 2, 2]], np.float32)
    got = launch(argmax("argmax", 2, 3, "f32", 64), {"x": x}, {"out": (2,)})["out"]
    np.testing.assert_array_equal(got, [1, 0])
