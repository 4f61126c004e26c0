"""MagmaStore on a real LanceDB in tmp_path: writes, versions, deletes, odd paths, mismatch."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import store_reads

from ccb.model import FileEntry, Link, MemoryMeta, Note, Problem
from config.errors import StoreError, StoreMismatchError
from magma.store import (
    ApplyStats,
    AttachmentRecord,
    MagmaStore,
    NoteRecord,
    chunk_addresses,
    chunks_at,
    index_dropped_at_open,
)

NoteOf = Callable[..., Note]
RecordOf = Callable[..., NoteRecord]

ODD_PATHS = [
    "Bob's notes/it's ''quoted''.md",
    "日记/睡眠记录.md",
    "Emoji 🚀/launch 🎉.md",
    'Weird "double" %_ wildcard.md',
]


def test_upsert_then_counts_and_records(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    memory = MemoryMeta(type="user", name="Prefers tea", description="Tea, not coffee", id="01J0")
    notes = [
        note_of(
            "A.md", "# One\nalpha text\n", links=(Link("B", "wikilink"), Link("Nope", "wikilink"))
        ),
        note_of("B.md", "beta text", tags=("garden",), aliases=("Bee",)),
        note_of("Memory/prefers-tea.md", "Tea always.", memory=memory),
    ]
    attachment = AttachmentRecord(FileEntry("img/cat.png", 10, 5, "attachment"), "att-1")
    stats = store.apply(upserts=[record_of(n) for n in notes], attachments=[attachment])
    assert stats.files_written == 4
    counts = store.counts()
    assert (counts.files, counts.notes, counts.attachments, counts.memories) == (4, 3, 1, 1)
    assert counts.chunks == 3
    assert (counts.links, counts.unresolved_links) == (2, 1)
    index = store.file_index()
    assert set(index) == {"A.md", "B.md", "Memory/prefers-tea.md", "img/cat.png"}
    assert index["Memory/prefers-tea.md"].memory_id == "01J0"
    assert index["img/cat.png"].kind == "attachment"
    record = store_reads.get_file(store, "B.md")
    assert record is not None
    assert record.tags == ("garden",) and record.aliases == ("Bee",)
    assert store_reads.get_file(store, "missing.md") is None
    links = {(link.target, link.resolved) for link in store_reads.all_links(store)}
    assert links == {("B", "B.md"), ("Nope", None)}


def test_properties_of_mixed_types_are_json(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    # shared case 01: one key, different value types in different notes
    tz = timezone(timedelta(hours=1))
    one = note_of("one.md", "x", properties={"published": date(2024, 3, 5), "draft": "yes"})
    two = note_of("two.md", "y", properties={"published": datetime(2024, 3, 5, 18, 45, tzinfo=tz)})
    three = note_of("three.md", "z", properties={"published": "someday", "n": [1, "a", None]})
    store.apply(upserts=[record_of(n) for n in (one, two, three)])
    by_path = {f.path: f.properties for f in store_reads.all_files(store)}
    assert by_path["one.md"] == {"published": "2024-03-05", "draft": "yes"}
    assert by_path["two.md"] == {"published": "2024-03-05T18:45:00+01:00"}
    assert by_path["three.md"] == {"published": "someday", "n": [1, "a", None]}


def test_changed_chunk_is_the_only_new_vector_and_versions_grow_per_batch(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    bodies = {
        f"n{i}.md": f"# Part A\n{'alpha ' * 150}\n# Part B\n{'beta ' * 150}" for i in range(50)
    }
    store.apply(upserts=[record_of(note_of(p, b)) for p, b in bodies.items()])
    versions = store.versions()
    before = store.chunk_hashes()
    assert len(before) == 100

    changed = note_of("n7.md", f"# Part A\n{'alpha ' * 150}\n# Part B\n{'gamma ' * 150}")
    record = record_of(changed)
    known = store.known_vectors([c.content_hash for c in record.chunks])
    assert set(known) == {record.chunks[0].content_hash}  # only the unchanged chunk is known
    np.testing.assert_allclose(known[record.chunks[0].content_hash], record.vectors[0], rtol=1e-6)

    store.apply(upserts=[record])
    after = store.chunk_hashes()
    assert after.keys() == before.keys()
    differing = {cid for cid in after if after[cid] != before[cid]}
    assert differing == {"n7.md#1"}
    # a few commits per table per batch (a delete and an append of the batch's chunks and
    # links, the file rows' merge): 50 notes in batch 1 did not make 50 versions
    assert all(store.versions()[t] - versions[t] <= 2 for t in versions)


def test_fewer_chunks_replace_all_old_ones(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    long = "\n\n".join(f"paragraph {i} " + "word " * 200 for i in range(6))
    store.apply(upserts=[record_of(note_of("Long.md", long))])
    assert store.counts().chunks > 3
    store.apply(upserts=[record_of(note_of("Long.md", "now short"))])
    assert store.counts().chunks == 1


def test_delete_and_touch(store: MagmaStore, note_of: NoteOf, record_of: RecordOf) -> None:
    a = note_of("a.md", "links to [[b]]", links=(Link("b", "wikilink"),))
    b = note_of("b.md", "target")
    store.apply(upserts=[record_of(a), record_of(b)])
    assert store.counts().unresolved_links == 0

    store.apply(touches=[FileEntry("a.md", 999, 12345, "note")])
    index = store.file_index()
    assert (index["a.md"].size, index["a.md"].mtime_ns) == (999, 12345)
    assert index["a.md"].content_hash == a.content_hash

    stats = store.apply(deletes=["b.md"])
    assert stats.files_deleted == 1
    assert set(store.file_index()) == {"a.md"}
    counts = store.counts()
    assert counts.chunks == 1
    assert counts.unresolved_links == 1  # a's link lost its target
    # and it resolves again when the target comes back
    store.apply(upserts=[record_of(note_of("sub/B.md", "back"))])
    assert [link.resolved for link in store_reads.all_links(store)] == ["sub/B.md"]


def test_an_empty_batch_writes_nothing_and_reads_no_paths(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart with nothing changed applies an empty batch: no commit, and no link
    resolver built over every stored path (1.5 s of a 3.9 s restart at 100,000 notes)."""
    store.apply(upserts=[record_of(note_of("a.md", "text"))])
    versions = store.versions()

    def every_path(paths: set[str]) -> None:
        raise AssertionError(f"a resolver over {len(paths)} paths for an empty batch")

    monkeypatch.setattr(store, "_link_resolver", every_path)
    assert store.apply() == ApplyStats(0, 0, 0, 0)
    assert store.versions() == versions


@pytest.mark.parametrize("path", ODD_PATHS)
def test_odd_paths_survive_every_operation(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, path: str
) -> None:
    other = note_of("other.md", "other text")
    note = note_of(path, "odd text", links=(Link("other", "wikilink"),))
    store.apply(upserts=[record_of(note), record_of(other)])
    assert store_reads.get_file(store, path) is not None
    store.apply(upserts=[record_of(note_of(path, "odd text changed"))])
    assert store.counts().chunks == 2
    store.apply(touches=[FileEntry(path, 1, 2, "note")])
    assert store.file_index()[path].mtime_ns == 2
    store.apply(deletes=[path])
    assert set(store.file_index()) == {"other.md"}
    assert store.counts().chunks == 1
    assert store.counts().links == 0


def test_problems_are_listed(store: MagmaStore, note_of: NoteOf, record_of: RecordOf) -> None:
    bad = Note(
        path="bad.md",
        title="bad",
        body="text",
        content_hash="h",
        problems=(Problem("bad.md", "yaml", "line 2: mapping values are not allowed"),),
    )
    store.apply(upserts=[record_of(bad), record_of(note_of("good.md", "fine"))])
    assert store_reads.problems(store) == [
        Problem("bad.md", "yaml", "line 2: mapping values are not allowed")]


def test_reopen_checks_vault_and_model(tmp_path: Path) -> None:
    uri = str(tmp_path / "db")
    MagmaStore.open(uri, vault_path="/vault/a", model_id="m1", dims=8)
    MagmaStore.open(uri, vault_path="/vault/a/", model_id="m1", dims=8)  # same vault
    with pytest.raises(StoreMismatchError, match=r"'/vault/a'.*'/vault/b'"):
        MagmaStore.open(uri, vault_path="/vault/b", model_id="m1", dims=8)
    with pytest.raises(StoreMismatchError, match=r"'m1'.*'m2'"):
        MagmaStore.open(uri, vault_path="/vault/a", model_id="m2", dims=8)
    with pytest.raises(StoreMismatchError, match="8 dims"):
        MagmaStore.open(uri, vault_path="/vault/a", model_id="m1", dims=16)


def test_unopenable_store_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a database")
    with pytest.raises(StoreError):
        MagmaStore.open(str(blocker / "db"), vault_path="/v", model_id="m", dims=8)


def test_misaligned_vectors_are_refused(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    record = record_of(note_of("a.md", "text"))
    bad = NoteRecord(record.note, "a", 1, 1, record.chunks, np.zeros((5, 3), np.float32))
    with pytest.raises(StoreError, match=r"vectors shape \(5, 3\)"):
        store.apply(upserts=[bad])
    assert store.counts().files == 0


def test_maintain_compacts_to_one_version_and_keeps_data(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    for i in range(5):
        store.apply(upserts=[record_of(note_of(f"n{i}.md", f"note number {i}"))])
    store.maintain()
    counts = store.counts()
    assert counts.files == 5 and counts.chunks == 5
    assert counts.fts_unindexed_rows == 0


def _key_indexes(store: MagmaStore) -> dict[str, set[str]]:
    """``{table: names of its BTREE indexes}`` of the store's derived tables."""
    return {table.name: {i.name for i in table.list_indices() if i.index_type == "BTree"}
            for table in store._t.derived}


def _lookups(store: MagmaStore) -> tuple[object, ...]:
    return (store_reads.get_file(store, "n1.md"), store.known_vectors({"nope"}),
            sorted(c["path"] for c in store._t.read(store._t.chunks, ["path"],
                                                      "path IN ('n2.md', 'n3.md')").to_pylist()))


def test_key_columns_have_btree_indexes_from_the_start_through_compaction_and_purge(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    from magma.store_tables import KEY_COLUMNS

    want = {name: {f"{c}_idx" for c in KEY_COLUMNS[name]} for name in KEY_COLUMNS}
    assert _key_indexes(store) == want  # made with the (empty) tables
    for i in range(5):
        store.apply(upserts=[record_of(note_of(f"n{i}.md", f"note number {i} [[n{i + 1}]]"))])
    before = _lookups(store)
    assert before[0] is not None and before[2] == ["n2.md", "n3.md"]
    store.maintain()
    assert _key_indexes(store) == want
    stats = store._t.chunks.index_stats("path_idx")
    assert stats is not None and (stats.num_indexed_rows, stats.num_unindexed_rows) == (5, 0)
    assert _lookups(store) == before
    store.maintain(purge=True)  # the tables rewritten whole: the indexes made again
    assert _key_indexes(store) == want and _lookups(store) == before


def test_a_store_made_without_key_indexes_gets_them_at_its_next_maintain(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    store.apply(upserts=[record_of(note_of("n1.md", "one")), record_of(note_of("n2.md", "two"))])
    for table in store._t.derived:
        for name in {i.name for i in table.list_indices() if i.index_type == "BTree"}:
            table.drop_index(name)
    before = _lookups(store)
    assert not any(_key_indexes(store).values())
    store.maintain()
    assert all(_key_indexes(store).values()) and _lookups(store) == before


def test_a_crash_between_a_batchs_delete_and_append_loses_no_row_of_another_note(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's own chunk and link rows are a delete, then an append; the links of other
    notes it re-resolves are a merge of their own. Killed between the delete and the append,
    the other note keeps its link row (re-resolved: nothing would write it again, its file is
    unchanged), and the batch's note is written whole by the next apply of it."""
    store.apply(upserts=[record_of(note_of("A.md", "see [[B]]", links=(Link("B", "wikilink"),)))])
    assert [(r.src, r.resolved) for r in store_reads.all_links(store)] == [("A.md", None)]

    def crash(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("killed between the delete and the append")

    b = record_of(note_of("B.md", "bee text [[A]]", links=(Link("A", "wikilink"),)))
    with monkeypatch.context() as patch:
        patch.setattr(store._t.links, "add", crash)
        with pytest.raises(StoreError, match="killed"):
            store.apply(upserts=[b])
    assert [(r.src, r.resolved) for r in store_reads.all_links(store)] == [("A.md", "B.md")]
    assert store_reads.get_file(store, "B.md") is None  # the file row is written last
    store.apply(upserts=[b])  # the next reconcile indexes B again
    assert [(r.src, r.resolved) for r in store_reads.all_links(store)] == [
        ("A.md", "B.md"), ("B.md", "A.md")]
    assert store.counts().chunks == 2


def test_rewrite_groups_refuses_a_row_outside_the_groups(store: MagmaStore) -> None:
    import pyarrow as pa

    from magma.store_tables import StoreTables

    data = pa.table({"src": ["x.md"], "link_id": ["x.md#0"]})
    with pytest.raises(ValueError, match="outside"):
        StoreTables.rewrite_groups(store._t.links, "src", data, ["y.md"])


def test_older_schema_store_drops_its_index_tables_and_keeps_the_meta(
    tmp_path: Path, note_of: NoteOf, record_of: RecordOf
) -> None:
    import lancedb
    from structlog.testing import capture_logs

    from daemon.logs import human_line
    from magma import store as store_module

    uri = str(tmp_path / "magma")
    old = MagmaStore.open(uri, vault_path="/vault", model_id="fake-hash-v1", dims=64)
    old.apply(upserts=[record_of(note_of("A.md", "alpha text"))])
    assert old.counts().files == 1
    lancedb.connect(uri).open_table("meta").update(values={"schema_version": 1})
    with capture_logs() as logs:
        reopened = MagmaStore.open(uri, vault_path="/vault", model_id="fake-hash-v1", dims=64)
    assert reopened.counts().files == 0 and reopened.counts().chunks == 0
    # what the person at the command line reads: what happened, that nothing of theirs
    # went, and what to do
    (upgrade,) = [e for e in logs if e["event"] == "store.schema_upgrade"]
    line = human_line(None, "warning", {**upgrade, "level": "warning"})
    assert "the index was emptied; your notes and memories are untouched" in line
    assert line.endswith("dreamd run rebuilds it by itself, and a daemon of an older dreamd "
                         "running now stops: start it again")
    assert "; run dreamd sync to rebuild it" in line
    assert index_dropped_at_open(old) is None and index_dropped_at_open(reopened) == 1
    meta = lancedb.connect(uri).open_table("meta").to_arrow().to_pylist()
    assert len(meta) == 1 and meta[0]["schema_version"] == store_module.SCHEMA_VERSION
    reopened.apply(upserts=[record_of(note_of("A.md", "alpha text"))])
    assert reopened.counts().chunks == 1
    lancedb.connect(uri).open_table("meta").update(
        values={"schema_version": store_module.SCHEMA_VERSION + 1})
    with pytest.raises(StoreMismatchError, match="newer"):
        MagmaStore.open(uri, vault_path="/vault", model_id="fake-hash-v1", dims=64)


def test_a_store_says_when_a_newer_dreamd_upgraded_it_or_its_tables_went_under_it(
    tmp_path: Path, note_of: NoteOf, record_of: RecordOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a running daemon asks of its open store (:mod:`daemon.store_guard`): a newer
    dreamd's open of the store (a schema one above) dropped and made anew its index tables,
    in a layout this one cannot read; a table removed under it is said too; an untouched
    store, and one another process of this dreamd wrote to, say nothing."""
    import lancedb

    from magma import store_tables
    from magma.store import store_changed_under

    uri = str(tmp_path / "magma")
    opened = dict(vault_path="/vault", model_id="fake-hash-v1", dims=64)
    mine = MagmaStore.open(uri, **opened)  # type: ignore[arg-type]
    mine.apply(upserts=[record_of(note_of("A.md", "alpha text"))])
    assert store_changed_under(mine) is None
    other = MagmaStore.open(uri, **opened)  # type: ignore[arg-type]
    other.apply(upserts=[record_of(note_of("B.md", "beta text"))])
    assert store_changed_under(mine) is None
    with monkeypatch.context() as newer:
        newer.setattr(store_tables, "SCHEMA_VERSION", store_tables.SCHEMA_VERSION + 1)
        assert MagmaStore.open(uri, **opened).counts().files == 0  # type: ignore[arg-type]
    why = store_changed_under(mine)
    assert why == (f"a newer dreamd upgraded the index (index schema "
                   f"{store_tables.SCHEMA_VERSION + 1}; this dreamd reads "
                   f"{store_tables.SCHEMA_VERSION})")
    # tables dropped under a store of this dreamd's own schema
    uri = str(tmp_path / "other")
    mine = MagmaStore.open(uri, **opened)  # type: ignore[arg-type]
    lancedb.connect(uri).drop_table("chunks")
    assert store_changed_under(mine) == "another process removed the index tables (chunks)"


def test_owner_filter_runs_inside_the_vector_and_full_text_queries(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, embedder: Any
) -> None:
    from ccb.owner import Owner

    def memory(path: str, owner: str | None) -> Note:
        meta = MemoryMeta(type="project", name=path, id=path, owner=owner)
        return note_of(path, "kiln schedule for the glaze firing", memory=meta)

    notes = [memory("Memory/a.md", "alice/cc"), memory("Memory/b.md", "Bob/CC"),
             memory("Memory/c.md", None), memory("Memory/d.md", "alice"),
             memory("Memory/e.md", "not an owner"),
             note_of("Task.md", "kiln schedule for the glaze firing",
                     properties={"owner": "bob"}),
             note_of("Memory/MEMORY.md", "- [a](a.md) — kiln schedule for the glaze firing")]
    store.apply(upserts=[record_of(n) for n in notes])
    vector = embedder.embed(["kiln schedule glaze firing"])[0]

    def found(owner: Owner | None) -> set[str]:
        by_words = {c.path for c in store.fulltext_candidates(
            "kiln glaze", limit=20, owner=owner)}
        by_vector = {c.path for c in store.vector_candidates(vector, limit=20, owner=owner)}
        assert by_words == by_vector
        return by_words

    everything = {n.path for n in notes}
    assert found(None) == everything
    assert found(Owner("alice", "cc")) == {"Memory/a.md", "Memory/c.md", "Memory/d.md",
                                           "Task.md"}
    assert found(Owner("bob", "cc")) == {"Memory/b.md", "Memory/c.md", "Task.md"}
    assert found(Owner("alice")) == {"Memory/a.md", "Memory/c.md", "Memory/d.md", "Task.md"}
    assert found(Owner("carol", "x'; --")) == {"Memory/c.md", "Task.md"}
    assert "Memory/MEMORY.md" in found(None)  # the index lists everyone's: owners skip it


def _fresh_index(store: MagmaStore, tmp_path: Path) -> dict[str, Any]:
    """The file index as a new handle of the same store reads it from the table."""
    other = MagmaStore.open(str(tmp_path / "magma"), vault_path="/vault", model_id=store.model_id,
                            dims=store.dims)
    return other.file_index()


def test_the_kept_file_index_follows_every_batch_as_the_table_reads(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, tmp_path: Path
) -> None:
    store.apply(upserts=[record_of(note_of(f"n{i}.md", f"text {i}")) for i in range(4)])
    assert store.file_index() == _fresh_index(store, tmp_path)  # read once, then kept
    batches: list[dict[str, Any]] = [
        {"upserts": [record_of(note_of("n1.md", "changed"))]},
        {"deletes": ["n2.md"]},
        {"touches": [FileEntry("n3.md", 77, 88, "note")]},
        {"upserts": [record_of(note_of("new.md", "fresh"))], "deletes": ["n0.md"]},
        {"attachments": [AttachmentRecord(FileEntry("a.png", 1, 2, "attachment"), "att")]},
        {},
    ]
    for batch in batches:
        store.apply(**batch)
        assert store.file_index() == _fresh_index(store, tmp_path), batch
    kept = store.file_index()
    kept.clear()  # a caller's copy: the store's own stays whole
    assert set(store.file_index()) == {"n1.md", "n3.md", "new.md", "a.png"}


def test_another_handles_commit_is_read_after_a_refresh(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, tmp_path: Path
) -> None:
    store.apply(upserts=[record_of(note_of("mine.md", "one"))])
    assert set(store.file_index()) == {"mine.md"}
    other = MagmaStore.open(str(tmp_path / "magma"), vault_path="/vault", model_id=store.model_id,
                            dims=store.dims)
    other.apply(upserts=[record_of(note_of("theirs.md", "two"))])
    store.refresh()
    assert set(store.file_index()) == {"mine.md", "theirs.md"}
    store.apply(upserts=[record_of(note_of("third.md", "three"))])
    assert store.file_index() == _fresh_index(store, tmp_path)


def test_recent_vectors_answer_without_a_read_and_forget_asks_the_table(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    note = note_of("gone.md", "a memory to forget")
    record = record_of(note)
    store.apply(upserts=[record])
    hashes = [c.content_hash for c in record.chunks]
    known = store.known_vectors(hashes)
    assert set(known) == set(hashes)
    assert np.allclose(known[hashes[0]], record.vectors[0])
    assert store.stored_hashes(hashes) == set(hashes)
    store.apply(deletes=["gone.md"])
    assert set(store.known_vectors(hashes)) == set(hashes)  # the text's vector all the same
    assert store.stored_hashes(hashes) == set()  # what forget asks: stored now, not known
    assert store.known_vectors(hashes) == {}  # and once asked, no vector of it is kept


def test_a_request_for_most_rows_reads_them_all_and_answers_as_the_sliced_queries(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk ids, bodies and vectors asked for most of the chunks (``WHOLE_READ_SHARE``) are
    read from every row, those asked kept: the same answers as the queries in slices, for
    odd paths (Chinese, spaces, quotes), a duplicate body and paths or hashes not stored."""
    import magma.store as store_module

    bodies = {f"笔记 {i}.md": f"# Part\nalpha {i} beta" for i in range(6)}
    bodies |= {"it's \"quoted\".md": "the same text", "copy.md": "the same text",
               "long.md": "\n\n".join(f"paragraph {i} " + "word " * 200 for i in range(4))}
    store.apply(upserts=[record_of(note_of(p, b)) for p, b in bodies.items()])
    store.recent_vectors.drop(set(store.chunk_hashes().values()))  # (all read from the table)
    every = store.chunk_hashes()
    hashes = [*sorted(set(every.values()))[:-1], "not-stored"]
    paths = [*sorted(bodies)[1:], "gone.md"]

    def answers() -> tuple[object, ...]:
        vectors = store.known_vectors(hashes)
        return (store.chunk_hashes(paths), store.chunk_bodies(hashes),
                {h: v.tolist() for h, v in vectors.items()})

    monkeypatch.setattr(store_module, "_IN_SLICE", 2)  # (so that a few rows are "many")
    monkeypatch.setattr(store_module, "WHOLE_READ_SHARE", 100.0)  # never the whole table
    sliced = answers()
    monkeypatch.setattr(store_module, "WHOLE_READ_SHARE", 0.0)  # always
    calls: list[str | None] = []
    read = store._t.read
    monkeypatch.setattr(store._t, "read", lambda t, c, w=None: calls.append(w) or read(t, c, w))
    whole = answers()
    assert whole == sliced
    assert calls == [None, None, None]  # one read of every row each
    assert whole[0] and "gone.md" not in str(whole[0]) and "not-stored" not in whole[2]
    assert set(whole[2]) == set(hashes) - {"not-stored"}


def test_chunks_read_by_address_are_the_ones_asked_for_even_once_the_rows_moved(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    notes = [note_of(f"n{i}.md", f"# Part\nbody {i}\n\n# Other\nmore {i}\n") for i in range(6)]
    store.apply(upserts=[record_of(n) for n in notes])
    store.apply(upserts=[record_of(note_of("n0.md", "# Part\nbody zero again\n"))])
    table = chunk_addresses(store)
    at = dict(zip(table.column("chunk_id").to_pylist(), table.column("_rowid").to_pylist(),
                  strict=True))
    wanted = sorted(at)[:5]

    def read(addresses: dict[str, int] | None) -> dict[str, str]:
        return {c.chunk_id: c.body for c in store.chunks_by_id(
            wanted, with_vectors=False, addresses=addresses)}

    by_id = read(None)
    assert len(by_id) == 5 and read({c: at[c] for c in wanted}) == by_id
    assert read({c: at[c] for c in wanted[:2]}) == by_id  # some known, the rest by id
    # an address of another chunk: that chunk is not taken for the one asked
    swapped = {wanted[0]: at[wanted[1]], wanted[1]: at[wanted[0]]}
    assert read(swapped) == by_id
    assert read({wanted[0]: at[sorted(at)[-1]]}) == by_id  # a chunk not asked for at all
    assert read({wanted[0]: 2**63}) == by_id  # an address no row has
    store.maintain()  # compaction moves every row
    assert chunks_at(store, [at[c] for c in wanted]) == [] or \
        {c.chunk_id for c in chunks_at(store, [at[c] for c in wanted])} <= set(wanted)
    assert read({c: at[c] for c in wanted}) == by_id


def test_full_text_gives_chunks_of_one_score_in_path_order(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    """Copies of one text score the same; they come in path order whatever order they were
    written in (the order they came in was the store's, and changed from one process to the
    next: the same search found one copy, then the other)."""
    text = "The harbour swim started at seven; cold water, warm soup after."
    paths = [f"Sessions/2023-05-{day:02}.md" for day in (28, 11, 20, 3, 16)]
    for path in paths:  # one batch each: the rows are in this order
        store.apply(upserts=[record_of(note_of(path, text))])
    store.apply(upserts=[record_of(note_of("Other.md", "The harbour at dawn."))])
    store.maintain()
    found = store.fulltext_candidates("harbour swim soup", limit=10)
    assert [c.path for c in found] == [*sorted(paths), "Other.md"]


def test_the_index_cache_of_the_store_holds_no_more_than_its_bound(
    store: MagmaStore, note_of: NoteOf, record_of: RecordOf
) -> None:
    from magma.store import cache_bytes
    from magma.store_tables import INDEX_CACHE_BYTES

    def opened(**bound: int) -> MagmaStore:
        return MagmaStore.open(store.uri, vault_path=store.vault_path,
                               model_id=store.model_id, dims=store.dims, **bound)

    words = [f"kiln{i:03d}" for i in range(60)]
    store.apply(upserts=[record_of(note_of(f"Notes/{w}.md", f"{w} glaze firing"))
                         for w in words])
    store.maintain()  # the full-text index whose posting lists searches read

    def held_after_searches(reader: MagmaStore) -> int:
        for word in words:
            assert [c.path for c in reader.fulltext_candidates(word, limit=5)] \
                == [f"Notes/{word}.md"]
        return cache_bytes(reader)

    assert INDEX_CACHE_BYTES == 64 * 2**20
    default, none, small = (held_after_searches(opened(**bound)) for bound in
                            ({}, {"index_cache_bytes": 0}, {"index_cache_bytes": 2**20}))
    assert 0 < none < default  # with no index cache only the metadata is kept
    assert small == default  # a bound above what these searches read keeps all of it
