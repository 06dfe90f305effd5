"""Issue 28 checked from outside: issue 28's computations (and seed 000/001-style programs)
written the other ways people write them (``held_out_spellings.py``). For each spelling:

  * its launch count (the lowered plan, launch fusion on, as ``fusec-run`` runs it) equals the
    hand-spelled form's, except the gaps listed in ``GAPS`` with the count they have today (a
    gap closed, or one that widens, fails the test until the table is brought up to date);
  * fused, unfused and both references agree with numpy on its inputs (large logits, ``-inf``,
    large means where they mean something).

The table of launches before and after is in ``docs/canonical-forms.md``.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.driver import load, lower
from tests.passes.numeric.held_out_spellings import SPELLINGS

CPU = DeviceInfo(name="test cpu", is_cpu=True)

# (computation, spelling) -> launches today, where they are not the hand-spelled form's.
GAPS: dict[tuple[str, str], int] = {
    # none left: the four of the last session (a reshape splitting an axis, a gather with a step,
    # transposes around a reduce-then-broadcast region) are closed by canonicalize-nn's rules
    # 'views that cancel around a region' and 'strided gather'
}

CASES = [pytest.param(computation, spelling, id=f"{computation}: {spelling}")
         for computation, spellings in SPELLINGS.items() for spelling in spellings]


def launches(text: str) -> int:
    return len(lower(load(text), None, "default", CPU, launch_fusion=True).plan.launches)


@pytest.mark.parametrize("computation,spelling",
                         [c for c in CASES if c.values[1] != "hand"])
def test_launches_equal_the_hand_spelled_form(computation: str, spelling: str) -> None:
    spellings = SPELLINGS[computation]
    hand = launches(spellings["hand"]().text)
    wanted = GAPS.get((computation, spelling), hand)
    assert launches(spellings[spelling]().text) == wanted, (computation, spelling, hand)


@pytest.mark.parametrize("computation,spelling", CASES)
def test_numerics(numeric, computation: str, spelling: str) -> None:
    case = SPELLINGS[computation][spelling]()
    numeric.check(case.text, case.inputs, case.expected, tol=case.tol)


def adversarial(case_of: str, spelling: str, edit  # noqa: ANN001
                ) -> tuple[str, list[np.ndarray], tuple[float, float]]:
    case = SPELLINGS[case_of][spelling]()
    inputs = [x.copy() for x in case.inputs]
    edit(inputs[0])
    return case.text, inputs, case.tol


def with_infinities(x: np.ndarray) -> None:
    x.flat[1] = np.inf
    x.flat[-1] = -np.inf


def with_nan_and_infinities(x: np.ndarray) -> None:
    with_infinities(x)
    x.flat[2] = np.nan


def large(x: np.ndarray) -> None:
    x += np.float32(1e4)


@pytest.mark.parametrize("computation,spelling,edit", [
    ("softmax, first axis", "hand", with_infinities),  # written out (axis 0)
    ("softmax, middle axis", "hand", with_nan_and_infinities),
    ("log-softmax", "hand", with_infinities),  # written out (read by a log)
    ("row sum and row max, returned", "max as -min(-x)", with_nan_and_infinities),
    ("row sum and row max, returned", "sum as mean * n", large),
    ("x - mean over a middle axis", "sum * (1/n), axis -2, unsqueezed", with_infinities),
    ("rotary (halves)", "halves by gather (stepped slice), x*cos - (-rot)*sin",
     with_nan_and_infinities),
    ("centered Gram (seed 000)", "sum * (1/n), add of neg, * 1/(n-1)", large),
    # the four spellings the view rules closed (views that cancel, strided gather)
    ("rotary (halves)", "halves by reshape to (.., 2, h) and narrow", with_nan_and_infinities),
    ("rotary (pairs)", "pairs by stepped slices (gather)", with_nan_and_infinities),
    ("transpose, elementwise, transpose back",
     "permute then flatten, x + x, unflatten, permute back", with_nan_and_infinities),
    # (x + 1e4 loses the deviations to float32 rounding of the mean alike in every spelling)
    ("column standardisation", "transposed, standardised by rows, transposed back",
     with_nan_and_infinities),
])
def test_new_canonical_forms_on_adversarial_inputs(numeric, computation: str, spelling: str,
                                                   edit) -> None:  # noqa: ANN001
    """The rewritten programs (softmax written out, scaled reductions, negated extrema, add of
    neg, gather as narrow, views that cancel, strided gather) agree with the reference of the
    program as written where infinities, NaN and large magnitudes meet them."""
    text, inputs, tol = adversarial(computation, spelling, edit)
    numeric.check(text, inputs, tol=tol)
