"""A copied vault: the notes without a date of their own are not all "written today".

Real files (the demo vault, copied), a real LanceDB store, the tests' FAKE embedder (dates, not
meaning, are what is tested). Every file is stamped as a copy stamps them (milliseconds apart);
one note is then given a file time of its own, as an edit gives it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from daemon.app import App

Builder = Callable[..., tuple[App, object]]
COPIED_AT = datetime(2026, 3, 2, 9, 30).timestamp()
EDITED_AT = datetime(2026, 3, 20, 18, 0).timestamp()


def test_a_copy_dates_no_note_and_an_edit_dates_its_note(vault: Path, make_app: Builder
                                                          ) -> None:
    notes = sorted(vault.rglob("*.md"))
    assert len(notes) >= 20
    for i, note in enumerate(notes):
        os.utime(note, (COPIED_AT + i / 1000, COPIED_AT + i / 1000))
    edited = vault / "Reading list.md"  # no date in its frontmatter or its name
    os.utime(edited, (EDITED_AT, EDITED_AT))
    app, _ = make_app(vault)
    try:
        app.sync()
        snap = app.retriever.snapshot()
        entries = snap.entries
        assert entries["Reading list.md"].day == date(2026, 3, 20)
        undated = [e for e in entries.values()
                   if e.dated is None and e.path != "Reading list.md"]
        assert undated and all(e.day is None for e in undated)
        assert date(2026, 3, 2) not in {e.day for e in entries.values()}
        dated = [e for e in entries.values() if e.dated is not None]
        assert dated and all(e.day == e.dated for e in dated)  # their own dates stay
        # --explain says a copied note has no date, not that it is very old
        why = {h.path: h.why for h in app.search("reading list books", limit=10,
                                                 count_recall=False)}
        assert "recency: none, no date known" not in why["Reading list.md"]
        copied = [p for p in why if entries[p].day is None]
        assert copied and all("recency: none, no date known" in why[p] for p in copied)
        assert all(not w.startswith("recency 0.00") for p in copied for w in why[p])
    finally:
        app.close()
