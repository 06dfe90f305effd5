"""Launch fusion planning: which adjacent kernel launches may run as one, under a memory budget.

The pure algorithm behind ``fuse-launches`` (seed 002's backend-neutral planner): it knows
nothing of the IR. A ``LaunchStage`` is one launch in program order with a stable id, a layout
key, the bytes it reads, writes and needs as scratch, and whether it needs host-visible
materialization before it (it cannot join the launch before it). ``plan_launch_fusion`` groups
adjacent stages greedily, in order:

- a group starts at a stage and needs that stage's input + output + scratch bytes;
- the next stage joins the group when its layout key equals the group's, it needs no host
  materialization, and the group's bytes plus the stage's scratch + output bytes stay within
  the budget (an appended stage's inputs are the group's intermediates, already counted);
- each appended stage avoids one launch and the output bytes of the stage before it.

Errors are typed (`LaunchFusionError` and its subclasses) and every message ends in a ``Fix:``
sentence: a zero budget, a duplicate stage id, a single stage over the budget (naming the stage,
its bytes and the budget) and byte counts past 64 bits (the seed's ``u64`` arithmetic).

    plan = plan_launch_fusion([LaunchStage(0, "k", 64, 32, 0), LaunchStage(1, "k", 32, 32, 0)],
                              budget=256)
    plan.groups[0].stage_ids == (0, 1); plan.launch_count == 1; plan.avoided_launches == 1
    plan.avoided_intermediate_bytes == 32
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1


@dataclass(frozen=True)
class LaunchStage:
    """One launch considered for fusion, in program order."""

    id: int
    """Stable id, unique within a plan (0 .. 2^32 - 1)."""
    layout_key: Hashable
    """Stages fuse only with stages of an equal key (their work-item ``i`` reads what the
    previous stage's work-item ``i`` wrote)."""
    input_bytes: int
    output_bytes: int
    scratch_bytes: int = 0
    requires_host_materialization: bool = False
    """The boundary before this stage must be materialized: it cannot join the group before."""

    def __post_init__(self) -> None:
        if not 0 <= self.id <= U32_MAX:
            raise ValueError(f"launch stage id {self.id} is not in 0 .. 2^32 - 1")
        for field in ("input_bytes", "output_bytes", "scratch_bytes"):
            if getattr(self, field) < 0:
                raise ValueError(f"launch stage {self.id}: {field} is negative")


@dataclass(frozen=True)
class LaunchGroup:
    """Adjacent stages that run as one launch."""

    stage_ids: tuple[int, ...]
    layout_key: Hashable
    required_bytes: int
    """The group's memory envelope: the first stage's input + output + scratch bytes, plus each
    appended stage's scratch + output bytes."""
    avoided_intermediate_bytes: int
    """The output bytes of every stage but the last, no longer handed between launches."""


@dataclass(frozen=True)
class LaunchPlan:
    """Every stage in one group, groups in stage order."""

    groups: tuple[LaunchGroup, ...]
    launch_count: int
    avoided_launches: int
    avoided_intermediate_bytes: int


class LaunchFusionError(ValueError):
    """A plan that cannot be made; the message ends in a ``Fix:`` sentence."""


class ZeroBudget(LaunchFusionError):
    def __init__(self) -> None:
        super().__init__(
            "launch fusion received a zero byte budget. Fix: pass an explicit device-memory "
            "budget before planning fusion."
        )


class DuplicateStage(LaunchFusionError):
    def __init__(self, stage_id: int):
        self.stage_id = stage_id
        super().__init__(
            f"launch fusion received duplicate stage id {stage_id}. Fix: emit unique stage ids "
            "before fusion planning."
        )


class StageOverBudget(LaunchFusionError):
    def __init__(self, stage_id: int, required_bytes: int, budget_bytes: int, name: str = ""):
        self.stage_id = stage_id
        self.required_bytes = required_bytes
        self.budget_bytes = budget_bytes
        label = f"{stage_id} ({name})" if name else f"{stage_id}"
        super().__init__(
            f"launch fusion stage {label} requires {required_bytes} bytes but the budget allows "
            f"{budget_bytes}. Fix: shard the stage or raise the explicit fusion budget."
        )

    def named(self, name: str) -> StageOverBudget:
        """The same error with the stage's name (e.g. its kernel) in the message."""
        return StageOverBudget(self.stage_id, self.required_bytes, self.budget_bytes, name)


class ByteCountOverflow(LaunchFusionError):
    def __init__(self, field: str):
        self.field = field
        super().__init__(
            f"launch fusion overflowed while computing {field}. Fix: shard adjacent stages "
            "before launch fusion planning."
        )


def checked_add(left: int, right: int, field: str) -> int:
    """``left + right``, or `ByteCountOverflow` past 64 bits."""
    total = left + right
    if total > U64_MAX:
        raise ByteCountOverflow(field)
    return total


def stage_required_bytes(stage: LaunchStage) -> int:
    io = checked_add(stage.input_bytes, stage.output_bytes, "stage io bytes")
    return checked_add(io, stage.scratch_bytes, "stage required bytes")


def appended_required_bytes(group_bytes: int, stage: LaunchStage) -> int:
    with_scratch = checked_add(group_bytes, stage.scratch_bytes, "fused scratch bytes")
    return checked_add(with_scratch, stage.output_bytes, "fused output bytes")


def plan_launch_fusion(stages: Sequence[LaunchStage], budget: int) -> LaunchPlan:
    """Groups adjacent ``stages`` greedily under ``budget`` bytes; see the module docstring."""
    if budget < 0:
        raise ValueError(f"launch fusion budget {budget} is negative")
    if budget == 0:
        raise ZeroBudget()
    seen: set[int] = set()
    for stage in stages:
        if stage.id in seen:
            raise DuplicateStage(stage.id)
        seen.add(stage.id)

    groups: list[LaunchGroup] = []
    index = 0
    while index < len(stages):
        first = stages[index]
        required = stage_required_bytes(first)
        if required > budget:
            raise StageOverBudget(first.id, required, budget)
        ids = [first.id]
        avoided = 0
        cursor = index + 1
        while cursor < len(stages):
            stage = stages[cursor]
            if stage.requires_host_materialization or stage.layout_key != first.layout_key:
                break
            grown = appended_required_bytes(required, stage)
            if grown > budget:
                break
            required = grown
            avoided = checked_add(
                avoided, stages[cursor - 1].output_bytes, "avoided intermediate bytes"
            )
            ids.append(stage.id)
            cursor += 1
        groups.append(LaunchGroup(tuple(ids), first.layout_key, required, avoided))
        index = cursor

    if len(groups) > U32_MAX:
        raise ByteCountOverflow("launch count")
    total_avoided = 0
    for group in groups:
        total_avoided = checked_add(
            total_avoided, group.avoided_intermediate_bytes, "total avoided intermediate bytes"
        )
    return LaunchPlan(tuple(groups), len(groups), len(stages) - len(groups), total_avoided)
