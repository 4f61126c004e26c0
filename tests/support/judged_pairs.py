"""One memory pair judged through the product's model, as the judgement tables ask it."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from consistency.claims import read_claim
from consistency.judgement import MemorySide, judge_pair
from daemon.app import App, load
from magma.embedder import UniversalSentenceEncoder

#: The outcomes that keep both memories unmerged (the verdict "kept apart" of the tables).
KEPT_APART = frozenset({"distinct", "series", "possible_duplicate", "possible_contradiction"})


def judged_as(real_embedder: UniversalSentenceEncoder, old: str, new: str,
              subject: str | None, verdict: str) -> None:
    """``old`` (written on Jan 1) and ``new`` (Jan 20), both under ``subject``, judged
    through the real model: ``verdict``, or for "kept apart" any outcome that keeps both
    unmerged, for "listed or changed" a listed or a judged contradiction."""
    a, b = real_embedder.embed([old, new])
    sides = [MemorySide("user", subject, read_claim(text, written=date(2026, 1, day)))
             for day, text in ((1, old), (20, new))]
    got = judge_pair(sides[0], sides[1], cosine=float(a @ b)).verdict
    if verdict == "kept apart":
        assert got in KEPT_APART
    elif verdict == "listed or changed":
        assert got in {"possible_contradiction", "contradiction"}
    else:
        assert got == verdict


def remembered(real_embedder: UniversalSentenceEncoder, tmp_path: Path, texts: list[str],
               subject: str | None = None) -> tuple[Path, list[Any]]:
    """Each of ``texts`` remembered a month apart from Jun 1, type ``user`` under
    ``subject``, through ``remember`` with the real model into a real store in a new vault
    under ``tmp_path``: ``(the vault's Memory folder, the results)``."""
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(tmp_path / "data")}),
                     embedder=real_embedder)
    try:
        results = [app.memories(clock=lambda m=month: datetime(2026, m, 1, 9, tzinfo=UTC))
                   .remember(text, type="user", subject=subject)
                   for month, text in enumerate(texts, start=6)]
    finally:
        app.close()
    return vault / "Memory", results


def remembered_pair(real_embedder: UniversalSentenceEncoder, tmp_path: Path, old: str,
                    new: str, subject: str | None = None) -> tuple[Path, Any, Any]:
    """``old`` (remembered on Jun 1) then ``new`` (Jul 1), as :func:`remembered`:
    ``(the vault's Memory folder, the first result, the second)``."""
    folder, (first, second) = remembered(real_embedder, tmp_path, [old, new], subject)
    return folder, first, second
