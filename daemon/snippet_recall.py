"""A search hit on a diary snippet is a recall of it (issue 21: "a search hit is a vote").

The daily notes are indexed as notes, so a search finds them like any note. When one of the
notes a search returns has snippets (:mod:`magma.snippet_store`), each snippet of it that
holds at least :data:`MATCH_MIN` of the query's words (:func:`magma.snippets.match_score`)
is recalled once, with that share as its retrieval score. Only counting: never fails the
search, never touches a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from magma.search import SearchHit
from magma.snippet_store import SnippetStore
from magma.snippets import match_score, snippet_tokens

__all__ = ["MATCH_MIN", "SnippetRecaller"]

#: The share of a query's words a snippet must hold to count as hit (dreamd's choice: half,
#: so a two-word query needs one word and a snippet that only shares a stop word never counts).
MATCH_MIN = 0.5


class SnippetRecaller:
    """Counts snippet recalls of one vault's searches; ``open_store()`` opens MAGMA's
    snippet tables on first use."""

    def __init__(self, open_store: Callable[[], SnippetStore]) -> None:
        self._open = open_store
        self._store: SnippetStore | None = None

    @property
    def store(self) -> SnippetStore:
        if self._store is None:
            self._store = self._open()
        return self._store

    def recall(self, query: str, hits: Sequence[SearchHit], at: datetime) -> dict[str, float]:
        """Record the snippets of ``hits``'s notes that match ``query`` -> ``{key: match}``.
        Raises ``StoreError``."""
        paths = {h.path for h in hits if not h.memory_type}
        wanted = snippet_tokens(query)
        if not paths or not wanted:
            return {}
        scores = {s.key: round(m, 4) for s in self.store.snippets(paths=paths)
                  if (m := match_score(wanted, s)) >= MATCH_MIN}
        self.store.record(scores, query, at)
        return scores
