"""Hybrid search over the MAGMA store: vector + full text, fused by reciprocal rank fusion.

Both retrievers return chunks; each ranked list is first collapsed to notes (a note's rank is
its best chunk's rank), then the lists are fused per note with reciprocal rank fusion,
``score = Σ 1 / (k + rank)`` with ``k = 60`` (Cormack, Clarke & Büttcher, "Reciprocal rank
fusion outperforms Condorcet and individual rank learning methods", SIGIR 2009). Fusing per note
rewards a note that both retrievers found, even through different chunks.

:func:`vector_only` and :func:`fulltext_only` are the single-retriever baselines, returning the
same :class:`SearchHit` shape.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from ccb.owner import Owner
from magma.embedder import Embedder
from magma.store import ChunkCandidate, MagmaStore
from magma.text import CJK_CHAR

__all__ = [
    "CANDIDATE_FACTOR",
    "RRF_K",
    "SNIPPET_MAX_CHARS",
    "HitOrigin",
    "SearchHit",
    "collapse_to_notes",
    "fulltext_only",
    "hybrid_search",
    "make_snippet",
    "vector_only",
]

#: Reciprocal rank fusion constant (Cormack, Clarke & Büttcher 2009).
RRF_K = 60
#: Each retriever fetches ``limit * CANDIDATE_FACTOR`` chunks: several chunks of one note
#: collapse into one hit, so fetch more than ``limit`` (our choice).
CANDIDATE_FACTOR = 4
#: Longest snippet, in characters.
SNIPPET_MAX_CHARS = 200

#: Where a hit was read: the vault (a note or a memory), or a statement of an assistant
#: session's transcript (raw, unreviewed: never a memory nor a note of the vault).
HitOrigin = Literal["vault", "transcript"]

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_CJK_RE = CJK_CHAR


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One note found by a search, best chunk first.

    ``heading`` is the best chunk's heading path (``"Feeding > Ratio"``) or ``None`` at the
    top of the note; ``snippet`` is one line of at most 200 characters around the first query
    term in that chunk; ``score`` is the fused RRF score (vector-only: cosine; full-text only:
    BM25; the retrieval pipeline: its MMR value, falling down the list); ``why`` says which
    retriever ranked it where, e.g.
    ``("vector #1 (cos 0.62)", "full-text #3")``. ``origin`` is ``"transcript"`` for a
    statement of an assistant session (:mod:`daemon.transcript_hits`): then ``path`` is its
    evidence (``~/.claude/projects/p/3f2a….jsonl:12``) and ``note_id`` its snippet key.
    """

    path: str
    title: str
    heading: str | None
    snippet: str
    score: float
    why: tuple[str, ...]
    memory_type: str | None
    note_id: str
    origin: HitOrigin = "vault"


@dataclass(slots=True)
class _Fused:
    candidate: ChunkCandidate
    best_contribution: float
    score: float
    why: list[str]


def collapse_to_notes(candidates: Sequence[ChunkCandidate]) -> list[ChunkCandidate]:
    """Best chunk per note, keeping the order of first appearance (ranked lists stay ranked)."""
    seen: set[str] = set()
    notes: list[ChunkCandidate] = []
    for cand in candidates:
        if cand.path not in seen:
            seen.add(cand.path)
            notes.append(cand)
    return notes


def _hit(cand: ChunkCandidate, query: str, score: float, why: Sequence[str]) -> SearchHit:
    return SearchHit(
        path=cand.path,
        title=cand.title,
        heading=cand.heading_path or None,
        snippet=make_snippet(cand.body or cand.text, query),
        score=score,
        why=tuple(why),
        memory_type=cand.memory_type,
        note_id=cand.note_id,
    )


def hybrid_search(
    store: MagmaStore,
    embedder: Embedder,
    query: str,
    *,
    limit: int = 10,
    memory_types: Collection[str] | None = None,
    path_prefix: str | None = None,
    owner: Owner | None = None,
    rrf_k: int = RRF_K,
) -> list[SearchHit]:
    """Search notes by meaning and by words -> at most ``limit`` hits, best first.

    ``memory_types`` keeps only memories of those types (an empty collection finds nothing);
    ``path_prefix`` keeps paths starting with it (``"Memory/"``); ``owner`` keeps shared
    notes and the memories that owner may see (:meth:`ccb.owner.Owner.sees`). All are
    applied inside LanceDB before ranking. A blank query returns ``[]``.
    Raises :class:`config.errors.EmbeddingError` or :class:`config.errors.StoreError`.
    """
    text = query.strip()
    if not text or limit < 1:
        return []
    n = limit * CANDIDATE_FACTOR
    # The full-text query runs in a worker thread while the query is embedded and the vector
    # query runs here (LanceDB releases the GIL): latency ≈ embed + vector search.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="magma-fts") as pool:
        words_future = pool.submit(
            store.fulltext_candidates,
            text,
            limit=n,
            memory_types=memory_types,
            path_prefix=path_prefix,
            owner=owner,
        )
        vector = embedder.embed([text])[0]
        by_vector = collapse_to_notes(
            store.vector_candidates(
                vector, limit=n, memory_types=memory_types, path_prefix=path_prefix,
                owner=owner,
            )
        )
        by_words = collapse_to_notes(words_future.result())
    fused: dict[str, _Fused] = {}
    for rank, cand in enumerate(by_vector, start=1):
        contribution = 1.0 / (rrf_k + rank)
        fused[cand.path] = _Fused(
            cand, contribution, contribution, [f"vector #{rank} (cos {cand.score:.2f})"]
        )
    for rank, cand in enumerate(by_words, start=1):
        contribution = 1.0 / (rrf_k + rank)
        entry = fused.get(cand.path)
        if entry is None:
            fused[cand.path] = _Fused(cand, contribution, contribution, [f"full-text #{rank}"])
            continue
        entry.score += contribution
        entry.why.append(f"full-text #{rank}")
        if contribution > entry.best_contribution:
            entry.candidate, entry.best_contribution = cand, contribution
    ranked = sorted(fused.values(), key=lambda f: (-f.score, f.candidate.path))[:limit]
    return [_hit(f.candidate, text, f.score, f.why) for f in ranked]


def vector_only(
    store: MagmaStore,
    embedder: Embedder,
    query: str,
    *,
    limit: int = 10,
    memory_types: Collection[str] | None = None,
    path_prefix: str | None = None,
    owner: Owner | None = None,
) -> list[SearchHit]:
    """Baseline: notes ranked by their best chunk's cosine similarity (``score`` = cosine)."""
    text = query.strip()
    if not text or limit < 1:
        return []
    vector = embedder.embed([text])[0]
    cands = store.vector_candidates(
        vector, limit=limit * CANDIDATE_FACTOR, memory_types=memory_types, path_prefix=path_prefix,
        owner=owner,
    )
    return [
        _hit(c, text, c.score, (f"vector #{rank} (cos {c.score:.2f})",))
        for rank, c in enumerate(collapse_to_notes(cands)[:limit], start=1)
    ]


def fulltext_only(
    store: MagmaStore,
    query: str,
    *,
    limit: int = 10,
    memory_types: Collection[str] | None = None,
    path_prefix: str | None = None,
    owner: Owner | None = None,
) -> list[SearchHit]:
    """Baseline: notes ranked by their best chunk's BM25 score (``score`` = BM25)."""
    text = query.strip()
    if not text or limit < 1:
        return []
    cands = store.fulltext_candidates(
        text, limit=limit * CANDIDATE_FACTOR, memory_types=memory_types, path_prefix=path_prefix,
        owner=owner,
    )
    return [
        _hit(c, text, c.score, (f"full-text #{rank}",))
        for rank, c in enumerate(collapse_to_notes(cands)[:limit], start=1)
    ]


def _terms(query: str) -> list[str]:
    """Query terms to look for in a snippet: words, and 2-character pieces of CJK runs."""
    terms: list[str] = []
    for word in _WORD_RE.findall(query):
        if _CJK_RE.search(word) and len(word) > 2:
            terms.append(word)
            terms.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            terms.append(word)
    return [t for t in terms if t]


def make_snippet(text: str, query: str, *, max_chars: int = SNIPPET_MAX_CHARS) -> str:
    """One line (whitespace collapsed) of at most ``max_chars`` from ``text``, centred on the
    earliest occurrence of the longest query term found (case-insensitive), else its start."""
    line = " ".join(text.split())
    if len(line) <= max_chars:
        return line
    lower = line.lower()
    at = -1
    for term in sorted(_terms(query), key=len, reverse=True):
        at = lower.find(term.lower())
        if at >= 0:
            break
    if at < 0:
        return line[: max_chars - 1].rstrip() + "…"
    start = max(0, min(at - max_chars // 3, len(line) - max_chars))
    end = start + max_chars
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(line) else ""
    body = line[start + len(prefix) : end - len(suffix)]
    return prefix + body + suffix
