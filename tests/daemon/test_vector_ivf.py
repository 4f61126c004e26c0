"""The IVF over the in-memory rows (``retrieval.ann_index = "memory"``, the default) answering
the vector stage above ``retrieval.ann_vectors_above`` (lowered to 10): no query of the store,
the same notes as the exact scan on a vault small enough that every partition is probed, the
rows of a save followed, filtered searches kept to their filter, a question's parts searched
in the same pass, and the partitions read back at a restart instead of trained again. Real
LanceDB in a temp folder; the FAKE token-hash embedder (the meaning of the vectors is not the
point here: ``tests/magma/test_vector_ivf.py`` measures the IVF on the product's model)."""

from __future__ import annotations

import dataclasses
import shutil
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from fakes import TokenHashEmbedder

from daemon.app import App, load
from daemon.pool_call import PoolCall
from daemon.render import vectors_line
from daemon.retrieval import _by_phrases, _embedded, _nearest, _nearest_parts
from magma import ivf_keeper, vector_ivf
from magma.catalogue import Snapshot
from magma.ivf_keeper import IvfWork
from magma.store import search_filter
from magma.vector_file import PARTITIONS_FILE_NAME, load_partitions
from magma.vector_ivf import assign_rows

Builder = Callable[..., tuple[App, TokenHashEmbedder]]

QUERIES = ["project deadline", "meeting notes", "python testing", "daily review",
           "reading list books", "travel plans", "睡眠 笔记"]
FOLDERS = ["Daily/", "Memory/", "Projects/"]
IVF = {"retrieval.ann_vectors_above": "10"}
ZANZIBAR = "# Zanzibar ferry\n\nThe zanzibar ferry leaves the harbour at dawn.\n"


def _ready(app: App) -> Snapshot:
    """The snapshot once the IVF's training (off the search path) is done."""
    assert app.retriever.wait_for_ivf(60)
    return app.retriever.snapshot()


def _scanned(snap: Snapshot) -> Snapshot:
    """``snap`` scanning every row (no IVF)."""
    return dataclasses.replace(snap, partitions=None, ann=None)


def test_the_in_memory_ivf_answers_without_the_store(vault: Path, make_app: Builder) -> None:
    app, fake = make_app(vault, **IVF)
    app.sync()
    snap = _ready(app)
    assert snap.partitions is not None and snap.ann is None
    assert len(snap.partitions) == len(snap.chunk_vectors)
    assert snap.chunk_vectors.form == "int8"
    # the same int8 rows, every one scanned (47 chunks: 6 partitions, all probed)
    exact_app, _ = make_app(vault, **{"retrieval.compact_vectors_above": "0"})
    exact = exact_app.retriever.snapshot()
    assert exact.partitions is None and exact.chunk_vectors.form == "int8"
    for query in QUERIES:
        vector = fake.embed([query])[0]
        assert _nearest(snap, vector, 5, lambda _: True, False) == \
            _nearest(exact, vector, 5, lambda _: True, False), query
        assert [h.path for h in app.search(query, limit=5, count_recall=False)] == \
            [h.path for h in exact_app.search(query, limit=5, count_recall=False)], query
    vectors = app.status().vectors
    assert vectors is not None
    assert (vectors["search"], vectors["ann_index"]) == ("ivf index", "memory")
    assert "; searched through the IVF over the in-memory rows (more than 10 chunks: " \
        "retrieval.ann_vectors_above, retrieval.ann_index;" in vectors_line(vectors)
    exact_app.close()
    app.close()


def test_a_saved_note_is_found_and_its_old_rows_never(vault: Path, make_app: Builder) -> None:
    app, fake = make_app(vault, **IVF)
    app.sync()
    note = vault / "Projects" / "Zanzibar ferry.md"
    note.write_text(ZANZIBAR, encoding="utf-8")
    app.sync()
    before = _ready(app)
    old = list(before.rows_by_path["Projects/Zanzibar ferry.md"])
    note.write_text(ZANZIBAR + "\nIt returns at dusk.\n", encoding="utf-8")
    app.sync()
    snap = app.retriever.snapshot()
    assert snap.partitions is not None and len(snap.dead) >= len(old)
    assert (snap.partitions.parts[old] == -1).all()
    assert snap.partitions.centroids is before.partitions.centroids  # not trained again
    vector = fake.embed(["zanzibar ferry harbour dawn dusk"])[0]
    found = _nearest(snap, vector, 3, lambda _: True, False)
    assert found[0][0] == "Projects/Zanzibar ferry.md"
    assert found[0][1] not in old
    assert [h.path for h in app.search("zanzibar ferry harbour", limit=1,
                                       count_recall=False)] == ["Projects/Zanzibar ferry.md"]
    app.close()


@pytest.mark.parametrize("scan_rows", ["0", "100000"])
def test_a_filtered_search_keeps_to_its_filter(vault: Path, make_app: Builder,
                                               scan_rows: str) -> None:
    # filtered_scan_rows 0: the IVF's probed rows restricted to the allowed ones (the scan
    # of the allowed rows when they hold too few notes); 100,000: the allowed rows scored
    app, fake = make_app(vault, **IVF, **{"retrieval.filtered_scan_rows": scan_rows})
    app.sync()
    snap = _ready(app)
    scan = _scanned(snap)
    for folder in FOLDERS:
        def keep(path: str, folder: str = folder) -> bool:
            return path.startswith(folder) and path in snap.entries

        allowed = {p for p in snap.rows_by_path if keep(p)}
        where = search_filter(None, folder, None)
        for query in QUERIES:
            vector = fake.embed([query])[0]
            found = _nearest(snap, vector, 3, keep, True, where, folder)
            assert {p for p, _, _ in found} <= allowed, (folder, query)
            assert found == _nearest(scan, vector, 3, keep, True), (folder, query)
    app.close()


def test_the_parts_of_a_question_are_searched_in_one_pass(vault: Path,
                                                         make_app: Builder) -> None:
    app, fake = make_app(vault, **IVF)
    app.sync()
    snap = _ready(app)
    phrases = ["the project deadline", "the python testing meeting", "睡眠 笔记"]
    vector = fake.embed(["when was the deadline and the testing meeting"])[0]
    with ThreadPoolExecutor(1) as pool:
        for filtered, keep in ((False, lambda _: True),
                               (True, lambda p: p.startswith("Projects/"))):
            call = PoolCall(pool, partial(_embedded, fake, snap, phrases, 40, keep, filtered))
            nearest, by_phrases = _nearest_parts(snap, vector, phrases, call, 40, keep,
                                                 filtered)
            assert by_phrases is not None
            alone = _nearest(snap, vector, 40, keep, filtered)
            # (one matrix product for all: the same cosines, to a float32 rounding)
            assert [(p, r) for p, r, _ in nearest] == [(p, r) for p, r, _ in alone]
            assert np.allclose([c for _, _, c in nearest], [c for _, _, c in alone],
                               atol=1e-6)
            assert by_phrases() == _by_phrases(fake, snap, phrases, 40, keep, filtered)
            assert by_phrases() == _by_phrases(fake, _scanned(snap), phrases, 40, keep,
                                               filtered)
    app.close()


def test_a_restart_reads_the_partitions_instead_of_training(
        vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    app, _ = make_app(vault, **IVF)
    app.sync()
    first = _ready(app).partitions
    assert first is not None
    assert (app.state_dir / PARTITIONS_FILE_NAME).exists()
    app.close()

    def no_training(*_: object, **__: object) -> None:
        raise AssertionError("trained again")

    monkeypatch.setattr(ivf_keeper, "trained", no_training)
    again, _ = make_app(vault, **IVF)
    snap = again.retriever.snapshot()
    assert snap.partitions is not None
    assert np.array_equal(snap.partitions.parts, first.parts)
    assert np.array_equal(snap.partitions.centroids, first.centroids)
    assert again.search(QUERIES[0], limit=3, count_recall=False)
    again.close()


def test_the_store_index_stays_a_setting_away(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **IVF, **{"retrieval.ann_index": "store"})
    app.sync()
    snap = app.retriever.snapshot()
    assert snap.partitions is None and snap.ann is not None
    vectors = app.status().vectors
    assert vectors is not None and vectors["ann_index"] == "store"
    assert "the store's IvfRq index" in vectors_line(vectors)
    app.close()


def test_the_store_index_answers_while_the_ivf_trains_then_the_ivf_does(
        vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Training (92 s of CPU at 928,740 rows) never holds a search: the store's index
    answers meanwhile; a note saved during the training is in the IVF once it is taken."""
    release = threading.Event()
    real = ivf_keeper.trained

    def slow(vectors: object, seed: int = 0) -> object:
        assert release.wait(60)
        return real(vectors, seed)  # type: ignore[arg-type]

    monkeypatch.setattr(ivf_keeper, "trained", slow)
    app, _ = make_app(vault, **IVF)
    app.sync()
    snap = app.retriever.snapshot()
    assert snap.partitions is None and snap.ivf_wanted is not None and snap.ann is not None
    assert [h.path for h in app.search("reading list books", limit=3, count_recall=False)]
    (vault / "Projects" / "Zanzibar ferry.md").write_text(ZANZIBAR, encoding="utf-8")
    app.sync()  # rows appended while the IVF trains on the rows before them
    during = app.retriever.snapshot()
    assert during.partitions is None and during.lineage is snap.lineage
    release.set()
    done = _ready(app)
    assert done.partitions is not None and done.ann is None
    assert len(done.partitions) == len(done.chunk_vectors)
    assert [h.path for h in app.search("zanzibar ferry harbour", limit=1,
                                       count_recall=False)] == ["Projects/Zanzibar ferry.md"]
    app.close()


def test_a_training_that_fails_leaves_the_store_index_answering_and_is_not_retried(
        vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def broken(vectors: object, seed: int = 0) -> object:
        calls.append(1)
        raise MemoryError("no room for the sample")

    monkeypatch.setattr(ivf_keeper, "trained", broken)
    app, _ = make_app(vault, **IVF)
    app.sync()
    assert not app.retriever.wait_for_ivf(30)
    for _ in range(3):
        snap = app.retriever.snapshot()
        assert snap.partitions is None and snap.ann is not None
        assert app.search("reading list books", limit=3, count_recall=False)
    assert app.retriever.wait_for_ivf(0) is False
    assert calls == [1]
    app.close()


@pytest.mark.parametrize("cut", [0, 1, 0.5])
def test_a_partitions_file_cut_short_costs_a_training_not_the_search(
        vault: Path, make_app: Builder, cut: float) -> None:
    # (a rename not yet on the disk when the machine stopped leaves an empty file)
    app, _ = make_app(vault, **IVF)
    app.sync()
    first = _ready(app).partitions
    assert first is not None
    path = app.state_dir / PARTITIONS_FILE_NAME
    app.close()
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)] if cut < 1 else data[:-1])
    again, _ = make_app(vault, **IVF)
    assert [h.path for h in again.search(QUERIES[0], limit=3, count_recall=False)]
    snap = _ready(again)
    assert snap.partitions is not None
    assert np.array_equal(snap.partitions.parts, first.parts)  # trained again alike
    assert path.read_bytes() == data
    again.close()


class _OtherModel(TokenHashEmbedder):
    """Another model of the same dimensions: the same texts, other vectors."""

    model_id = "test-token-hash-reversed"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.ascontiguousarray(super().embed(texts)[:, ::-1])


def _rebuilt(app: App) -> Path:
    """The vault's state folder once ``app`` is closed and its store removed (as a model
    change or a damaged index asks: the next sync indexes the vault again)."""
    state = app.state_dir
    app.close()
    shutil.rmtree(state / "lancedb")
    return state


def _assigned(snap: Snapshot) -> bool:
    """Is every living row of ``snap`` in the partition of its nearest centroid?"""
    assert snap.partitions is not None
    living = snap.partitions.parts >= 0
    nearest = assign_rows(snap.chunk_vectors, snap.partitions.centroids)
    return bool(np.array_equal(nearest[living], snap.partitions.parts[living]))


@pytest.mark.parametrize("moved", ["Welcome.md", "周末计划.md"])
def test_a_store_indexed_again_in_another_order_assigns_its_rows_again(
        vault: Path, make_app: Builder, moved: str) -> None:
    # the same chunks, the same table version and as many rows: other rows all the same
    app, _ = make_app(vault, **IVF)
    app.sync()
    first = _ready(app)
    _rebuilt(app)
    (vault / moved).rename(vault / "Baking" / f"0 {moved}")
    again, _ = make_app(vault, **IVF)
    again.sync()
    snap = again.retriever.snapshot()
    assert snap.versions["chunks"] == first.versions["chunks"]
    assert len(snap.chunk_vectors) == len(first.chunk_vectors)
    assert snap.partitions is None or _assigned(snap)
    assert _assigned(_ready(again))
    again.close()


def test_a_store_indexed_again_by_another_model_trains_again(vault: Path,
                                                            make_app: Builder) -> None:
    app, _ = make_app(vault, **IVF)
    app.sync()
    first = _ready(app).partitions
    assert first is not None
    _rebuilt(app)
    other = _OtherModel()
    again = App.create(load(None, None, {"vault.path": str(vault), **IVF}), embedder=other)
    again.sync()
    snap = again.retriever.snapshot()
    # (the old model's centroids would group the new model's rows by chance)
    assert snap.partitions is None and snap.ivf_wanted == IvfWork()
    done = _ready(again).partitions
    assert done is not None and _assigned(_ready(again))
    assert not np.array_equal(done.centroids, first.centroids)
    again.close()


def test_a_forget_trains_the_ivf_again_on_the_rows_left(vault: Path, make_app: Builder) -> None:
    # (a centroid is the mean of its partition's rows: of one row, that row's vector; the
    # centroids kept after a forget would keep the forgotten notes' vectors in them)
    app, _ = make_app(vault, **IVF)
    app.sync()
    before = _ready(app)
    assert before.partitions is not None
    app.memories().forget("kiln-first-firing-in-january")
    snap = _ready(app)
    assert snap.partitions is not None
    assert "Memory/kiln-first-firing-in-january.md" not in snap.rows_by_path
    assert not len(snap.dead)  # (read again whole: only the rows left)
    again = vector_ivf.trained(snap.chunk_vectors)
    assert np.array_equal(snap.partitions.centroids, again.centroids)
    assert np.array_equal(snap.partitions.parts, again.parts)
    saved = load_partitions(app.state_dir)
    assert saved is not None and np.array_equal(saved.centroids, again.centroids)
    app.close()


def test_a_forget_by_a_process_that_never_searched_deletes_the_saved_partitions(
        vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **IVF)
    app.sync()
    _ready(app)
    path = app.state_dir / PARTITIONS_FILE_NAME
    assert path.exists()
    app.close()
    once, _ = make_app(vault, **IVF)  # (a one-shot dreamd forget)
    once.memories().forget("kiln-first-firing-in-january")
    assert not path.exists()
    once.close()


def test_a_training_under_way_at_a_forget_is_never_saved_nor_taken(
        vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = ivf_keeper.trained
    seen: list[int] = []

    def slow(vectors: object, seed: int = 0) -> object:
        seen.append(len(vectors))  # type: ignore[arg-type]
        if len(seen) == 1:
            assert release.wait(60)
        return real(vectors, seed)  # type: ignore[arg-type]

    monkeypatch.setattr(ivf_keeper, "trained", slow)
    app, _ = make_app(vault, **IVF)
    app.sync()
    assert app.retriever.snapshot().ivf_wanted is not None  # the first training under way
    app.memories().forget("kiln-first-firing-in-january")
    release.set()
    snap = _ready(app)
    assert snap.partitions is not None and seen[1] == len(snap.chunk_vectors) < seen[0]
    assert snap.partitions.trained_rows == len(snap.chunk_vectors)
    saved = load_partitions(app.state_dir)
    assert saved is not None and saved.trained_rows == len(snap.chunk_vectors)
    app.close()
