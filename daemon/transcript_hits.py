"""Statements of assistant sessions as search hits: raw, unreviewed, never a memory.

Issue 21, "Light sleep": snippets are searchable like notes. A daily note is a note of the
vault, so its lines are found like any note. What the user said in an assistant session is
not: light sleep keeps each of those statements as a snippet in MAGMA (``snippets``, with
its vector in ``snippet_vectors``, :mod:`daemon.transcript_snippets`), and this module finds
them for ``dreamd search`` and the MCP ``memory_search`` tool, by the same two lists as the
hybrid search of notes, fused the same way:

- **words** — the statements holding at least half of the query's words, weighted by how
  rare each word is among the statements (:func:`daemon.snippet_recall.word_shares`);
- **vectors** — the cosine of the query's vector with each statement's, from
  :data:`daemon.active_recall.MIN_COSINE` on, when the statements have vectors of the
  search's model;

fused by reciprocal rank fusion (:func:`daemon.active_recall.fuse`). At most
``retrieval.transcript_hits`` (3; 0: none) are listed *after* the vault's hits, never in
their place: the vault's hits are what they were without them. Each is a
:class:`magma.search.SearchHit` with ``origin="transcript"``, its evidence
(``~/.claude/projects/p/3f2a….jsonl:12``) as its path and its snippet key as its id — raw
session material, shown as such, never a memory or a note, never in ``MEMORY.md`` nor in an
assembled context (those ask for the vault's hits only).

Never listed: a statement that carries a credential (:mod:`consistency.secrets`; light sleep
keeps none, this is the second lock), one that became a memory (the memory is found itself),
and one whose memory the user forgot (:func:`daemon.dream_sleep.forget_snippets`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import structlog

from ccb.atomic import read_json_object
from consistency.secrets import find_secrets, redact_secrets
from daemon.active_recall import MIN_COSINE, RRF_K, fuse
from daemon.dream_sleep import SNIPPETS_FILE
from daemon.snippet_recall import snippet_words, word_shares
from magma.embedder import Embedder
from magma.search import SearchHit, make_snippet
from magma.snippet_store import SnippetStore
from magma.snippets import Snippet, snippet_tokens

__all__ = ["HIDDEN_STATUSES", "TranscriptFound", "TranscriptSearch", "transcript_hit"]

log = structlog.get_logger("dreamd.search")

#: The dream's statuses of a statement never listed: it became a memory, or the memory it
#: became was forgotten.
HIDDEN_STATUSES = frozenset({"promoted", "forgotten"})


@dataclass(frozen=True, slots=True)
class TranscriptFound:
    """The statements one search lists (``hits``, best first), how well each matched the
    query (``matches``: key → 0-1, the better of its word share and its cosine: what its
    recall records) and how they were found (``trace``, for ``--explain``)."""

    hits: list[SearchHit] = field(default_factory=list)
    matches: dict[str, float] = field(default_factory=dict)
    trace: str = "off"


def transcript_hit(snippet: Snippet, query: str, score: float, why: tuple[str, ...]
                   ) -> SearchHit:
    """The search hit of one statement: its evidence as path, its day in the title, its
    text (credentials withheld) as the snippet. Pure."""
    return SearchHit(
        path=snippet.evidence, title=f"Said in an assistant session on {snippet.day}",
        heading=None, snippet=make_snippet(redact_secrets(snippet.text), query), score=score,
        why=why, memory_type=None, note_id=snippet.key, origin="transcript")


class TranscriptSearch:
    """Finds a vault's session statements (module docstring): ``store()`` opens the snippet
    tables, ``state_dir`` holds the dream's state of each snippet, ``embedder()`` is the
    search's model (``None``: words only)."""

    def __init__(self, store: Callable[[], SnippetStore], state_dir: Path,
                 embedder: Callable[[], Embedder | None] | None = None) -> None:
        self._store = store
        self._state_dir = state_dir
        self._embedder = embedder
        # each statement's words by key (a key is a hash of the text: they never change);
        # tokenising 2,000 statements took 160 ms of a search, measured here
        self._words: dict[str, set[str]] = {}

    def _words_of(self, snippet: Snippet) -> set[str]:
        words = self._words.get(snippet.key)
        if words is None:
            words = self._words[snippet.key] = snippet_words(snippet)
        return words

    def _listable(self) -> dict[str, Snippet]:
        entries = read_json_object(self._state_dir / SNIPPETS_FILE).get("snippets") or {}
        hidden = {key for key, entry in entries.items()
                  if isinstance(entry, dict) and entry.get("status") in HIDDEN_STATUSES}
        return {s.key: s for s in self._store().snippets(origin="transcript")
                if s.key not in hidden}

    def find(self, query: str, limit: int) -> TranscriptFound:
        """At most ``limit`` statements matching ``query``, best first. Raises
        ``StoreError`` (the snippet tables) or ``EmbeddingError`` (the model)."""
        if limit < 1 or not query.strip():
            return TranscriptFound(trace="off")
        listable = self._listable()
        if not listable:
            return TranscriptFound(trace="no statements of sessions in the index")
        if len(self._words) > 2 * len(listable):  # statements gone: start afresh
            self._words.clear()
        words = word_shares(snippet_tokens(query), list(listable.values()), self._words_of)
        vectors = self._by_meaning(query, listable)
        meaning = vectors or {}
        order = fuse([words, meaning], days={k: s.day.toordinal() for k, s in listable.items()})
        ranks = [{k: r for r, k in enumerate(sorted(found, key=lambda k: -found[k]), 1)}
                 for found in (words, meaning)]
        hits: list[SearchHit] = []
        matches: dict[str, float] = {}
        # (a credential is looked for in what would be listed only: 0.4 ms a statement)
        for key in (k for k in order if not find_secrets(listable[k].text)):
            if len(hits) == limit:
                break
            why = tuple(
                f"{name} #{rank[key]} ({label} {found[key]:.2f})"
                for name, label, found, rank in (("session words", "share", words, ranks[0]),
                                                 ("session vector", "cos", meaning, ranks[1]))
                if key in found)
            score = sum(1.0 / (RRF_K + rank[key]) for rank in ranks if key in rank)
            hits.append(transcript_hit(listable[key], query, score, why))
            matches[key] = min(1.0, max(words.get(key, 0.0), meaning.get(key, 0.0)))
        how = "words and vectors" if vectors is not None else "words only"
        trace = (f"{len(listable)} statements of sessions, {len(words)} by words, "
                 f"{len(meaning)} by meaning ({how}); {len(hits)} listed")
        return TranscriptFound(hits, matches, trace)

    def _by_meaning(self, query: str, listable: dict[str, Snippet]
                    ) -> dict[str, float] | None:
        """``{key: cosine}`` of the statements at :data:`MIN_COSINE` or more to ``query``;
        ``None`` without a model or without vectors of its model."""
        embedder = self._embedder() if self._embedder is not None else None
        if embedder is None:
            return None
        keys, matrix = self._store().vectors(embedder.model_id)
        if not keys:
            return None
        vector = np.asarray(embedder.embed([query])[0], dtype=np.float32)
        if matrix.shape[1] != vector.shape[0]:
            return None
        cosine = matrix @ vector
        return {k: float(c) for k, c in zip(keys, cosine, strict=True)
                if c >= MIN_COSINE and k in listable}
