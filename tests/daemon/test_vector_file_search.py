"""Beside the store's IVF index (``retrieval.ann_vectors_above`` lowered to 10) the int8 rows
are kept in an unnamed file in the vault's state folder and mapped (magma.vector_file): the
searches answer as with the same rows in the heap, the rows follow a save, and a forget lets
go of the file holding the forgotten note's rows. Real LanceDB in a temp folder; the FAKE
token-hash embedder."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from fakes import TokenHashEmbedder

from daemon.app import App
from daemon.rerank import best_row
from daemon.retrieval import _nearest
from magma import catalogue
from magma.catalogue import Snapshot
from magma.store import search_filter
from magma.vector_index import Int8Vectors

Builder = Callable[..., tuple[App, TokenHashEmbedder]]

QUERIES = ["project deadline", "meeting notes", "python testing", "daily review",
           "reading list books", "travel plans", "睡眠 笔记"]
FOLDERS = ["Daily/", "Memory/", "Projects/"]
ZANZIBAR = "# Zanzibar ferry\n\nThe zanzibar ferry leaves the harbour at dawn.\n"


def _in_heap(snap: Snapshot) -> Snapshot:
    rows = snap.chunk_vectors
    assert isinstance(rows, Int8Vectors) and rows.mapped
    return dataclasses.replace(snap, chunk_vectors=Int8Vectors(
        codes=np.array(rows.codes), scales=rows.scales.copy()))


def _hits(app: App, query: str, **filters: object) -> list[tuple[str, float]]:
    return [(h.path, h.score) for h in app.search(query, limit=8, count_recall=False,
                                                  **filters)]  # type: ignore[arg-type]


def _vector_files(state: Path) -> list[str]:
    """This process's open files and mappings in ``state`` itself (not its subfolders: the
    store's tables) that no name reaches any more: the unnamed files of rows."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if Path(target.removesuffix(" (deleted)")).parent == state and not Path(target).exists():
            found.append(target)
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            target = line.split(maxsplit=5)[5].strip() if len(line.split()) > 5 else ""
            if target and Path(target.removesuffix(" (deleted)")).parent == state:
                found.append(target)
    return found


@pytest.fixture
def ann_app(vault: Path, make_app: Builder) -> tuple[App, TokenHashEmbedder]:
    app, fake = make_app(vault, **{"retrieval.ann_vectors_above": "10"})
    app.sync()
    assert app.store.vector_index() == "IvfRq"
    return app, fake


def test_rows_in_a_file_answer_every_search_as_rows_in_the_heap(
        ann_app: tuple[App, TokenHashEmbedder]) -> None:
    app, fake = ann_app
    snap = app.retriever.snapshot()
    heap = _in_heap(snap)
    for query in QUERIES:
        vector = fake.embed([query])[0]
        assert _nearest(snap, vector, 5, lambda _: True, False) \
            == _nearest(heap, vector, 5, lambda _: True, False), query
        for folder in FOLDERS:
            def keep(path: str, folder: str = folder) -> bool:
                return path.startswith(folder) and path in snap.entries

            where = search_filter(None, folder, None)
            assert _nearest(snap, vector, 3, keep, True, where) \
                == _nearest(heap, vector, 3, keep, True, where), (query, folder)
        for path in list(snap.rows_by_path)[:12]:
            assert best_row(snap, path, vector) == best_row(heap, path, vector)
    assert np.array_equal(snap.memory_matrix, heap.memory_matrix)
    mapped = {q: _hits(app, q) for q in QUERIES}
    filtered = {f: _hits(app, QUERIES[0], path_prefix=f) for f in FOLDERS}
    # the same store searched with the rows in the heap: the same hits and scores
    app.retriever._vector_folder = None
    app.retriever.forget_snapshot()
    assert not app.retriever.snapshot().chunk_vectors.mapped
    assert {q: _hits(app, q) for q in QUERIES} == mapped
    assert {f: _hits(app, QUERIES[0], path_prefix=f) for f in FOLDERS} == filtered
    app.close()


def test_a_save_appends_its_rows_to_the_file(ann_app: tuple[App, TokenHashEmbedder],
                                             vault: Path) -> None:
    app, fake = ann_app
    before = app.retriever.snapshot()
    assert before.chunk_vectors.mapped
    assert not [p for p in app.state_dir.iterdir() if p.name.startswith(".vectors")]
    (vault / "Projects" / "Zanzibar ferry.md").write_text(ZANZIBAR, encoding="utf-8")
    (vault / "Welcome.md").write_text("# Welcome\n\nA zanzibar welcome.\n", encoding="utf-8")
    app.sync()
    snap = app.retriever.snapshot()
    rows = snap.chunk_vectors
    assert isinstance(rows, Int8Vectors) and rows.mapped
    assert rows.file is before.chunk_vectors.file  # type: ignore[attr-defined]
    assert len(snap.dead) > 0  # the welcome note's rows replaced, left dead
    assert [h.path for h in app.search("zanzibar ferry harbour", limit=1,
                                       count_recall=False)] == ["Projects/Zanzibar ferry.md"]
    # a snapshot read whole holds the same codes for every chunk
    app.retriever.forget_snapshot()
    whole = app.retriever.snapshot()
    assert whole.chunk_vectors.mapped and not len(whole.dead)
    for path, got in snap.rows_by_path.items():
        assert np.array_equal(snap.chunk_vectors.rows(got),
                              whole.chunk_vectors.rows(whole.rows_by_path[path])), path
    vector = fake.embed(["zanzibar welcome harbour"])[0]
    assert [(p, s) for p, _, s in _nearest(snap, vector, 5, lambda _: True, False)] \
        == [(p, s) for p, _, s in _nearest(whole, vector, 5, lambda _: True, False)]
    app.close()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)")
def test_a_forget_leaves_no_file_of_the_forgotten_rows(
        ann_app: tuple[App, TokenHashEmbedder], vault: Path) -> None:
    app, fake = ann_app
    note = vault / "Projects" / "Zanzibar ferry.md"
    note.write_text(ZANZIBAR, encoding="utf-8")
    app.sync()
    snap = app.retriever.snapshot()
    assert snap.chunk_vectors.mapped
    row = snap.rows_by_path["Projects/Zanzibar ferry.md"][0]
    codes = np.asarray(snap.chunk_vectors.codes[row]).tobytes()  # type: ignore[attr-defined]
    assert _vector_files(app.state_dir)  # the rows' file, open and unnamed
    del snap
    note.unlink()
    app.indexing.index_now(["Projects/Zanzibar ferry.md"], purge=True)
    gc.collect()
    assert _vector_files(app.state_dir) == []  # let go of with the snapshot
    for path in (p for p in app.settings.storage.data_dir.rglob("*") if p.is_file()):
        assert codes not in path.read_bytes(), path
    snap = app.retriever.snapshot()  # read again: a new file, without the note's rows
    assert "Projects/Zanzibar ferry.md" not in snap.rows_by_path
    assert snap.chunk_vectors.mapped
    vector = fake.embed(["zanzibar ferry harbour dawn"])[0]
    assert "Projects/Zanzibar ferry.md" not in [
        p for p, _, _ in _nearest(snap, vector, 5, lambda _: True, False)]
    app.close()


def test_rows_stacked_again_go_to_a_new_file(ann_app: tuple[App, TokenHashEmbedder],
                                            vault: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    app, fake = ann_app
    before = app.retriever.snapshot()
    monkeypatch.setattr(catalogue, "DEAD_ROWS_MIN", 0)  # every save stacks the rows again
    monkeypatch.setattr(catalogue, "DEAD_SHARE", 0.0)
    (vault / "Welcome.md").write_text("# Welcome\n\nA zanzibar welcome.\n", encoding="utf-8")
    app.sync()
    snap = app.retriever.snapshot()
    rows = snap.chunk_vectors
    assert isinstance(rows, Int8Vectors) and rows.mapped and not len(snap.dead)
    assert rows.file is not before.chunk_vectors.file  # type: ignore[attr-defined]
    app.retriever.forget_snapshot()
    whole = app.retriever.snapshot()
    assert snap.chunk_ids == whole.chunk_ids
    assert np.array_equal(np.asarray(rows.codes),
                          np.asarray(whole.chunk_vectors.codes))  # type: ignore[attr-defined]
    vector = fake.embed(["zanzibar welcome"])[0]
    assert _nearest(snap, vector, 5, lambda _: True, False) \
        == _nearest(whole, vector, 5, lambda _: True, False)
    app.close()
