"""The checker and the arbiter are pure: typed snapshots in, drift and decisions out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from consistency.arbiter import (
    CancelForget,
    FinishForget,
    KeepFile,
    ManualReview,
    NewId,
    RebuildMemoryIndex,
    Reindex,
    RepairArchive,
    Report,
    TakeMagma,
    Tombstone,
    decide,
    is_automatic,
    kept_sides,
)
from consistency.checker import (
    ArchiveOutOfStep,
    Behind,
    BrokenLink,
    Contradiction,
    Divergent,
    DuplicateId,
    FileSide,
    ForgetUnfinished,
    HistorySide,
    IndexFileOutOfDate,
    IndexSide,
    Missing,
    NotInVault,
    OpenConflict,
    Orphaned,
    Snapshot,
    Stale,
    check,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
P = "Memory/tests.md"


def _memory(f: str, *, mtype: str = "feedback", path: str = P, subject: str | None = None,
            owner: str | None = None, live: bool = True, key: str = "K") -> FileSide:
    return FileSide(path, f, key, mtype, subject, owner, live)


def _head(h: str, n: int = 2, *, kind: str = "edit", older: tuple[str, ...] = ("b",),
          mtype: str = "feedback") -> HistorySide:
    return HistorySide("K", n, h, kind, P, mtype,  # type: ignore[arg-type]
                       frozenset({h, *older}) - ({h} if kind == "tombstone" else set()))


def _snap(files: list[FileSide], rows: list[IndexSide], heads: list[HistorySide],
          **extra: object) -> Snapshot:
    return Snapshot(files={f.path: f for f in files}, index={r.path: r for r in rows},
                    history={h.memory_key: h for h in heads}, now=NOW, **extra)  # type: ignore[arg-type]


# file hash F, base B (index row), head H — the table of consistency/checker.py
@pytest.mark.parametrize(("f", "b", "h", "expected"), [
    ("x", "x", "x", []),
    ("x", "b", "b", [Stale]),            # edited here since the last sync
    ("x", "b", "x", [Stale]),            # history already has it, the index row not
    ("b", "b", "y", [Behind]),           # another device moved on
    ("x", "b", "y", [Divergent]),        # both changed since the base
])
def test_the_three_sides_of_a_memory(f: str, b: str, h: str, expected: list[type]) -> None:
    drift = check(_snap([_memory(f)], [IndexSide(P, b, "K")], [_head(h)]))
    assert [type(d) for d in drift] == expected


def test_the_base_recorded_for_the_device_wins_over_the_index_row() -> None:
    # the index row follows the file (x) but this device never agreed to x: still divergent
    drift = check(_snap([_memory("x")], [IndexSide(P, "x", "K")], [_head("y")],
                        bases={"K": "b"}))
    assert [type(d) for d in drift] == [Divergent]
    assert drift[0].base_hash == "b"  # type: ignore[union-attr]


def test_without_a_base_an_old_version_is_behind_and_anything_else_divergent() -> None:
    behind = check(_snap([_memory("b")], [], [_head("y")]))
    assert {type(d) for d in behind} == {Missing, Behind}
    divergent = check(_snap([_memory("z")], [], [_head("y")]))
    assert {type(d) for d in divergent} == {Missing, Divergent}


def test_a_memory_without_history_is_missing_there() -> None:
    drift = check(_snap([_memory("x")], [IndexSide(P, "x", "K")], []))
    assert drift == [Missing(P, "K", "history")]


def test_notes_are_compared_with_their_index_rows_only() -> None:
    files = [FileSide("a.md", "1"), FileSide("b.md", "2")]
    drift = check(_snap(files, [IndexSide("a.md", "1"), IndexSide("b.md", "old"),
                                IndexSide("gone.md", "3")], []))
    assert drift == [Stale("b.md", None, "2", "old"), Orphaned("gone.md", None, confirmed=True)]


def test_a_deleted_memory_is_tombstoned_only_once_it_stays_gone() -> None:
    head = _head("x")
    fresh = check(_snap([], [], [head], pending_gone={"K": NOW - timedelta(seconds=10)}))
    assert fresh == [Orphaned(P, "K", confirmed=False)]
    assert not is_automatic(decide(fresh[0]))
    old = check(_snap([], [], [head], pending_gone={"K": NOW - timedelta(hours=1)}))
    assert old == [Orphaned(P, "K", confirmed=True)]
    assert decide(old[0]) == Tombstone(P, "K", True) and is_automatic(decide(old[0]))


def test_a_memory_another_device_made_is_not_in_this_vault() -> None:
    drift = check(_snap([], [], [_head("x", 3)]))
    assert drift == [NotInVault("K", P, 3)]
    assert isinstance(decide(drift[0]), Report)


@pytest.mark.parametrize(("files", "rows", "pending_gone"), [
    ([], [], {}),  # rows purged, versions not yet: would be "made on another device"
    ([], [IndexSide(P, "x", "K")], {}),  # the file gone, its row not
    ([], [], {"K": NOW - timedelta(hours=1)}),  # seen go by a sync: would be tombstoned
    ([_memory("x")], [IndexSide(P, "x", "K")], {}),  # killed before the file went
])
def test_a_forget_cut_short_is_reported_as_such_and_finished_by_the_fix(
        files: list[FileSide], rows: list[IndexSide],
        pending_gone: dict[str, datetime]) -> None:
    begun = ForgetUnfinished(P, "K")
    other = _memory("o", path="Memory/other.md", key="O")
    others_head = HistorySide("O", 1, "o", "edit", other.path, "feedback", frozenset({"o"}))
    drift = check(_snap([*files, other], [*rows, IndexSide(other.path, "o", "O")],
                        [_head("x", 3), others_head], pending_gone=pending_gone,
                        forgets_unfinished=[begun],
                        broken_links=[(other.path, "[[tests]]")]))
    assert drift == [begun]  # no orphan, no other device's memory, no link to settle
    decision = decide(drift[0])
    assert isinstance(decision, FinishForget) and decision.memory_key == "K"
    assert not is_automatic(decision)  # check --fix, never the daemon on its own


def test_a_forget_cut_short_whose_file_was_edited_since_is_kept_by_the_fix() -> None:
    edited = ForgetUnfinished(P, "K", edited=True)
    drift = check(_snap([_memory("y")], [IndexSide(P, "x", "K")], [_head("x", 3)],
                        forgets_unfinished=[edited]))
    assert drift == [edited]
    assert isinstance(decide(edited), CancelForget)


def test_a_renamed_memory_is_not_orphaned() -> None:
    moved = _memory("x", path="Memory/renamed.md")
    drift = check(_snap([moved], [IndexSide(P, "x", "K")], [_head("x")]))
    assert Orphaned(P, None, confirmed=True) in drift  # only the old row goes
    assert not any(isinstance(d, Orphaned) and d.memory_key for d in drift)


def test_a_tombstoned_memory_back_in_the_vault() -> None:
    tomb = _head("", 3, kind="tombstone", older=("x",))
    assert [type(d) for d in check(_snap([_memory("x")], [IndexSide(P, "x", "K")], [tomb],
                                         bases={"K": "x"}))] == [Behind]  # deleted elsewhere
    restored = check(_snap([_memory("x")], [], [tomb]))
    assert Stale in {type(d) for d in restored}  # restored here: a new version


def test_duplicate_id_keeps_the_file_the_history_names() -> None:
    copy = _memory("x", path="Memory/tests copy.md")
    drift = check(_snap([_memory("x"), copy], [IndexSide(P, "x", "K")], [_head("x")]))
    dup = next(d for d in drift if isinstance(d, DuplicateId))
    assert dup.keep == P
    assert decide(dup) == NewId("K", P, ("Memory/tests copy.md",))


def test_contradiction_needs_same_owner_type_subject_and_both_live() -> None:
    a = _memory("1", path="Memory/a.md", subject="Billing.Timeout", key="A")
    b = _memory("2", path="Memory/b.md", subject="billing.timeout ", key="B")
    other_owner = _memory("3", path="Memory/c.md", subject="billing.timeout", owner="bob",
                          key="C")
    superseded = _memory("4", path="Memory/d.md", subject="billing.timeout", live=False,
                         key="D")
    rows = [IndexSide(f.path, f.content_hash, f.memory_key) for f in (a, b, other_owner,
                                                                      superseded)]
    heads = [HistorySide(f.memory_key or "", 1, f.content_hash, "edit", f.path, "feedback",
                         frozenset({f.content_hash})) for f in (a, b, other_owner, superseded)]
    drift = check(_snap([a, b, other_owner, superseded], rows, heads))
    assert drift == [Contradiction("feedback", "billing.timeout", ("Memory/a.md",
                                                                   "Memory/b.md"))]


def test_other_drift_kinds_and_their_decisions() -> None:
    drift = check(_snap([], [], [], broken_links=[(P, "Nowhere")],
                        memory_index_path="Memory/MEMORY.md", memory_index_current=False,
                        archive_out_of_step=True))
    assert drift == [BrokenLink(P, "Nowhere"), IndexFileOutOfDate("Memory/MEMORY.md"),
                     ArchiveOutOfStep()]
    assert [type(decide(d)) for d in drift] == [Report, RebuildMemoryIndex, RepairArchive]
    conflict = check(_snap([_memory("x")], [IndexSide(P, "x", "K")], [_head("y")],
                           open_conflicts={"K": "Memory/tests.conflict-1.md"}))
    assert conflict == [OpenConflict(P, "K", "Memory/tests.conflict-1.md")]


@pytest.mark.parametrize(("mtype", "decision"), [
    ("user", KeepFile), ("feedback", KeepFile), ("reference", TakeMagma),
    ("project", ManualReview), (None, ManualReview),
])
def test_the_arbiter_rules_by_type(mtype: str | None, decision: type) -> None:
    made = decide(Divergent(P, "K", mtype, "x", 4, "b"))
    assert isinstance(made, decision) and not is_automatic(made)
    if isinstance(made, TakeMagma):
        assert made.keep_file  # the file's own version is kept in the history


def test_only_index_side_repairs_are_automatic() -> None:
    assert is_automatic(decide(Stale(P, "K", "x", "b")))
    assert is_automatic(decide(Missing(P, None, "index")))
    assert decide(Missing(P, "K", "history")) == Reindex(P, "K")
    assert not is_automatic(decide(Behind(P, "K", "feedback", 3, deleted=False)))
    assert isinstance(decide(Behind(P, "K", "feedback", 3, deleted=True)), Report)


_HASHES = st.sampled_from(["a", "b", "c", "d"])


@given(mtype=st.sampled_from(["user", "feedback", "project", "reference", "custom"]) | st.none(),
       f=_HASHES, head=_HASHES, base=_HASHES | st.none(), n=st.integers(1, 50))
def test_the_arbiter_never_loses_a_side(
    mtype: str | None, f: str, head: str, base: str | None, n: int
) -> None:
    """Whatever diverged, both contents stay reachable (vault or history) after the decision."""
    decision = decide(Divergent(P, "K", mtype, f, n, base))
    assert kept_sides(decision) == {"file", "magma"}


@given(f=_HASHES, b=_HASHES | st.none(), h=_HASHES, kind=st.sampled_from(["edit", "tombstone"]),
       in_history=st.booleans())
def test_every_drift_has_a_decision_and_a_file_is_never_written_automatically(
    f: str, b: str | None, h: str, kind: str, in_history: bool
) -> None:
    older = ("a", "b", "c", "d") if in_history else ()
    rows = [IndexSide(P, b, "K")] if b is not None else []
    for drift in check(_snap([_memory(f)], rows, [_head(h, kind=kind, older=older)])):
        decision = decide(drift)
        if isinstance(decision, KeepFile | TakeMagma | ManualReview | NewId):
            assert not is_automatic(decision)
