"""REM themes and the deep-sleep score: when a snippet of the diary has earned a memory.

A search hit on a snippet is a vote (:mod:`magma.snippet_store`). Two pure steps read the votes:

- **REM** (:func:`rem_themes`) — over the candidates light sleep marked, the concept tags they
  share are themes; a tag's strength saturates at :data:`THEME_SATURATION` (a tag on half the
  candidates is already dominant). Each candidate gets a confidence from its mean score (the
  largest weight), its log-damped hits, their spread over days and how much of it the themes
  cover (:data:`REM_WEIGHTS`). REM endorses; it never gates.
- **Deep** (:func:`deep_score`) — the only step that promotes. Six signals, weighted as
  issue 21 gives them (:data:`DEEP_WEIGHTS`), plus a phase boost of at most
  :data:`MAX_PHASE_BOOST` from the light and REM history, then the gates of
  :class:`PromotionGates`. :class:`DeepScore` keeps every signal and gate, so
  ``dreamd promote --explain KEY`` can print them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from magma.snippet_store import SnippetRecalls
from magma.snippets import MAX_TAGS, Snippet

__all__ = [
    "DEEP_WEIGHTS",
    "DIVERSITY_SATURATION",
    "FREQUENCY_SATURATION",
    "MAX_PHASE_BOOST",
    "REM_WEIGHTS",
    "THEME_SATURATION",
    "DeepScore",
    "PromotionGates",
    "Theme",
    "deep_score",
    "memory_type_of",
    "rem_confidence",
    "rem_themes",
]

#: Weights of the deep-sleep signals (issue 21, "Deep sleep"; they sum to 1).
DEEP_WEIGHTS: Mapping[str, float] = {
    "relevance": 0.30, "frequency": 0.24, "diversity": 0.15, "recency": 0.15,
    "consolidation": 0.10, "richness": 0.06,
}
#: The largest boost the light and REM history may add (issue 21).
MAX_PHASE_BOOST = 0.15
#: Query diversity saturates near 5 distinct queries or recall days (issue 21).
DIVERSITY_SATURATION = 5
#: Hits are log-damped: ``log1p(hits) / log1p(FREQUENCY_SATURATION)``, 1 from 10 hits on
#: (dreamd's choice: three hits, the gate, give 0.58).
FREQUENCY_SATURATION = 10
#: Recall days at which consolidation's day count is full, and the span (in weeks) at which
#: its span part is (dreamd's choice: the gate's three days, one week).
CONSOLIDATION_DAYS = 3
CONSOLIDATION_WEEKS = 1.0
#: A tag on this share of the candidates is a fully dominant theme (issue 21: "a tag on half
#: the candidates is already dominant").
THEME_SATURATION = 0.5
#: REM's confidence: mean score (the largest weight), log-damped hits, spread over days,
#: concept coverage (issue 21 names the parts and which weighs most; the split is dreamd's).
REM_WEIGHTS: Mapping[str, float] = {"score": 0.4, "hits": 0.2, "spread": 0.2, "coverage": 0.2}


@dataclass(frozen=True, slots=True)
class PromotionGates:
    """What a candidate must pass to be promoted (``[dream.deep]``; defaults from issue 21):
    ``min_score`` (0–1), ``min_recalls``, ``min_distinct_queries``, ``max_age_days`` (the
    snippet's day to today), ``recency_half_life_days`` (recency halves every so many days
    since the last hit)."""

    min_score: float = 0.8
    min_recalls: int = 3
    min_distinct_queries: int = 3
    max_age_days: int = 30
    recency_half_life_days: float = 14.0


@dataclass(frozen=True, slots=True)
class Theme:
    """A concept tag shared by candidates: ``count`` of them, ``strength`` (0–1, saturating
    at :data:`THEME_SATURATION` of the candidates)."""

    tag: str
    count: int
    strength: float


@dataclass(frozen=True, slots=True)
class DeepScore:
    """A candidate's deep-sleep verdict: each signal (0–1), the phase boost, the total
    (weighted signals plus boost) and each gate as ``(passed, "what was measured")``."""

    signals: Mapping[str, float]
    boost: float
    score: float
    gates: Mapping[str, tuple[bool, str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(ok for ok, _ in self.gates.values())

    @property
    def failed(self) -> tuple[str, ...]:
        """The names of the gates it did not pass, in order."""
        return tuple(name for name, (ok, _) in self.gates.items() if not ok)


def _damped_hits(count: int) -> float:
    return min(1.0, math.log1p(count) / math.log1p(FREQUENCY_SATURATION))


def rem_themes(candidates: Sequence[Snippet]) -> list[Theme]:
    """The tags at least two of ``candidates`` share, most shared first (ties by tag)."""
    if not candidates:
        return []
    counts = Counter(tag for s in candidates for tag in set(s.tags))
    total = len(candidates)
    return [Theme(tag, n, min(1.0, n / total / THEME_SATURATION))
            for tag, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= 2]


def rem_confidence(snippet: Snippet, recalls: SnippetRecalls, themes: Sequence[Theme]
                   ) -> float:
    """REM's confidence in one candidate (0–1, :data:`REM_WEIGHTS`): its mean score (the
    recalls' mean match, the starting score before any), log-damped hits, the spread of its
    hits over days (saturating at :data:`DIVERSITY_SATURATION`), and the share of its tags
    that are themes, by their strength."""
    strength = {t.tag: t.strength for t in themes}
    mean = recalls.mean_score if recalls.count else snippet.start_score
    coverage = (sum(strength.get(tag, 0.0) for tag in snippet.tags) / len(snippet.tags)
                if snippet.tags else 0.0)
    parts = {"score": mean, "hits": _damped_hits(recalls.count),
             "spread": min(1.0, recalls.days / DIVERSITY_SATURATION), "coverage": coverage}
    return round(sum(REM_WEIGHTS[k] * v for k, v in parts.items()), 4)


def _consolidation(recalls: SnippetRecalls) -> float:
    if not recalls.count or recalls.first is None or recalls.last is None:
        return 0.0
    span_weeks = (recalls.last - recalls.first).total_seconds() / (7 * 86400)
    return 0.5 * min(1.0, recalls.days / CONSOLIDATION_DAYS) \
        + 0.5 * min(1.0, span_weeks / CONSOLIDATION_WEEKS)


def deep_score(snippet: Snippet, recalls: SnippetRecalls, *, now: datetime, light_nights: int,
               rem: float | None, gates: PromotionGates) -> DeepScore:
    """Score one candidate and check the gates (module docstring). ``now`` is aware;
    ``light_nights`` the nights light sleep marked it; ``rem`` REM's confidence (``None``:
    REM has not seen it). The relevance is the recalls' mean match (0 before any hit);
    recency halves every ``gates.recency_half_life_days`` since the last hit (since the
    snippet's day before any); richness is the share of :data:`magma.snippets.MAX_TAGS`
    tags it carries."""
    last = recalls.last.date() if recalls.last is not None else snippet.day
    idle_days = max(0, (now.date() - last).days)
    signals = {
        "relevance": recalls.mean_score if recalls.count else 0.0,
        "frequency": _damped_hits(recalls.count),
        "diversity": min(1.0, max(recalls.distinct_queries, recalls.days)
                         / DIVERSITY_SATURATION),
        "recency": 0.5 ** (idle_days / gates.recency_half_life_days),
        "consolidation": _consolidation(recalls),
        "richness": min(1.0, len(snippet.tags) / MAX_TAGS),
    }
    boost = min(MAX_PHASE_BOOST, 0.05 * min(1.0, light_nights / 2) + 0.10 * (rem or 0.0))
    score = round(sum(DEEP_WEIGHTS[k] * v for k, v in signals.items()) + boost, 4)
    age = (now.date() - snippet.day).days
    checks = {
        "score": (score >= gates.min_score, f"{score:.3f} ≥ {gates.min_score}"),
        "recalls": (recalls.count >= gates.min_recalls,
                    f"{recalls.count} ≥ {gates.min_recalls}"),
        "distinct_queries": (recalls.distinct_queries >= gates.min_distinct_queries,
                             f"{recalls.distinct_queries} ≥ {gates.min_distinct_queries}"),
        "age": (age <= gates.max_age_days, f"{age} days ≤ {gates.max_age_days}"),
    }
    return DeepScore({k: round(v, 4) for k, v in signals.items()}, round(boost, 4), score,
                     checks)


def memory_type_of(snippet: Snippet) -> str:
    """The memory type a promoted snippet becomes: a rule ``feedback`` (how the user wants
    the work done), a preference ``user`` (about the user), a decision or anything else
    ``project`` (Claude Code's memory types)."""
    return {"rule": "feedback", "preference": "user"}.get(snippet.kind or "", "project")

