"""The search's in-memory catalogue and vectors follow each batch of the process's own writes
(:func:`magma.catalogue.follow_snapshot`) instead of reading the store whole again.

Real files (the demo vault), a real LanceDB store; the embedder is the tests' token-hash FAKE
(these tests are about which rows the catalogue holds after a batch, not about meaning). After
each batch the followed snapshot is compared, path by path, with a full read of the store at
the same versions, and the edit is searched for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fakes import TokenHashEmbedder

import daemon.retrieval as retrieval
from daemon.app import App
from daemon.graph_stage import graph_of, neighbours_of
from magma.catalogue import Snapshot, chunks_at_rows, read_snapshot
from magma.store import chunks_at

MakeApp = Callable[..., tuple[App, TokenHashEmbedder]]


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, int]]]:
    """The versions of every full read of the catalogue the retriever makes."""
    reads: list[dict[str, int]] = []

    def counted(store: Any, versions: dict[str, int], zone: Any, **options: Any) -> Snapshot:
        reads.append(dict(versions))
        return read_snapshot(store, versions, zone, **options)

    monkeypatch.setattr(retrieval, "read_snapshot", counted)
    yield reads


def _vectors(snap: Snapshot) -> dict[str, list[tuple[str, str, tuple[float, ...]]]]:
    """Each path's chunk rows (id, hash, vector), as a full read gives them."""
    out: dict[str, list[tuple[str, str, tuple[float, ...]]]] = {}
    for path, rows in snap.rows_by_path.items():
        out[path] = sorted((snap.chunk_ids[r], snap.chunk_hashes[r],
                            tuple(np.round(snap.chunk_vectors.rows(r), 6).tolist())) for r in rows)
    return out


def _memory_rows(snap: Snapshot) -> list[tuple[str, tuple[float, ...]]]:
    return sorted((path, tuple(np.round(row, 6).tolist()))
                  for path, row in zip(snap.memory_paths, snap.memory_matrix, strict=True))


def assert_same(followed: Snapshot, app: App, moved: bool = False) -> None:
    """``followed`` holds what a full read of the store at its versions holds; ``moved``:
    the table was compacted since its rows were read (their addresses are forgotten)."""
    fresh = read_snapshot(app.store, app.store.versions(), followed_zone(app))
    assert followed.versions == fresh.versions
    assert followed.entries == fresh.entries
    assert followed.bulk.same(fresh.bulk)  # the bulk writes it keeps for the next batch
    assert followed.postings == fresh.postings
    assert followed.names == fresh.names
    assert followed.memory_text == fresh.memory_text
    assert _vectors(followed) == _vectors(fresh)
    assert _memory_rows(followed) == _memory_rows(fresh)
    # the rows a batch rewrote stay, dead, until they are many (catalogue.follow_snapshot)
    assert followed.chunk_count == fresh.chunk_count
    dead = followed.dead.tolist()
    assert {followed.chunk_paths[r] for r in dead} | {followed.chunk_ids[r] for r in dead} \
        <= {""}
    assert len(followed.chunk_ids) == fresh.chunk_count + len(dead)
    # a living row knows where its chunk is in the table (each does until a compaction
    # moves them), that address finds it, and every chunk is read right either way
    living = [r for rows in followed.rows_by_path.values() for r in rows]
    known = followed.chunk_ids.addresses(living)
    if moved:
        assert set(known) <= {followed.chunk_ids[r] for r in living}
    else:
        assert set(known) == {followed.chunk_ids[r] for r in living}
    assert {c.chunk_id: c.path for c in chunks_at_rows(app.store, followed, living)} \
        == {followed.chunk_ids[r]: followed.chunk_paths[r] for r in living}
    assert {c.chunk_id for c in chunks_at(app.store, sorted(known.values()))} \
        == set(known)
    if followed.neighbours is not None:
        neighbours_of(app.store, fresh)
        assert followed.link_targets == fresh.link_targets
        assert followed.neighbours == fresh.neighbours


def _edges(snap: Snapshot, app: App) -> set[tuple[str, str, float]]:
    """The graph step's graph of ``snap`` as weighted edges."""
    graph = graph_of(app.store, snap)
    return {(graph.nodes[i], graph.nodes[int(t)], float(w))
            for i in range(len(graph.nodes))
            for t, w in zip(graph.targets[graph.offsets[i]:graph.offsets[i + 1]],
                            graph.weights[graph.offsets[i]:graph.offsets[i + 1]], strict=True)}


def followed_zone(app: App) -> Any:
    return app.retriever._zone


def _edit(vault: Path, rel: str, text: str) -> str:
    path = vault / rel
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    return rel


def _found(app: App, query: str) -> list[str]:
    return [h.path for h in app.search(query, limit=5, count_recall=False)]


def test_an_edit_is_searchable_and_the_catalogue_right_without_a_full_read(
        vault: Path, make_app: MakeApp, full_reads: list[dict[str, int]]) -> None:
    # every search stage runs to its end: what is tested is what the snapshot holds, not
    # the stages' deadlines on a busy machine (a search past them found nothing)
    app, _ = make_app(vault, **{"retrieval.progressive_search.enabled": False})
    app.sync()
    syncer = app.make_syncer()
    assert app.search("warm up", limit=1, count_recall=False) is not None
    snap = app.retriever.snapshot()
    notes = sorted(p for p, e in snap.entries.items() if e.memory_type is None
                   and "/" not in p and p.endswith(".md"))
    first, second = notes[0], notes[1]
    target = Path(second).stem
    neighbours_of(app.store, snap)  # the link graph is read, and must follow too
    graph_of(app.store, snap)
    assert len(full_reads) == 1

    # 1. an edit: new words, a new link, a new alias-free title word in the body
    syncer.sync_paths({_edit(vault, first, f"\n\nzqfollowword and a link to [[{target}]].\n")})
    assert _found(app, "zqfollowword")[:1] == [first]
    followed = app.retriever.snapshot()
    assert followed.neighbours is not None and second in followed.neighbours[first]
    assert_same(followed, app)
    assert _edges(followed, app) == _edges(
        read_snapshot(app.store, app.store.versions(), followed_zone(app)), app)

    # 2. a new memory (the set of paths changes: the links are read again on first use)
    memory = vault / "Memory" / "zq-follow-memory.md"
    memory.parent.mkdir(exist_ok=True)
    memory.write_text("---\nname: zq follow memory\ndescription: The kiln zqkilnword fires "
                      "at dawn.\ntype: project\n---\nThe kiln zqkilnword fires at dawn.\n",
                      encoding="utf-8")
    syncer.sync_paths({"Memory/zq-follow-memory.md"})
    assert "Memory/zq-follow-memory.md" in _found(app, "zqkilnword")
    followed = app.retriever.snapshot()
    assert "Memory/zq-follow-memory.md" in followed.memory_paths
    assert followed.postings["zqkilnword"] == {"Memory/zq-follow-memory.md"}
    assert_same(followed, app)

    # 3. a deleted note and an edited one in one batch
    (vault / first).unlink()
    syncer.sync_paths({first, _edit(vault, second, "\n\nzqsecondword.\n")})
    assert _found(app, "zqsecondword")[:1] == [second]
    followed = app.retriever.snapshot()
    assert first not in followed.entries and first not in followed.rows_by_path
    assert all(first not in paths for paths in followed.postings.values())
    assert_same(followed, app)

    # 4. compaction moves rows only: still followed
    app.store.maintain()
    assert_same(app.retriever.snapshot(), app, moved=True)
    # the next batch's rows are read with their addresses again
    syncer.sync_paths({_edit(vault, second, "\n\nzqafterword.\n")})
    assert _found(app, "zqafterword")[:1] == [second]
    followed = app.retriever.snapshot()
    assert set(followed.chunk_ids.addresses(followed.rows_by_path[second])) \
        == {followed.chunk_ids[r] for r in followed.rows_by_path[second]}
    assert_same(followed, app, moved=True)
    assert len(full_reads) == 1  # every batch was followed, none read whole
    app.close()


def test_another_writer_s_commit_is_read_whole(
        vault: Path, make_app: MakeApp, full_reads: list[dict[str, int]]) -> None:
    app, _ = make_app(vault)
    app.sync()
    seen = app.retriever.snapshot().versions
    other, _ = make_app(vault)  # a second process's store handles, writing the same tables
    rel = sorted(p for p, e in app.retriever.snapshot().entries.items()
                 if e.memory_type is None and "/" not in p and p.endswith(".md"))[0]
    other.make_syncer().sync_paths({_edit(vault, rel, "\n\nzqotherword.\n")})
    other.close()
    app.store.refresh()
    assert app.store.changes_since(seen) is None  # the gap is not this process's
    assert app.retriever.snapshot().versions != seen
    assert len(full_reads) == 2  # read whole
    assert_same(app.retriever.snapshot(), app)
    assert _found(app, "zqotherword")[:1] == [rel]
    app.close()


def test_a_note_of_a_copied_vault_followed_after_a_rename_is_dated_as_a_full_read_dates_it(
        vault: Path, make_app: MakeApp) -> None:
    """A copy of the vault is one bulk write (:mod:`magma.file_dates`): its undated notes have
    no day. A rename keeps the file time, and a copy the watcher splits over batches comes in
    parts: followed, each note is dated as a full read of the store dates it."""
    import os
    from datetime import datetime

    copied_at = datetime(2026, 3, 2, 9, 30).timestamp()
    notes = sorted(vault.rglob("*.md"))
    for i, note in enumerate(notes):
        os.utime(note, (copied_at + i / 1000, copied_at + i / 1000))
    app, _ = make_app(vault, **{"retrieval.progressive_search.enabled": False})
    app.sync()
    syncer = app.make_syncer()
    assert app.search("warm up", limit=1, count_recall=False) is not None
    snap = app.retriever.snapshot()
    undated = sorted(p for p, e in snap.entries.items() if e.memory_type is None
                     and e.dated is None and not e.template and "/" not in p)
    assert undated and all(snap.entries[p].day is None for p in undated)

    # a rename (the file time goes with the file)
    (vault / undated[0]).rename(vault / f"Renamed {undated[0]}")
    syncer.sync_paths({undated[0], f"Renamed {undated[0]}"})
    followed = app.retriever.snapshot()
    assert followed.entries[f"Renamed {undated[0]}"].day is None
    assert_same(followed, app)

    # more notes of the same copy, come in a later batch
    late = [vault / f"Late {i}.md" for i in range(5)]
    for i, path in enumerate(late):
        path.write_text(f"Late note {i}.\n", encoding="utf-8")
        stamp = copied_at + (len(notes) + i) / 1000
        os.utime(path, (stamp, stamp))
    syncer.sync_paths({path.name for path in late})
    assert_same(app.retriever.snapshot(), app)
    app.close()
