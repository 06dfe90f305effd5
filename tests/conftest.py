"""Fixtures every test folder may use."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from fusec import knobs


@pytest.fixture
def set_knobs() -> Iterator[Callable[..., None]]:
    """Sets code-generation knobs (`fusec.knobs`) for the rest of the test, as a compile's
    ``knobs=`` does: ``set_knobs(attention_mma=False)``; a later call overrides an earlier one."""
    with contextlib.ExitStack() as stack:
        yield lambda **values: stack.enter_context(knobs.overridden(**values))
