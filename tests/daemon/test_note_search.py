"""Search with note-level BM25 in a large vault (``rerank.MANY_NOTES``): words spread over a
note's chunks find it, the user's own words in a chat weigh more than the answers around
them, and the index follows the vault's edits; a small vault never builds it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon import rerank
from daemon.app import App

#: What a hit found by its words across the whole note says (its ``why``).
WHOLE_NOTE = "by your words across the whole note"

_SECTION = "Filler about the weather and the roads, nothing else of note here. " * 5


def test_search_finds_a_note_by_words_in_two_of_its_chunks(
    vault: Path, make_app: Callable[..., tuple[App, object]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rerank, "MANY_NOTES", 1)  # this small vault counts as large
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
        assert f"#1 {WHOLE_NOTE}" in "; ".join(trip.why)
        # a note of one chunk is left to the chunk full text
        boats = next(h for h in hits if h.path == "Boats.md")
        said = "; ".join(boats.why)
        assert "by your words" in said and WHOLE_NOTE not in said
        # the index follows an edit
        (vault / "Ferry.md").write_text(
            f"# Ferry\n\n## Out\n\n{_SECTION}\nThe quayside at dawn.\n\n"
            f"## Back\n\n{_SECTION}\nThe last boat from Vigo.\n", encoding="utf-8")
        app.sync()
        for _ in range(100):  # built in the background: found within moments, not at once
            hits = app.search("quayside Vigo", limit=10, count_recall=False)
            ferry = next(h for h in hits if h.path == "Ferry.md")
            if WHOLE_NOTE in "; ".join(ferry.why):
                break
            time.sleep(0.1)
        assert f"#1 {WHOLE_NOTE}" in "; ".join(ferry.why)

    finally:
        app.close()


def test_in_a_chat_what_the_user_said_leads_what_the_assistant_said(
    vault: Path, make_app: Callable[..., tuple[App, object]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rerank, "MANY_NOTES", 1)
    answer = "Here are a few ideas on maps, timetables and packing lists for you. " * 16
    sessions = vault / "Sessions"
    sessions.mkdir()
    # the user named the kayak and Porto in two turns; in the other, shorter session the
    # assistant did, once each, in answers as long: by words alone that one would lead
    (sessions / "2024-05-02.md").write_text(
        "# Chat session 2024-05-02\n\n**User:** On Monday morning my sister and I rented a"
        " tandem kayak for the whole day.\n\n"
        f"**Assistant:** {answer}\n\n**User:** Then we took the slow night train down to"
        " Porto.\n\n"
        f"**Assistant:** {answer}\n\n**User:** Thanks!\n\n**Assistant:** Enjoy.\n",
        encoding="utf-8")
    (sessions / "2024-05-09.md").write_text(
        "# Chat session 2024-05-09\n\n**User:** Ideas?\n\n"
        f"**Assistant:** {answer} A kayak.\n\n**User:** A city?\n\n"
        f"**Assistant:** {answer} Porto.\n\n**User:** Thanks!\n\n"
        "**Assistant:** Enjoy.\n", encoding="utf-8")
    app, _ = make_app(vault)
    try:
        app.sync()
        assert len(app.store.chunks_of(["Sessions/2024-05-02.md"])) >= 2
        hits = app.search("the kayak and Porto", limit=10, count_recall=False)
        said = next(h for h in hits if h.path == "Sessions/2024-05-02.md")
        assert f"#1 {WHOLE_NOTE}" in "; ".join(said.why)
        paths = [h.path for h in hits]
        assert paths.index("Sessions/2024-05-02.md") < paths.index("Sessions/2024-05-09.md")
    finally:
        app.close()


def test_the_note_index_is_not_built_in_a_small_vault(
    vault: Path, make_app: Callable[..., tuple[App, object]],
) -> None:
    assert rerank.LIST_WEIGHTS.get("note-bm25", 0.0) > 0
    before = set(threading.enumerate())
    app, _ = make_app(vault)
    try:
        app.sync()
        hits = app.search("sourdough starter", limit=10, count_recall=False)
        assert hits and all(WHOLE_NOTE not in "; ".join(h.why) for h in hits)
        # nothing was built: the build thread never started
        assert not [t for t in set(threading.enumerate()) - before
                    if t.name.startswith("dreamd-bm25")]
    finally:
        app.close()


def _pottery_vault(vault: Path) -> None:
    """A journal note naming the pottery workshop in two chunks, and 200 short notes that each
    name one of its two words: by meaning the short ones are nearer the part."""
    filler = "The morning was slow and grey, with tea and a long walk by the canal. " * 12
    (vault / "Journal").mkdir()
    (vault / "Journal" / "2024-06-02.md").write_text(
        f"# 2024-06-02\n\n## Morning\n\n{filler}\nI finally tried pottery at the old mill.\n\n"
        f"## Evening\n\n{filler}\nThe workshop ran late, so I walked home in the rain.\n",
        encoding="utf-8")
    (vault / "Journal" / "2024-06-09.md").write_text(
        f"# 2024-06-09\n\n## Morning\n\n{filler}\nThe harbour swim started at seven.\n\n"
        f"## Evening\n\n{filler}\nCold water, warm soup after.\n", encoding="utf-8")
    other = vault / "Other"
    other.mkdir()
    for i in range(200):
        word = ("pottery", "workshop")[i % 2]
        (other / f"Item {i:03}.md").write_text(
            f"# Item {i:03}\n\nA {word} note, number {i}, about shelf {i % 7} and tag {i % 11}.\n",
            encoding="utf-8")


@pytest.mark.parametrize("words", [1, 0])
def test_in_a_large_vault_each_part_of_a_question_is_found_by_its_words_too(
    vault: Path, make_app: Callable[..., tuple[App, object]], monkeypatch: pytest.MonkeyPatch,
    words: int,
) -> None:
    """A question that names two events ("which first, A or B?") searches for each apart
    (the parts list). In a large vault each part is also ranked by its words over whole notes:
    the journal note holding both words of "the pottery workshop", apart, in a long day, is
    nearer by meaning to none of its parts than 200 short notes naming one word each."""
    from daemon import retrieval

    monkeypatch.setattr(rerank, "MANY_NOTES", 1)
    monkeypatch.setattr(retrieval, "PHRASE_WORDS", words)
    _pottery_vault(vault)
    app, _ = make_app(vault)
    try:
        app.sync()
        question = "Which did I do first, the pottery workshop or the harbour swim?"
        for _ in range(100):  # the note index is built in the background
            hits = app.search(question, limit=50, count_recall=False)
            if any(WHOLE_NOTE in "; ".join(h.why) for h in hits):
                break
            time.sleep(0.1)
        why = {h.path: "; ".join(h.why) for h in hits}
        day = "Journal/2024-06-02.md"
        found_by_part = "part of the question: 'the pottery workshop'" in why.get(day, "")
        assert found_by_part is bool(words), why.get(day)
    finally:
        app.close()
