"""A search hit on a diary snippet is a recall of it (issue 21: "a search hit is a vote").

The daily notes are indexed as notes, so a search finds them like any note. When notes a
search returns have snippets (:mod:`magma.snippet_store`), the snippet of each note that
matches the query best is recalled once, when it holds at least :data:`MATCH_MIN` of the
query's words weighted by how rare each word is among those snippets (a word every diary
line has, "coffee with", weighs little; the name of the thing weighs much) and comes close
to the best match of the whole answer (:data:`RELATIVE_MIN`), with that share as its
retrieval score.

A transcript is no note of the vault: the search finds the user's statements in it by their
own words. The transcript snippets of the last ``max_age_days`` (older ones can no longer earn
a memory) are matched with the snippets of the notes found, in one weighing: the best
statement of each transcript is recalled under the same two thresholds, so a statement that
shares a word or two with a query about a line of the diary falls below the line's match.
Only counting: never fails the search, never touches a file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from magma.search import SearchHit
from magma.snippet_store import SnippetStore
from magma.snippets import Snippet, snippet_tokens

__all__ = ["MATCH_MIN", "RELATIVE_MIN", "SnippetRecaller", "best_matches", "snippet_words",
           "word_shares"]

#: The weighted share of a query's words a snippet must hold to count as hit (dreamd's
#: choice: half; stop words are never words here), and the share of the best snippet's it
#: must reach (dreamd's choice, measured with ``bench/diary_bench.py``: a line that shares
#: the template of the line a query names, not its name, falls below 0.8 of it).
MATCH_MIN = 0.5
RELATIVE_MIN = 0.8


class SnippetRecaller:
    """Counts snippet recalls of one vault's searches; ``open_store()`` opens MAGMA's
    snippet tables on first use; transcript snippets older than ``max_age_days`` (the
    deep-sleep age gate) are not matched."""

    def __init__(self, open_store: Callable[[], SnippetStore], max_age_days: int = 30
                 ) -> None:
        self._open = open_store
        self._store: SnippetStore | None = None
        self._max_age_days = max_age_days

    @property
    def store(self) -> SnippetStore:
        if self._store is None:
            self._store = self._open()
        return self._store

    def recall(self, query: str, hits: Sequence[SearchHit], at: datetime,
               shown: Mapping[str, float] | None = None) -> dict[str, float]:
        """Record the snippets of ``hits``'s notes, and the transcript statements, that
        match ``query``, and the statements the search listed (``shown``: key → match,
        :mod:`daemon.transcript_hits`) -> ``{key: match}``: one recall each, a statement
        both matched and listed counted once (with the better match). Raises
        ``StoreError``."""
        paths = {h.path for h in hits if not h.memory_type and h.origin == "vault"}
        wanted = snippet_tokens(query)
        scores: dict[str, float] = {}
        if wanted:
            found = self.store.snippets(paths=paths) if paths else []
            since = at.date() - timedelta(days=self._max_age_days)
            found += self.store.snippets(origin="transcript", since=since)
            scores = best_matches(wanted, found)
        for key, match in (shown or {}).items():
            scores[key] = max(scores.get(key, 0.0), round(float(match), 4))
        self.store.record(scores, query, at)
        return scores


def snippet_words(snippet: Snippet) -> set[str]:
    """The words a query is matched with: the snippet's text's and its tags. Pure."""
    return snippet_tokens(snippet.text) | set(snippet.tags)


def word_shares(wanted: set[str], snippets: Sequence[Snippet],
                words_of: Callable[[Snippet], set[str]] = snippet_words) -> dict[str, float]:
    """``{key: share}`` of every snippet holding at least :data:`MATCH_MIN` of the query's
    words ``wanted``, weighted as in :func:`best_matches` (by inverse document frequency
    among ``snippets``); ``words_of`` gives a snippet's words (:func:`snippet_words`, or a
    cache of it). Pure."""
    held = [(s, words_of(s)) for s in snippets]
    df = {t: sum(1 for _, words in held if t in words) for t in wanted}
    idf = {t: math.log(1 + len(held) / (df[t] or 1)) for t in wanted}
    total = sum(idf.values())
    if not total:
        return {}
    shares = {s.key: round(sum(idf[t] for t in wanted & words) / total, 4) for s, words in held}
    return {key: share for key, share in shares.items() if share >= MATCH_MIN}


def best_matches(wanted: set[str], snippets: Sequence[Snippet]) -> dict[str, float]:
    """``{key: match}`` of the best snippet of each note (ties kept) whose share of the
    query's words ``wanted``, weighted by inverse document frequency among ``snippets``
    (``log(1 + n / df)``), is at least :data:`MATCH_MIN` and :data:`RELATIVE_MIN` of the
    best share of all. Pure."""
    held = [(s, snippet_tokens(s.text) | set(s.tags)) for s in snippets]
    df = {t: sum(1 for _, words in held if t in words) for t in wanted}
    idf = {t: math.log(1 + len(held) / (df[t] or 1)) for t in wanted}
    total = sum(idf.values())
    best: dict[str, list[tuple[float, str]]] = {}
    for snippet, words in held:
        share = sum(idf[t] for t in wanted & words) / total if total else 0.0
        if share >= MATCH_MIN:
            best.setdefault(snippet.path, []).append((round(share, 4), snippet.key))
    top = max((x for found in best.values() for x, _ in found), default=0.0)
    return {key: share for found in best.values() for share, key in found
            if share == max(x for x, _ in found) and share >= RELATIVE_MIN * top}
