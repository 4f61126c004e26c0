"""Search with note-level BM25: words spread over a note's chunks find it, and the index
follows the vault's edits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon import rerank
from daemon.app import App

_SECTION = "Filler about the weather and the roads, nothing else of note here. " * 5


def test_search_finds_a_note_by_words_in_two_of_its_chunks(
    vault: Path, make_app: Callable[..., tuple[App, object]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(rerank.LIST_WEIGHTS, "note-bm25", 1.0)  # off by default (measured)
    (vault / "Trip log.md").write_text(
        f"# Trip log\n\n## Monday\n\n{_SECTION}\nWe rented a tandem kayak.\n\n"
        f"## Thursday\n\n{_SECTION}\nThe night train reached Porto at dawn.\n",
        encoding="utf-8")
    # notes of the same length that hold one of the words each
    (vault / "Boats.md").write_text(f"# Boats\n\n{_SECTION * 2}\nA kayak is a small boat.\n",
                                    encoding="utf-8")
    (vault / "Cities.md").write_text(f"# Cities\n\n{_SECTION * 2}\nPorto sits on the Douro.\n",
                                     encoding="utf-8")
    app, _ = make_app(vault)
    try:
        app.sync()
        assert len(app.store.chunks_of(["Trip log.md"])) >= 2  # the words are in two chunks
        hits = app.search("kayak Porto", limit=10, count_recall=False)
        trip = next(h for h in hits if h.path == "Trip log.md")
        assert "note BM25 #1" in "; ".join(trip.why)
        # a note of one chunk is left to the chunk full text
        boats = next(h for h in hits if h.path == "Boats.md")
        assert "full-text" in "; ".join(boats.why) and "note BM25" not in "; ".join(boats.why)
        # the index follows an edit
        (vault / "Ferry.md").write_text(
            f"# Ferry\n\n## Out\n\n{_SECTION}\nThe quayside at dawn.\n\n"
            f"## Back\n\n{_SECTION}\nThe last boat from Vigo.\n", encoding="utf-8")
        app.sync()
        for _ in range(100):  # built in the background: found within moments, not at once
            hits = app.search("quayside Vigo", limit=10, count_recall=False)
            ferry = next(h for h in hits if h.path == "Ferry.md")
            if "note BM25" in "; ".join(ferry.why):
                break
            time.sleep(0.1)
        assert "note BM25 #1" in "; ".join(ferry.why)

    finally:
        app.close()


def test_the_note_index_is_not_built_while_its_list_is_off(
    vault: Path, make_app: Callable[..., tuple[App, object]],
) -> None:
    assert rerank.LIST_WEIGHTS.get("note-bm25", 0.0) == 0.0
    before = set(threading.enumerate())
    app, _ = make_app(vault)
    try:
        app.sync()
        hits = app.search("sourdough starter", limit=10, count_recall=False)
        assert hits and all("note BM25" not in "; ".join(h.why) for h in hits)
        # nothing was built: the build thread never started
        assert not [t for t in set(threading.enumerate()) - before
                    if t.name.startswith("dreamd-bm25")]
    finally:
        app.close()
