"""``bench/memory_set.py``: the synthetic memory set with planted pairs and known answers.

Real files in a temp folder: 200 memories (6 pairs of each kind), generated once per module.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ulid import ULID

from ccb.frontmatter_edit import set_properties
from ccb.model import MEMORY_TYPES, MemoryMeta
from ccb.parse import parse_note
from consistency.duplicates import (
    Duplicate,
    MemoryDraft,
    MemoryFacts,
    New,
    Supersede,
    Update,
    decide,
    normalised_hash,
)

COUNT = 200
PAIRS = 6  # round(200 * 3%) per kind


import memory_set as ms_mod  # noqa: E402  (bench/ is on pytest's pythonpath)

MemorySet = Any  # ms_mod.MemorySet (a module loaded by path has no static type)


@pytest.fixture(scope="module")
def memory_set(tmp_path_factory: pytest.TempPathFactory) -> MemorySet:
    return ms_mod.generate(tmp_path_factory.mktemp("vault"), count=COUNT)


def _read(ms: MemorySet, path: str) -> tuple[MemoryMeta, str]:
    note = parse_note(path, (ms.root / path).read_bytes())
    assert note.memory is not None, path
    assert note.problems == (), note.problems
    return note.memory, note.body


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def test_writes_count_files_and_is_deterministic(
    memory_set: MemorySet, tmp_path: Path
) -> None:
    first = _files(memory_set.root)
    assert len(first) == COUNT == len(memory_set.paths)
    assert sorted(first) == list(memory_set.paths)
    again = ms_mod.generate(tmp_path / "again", count=COUNT)
    assert again.planted == memory_set.planted
    assert _files(again.root) == first  # same names, same bytes
    other_seed = ms_mod.generate(tmp_path / "other", count=COUNT, seed=8)
    assert _files(other_seed.root) != first


def test_refuses_a_folder_that_already_holds_memories(memory_set: MemorySet) -> None:
    with pytest.raises(FileExistsError):
        ms_mod.generate(memory_set.root, count=10)


def test_every_file_is_a_memory_with_a_subject(memory_set: MemorySet) -> None:
    now = ms_mod.DEFAULT_NOW
    for path in memory_set.paths:
        meta, body = _read(memory_set, path)
        assert path.startswith("Memory/") and path.endswith(".md")
        assert meta.type in MEMORY_TYPES and meta.subject and body.strip()
        assert meta.source == "user" and meta.status is None and meta.valid_to is None
        assert isinstance(meta.created, dt.datetime) and isinstance(meta.updated, dt.datetime)
        assert now - dt.timedelta(days=200) <= meta.created <= meta.updated < now
        assert str(ULID.from_str(meta.id or "")) == meta.id


def test_planted_pairs_are_oldest_first_and_share_what_they_should(
    memory_set: MemorySet,
) -> None:
    kinds = Counter(p.kind for p in memory_set.planted)
    assert kinds == dict.fromkeys(ms_mod.KINDS, PAIRS)
    subjects: Counter[str] = Counter()
    for planted in memory_set.planted:
        assert len(planted.paths) == 2
        (old, _), (new, _) = (_read(memory_set, p) for p in planted.paths)
        # ISO text in one format and zone compares like the datetimes
        assert str(old.created) < str(new.created) and str(old.updated) < str(new.updated)
        if planted.kind == "lookalike":
            subjects.update([old.subject or "", new.subject or ""])
        else:
            assert (old.type, old.subject) == (new.type, new.subject), planted
            subjects[old.subject or ""] += 1
    in_pairs = {p for planted in memory_set.planted for p in planted.paths}
    for path in memory_set.paths:
        if path not in in_pairs:
            subjects[_read(memory_set, path)[0].subject or ""] += 1
    # one subject per background memory and per pair, except a same-subject look-alike
    # of another type (one pair in four)
    assert [s for s, n in subjects.items() if n > 1] == [
        s for s, n in subjects.items() if n == 2
    ]
    assert sum(n == 2 for n in subjects.values()) == sum(
        1 for i in range(PAIRS) if i % 4 == 3
    )


def test_exact_pairs_hash_alike_and_lookalikes_differ(memory_set: MemorySet) -> None:
    bodies: Counter[str] = Counter()
    for path in memory_set.paths:
        bodies[normalised_hash(_read(memory_set, path)[1])] += 1
    assert sum(n > 1 for n in bodies.values()) == PAIRS  # only the exact pairs collide
    for planted in memory_set.planted:
        (old, old_body), (new, new_body) = (_read(memory_set, p) for p in planted.paths)
        if planted.kind == "exact":
            assert normalised_hash(old_body) == normalised_hash(new_body)
            assert old_body != new_body  # restyled, not copied
        else:
            assert normalised_hash(old_body) != normalised_hash(new_body)
        if planted.kind == "lookalike":
            assert old.subject != new.subject or old.type != new.type
            assert (old.subject != new.subject) != (old.type != new.type)
    lookalikes = [p for p in memory_set.planted if p.kind == "lookalike"]
    by_subject = [p for p in lookalikes
                  if len({_read(memory_set, x)[0].subject for x in p.paths}) == 2]
    assert len(by_subject) == PAIRS - 1  # index 3 is the by-type one


def test_planted_answers_agree_with_the_write_time_rules(memory_set: MemorySet) -> None:
    """The generator's truth is what ``consistency.duplicates.decide`` says for each pair (no
    embeddings): a near pair has no changed value, a contradiction has one it can see."""
    expected = {"exact": Duplicate, "near": Update, "contradiction": Supersede,
                "lookalike": New}  # fmt: skip
    for planted in memory_set.planted:
        (old, old_body), (new, new_body) = (_read(memory_set, p) for p in planted.paths)
        stored = MemoryFacts(
            id=old.id or "", type=old.type, subject=old.subject, name=old.name,
            description=old.description, body=old_body.strip(),
            content_hash=normalised_hash(old_body),
        )  # fmt: skip
        draft = MemoryDraft(
            type=new.type, subject=new.subject, name=new.name, description=new.description,
            body=new_body.strip(), content_hash=normalised_hash(new_body),
        )  # fmt: skip
        decision = decide(draft, [stored])
        assert isinstance(decision, expected[planted.kind]), (planted, old_body, new_body)


def test_check_outcome_of_the_untouched_set(memory_set: MemorySet) -> None:
    outcome = ms_mod.check_outcome(memory_set)
    assert outcome == {
        "memories": COUNT, "background": COUNT - 8 * PAIRS,
        "exact_pairs": PAIRS, "near_pairs": PAIRS, "contradiction_pairs": PAIRS,
        "lookalike_pairs": PAIRS, "files_missing": 0,
        "duplicates_left": 2 * PAIRS, "duplicates_merged": 0, "duplicates_none_live": 0,
        "contradictions_open": PAIRS, "contradictions_resolved": 0, "contradictions_wrong": 0,
        "false_merges": 0, "lookalike_pairs_touched": 0,
    }  # fmt: skip


def _set(root: Path, path: str, **properties: str) -> None:
    file = root / path
    file.write_bytes(set_properties(file.read_bytes(), properties, path=path))


def test_check_outcome_scores_a_dream(tmp_path: Path) -> None:
    ms = ms_mod.generate(tmp_path, count=COUNT)
    pairs = {kind: [p.paths for p in ms.planted if p.kind == kind] for kind in ms_mod.KINDS}
    background = sorted(set(ms.paths) - {p for pl in ms.planted for p in pl.paths})
    # right: each duplicate merged into its older file (the newer archived, or deleted) ...
    for i, (_, newer) in enumerate(pairs["exact"] + pairs["near"]):
        if i % 2:
            (tmp_path / newer).unlink()
        else:
            _set(tmp_path, newer, status="merged")
    # ... and all but one contradiction resolved; that one the wrong way round
    for older, _ in pairs["contradiction"][1:]:
        _set(tmp_path, older, valid_to="2026-11-30", status="superseded")
    _set(tmp_path, pairs["contradiction"][0][1], status="superseded")
    # wrong: one look-alike merged away, one background memory archived
    _set(tmp_path, pairs["lookalike"][0][1], status="merged")
    _set(tmp_path, background[0], status="archived")

    outcome = ms_mod.check_outcome(ms)
    assert outcome["files_missing"] == PAIRS  # the deleted duplicates
    assert outcome["duplicates_left"] == 0
    assert outcome["duplicates_merged"] == 2 * PAIRS
    assert outcome["contradictions_open"] == 0
    assert outcome["contradictions_resolved"] == PAIRS - 1
    assert outcome["contradictions_wrong"] == 1
    assert outcome["false_merges"] == 2
    assert outcome["lookalike_pairs_touched"] == 1


def test_truth_file_round_trips(memory_set: MemorySet, tmp_path: Path) -> None:
    truth = tmp_path / "truth.json"
    ms_mod.write_truth(memory_set, truth, seed=7, count=COUNT)
    assert ms_mod.load_truth(memory_set.root, truth) == memory_set
