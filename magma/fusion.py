"""Fusing ranked lists into one answer (pure): weighted reciprocal rank fusion, the Generative
Agents score, MMR with semantic de-duplication, and token budgets.

- **Reciprocal rank fusion** (Cormack, Clarke & Büttcher, SIGIR 2009): ``Σ w_list / (k + rank)``
  over every ranked list a note is on, ``k = 60``; each list carries a weight (the retrieval
  pipeline's lists and weights are in :mod:`daemon.retrieval`).
- **Score** (Park et al., "Generative Agents", UIST 2023): ``α_rel·relevance + α_rec·recency +
  α_imp·importance``. The paper weighs the three equally (all α = 1) for an agent's
  reflection; a search answers a question first, so dreamd's defaults are relevance 1.0,
  importance 0.3 and recency 0.2 (config ``retrieval.weights``; chosen so that an important
  or recent memory wins a near tie, never against a clearly better match). Relevance is
  0.85 × the fused RRF score + 0.15 × the cosine similarity of the note's best chunk, each
  min-max scaled over the candidates (the paper scales each score to [0, 1];
  :data:`daemon.retrieval.COSINE_SHARE`); recency is
  ``0.5 ** (age_days / half_life_days)`` (the paper decays by 0.995 per game hour; dreamd's
  half-life is ``retrieval.recency_half_life_days``, 30 by default).
- **MMR** (Carbonell & Goldstein, SIGIR 1998): pick the next hit maximising
  ``λ·score − (1 − λ)·max cosine to the hits already picked``, ``λ = 0.85`` (our choice: mostly
  relevance, some diversity). A candidate whose cosine to a picked hit reaches the
  de-duplication threshold (``fusion.semantic_similarity_threshold``, 0.85) is dropped as a
  semantic duplicate.
- **Tokens** are estimated without a tokenizer (a BPE vocabulary would have to be downloaded):
  one token per CJK character and one per 4 other characters (common BPE tokenizers average
  about 4 characters per English token).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from magma.text import CJK_CHAR

__all__ = [
    "CHARS_PER_TOKEN",
    "MMR_LAMBDA",
    "Weights",
    "clip_to_tokens",
    "estimate_tokens",
    "mmr",
    "recency",
    "weighted_rrf",
]

#: Characters per token outside CJK text (common BPE tokenizers, English prose).
CHARS_PER_TOKEN = 4
#: MMR's trade-off between relevance (1) and diversity (0) (Carbonell & Goldstein 1998; our
#: choice of value).
MMR_LAMBDA = 0.85

_CJK = CJK_CHAR
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n")


@dataclass(frozen=True, slots=True)
class Weights:
    """The α of the Generative Agents score (see the module docstring for the sources)."""

    relevance: float = 1.0
    recency: float = 0.2
    importance: float = 0.3


def weighted_rrf(lists: Mapping[str, Sequence[str]], weights: Mapping[str, float], *,
                 k: int = 60) -> dict[str, float]:
    """``{id: Σ weight(list) / (k + rank)}`` over the ranked ``lists`` (rank from 1; an id
    repeated in one list counts at its first rank; a list without a weight weighs 1)."""
    fused: dict[str, float] = {}
    for name, ranked in lists.items():
        weight = weights.get(name, 1.0)
        seen: set[str] = set()
        rank = 0
        for item in ranked:
            if item in seen:
                continue
            seen.add(item)
            rank += 1
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def recency(age_days: float | None, half_life_days: float) -> float:
    """``0.5 ** (|age_days| / half_life_days)`` in (0, 1]: nearness to today, so a note
    dated ahead (a plan for next year, or any note after the day of a search ``--as-of`` the
    past) fades as one dated as far back does; ``None`` (no date known) is 0.

    Counting a future date as today gave every note dated after the day asked about the
    full recency. Measured on the pooled LongMemEval oracle (470 questions, each asked on
    its own day against all 940 sessions; ``bench/longmemeval_bench.py --set oracle``):
    recall@5 / @10 / all@10 0.675 / 0.762 / 0.645 as today, 0.692 / 0.770 / 0.657 by
    distance (temporal-reasoning 0.539 / 0.645 -> 0.590 / 0.673; plain hybrid 0.651 /
    0.761 / 0.647, BM25 0.656 / 0.748 / 0.660). No LongMemEval_S haystack holds a session
    dated after its question, so those figures do not move."""
    if age_days is None:
        return 0.0
    return math.pow(0.5, abs(age_days) / half_life_days)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def mmr(
    ids: Sequence[str], scores: Mapping[str, float], vectors: Mapping[str, np.ndarray], *,
    limit: int, lambda_: float = MMR_LAMBDA, duplicate_at: float | None = 0.85,
    groups: Mapping[str, str] | None = None,
    is_copy: Callable[[str, str], bool] | None = None,
    same_words: Mapping[str, Hashable] | None = None,
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """Maximal marginal relevance over ``ids`` -> (``[(picked id, its MMR value)]`` in order,
    ``{dropped id: the picked id it duplicates}``). The MMR values never increase down the
    list (a candidate's value only falls as its neighbours are picked), so they are a score
    that agrees with the order.

    ``scores`` are the candidates' scores (any scale; min-max scaled to [0, 1] here);
    ``vectors`` their embeddings (any length; an id without one is never a duplicate and
    adds no diversity penalty). ``duplicate_at``: cosine from which a candidate is dropped as
    a duplicate of a picked one (``None``: never). ``groups``: only candidates of the same
    group (e.g. the same owner) can be duplicates of each other. ``is_copy(picked, other)``,
    asked only of pairs past ``duplicate_at``, must also agree (the texts are copies: two
    notes that say one thing with another value are both kept). ``same_words``: a key of
    each candidate's words; two of one group with equal keys are duplicates whatever their
    cosine (``duplicate_at`` not ``None``; an id without a key has no such twin).
    """
    if limit < 1 or not ids:
        return [], {}
    values = [scores[i] for i in ids]
    low, high = min(values), max(values)
    span = high - low
    scaled = {i: (scores[i] - low) / span if span > 0 else 1.0 for i in ids}
    units = {i: _unit(np.asarray(vectors[i], dtype=np.float32)) for i in ids if i in vectors}
    picked: list[tuple[str, float]] = []
    dropped: dict[str, str] = {}
    left = sorted(ids, key=lambda i: -scores[i])
    max_sim: dict[str, float] = dict.fromkeys(left, 0.0)
    closest: dict[str, str] = {}
    while left and len(picked) < limit:
        def value(i: str) -> float:
            return lambda_ * scaled[i] - (1 - lambda_) * max_sim[i]

        best = max(left, key=value)
        left.remove(best)
        picked.append((best, value(best)))
        key = None if same_words is None or duplicate_at is None else same_words.get(best)
        if key is not None:
            for other in [o for o in left if same_words.get(o) == key  # type: ignore[union-attr]
                          and (groups is None or groups.get(o) == groups.get(best))]:
                left.remove(other)
                dropped[other] = best
        if best not in units:
            continue
        for other in list(left):
            if other not in units:
                continue
            sim = float(units[best] @ units[other])
            if sim > max_sim[other]:
                max_sim[other], closest[other] = sim, best
            same = groups is None or groups.get(other) == groups.get(best)
            if duplicate_at is not None and sim >= duplicate_at and same and (
                    is_copy is None or is_copy(best, other)):
                left.remove(other)
                dropped[other] = best
    return picked, dropped


def estimate_tokens(text: str) -> int:
    """Approximate tokens of ``text``: CJK characters one each, other characters one per
    :data:`CHARS_PER_TOKEN` (rounded up)."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / CHARS_PER_TOKEN)


def clip_to_tokens(text: str, max_tokens: int) -> tuple[str, bool]:
    """``text`` cut to at most ``max_tokens`` (estimated) -> (text, cut?). Cuts at the last
    sentence end that fits, else at a word boundary, and marks the cut with "…"."""
    if estimate_tokens(text) <= max_tokens:
        return text, False
    if max_tokens < 2:
        return "…", True
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix within budget (one token kept for the ellipsis)
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= max_tokens - 1:
            lo = mid
        else:
            hi = mid - 1
    prefix = text[:lo]
    ends = [m.end() for m in _SENTENCE_END.finditer(prefix)]
    if ends and ends[-1] >= len(prefix) // 2:
        prefix = prefix[:ends[-1]]
    elif " " in prefix[len(prefix) // 2:]:
        prefix = prefix[: prefix.rfind(" ")]
    return prefix.rstrip() + "…", True
