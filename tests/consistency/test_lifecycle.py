"""Expiration and lifecycle policies: examples, and hypothesis properties over random memories."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consistency.lifecycle import (
    Archive,
    Demote,
    LifecycleMemory,
    MarkBroken,
    MemoryState,
    Promote,
    RecallStats,
    feedback_priority,
    has_rule_force,
    is_current,
    plan_lifecycle,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def days_ago(n: float) -> datetime:
    return NOW - timedelta(days=n)


def memory(id: str = "m1", type: str = "project", **fields: object) -> LifecycleMemory:
    return LifecycleMemory(id=id, path=f"Memory/{id}.md", type=type, **fields)  # type: ignore[arg-type]


def test_project_done_or_inactive_is_archived_and_an_active_one_is_not() -> None:
    done = memory("done", status="done", updated=days_ago(1))
    idle = memory("idle", updated=days_ago(91))
    recalled = memory("recalled", updated=days_ago(200),
                      recall=RecallStats(1, 1, days_ago(10)))
    active = memory("active", updated=days_ago(10))
    plan = plan_lifecycle([done, idle, recalled, active], NOW)
    assert {(t.id, type(t)) for t in plan} == {("done", Archive), ("idle", Archive)}
    assert "inactive for 91 days" in next(t.reason for t in plan if t.id == "idle")


def test_user_pinned_and_rules_are_never_touched() -> None:
    ancient = days_ago(5000)
    untouchable = [
        memory("u", "user", updated=ancient),
        memory("p", "project", pinned=True, status="done", updated=ancient),
        memory("pu", "user", pinned=True, updated=ancient, valid_to=date(2020, 1, 1)),
        memory("r", "feedback", rule=True, updated=ancient),
    ]
    assert plan_lifecycle(untouchable, NOW) == []


@pytest.mark.parametrize(("kind", "rule"), [("user", False), ("feedback", True),
                                             ("project", False), ("feedback", False)])
@pytest.mark.parametrize("age", [0, 1, 5000])
def test_a_superseded_preference_or_rule_is_archived_as_any_other(
    kind: str, rule: bool, age: int,
) -> None:
    """A ``user`` memory and an L2 rule never expire, but one the user superseded is
    archived like a project or a feedback memory (recoverable: a status)."""
    gone = memory("old", kind, rule=rule, updated=days_ago(age),
                  valid_to=days_ago(age).date())
    ahead = memory("ahead", kind, rule=rule, updated=days_ago(0),
                   valid_to=(NOW + timedelta(days=3)).date())  # superseded from a later day
    assert plan_lifecycle([gone, ahead], NOW) == [
        Archive("old", "Memory/old.md", f"superseded on {days_ago(age).date()}",
                "superseded")]


def test_feedback_priority_decays_per_period_and_feedback_never_expires() -> None:
    fresh = memory("fresh", "feedback", updated=days_ago(10))
    old = memory("old", "feedback", updated=days_ago(65))
    very_old = memory("very", "feedback", updated=days_ago(30 * 400))
    recalled = memory("recalled", "feedback", updated=days_ago(65),
                      recall=RecallStats(1, 1, days_ago(2)))
    assert feedback_priority(fresh, NOW) == 1.0
    assert feedback_priority(old, NOW) == 0.902  # 0.95 ** 2
    assert feedback_priority(very_old, NOW) == 0.001  # a floor: never zero
    assert feedback_priority(recalled, NOW) == 1.0  # a recall refreshes it
    assert feedback_priority(memory("rule", "feedback", rule=True, updated=days_ago(65)),
                             NOW) == 1.0
    # Feedback is never archived, and its decay writes nothing.
    assert plan_lifecycle([fresh, old, very_old], NOW) == []


def test_reference_broken_links_are_marked_and_cleared_never_archived_for_it() -> None:
    broken = memory("ref", "reference", updated=days_ago(1), unreachable=("[[Gone]]",))
    assert plan_lifecycle([broken], NOW) == [MarkBroken("ref", "Memory/ref.md", ("[[Gone]]",))]
    fixed = memory("ref", "reference", updated=days_ago(1), broken_links=("[[Gone]]",),
                   unreachable=())
    assert plan_lifecycle([fixed], NOW) == [MarkBroken("ref", "Memory/ref.md", ())]
    unchecked = memory("ref", "reference", updated=days_ago(1), broken_links=("[[Gone]]",))
    assert plan_lifecycle([unchecked], NOW) == []


def test_superseded_is_archived_and_expires_only_hides() -> None:
    superseded = memory("s", "feedback", updated=days_ago(1), valid_to=date(2026, 11, 29))
    assert plan_lifecycle([superseded], NOW) == [
        Archive("s", "Memory/s.md", "superseded on 2026-11-29", "superseded")]
    expired = memory("e", "reference", updated=days_ago(1), expires=date(2026, 11, 1))
    assert plan_lifecycle([expired], NOW) == []
    assert not is_current(MemoryState(expires=date(2026, 11, 1)), NOW.date())
    assert is_current(MemoryState(expires=NOW.date()), NOW.date())


D = date(2026, 12, 1)


@pytest.mark.parametrize(("fields", "day", "past", "current"), [
    ({}, D, False, True),
    ({"valid_to": "2026-12-02"}, D, False, True),  # ends tomorrow: current until then
    ({"valid_to": "2026-12-01"}, D, False, False),  # the first day it no longer holds
    ({"valid_to": date(2026, 11, 1)}, D, False, False),
    ({"valid_to": datetime(2026, 12, 1, 23, 0, tzinfo=UTC)}, D, False, False),
    ({"valid_to": ""}, D, False, True),  # an empty key is no date
    ({"valid_to": "soon"}, D, False, True),  # unreadable text is no date either
    ({"expires": "2026-12-01"}, D, False, True),  # the last day it holds
    ({"expires": "2026-11-30"}, D, False, False),
    ({"status": "archived"}, D, False, False),
    ({"status": " Superseded "}, D, False, False),
    ({"status": "done"}, D, False, True),  # a project's own status, not the lifecycle's
    ({"status": "archived", "archived": "2026-11-20"}, date(2026, 11, 10), True, True),
    ({"status": "archived", "archived": "2026-11-20"}, date(2026, 11, 20), True, False),
    ({"status": "archived"}, date(2026, 11, 10), True, False),  # set aside when, unknown
    ({"status": "superseded", "valid_to": "2026-11-20"}, date(2026, 11, 19), True, True),
    ({"valid_from": "2026-11-15"}, date(2026, 11, 10), True, False),  # not yet begun then
    ({"created": "2026-11-15T08:00:00Z"}, date(2026, 11, 15), True, True),
    ({"valid_from": "2026-11-15"}, date(2026, 11, 10), False, True),  # today: found
])
def test_is_current_is_the_one_rule(fields: dict[str, object], day: date, past: bool,
                                    current: bool) -> None:
    assert is_current(MemoryState.of(fields), day, past=past) is current


def test_memory_state_reads_parsed_frontmatter_and_indexed_text_alike() -> None:
    from ccb.parse import parse_note

    note = parse_note("Memory/m.md", (
        b"---\nname: m\ndescription: d\ntype: user\nvalid_to: 2026-12-05\n"
        b"expires: '2027-01-01'\nstatus: archived\n---\nbody\n"))
    assert note.memory is not None
    assert MemoryState.of(note.memory) == MemoryState.of(
        {"valid_to": "2026-12-05", "expires": "2027-01-01", "status": "archived"})


def test_recall_promotes_and_silence_demotes() -> None:
    popular = memory("pop", updated=days_ago(5), recall=RecallStats(4, 3, days_ago(1)))
    twice = memory("two", updated=days_ago(5), recall=RecallStats(9, 2, days_ago(1)))
    forgotten = memory("old", updated=days_ago(5), resident=True,
                       recall=RecallStats(5, 3, days_ago(61)))
    plan = plan_lifecycle([popular, twice, forgotten], NOW)
    assert [type(t) for t in plan] == [Promote, Demote]
    assert [t.id for t in plan] == ["pop", "old"]


def test_rule_force_in_english_and_chinese() -> None:
    assert has_rule_force("Never commit secrets to the repo")
    assert has_rule_force("提交前务必运行测试")
    assert not has_rule_force("Prefers tea in the afternoon")
    # a standing instruction is a rule the assistant keeps in every session
    assert has_rule_force("Write commit messages in Chinese from now on")
    assert has_rule_force("Avoid emoji in replies")
    assert has_rule_force("以后周报用中文写")
    assert has_rule_force("代码注释一律用英文")
    assert not has_rule_force("The avocado tree needs more light")


# --------------------------------------------------------------------------- properties

moments = st.integers(min_value=0, max_value=3000).map(days_ago)
maybe_moment = st.none() | moments
memories = st.builds(
    LifecycleMemory,
    id=st.uuids().map(str),
    path=st.just("Memory/x.md"),
    type=st.sampled_from(["user", "feedback", "project", "reference"]),
    status=st.sampled_from([None, "done", "active", "archived"]),
    pinned=st.booleans(),
    resident=st.booleans(),
    rule=st.booleans(),
    created=maybe_moment,
    updated=maybe_moment,
    valid_to=st.none() | moments.map(lambda m: m.date()),
    expires=st.none() | moments.map(lambda m: m.date()),
    unreachable=st.none() | st.just(("[[Gone]]",)),
    recall=st.builds(RecallStats, count=st.integers(0, 9), distinct_queries=st.integers(0, 9),
                     last=maybe_moment),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(memories, max_size=12), st.integers(0, 4000), st.integers(0, 4000))
def test_properties_subset_user_untouched_archive_monotonic(
    batch: list[LifecycleMemory], earlier: int, later: int
) -> None:
    first, second = sorted((earlier, later))
    now1, now2 = NOW + timedelta(days=first), NOW + timedelta(days=second)
    plan1 = plan_lifecycle(batch, now1)
    plan2 = plan_lifecycle(batch, now2)
    ids = {m.id for m in batch}
    assert {t.id for t in plan1} <= ids  # result ⊆ input
    untouchable = {m.id for m in batch if m.pinned}
    assert not untouchable & {t.id for t in plan1 + plan2}  # a pin: no transition
    no_policy = {m.id for m in batch if m.type == "user" or (m.type == "feedback" and m.rule)}
    assert all(isinstance(t, Archive) and t.code == "superseded"
               for t in plan1 + plan2 if t.id in no_policy)  # only a supersession
    archived1 = {t.id for t in plan1 if isinstance(t, Archive)}
    archived2 = {t.id for t in plan2 if isinstance(t, Archive)}
    assert archived1 <= archived2  # monotonic in now
    for plan in (plan1, plan2):
        per_memory = [t.id for t in plan if isinstance(t, Archive)]
        assert len(per_memory) == len(set(per_memory))  # at most one archive each
    for m in batch:  # the decay stays in (0, 1] and never grows with time
        assert 0 < feedback_priority(m, now2) <= feedback_priority(m, now1) <= 1


@pytest.mark.parametrize("written", [
    "2020-01-01 (moved)", "2020-01-01T25:00:00Z", "2020-01-01x", "2026-06-01 (moved studios)",
    "soon", "2026-13-45", "[a, b]", "2020-02-30", "20200101", "2020-01-01", "2999-01-01",
])
@pytest.mark.parametrize("key", ["valid_to", "expires"])
def test_a_memory_file_and_its_index_row_agree_on_whether_it_is_current(
        written: str, key: str) -> None:
    """The parsed memory (remember, show, MEMORY.md) and the indexed properties (search,
    context) read one day from one text, so one rule gives one answer."""
    from ccb.parse import parse_note
    note = parse_note("Memory/a.md",
                      f"---\ntype: user\nname: a\n{key}: {written}\n---\nx\n".encode())
    assert note.memory is not None
    for day in (date(2019, 12, 31), date(2020, 1, 2), date(2026, 12, 3)):
        assert is_current(MemoryState.of(note.memory, past=False), day) == is_current(
            MemoryState.of(note.properties, past=False), day), (written, day)
