"""The in-memory vector index in both forms over one real store: a vault indexed once (real
LanceDB in a temp folder; the FAKE token-hash embedder, since meaning is not the point here),
searched by an App keeping exact float32 rows and by one whose threshold
(``retrieval.compact_vectors_above``) is lowered so that it keeps int8 rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from fakes import TokenHashEmbedder

from daemon.app import App
from daemon.retrieval import _nearest

Builder = Callable[..., tuple[App, TokenHashEmbedder]]

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
    assert app.status().vectors == {"form": None, "chunks": None, "compact_above": 3}
    app.sync()
    chunks = app.store.counts().chunks
    assert app.status().vectors == {"form": "int8", "chunks": chunks, "compact_above": 3}
    app.close()
