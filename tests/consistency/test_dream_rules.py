"""Dream rules: the gate, and which memories a dream merges or supersedes (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from consistency.dream import (
    DreamMemory,
    LinkPossible,
    MergeDuplicate,
    SupersedeOld,
    dream_due,
    groups_to_compare,
    plan_consolidation,
)
from consistency.duplicates import normalised_hash

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
GATE = {"min_hours": 24, "max_hours": 168, "min_sessions": 5}


def test_gate_needs_time_and_sessions_and_forces_after_a_week() -> None:
    yesterday = NOW - timedelta(hours=25)
    assert dream_due(last_dream=yesterday, sessions=5, now=NOW, **GATE).due
    assert not dream_due(last_dream=yesterday, sessions=4, now=NOW, **GATE).due
    assert "4 sessions" in dream_due(last_dream=yesterday, sessions=4, now=NOW, **GATE).reason
    assert not dream_due(last_dream=NOW - timedelta(hours=3), sessions=50, now=NOW, **GATE).due
    forced = dream_due(last_dream=NOW - timedelta(hours=169), sessions=0, now=NOW, **GATE)
    assert forced.due and forced.forced
    assert dream_due(last_dream=None, sessions=0, now=NOW, **GATE).forced  # never dreamed


def mem(id: str, body: str, *, subject: str | None = "s", type: str = "user",
        day: int = 1, changed: bool = True, owner: str | None = None) -> DreamMemory:
    return DreamMemory(
        id=id, path=f"Memory/{id}.md", type=type, name="note", description="",  # type: ignore[arg-type]
        subject=subject, owner=owner, content_hash=normalised_hash(body),
        created=datetime(2026, 1, day, tzinfo=UTC), changed=changed, body=body)


def test_exact_near_contradiction_and_lookalike() -> None:
    plan = plan_consolidation([
        mem("a1", "Use pnpm for installs.", subject="tools.pm", day=1),
        mem("a2", "use **pnpm** for installs", subject="tools.pm", day=2),
        mem("b1", "Run the linter before every commit.", subject="lint", day=1),
        mem("b2", "Run the linter before every commit. It catches typos.", subject="lint",
            day=3),
        mem("c1", "The API timeout is 30s.", subject="api.timeout", day=1),
        mem("c2", "The API timeout is 60s.", subject="api.timeout", day=4),
        mem("d1", "Prefers dark mode in the editor.", subject="editor.theme", day=1),
        mem("d2", "Prefers dark mode in the terminal.", subject="terminal.theme", day=2),
    ])
    merges = {(a.keeper_id, a.duplicate_id, a.kind) for a in plan
              if isinstance(a, MergeDuplicate)}
    assert merges == {("a1", "a2", "exact"), ("b1", "b2", "near")}
    near = next(a for a in plan if isinstance(a, MergeDuplicate) and a.kind == "near")
    assert near.keeper_body is not None and "It catches typos." in near.keeper_body
    supersede = [a for a in plan if isinstance(a, SupersedeOld)]
    assert [(a.old_id, a.new_id) for a in supersede] == [("c1", "c2")]
    assert "30" in supersede[0].reason and "60" in supersede[0].reason


def test_unchanged_memories_are_not_compared_again_and_owners_stay_apart() -> None:
    unchanged = [mem("x1", "Use tabs.", subject="indent", changed=False),
                 mem("x2", "use tabs", subject="indent", day=2, changed=False)]
    assert plan_consolidation(unchanged) == []
    assert groups_to_compare(unchanged) == set()
    owners = [mem("o1", "Use tabs.", owner="alice"), mem("o2", "Use tabs.", owner="bob")]
    assert plan_consolidation(owners) == []


bodies = st.sampled_from([
    "Use pnpm for installs.", "use pnpm for installs", "Use npm for installs.",
    "Never use mocks in tests.", "Use mocks in tests.", "Timeout is 30s.", "Timeout is 60s.",
    "Prefers dark mode.", "Prefers light mode.", "Prefers dark mode. Really.",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(bodies, st.sampled_from(["a", "b", None]), st.booleans(),
                          st.sampled_from(["user", "feedback"])), max_size=8))
def test_plan_names_only_inputs_and_never_archives_twice(
    rows: list[tuple[str, str | None, bool, str]],
) -> None:
    memories = [mem(f"m{i}", body, subject=subject, day=i + 1, changed=changed, type=kind)
                for i, (body, subject, changed, kind) in enumerate(rows)]
    plan = plan_consolidation(memories)
    ids = {m.id for m in memories}
    closed: list[str] = []
    for action in plan:
        if isinstance(action, MergeDuplicate):
            assert {action.keeper_id, action.duplicate_id} <= ids
            closed.append(action.duplicate_id)
        elif isinstance(action, LinkPossible):  # both kept: nothing closed
            assert {action.old_id, action.new_id} <= ids and action.old_id != action.new_id
        else:
            assert {action.old_id, action.new_id} <= ids
            closed.append(action.old_id)
    assert len(closed) == len(set(closed))  # each memory closed at most once
    keepers = {a.keeper_id for a in plan if isinstance(a, MergeDuplicate)}
    assert not keepers & {a.duplicate_id for a in plan if isinstance(a, MergeDuplicate)}
    assert plan_consolidation(memories) == plan  # deterministic


def test_a_change_between_memories_written_at_one_moment_supersedes_neither() -> None:
    # which of the two is newer cannot be told: both stay current (a shorter file name is
    # no evidence of age)
    plan = plan_consolidation([
        mem("deploys-on-fridays", "Deploys to production happen on Fridays.",
            subject="deploy.day", day=5),
        mem("deploys-on-tuesdays", "Deploys to production happen on Tuesdays.",
            subject="deploy.day", day=5),
    ])
    assert not [a for a in plan if isinstance(a, SupersedeOld)]
    later = plan_consolidation([
        mem("deploys-on-fridays", "Deploys to production happen on Fridays.",
            subject="deploy.day", day=5),
        mem("deploys-on-tuesdays", "Deploys to production happen on Tuesdays.",
            subject="deploy.day", day=6),
    ])
    assert [(a.old_id, a.new_id) for a in later if isinstance(a, SupersedeOld)] == [
        ("deploys-on-fridays", "deploys-on-tuesdays")]


def _planted(root: Path, count: int, *, subjectless: int = 0) -> list[DreamMemory]:
    """The dream bench's planted memory set (``bench/memory_set.py``: duplicates,
    near-duplicates, contradictions, look-alikes, background) as the dream reads it, with
    vectors of the token-hash FAKE embedder (near in words is near in vector: the groups
    join by meaning as with the real model); every eighth memory unchanged since the last
    dream, every thirteenth without a vector, every ``subjectless``-th without its subject
    (none when 0: what an assistant writes over MCP)."""
    from fakes import TokenHashEmbedder
    from memory_set import generate

    from ccb.parse import parse_note

    generate(root, count=count, seed=3)
    out = []
    for i, path in enumerate(sorted((root / "Memory").glob("*.md"))):
        rel = path.relative_to(root).as_posix()
        note = parse_note(rel, path.read_bytes())
        meta = note.memory
        assert meta is not None
        body = note.body.strip()
        vector = TokenHashEmbedder().embed([f"{meta.name}\n{body}"])[0]
        out.append(DreamMemory(
            id=rel, path=rel, type=meta.type, name=meta.name, description=meta.description,
            subject=None if subjectless and i % subjectless == 2 else meta.subject,
            owner=meta.owner, content_hash=normalised_hash(body),
            created=meta.created, changed=i % 8 != 5, body=body,
            embedding=None if i % 13 == 0 else vector))
    return out


def _planned_whole(memories: list[DreamMemory]) -> list:
    """The plan with every older member given to each ``decide`` (no narrowing by subject
    nor by bulk scores)."""
    import consistency.dream as rules

    saved, own = rules.BULK_GROUP, rules._own_subjects
    rules.BULK_GROUP = 10**9
    rules._own_subjects = lambda group: [False] * len(group)  # type: ignore[assignment]
    try:
        return plan_consolidation(memories)
    finally:
        rules.BULK_GROUP, rules._own_subjects = saved, own


def _planned_in_bulk(memories: list[DreamMemory]) -> list:
    """The plan narrowed by the bulk scores alone (no narrowing by subject)."""
    import consistency.dream as rules

    own = rules._own_subjects
    rules._own_subjects = lambda group: [False] * len(group)  # type: ignore[assignment]
    try:
        return plan_consolidation(memories)
    finally:
        rules._own_subjects = own


def test_a_large_group_is_planned_as_if_every_member_were_judged(tmp_path: Path) -> None:
    """Above BULK_GROUP members, each decide sees only the superset of its candidates the
    group's bulk scores give (consistency.pair_candidates), or, for a memory whose subject
    no other reads as the same, the older memories of its subject: the plan is the one
    judging every member gives. (Every sixth memory without a subject: each joins its
    nearest by meaning, however far, into one group.)"""
    import consistency.dream as rules

    memories = _planted(tmp_path, 400, subjectless=6)
    assert max(len(g) for g in rules._comparison_groups(memories)) > 4 * rules.BULK_GROUP
    whole = _planned_whole(memories)
    assert plan_consolidation(memories) == whole
    assert _planned_in_bulk(memories) == whole
    kinds = {type(a).__name__ + (a.kind if isinstance(a, MergeDuplicate) else "")
             for a in whole}
    assert kinds == {"MergeDuplicateexact", "MergeDuplicatenear", "SupersedeOld",
                     "LinkPossible"}


def test_subjects_read_as_one_or_missing_are_planned_as_if_every_member_were_judged(
        tmp_path: Path) -> None:
    """Subjects that read as one subject in other keys ("deploy.cadence" / "cadence deploy",
    "allergy" / "过敏") and memories without a subject, among a large group: each decide
    still answers as if it saw every older member, and those pairs are still judged."""
    memories = _planted(tmp_path, 400)
    by_subject: dict[str | None, list[int]] = {}
    for i, memory in enumerate(memories):
        by_subject.setdefault(memory.subject, []).append(i)
    pairs = [rows for rows in by_subject.values() if len(rows) == 2]
    assert len(pairs) > 30
    changed = list(memories)
    for n, rows in enumerate(pairs[:30]):
        first, second = sorted(rows, key=lambda i: memories[i].created or NOW)  # older first
        subject = memories[first].subject or ""
        if n % 3 == 0:  # the same words in another order
            other = " ".join(reversed(subject.replace(".", " ").split()))
        elif n % 3 == 1:  # no subject on the older one, or on the newer one
            other = None
            if n % 2:
                changed[first], other = replace(memories[first], subject=None), subject
        else:  # the same subject in the other language (the lexicon's word)
            changed[first] = replace(memories[first], subject="allergy")
            other = "过敏"
        changed[second] = replace(memories[second], subject=other)
    changed += [mem("allergy-1", "I am allergic to cats.", subject="allergy", day=1),
                mem("allergy-2", "I am allergic to cats and dogs.", subject="过敏", day=2)]
    plan = plan_consolidation(changed)
    assert plan == _planned_whole(changed)
    assert {"allergy-1", "allergy-2"} & {getattr(a, "duplicate_id", None) for a in plan}


def test_a_synthesis_is_never_merged_into_its_own_source() -> None:
    """A summary derived from a memory restates it: the two stay, the source is never
    archived into what was made of it (nor the summary into the source)."""
    source = mem("timeout", "The API timeout is 30s.", subject="api.timeout", day=1)
    summary = replace(mem("api-summary", "The API timeout is 30s. Retries: three.",
                          subject="api.timeout", day=5), derived_from=frozenset({"timeout"}))
    assert plan_consolidation([source, summary]) == []
    plain = mem("api-notes", "The API timeout is 30s. Retries: three.", subject="api.timeout",
                day=5)
    assert plan_consolidation([source, plain])  # without the lineage, the same text merges


def test_nor_into_a_source_of_its_source() -> None:
    """A digest of a summary of a memory restates the memory: the three stay (the user's
    memory was archived into the digest, then the summary and the digest for their changed
    sources: nothing was left live)."""
    source = mem("backups", "Backups run nightly at 02:00 to bucket bk-7.", subject="backups",
                 day=1)
    summary = replace(mem("summary", "Nightly backups go to bk-7 at 02:00.", subject="backups",
                          day=3), derived_from=frozenset({"backups"}))
    digest = replace(mem("digest", "Backups run nightly at 02:00 to bucket bk-7. Checked.",
                         subject="backups", day=5), derived_from=frozenset({"summary"}))
    assert not [a for a in plan_consolidation([source, summary, digest])
                if {getattr(a, "duplicate_id", None), getattr(a, "keeper_id", None)}
                >= {"backups", "digest"}]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 14), st.sampled_from(["s", "t", "u", None]),
                          st.booleans(), st.integers(0, 2)), min_size=1, max_size=15),
       st.integers(0, 2**32 - 1))
def test_comparison_groups_are_the_connected_components(
        rows: list[tuple[int, str | None, bool, int]], seed: int) -> None:
    """The groups are the connected components of the pairs (same subject, neighbours by
    meaning), as networkx finds them: each ordered by its smallest id, members in order."""
    import networkx as nx
    import numpy as np

    import consistency.dream as rules

    vectors = np.random.default_rng(seed).normal(size=(3, 8))
    memories = [replace(mem(f"m{i:02d}", f"body {i}", subject=subject, changed=changed,
                            day=1 + i % 3), id=f"m{n:02d}", embedding=vectors[v])
                for i, (n, subject, changed, v) in enumerate(rows)]
    graph = nx.Graph()
    graph.add_nodes_from(m.id for m in memories)
    _, by_subject = rules._groups(memories)
    for group in by_subject.values():
        if len(group) > 1 and any(g.changed for g in group):
            graph.add_edges_from((group[0].id, m.id) for m in group[1:])
    graph.add_edges_from(rules._meaning_pairs(memories))
    root = {i: min(ids) for ids in nx.connected_components(graph) for i in ids}
    expected: dict[str, list[DreamMemory]] = {}
    for memory in memories:
        expected.setdefault(root[memory.id], []).append(memory)
    assert rules._comparison_groups(memories) == [
        g for _r, g in sorted(expected.items()) if len(g) > 1 and any(m.changed for m in g)]


def _judged_by_meaning(memories: list[DreamMemory]) -> set[tuple[str, str]]:
    """The pairs ``decide`` judges by meaning or by words, each changed memory as the draft
    against the older memories of its owner and type (and against the newer unchanged
    ones), as a full sort of each finds them: its eight nearest by cosine (ties at the
    eighth kept, as the bulk scores keep them), every one of its subject and of its
    normalised text (memories with a usable vector only), and those whose descriptions
    share its words (Dice ≥ 0.3, the sixteen most alike and the ties beside the last; a
    vector or not); pairs of two subjects that read as two left out."""
    import numpy as np

    import consistency.dream as rules
    from consistency.claims import dice, read_tokens
    from consistency.duplicates import CANDIDATE_LEXICAL, CANDIDATES_BY_WORDS
    from consistency.judgement import subject_class, subject_key

    def usable(vector: np.ndarray | None) -> bool:
        return vector is not None and bool(np.isfinite(vector).all()) and bool(vector.any())

    def reading(memory: DreamMemory) -> object:
        key = subject_key(memory.subject)
        return None if key is None else subject_class(key)

    def tokens(memory: DreamMemory) -> tuple[str, ...]:
        day = memory.created.date() if isinstance(memory.created, datetime) else None
        return read_tokens(memory.description, written=day) if memory.description else ()

    by_kind: dict[tuple[str, str], list[DreamMemory]] = {}
    for m in memories:
        by_kind.setdefault(((m.owner or "").strip().casefold(), m.type), []).append(m)
    out: set[tuple[str, str]] = set()
    for members in by_kind.values():
        members = sorted(members, key=rules._created_key)
        unit = [m.embedding / np.linalg.norm(m.embedding) if usable(m.embedding) else None
                for m in members]  # type: ignore[operator]
        for i, m in enumerate(members):
            if not m.changed:
                continue
            for rows in (list(range(i)), [j for j in range(i + 1, len(members))
                                          if not members[j].changed]):
                chosen: set[int] = set()
                near = [j for j in rows if unit[j] is not None]
                if unit[i] is not None:
                    cosines = {j: float(unit[i] @ unit[j]) for j in near}  # type: ignore[operator]
                    ranked = sorted(near, key=lambda j: (-cosines[j], members[j].id))
                    chosen = set(ranked[:rules.NEIGHBOURS_BY_COSINE])
                    if len(ranked) > rules.NEIGHBOURS_BY_COSINE:
                        last = cosines[ranked[rules.NEIGHBOURS_BY_COSINE - 1]]
                        chosen |= {j for j in near if abs(cosines[j] - last) <= 1e-9}
                    chosen |= {j for j in near if members[j].content_hash == m.content_hash or (
                        subject_key(m.subject) is not None
                        and subject_key(members[j].subject) == subject_key(m.subject))}
                alike = {j: dice(tokens(m), tokens(members[j])) for j in rows}
                alike = {j: d for j, d in alike.items() if d >= CANDIDATE_LEXICAL - 1e-12}
                if len(alike) > CANDIDATES_BY_WORDS:
                    last = sorted(alike.values(), reverse=True)[CANDIDATES_BY_WORDS - 1]
                    alike = {j: d for j, d in alike.items() if d >= last - 1e-12}
                chosen |= set(alike)
                out |= {(m.id, members[j].id) for j in chosen
                        if None in (reading(m), reading(members[j]))
                        or reading(m) == reading(members[j])}
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.sampled_from(["x", "X ", None]),
                          st.sampled_from(["user", "user", "project"]),
                          st.sampled_from([None, None, "s", "S.", "t", "allergy", "过敏"]),
                          st.integers(1, 4)),
                min_size=1, max_size=60),
       st.integers(0, 2**32 - 1), st.booleans())
@example(rows=[(0, True, None, "user", None, 1)] * 20, seed=0, nan=False)
@example(rows=[(3, True, None, "user", None, 2)] * 10 + [(0, True, None, "user", "s", 1)] * 3,
         seed=0, nan=True)
def test_groups_join_what_decide_would_judge_by_meaning(
        rows: list[tuple[int, bool, str | None, str, str | None, int]], seed: int,
        nan: bool) -> None:
    """The comparison groups are the connected components of the pairs of one subject and
    of the pairs ``decide`` would judge by meaning or by words, however far apart (a full
    sort of every changed memory's older and newer unchanged ones: ties at the eighth kept,
    owners and types apart, two subjects that read as two never joined by meaning, a vector that
    is not a number never anyone's neighbour — ten memories of one such vector beside
    three of another)."""
    import networkx as nx
    import numpy as np

    import consistency.dream as rules

    # eighths: every product is exact, so ties are ties whatever the order of the sums
    vectors = np.random.default_rng(seed).integers(-8, 9, size=(4, 4)).astype(np.float32) / 8
    vectors[0] = [1, 0, 0, 0]  # (always its own copies' neighbour)
    if nan:
        vectors[3, 0] = np.nan
    # descriptions that share words or not (a normalised restatement, another fact, none)
    descriptions = ["Use pnpm for installs.", "- use **pnpm** for installs!",
                    "Deploy on Fridays.", ""]
    memories = [replace(mem(f"m{i:02d}", f"body {i % 5}", changed=changed, type=kind,
                            subject=subject, day=day),
                        owner=owner, embedding=vectors[v],
                        description=descriptions[(v + day) % len(descriptions)])
                for i, (v, changed, owner, kind, subject, day) in enumerate(rows)]
    graph = nx.Graph()
    graph.add_nodes_from(m.id for m in memories)
    _, by_subject = rules._groups(memories)
    for group in by_subject.values():
        if len(group) > 1 and any(g.changed for g in group):
            graph.add_edges_from((group[0].id, m.id) for m in group[1:])
    graph.add_edges_from(_judged_by_meaning(memories))
    root = {i: min(ids) for ids in nx.connected_components(graph) for i in ids}
    expected: dict[str, list[DreamMemory]] = {}
    for memory in memories:
        expected.setdefault(root[memory.id], []).append(memory)
    assert rules._comparison_groups(memories) == [
        g for _r, g in sorted(expected.items()) if len(g) > 1 and any(m.changed for m in g)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=10, unique=True),
       st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=20))
def test_id_sets_are_the_sets_networkx_makes_of_the_same_unions(
        ids: list[str], unions: list[tuple[int, int]]) -> None:
    """The comparison groups' union-find (``consistency.dream._IdSets``) puts together what
    ``networkx.utils.UnionFind`` does, and names each set by its smallest id."""
    from networkx.utils import UnionFind

    from consistency.dream import _IdSets

    ours, theirs = _IdSets([*ids, *ids[:1]]), UnionFind(ids)  # an id given twice is one
    for a, b in unions:
        a_id, b_id = ids[a % len(ids)], ids[b % len(ids)]
        ours.union(a_id, b_id)
        theirs.union(a_id, b_id)
    expected = {member: min(group) for group in theirs.to_sets() for member in group}
    assert ours.smallest() == expected
