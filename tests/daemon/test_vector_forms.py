"""The in-memory vector index in both forms over one real store: a vault indexed once (real
LanceDB in a temp folder; the FAKE token-hash embedder, since meaning is not the point here),
searched by an App keeping exact float32 rows and by one whose threshold
(``retrieval.compact_vectors_above``) is lowered so that it keeps int8 rows; and the store's
IVF vector index, built when the chunks outgrow ``retrieval.ann_vectors_above`` (lowered to
10), against the exact scan."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fakes import TokenHashEmbedder

from daemon.app import App
from daemon.render import vectors_line
from daemon.retrieval import _nearest
from magma.catalogue import ann_rows
from magma.store import search_filter
from magma.vector_index import ChunkVectors

Builder = Callable[..., tuple[App, TokenHashEmbedder]]

#: The store's IVF index answers (``retrieval.ann_index``), not the in-memory rows' own
#: (tests/daemon/test_vector_ivf.py).
STORE = {"retrieval.ann_index": "store"}

QUERIES = ["project deadline", "meeting notes", "python testing", "daily review",
           "reading list books", "travel plans"]


def test_both_forms_return_the_same_top_results(vault: Path, make_app: Builder) -> None:
    exact_app, fake = make_app(vault)
    exact_app.sync()
    compact_app, _ = make_app(vault, **{"retrieval.compact_vectors_above": "0"})
    exact_snap = exact_app.retriever.snapshot()
    compact_snap = compact_app.retriever.snapshot()
    assert exact_snap.chunk_vectors.form == "float32"
    assert compact_snap.chunk_vectors.form == "int8"
    assert len(compact_snap.chunk_vectors) == len(exact_snap.chunk_vectors) > 10
    for query in QUERIES:
        vector = fake.embed([query])[0]
        near = [p for p, _, _ in _nearest(exact_snap, vector, 5, lambda _: True, False)]
        compact = [p for p, _, _ in _nearest(compact_snap, vector, 5, lambda _: True, False)]
        assert compact == near, query
        hits = [h.path for h in exact_app.search(query, limit=5, count_recall=False)]
        assert [h.path for h in compact_app.search(query, limit=5, count_recall=False)] == hits
    rows = list(range(len(exact_snap.chunk_vectors)))
    assert np.allclose(compact_snap.chunk_vectors.rows(rows),
                       exact_snap.chunk_vectors.rows(rows), atol=0.01)
    exact_app.close()
    compact_app.close()


def test_status_reports_the_form_and_its_threshold(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{"retrieval.compact_vectors_above": "3"})
    assert app.status().vectors == {"form": None, "chunks": None, "compact_above": 3,
                                    "search": None, "index": None, "ann_above": 300_000,
                                    "ann_form": "int8", "filtered_scan_rows": 100_000,
                                    "ann_index": "memory"}
    app.sync()
    chunks = app.store.counts().chunks
    assert app.status().vectors == {"form": "int8", "chunks": chunks, "compact_above": 3,
                                    "search": "exact scan", "index": None,
                                    "ann_above": 300_000, "ann_form": "int8",
                                    "filtered_scan_rows": 100_000, "ann_index": "memory"}
    app.close()


def test_the_vector_index_finds_the_exact_top_hits(vault: Path, make_app: Builder) -> None:
    # a threshold of 10 chunks: the sync's maintenance builds the store's IVF index, and
    # the vector stage asks it instead of scanning every row
    ann_app, fake = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10"})
    ann_app.sync()
    assert ann_app.store.vector_index() == "IvfRq"
    exact_app, _ = make_app(vault)  # the same store, under the default threshold: a scan
    ann_snap = ann_app.retriever.snapshot()
    exact_snap = exact_app.retriever.snapshot()
    assert ann_snap.ann is not None and exact_snap.ann is None
    assert len(ann_snap.chunk_paths) > 10
    # beside the index the in-memory rows are compact; the exact ones stay below it
    assert (ann_snap.chunk_vectors.form, exact_snap.chunk_vectors.form) == ("int8", "float32")
    for query in QUERIES:
        vector = fake.embed([query])[0]
        found = ann_rows(ann_snap, vector, 64)
        assert found is not None, query
        rows, cosines = found
        assert len(rows) == min(64, len(ann_snap.chunk_paths)), query
        # the index's candidates are scored on the in-memory rows, as a scan scores them,
        # within int8's rounding of the stored float32 vectors
        assert np.allclose(cosines, ann_snap.chunk_vectors.scores_at(rows, vector), atol=1e-6)
        assert np.allclose(cosines, exact_snap.chunk_vectors.rows(rows) @ vector, atol=0.01)
        assert list(cosines) == sorted(cosines, reverse=True)
        near = [p for p, _, _ in _nearest(exact_snap, vector, 5, lambda _: True, False)]
        assert [p for p, _, _ in _nearest(ann_snap, vector, 5, lambda _: True, False)] \
            == near, query
        hits = [h.path for h in exact_app.search(query, limit=5, count_recall=False)]
        assert [h.path for h in ann_app.search(query, limit=5, count_recall=False)] == hits
    exact_app.close()
    ann_app.close()


def test_a_note_written_after_the_index_is_found_through_it(vault: Path,
                                                            make_app: Builder) -> None:
    app, fake = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10"})
    app.sync()
    assert app.store.vector_index() == "IvfRq"
    (vault / "Zanzibar ferry.md").write_text(
        "# Zanzibar ferry\n\nThe zanzibar ferry leaves the harbour at dawn.\n", encoding="utf-8")
    app.sync()
    snap = app.retriever.snapshot()
    vector = fake.embed(["zanzibar ferry harbour dawn"])[0]
    found = ann_rows(snap, vector, 5)
    assert found is not None
    assert snap.chunk_paths[int(found[0][0])] == "Zanzibar ferry.md"
    assert snap.chunk_vectors.form == "int8"  # followed over the batch in its form
    assert [h.path for h in app.search("zanzibar ferry harbour", limit=1,
                                       count_recall=False)] == ["Zanzibar ferry.md"]
    app.close()


def test_status_reports_how_the_vectors_are_searched(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10"})
    assert app.status().vectors["search"] is None  # type: ignore[index]
    app.sync()
    chunks = app.store.counts().chunks
    vectors = app.status().vectors
    assert vectors == {"form": "int8", "chunks": chunks, "compact_above": 1_000_000,
                       "search": "ivf index", "index": "IvfRq", "ann_above": 10,
                       "ann_form": "int8", "filtered_scan_rows": 100_000, "ann_index": "store"}
    assert vectors_line(vectors) == (
        f"int8, a byte per dimension ({chunks:,} chunks; beside the IVF index above 10: "
        "retrieval.ann_vector_form); searched through the store's IvfRq index (more than "
        "10 chunks: retrieval.ann_vectors_above, retrieval.ann_index; filtered searches of "
        "more than 100,000 chunks too: retrieval.filtered_scan_rows)")
    app.close()
    scan_app, _ = make_app(vault, **{"retrieval.ann_vectors_above": str(chunks)})
    vectors = scan_app.status().vectors
    assert vectors is not None and vectors["search"] == "exact scan"
    assert vectors_line(vectors).endswith(
        f"; every chunk scanned (an index above {chunks:,} chunks: retrieval.ann_vectors_above)")
    scan_app.close()


def test_the_form_beside_the_index_is_configurable(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10",
                                "retrieval.ann_vector_form": "float16"})
    app.sync()
    assert app.retriever.snapshot().chunk_vectors.form == "float16"
    vectors = app.status().vectors
    assert vectors is not None and vectors["form"] == "float16"
    assert vectors_line(vectors).startswith("float16, two bytes per dimension (")
    app.close()


FOLDERS = ["Daily/", "Memory/", "Projects/"]


@dataclasses.dataclass(frozen=True)
class Unscanned:
    """A snapshot's in-memory rows that refuse a scan of every row (what a filtered search
    beside the store's index must not need)."""

    inner: ChunkVectors

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __len__(self) -> int:
        return len(self.inner)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        raise AssertionError("every row scanned")


@pytest.mark.parametrize("scan_rows", ["0", "100000"])
def test_a_filtered_search_beside_the_index_keeps_to_its_filter(
        vault: Path, make_app: Builder, scan_rows: str) -> None:
    # filtered_scan_rows 0: every filtered search asks the index with the filter (LanceDB's
    # prefilter); 100,000: the allowed rows are scored on the in-memory int8 rows
    ann_app, fake = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10",
                                       "retrieval.filtered_scan_rows": scan_rows})
    ann_app.sync()
    assert ann_app.store.vector_index() == "IvfRq"
    exact_app, _ = make_app(vault)
    ann_snap = ann_app.retriever.snapshot()
    exact_snap = exact_app.retriever.snapshot()
    assert ann_snap.chunk_vectors.form == "int8"
    ann_snap = dataclasses.replace(ann_snap, chunk_vectors=Unscanned(ann_snap.chunk_vectors))
    for folder in FOLDERS:
        def keep(path: str, folder: str = folder) -> bool:
            return path.startswith(folder) and path in ann_snap.entries

        allowed = {p for p in ann_snap.rows_by_path if keep(p)}
        assert allowed, folder
        where = search_filter(None, folder, None)
        for query in QUERIES:
            vector = fake.embed([query])[0]
            near = [p for p, _, _ in _nearest(exact_snap, vector, 3, keep, True)]
            found = _nearest(ann_snap, vector, 3, keep, True, where)
            assert {p for p, _, _ in found} <= allowed, (folder, query)
            assert [p for p, _, _ in found] == near, (folder, query)
            # a filter the store cannot apply (layers): the index asked for more, then
            # filtered here, or the allowed rows scored
            assert [p for p, _, _ in _nearest(ann_snap, vector, 3, keep, True)] == near
            # told the folder keep asks for: only its notes asked of keep, the same rows
            assert _nearest(ann_snap, vector, 3, keep, True, where, folder) == found
            assert _nearest(exact_snap, vector, 3, keep, True, "", folder) \
                == _nearest(exact_snap, vector, 3, keep, True)
        hits = exact_app.search(QUERIES[0], limit=5, path_prefix=folder, count_recall=False)
        assert [h.path for h in ann_app.search(QUERIES[0], limit=5, path_prefix=folder,
                                               count_recall=False)] == [h.path for h in hits]
    exact_app.close()
    ann_app.close()


def test_a_filtered_search_through_the_index_finds_a_note_the_scan_finds(
        vault: Path, make_app: Builder) -> None:
    app, fake = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10",
                                   "retrieval.filtered_scan_rows": "0"})
    (vault / "Projects" / "Zanzibar ferry.md").write_text(
        "# Zanzibar ferry\n\nThe zanzibar ferry leaves the harbour at dawn.\n",
        encoding="utf-8")
    app.sync()
    snap = app.retriever.snapshot()
    vector = fake.embed(["zanzibar ferry harbour dawn"])[0]
    found = _nearest(snap, vector, 2, lambda p: p.startswith("Projects/"), True,
                     search_filter(None, "Projects/", None))
    assert found[0][0] == "Projects/Zanzibar ferry.md"
    assert all(p.startswith("Projects/") for p, _, _ in found)
    scanned = _nearest(dataclasses.replace(snap, ann=None), vector, 2,
                       lambda p: p.startswith("Projects/"), True)
    assert [p for p, _, _ in scanned] == [p for p, _, _ in found]
    app.close()


def test_the_rows_stay_exact_until_the_index_is_built(vault: Path, make_app: Builder) -> None:
    # past ann_vectors_above with no index yet every row is scanned, and float32 rows scan
    # fastest; once the store's maintenance has built the index they turn compact
    app, fake = make_app(vault, **{**STORE, "retrieval.ann_vectors_above": "10"})
    app.sync()
    assert app.retriever.snapshot().chunk_vectors.form == "int8"
    app.store._t.chunks.drop_index("vector_ivf")
    assert app.store.vector_index() is None
    snap = app.retriever.snapshot()
    assert snap.chunk_vectors.form == "float32"
    vectors = app.status().vectors
    assert vectors is not None and (vectors["form"], vectors["search"]) == ("float32",
                                                                            "exact scan")
    vector = fake.embed([QUERIES[0]])[0]
    scanned = [p for p, _, _ in _nearest(snap, vector, 5, lambda _: True, False)]
    app.store.maintain()
    assert app.store.vector_index() == "IvfRq"
    snap = app.retriever.snapshot()
    assert snap.chunk_vectors.form == "int8"
    assert snap.chunk_vectors.mapped  # (magma.vector_file) converted into a file
    assert [p for p, _, _ in _nearest(snap, vector, 5, lambda _: True, False)] == scanned
    app.close()
