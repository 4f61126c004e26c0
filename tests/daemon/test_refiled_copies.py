"""A search shows a note filed again under another day once: the copy test leaves each note's
own date out (``magma.text.copy_form``), while a copy with one value changed is another note.
The FAKE token-hash embedder is enough here: the test is about which hits count as copies
(byte-identical bodies sit at cosine 1 for it too), not about meaning."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from daemon.app import App

_SESSION = ("# Chat session {day}\n\n**User:** I just started as Senior Software Engineer at "
            "Acme and I lead {n} engineers. Any tips for a first team outing?\n\n"
            "**Assistant:** Congratulations! An escape room or a cooking class works well for "
            "a small team; book it for a Friday afternoon.\n")


def test_a_session_filed_under_two_days_takes_one_place_in_the_hits(
        vault: Path, make_app: Callable[..., tuple[App, object]]) -> None:
    sessions = vault / "Sessions"
    sessions.mkdir()
    # the same session under two days (its file name and heading), and one told again with
    # one value changed
    for day, n in (("2023-05-11", 5), ("2023-05-23", 5), ("2023-06-02", 4)):
        (sessions / f"{day}.md").write_text(_SESSION.format(day=day, n=n), encoding="utf-8")
    app, _ = make_app(vault)
    try:
        app.sync()
        query = "tips for a first team outing with my engineers"
        hits = app.search(query, limit=10, path_prefix="Sessions/", count_recall=False)
        found = [h.path for h in hits]
        copies = {"Sessions/2023-05-11.md", "Sessions/2023-05-23.md"}
        assert len(copies & set(found)) == 1, found
        assert "Sessions/2023-06-02.md" in found  # 4 engineers, not 5: another session
        trace = app.last_search_trace
        assert trace is not None and trace.duplicates_dropped == 1
        # --all shows every copy
        every = app.search(query, limit=10, path_prefix="Sessions/", include_hidden=True,
                           count_recall=False)
        assert copies | {"Sessions/2023-06-02.md"} <= {h.path for h in every}
    finally:
        app.close()
