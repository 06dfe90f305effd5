"""The launch fusion planner (`fusec.lowering.launch_plan`): seed 002's tests, carried over.

The seed's generated test runs 4,096 seeds of up to 24 random stages through the planner and
checks the contract: stage order preserved, launch counts consistent, every group within the
budget, and only a single stage over the budget rejected. Here it also checks that a group
never crosses a layout change or a host-materialization boundary, that the greedy grouping is
maximal (the stage after a group could not have joined it) and that the bytes avoided are the
outputs handed on inside groups. The seed's two tests of Rust's fallible allocation (caller-owned
scratch, reservation policy) have no Python counterpart.
"""

from __future__ import annotations

import pytest

from fusec.lowering.launch_plan import (
    U64_MAX,
    ByteCountOverflow,
    DuplicateStage,
    LaunchFusionError,
    LaunchStage,
    StageOverBudget,
    ZeroBudget,
    plan_launch_fusion,
    stage_required_bytes,
)

MASK64 = U64_MAX


def stage(
    id: int, layout: int, inputs: int, outputs: int, scratch: int, host: bool
) -> LaunchStage:
    return LaunchStage(id, layout, inputs, outputs, scratch, host)


def test_groups_adjacent_compatible_stages() -> None:
    plan = plan_launch_fusion(
        [
            stage(1, 7, 64, 32, 8, False),
            stage(2, 7, 32, 48, 8, False),
            stage(3, 7, 48, 16, 8, False),
        ],
        256,
    )
    assert plan.launch_count == 1
    assert plan.avoided_launches == 2
    assert plan.groups[0].stage_ids == (1, 2, 3)
    assert plan.groups[0].required_bytes == 64 + 32 + 8 + (8 + 48) + (8 + 16)
    assert plan.avoided_intermediate_bytes == 80


def test_splits_on_layout_host_boundary_and_budget() -> None:
    plan = plan_launch_fusion(
        [
            stage(1, 7, 64, 32, 8, False),
            stage(2, 8, 32, 48, 8, False),
            stage(3, 8, 48, 16, 8, True),
            stage(4, 9, 16, 16, 8, False),
        ],
        128,
    )
    assert plan.launch_count == 4
    assert plan.avoided_launches == 0
    assert [g.stage_ids for g in plan.groups] == [(1,), (2,), (3,), (4,)]
    assert plan.avoided_intermediate_bytes == 0


def test_budget_alone_splits_a_chain() -> None:
    # The accounting of the chain add -> mul -> relu -> exp over B-byte tensors:
    # add needs 3B, appending mul 4B, relu 5B, exp 6B; relu alone 2B, relu + exp 3B.
    b = 128
    chain = [
        stage(0, 1, 2 * b, b, 0, False),
        stage(1, 1, 2 * b, b, 0, False),
        stage(2, 1, b, b, 0, False),
        stage(3, 1, b, b, 0, False),
    ]
    assert [g.stage_ids for g in plan_launch_fusion(chain, 6 * b).groups] == [(0, 1, 2, 3)]
    two = plan_launch_fusion(chain, 4 * b)
    assert [g.stage_ids for g in two.groups] == [(0, 1), (2, 3)]
    assert (two.launch_count, two.avoided_launches, two.avoided_intermediate_bytes) == (2, 2, 2 * b)
    three = plan_launch_fusion(chain, 3 * b)
    assert [g.stage_ids for g in three.groups] == [(0,), (1,), (2, 3)]
    assert three.launch_count == 3
    with pytest.raises(StageOverBudget):
        plan_launch_fusion(chain, 3 * b - 1)


def test_rejects_invalid_inputs() -> None:
    with pytest.raises(ZeroBudget, match="zero byte budget. Fix: "):
        plan_launch_fusion([stage(1, 7, 1, 1, 1, False)], 0)
    with pytest.raises(DuplicateStage, match="duplicate stage id 1. Fix: ") as dup:
        plan_launch_fusion([stage(1, 7, 1, 1, 1, False), stage(1, 7, 1, 1, 1, False)], 128)
    assert dup.value.stage_id == 1
    with pytest.raises(StageOverBudget) as over:
        plan_launch_fusion([stage(9, 7, 64, 32, 64, False)], 128)
    assert (over.value.stage_id, over.value.required_bytes, over.value.budget_bytes) == (9, 160, 128)
    assert str(over.value) == (
        "launch fusion stage 9 requires 160 bytes but the budget allows 128. "
        "Fix: shard the stage or raise the explicit fusion budget."
    )
    assert "stage 9 (@k) requires" in str(over.value.named("@k"))


def test_duplicates_are_found_among_many_stages() -> None:
    stages = [stage(i, 7, 1, 1, 0, False) for i in range(40)] + [stage(17, 7, 1, 1, 0, False)]
    with pytest.raises(DuplicateStage) as dup:
        plan_launch_fusion(stages, 1 << 20)
    assert dup.value.stage_id == 17


def test_byte_count_overflow() -> None:
    with pytest.raises(ByteCountOverflow, match="stage io bytes. Fix: shard"):
        plan_launch_fusion([stage(0, 7, U64_MAX, 1, 0, False)], U64_MAX)
    with pytest.raises(ByteCountOverflow, match="fused output bytes"):
        plan_launch_fusion(
            [stage(0, 7, 0, U64_MAX - 1, 0, False), stage(1, 7, 0, 2, 0, False)], U64_MAX
        )


def test_empty_and_single_stage() -> None:
    empty = plan_launch_fusion([], 1)
    assert (empty.groups, empty.launch_count, empty.avoided_launches) == ((), 0, 0)
    single = plan_launch_fusion([stage(3, 7, 1, 1, 1, False)], 3)
    assert [g.stage_ids for g in single.groups] == [(3,)]
    assert (single.launch_count, single.avoided_launches) == (1, 0)


def test_errors_are_launch_fusion_errors_with_a_fix() -> None:
    for error in (ZeroBudget(), DuplicateStage(1), StageOverBudget(1, 2, 1),
                  ByteCountOverflow("x")):
        assert isinstance(error, LaunchFusionError)
        assert ". Fix: " in str(error) and "\n" not in str(error)


def next_u64(state: list[int]) -> int:
    x = state[0]
    x ^= (x << 13) & MASK64
    x ^= x >> 7
    x ^= (x << 17) & MASK64
    state[0] = x
    return x


def generated_stages(seed: int) -> list[LaunchStage]:
    """The seed's generator: xorshift64 from ``seed ^ 0xF0511A4A7E570001``."""
    count = 1 + seed % 24
    state = [seed ^ 0xF051_1A4A_7E57_0001]
    stages = []
    for index in range(count):
        layout = next_u64(state) % 5
        inputs = 1 + next_u64(state) % 48
        outputs = 1 + next_u64(state) % 48
        scratch = next_u64(state) % 24
        host = next_u64(state) % 11 == 0
        stages.append(stage(index, layout, inputs, outputs, scratch, host))
    return stages


SEEDS = 4096


def test_generated_plans_preserve_budget_and_order_contract() -> None:
    rejected = planned = 0
    for seed in range(SEEDS):
        stages = generated_stages(seed)
        budget = 96 + seed % 512
        try:
            plan = plan_launch_fusion(stages, budget)
        except StageOverBudget as e:
            # Only a single stage over the budget may be rejected, and it is.
            by_id = {s.id: s for s in stages}
            assert stage_required_bytes(by_id[e.stage_id]) == e.required_bytes > budget, seed
            assert e.budget_bytes == budget
            rejected += 1
            continue
        planned += 1
        assert all(stage_required_bytes(s) <= budget for s in stages), seed
        flattened = [i for g in plan.groups for i in g.stage_ids]
        assert flattened == [s.id for s in stages], f"order not preserved for seed {seed}"
        assert plan.launch_count == len(plan.groups), seed
        assert plan.avoided_launches == len(stages) - len(plan.groups), seed
        by_id = {s.id: s for s in stages}
        avoided_total = 0
        for k, group in enumerate(plan.groups):
            members = [by_id[i] for i in group.stage_ids]
            assert group.required_bytes <= budget, f"group over budget for seed {seed}"
            assert all(m.layout_key == group.layout_key for m in members), seed
            assert not any(m.requires_host_materialization for m in members[1:]), seed
            expected = stage_required_bytes(members[0]) + sum(
                m.scratch_bytes + m.output_bytes for m in members[1:]
            )
            assert group.required_bytes == expected, seed
            avoided = sum(m.output_bytes for m in members[:-1])
            assert group.avoided_intermediate_bytes == avoided, seed
            avoided_total += avoided
            if k + 1 < len(plan.groups):  # greedy: the next stage could not have joined
                nxt = by_id[plan.groups[k + 1].stage_ids[0]]
                assert (
                    nxt.requires_host_materialization
                    or nxt.layout_key != group.layout_key
                    or group.required_bytes + nxt.scratch_bytes + nxt.output_bytes > budget
                ), f"group ended early for seed {seed}"
        assert plan.avoided_intermediate_bytes == avoided_total, seed
    assert rejected and planned  # the generator exercises both outcomes
