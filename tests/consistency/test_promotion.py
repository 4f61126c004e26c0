"""REM themes and the deep-sleep score (pure; weights and gates from issue 21)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from consistency.promotion import (
    DEEP_WEIGHTS,
    MAX_PHASE_BOOST,
    PromotionGates,
    deep_score,
    memory_type_of,
    rem_confidence,
    rem_themes,
)
from magma.snippet_store import SnippetRecalls
from magma.snippets import Snippet

DAY = date(2026, 6, 15)
NOW = datetime(2026, 6, 18, 22, tzinfo=UTC)


def _snippet(key: str, tags: tuple[str, ...], kind: str | None = "rule") -> Snippet:
    return Snippet(key=key, path="memory/2026-06-15.md", day=DAY, lines=(5, 5), heading="",
                   body=key, tags=tags, kind=kind, origin="diary")


def _recalls(count: int, queries: int, days: int, mean: float = 1.0) -> SnippetRecalls:
    first = datetime(2026, 6, 16, 12, tzinfo=UTC)
    return SnippetRecalls(count=count, distinct_queries=queries, days=days, first=first,
                          last=first + timedelta(days=max(days - 1, 0)), mean_score=mean)


def test_weights_are_the_issues_and_sum_to_one() -> None:
    assert dict(DEEP_WEIGHTS) == {"relevance": 0.30, "frequency": 0.24, "diversity": 0.15,
                                  "recency": 0.15, "consolidation": 0.10, "richness": 0.06}
    assert sum(DEEP_WEIGHTS.values()) == pytest.approx(1.0) and MAX_PHASE_BOOST == 0.15


def test_a_tag_on_half_the_candidates_is_a_dominant_theme() -> None:
    candidates = [_snippet("a", ("testing", "database")), _snippet("b", ("testing",)),
                  _snippet("c", ("deploy", "database")), _snippet("d", ("testing", "x"))]
    themes = {t.tag: (t.count, t.strength) for t in rem_themes(candidates)}
    assert themes == {"testing": (3, 1.0), "database": (2, 1.0)}
    assert rem_themes([_snippet("a", ("x",)), _snippet("b", ("y",))]) == []
    covered = rem_confidence(candidates[0], _recalls(3, 3, 3), rem_themes(candidates))
    alone = rem_confidence(_snippet("e", ("other",)), _recalls(3, 3, 3), rem_themes(candidates))
    assert covered > alone


def test_three_votes_on_three_days_pass_and_two_do_not() -> None:
    gates = PromotionGates()
    tags = ("testing", "database", "review", "incident", "tests", "must", "real", "mocked")
    passed = deep_score(_snippet("a", tags), _recalls(3, 3, 3), now=NOW, light_nights=2,
                        rem=0.6, gates=gates)
    assert passed.passed and passed.score >= 0.8 and passed.boost <= MAX_PHASE_BOOST
    two = deep_score(_snippet("a", tags), _recalls(2, 2, 2), now=NOW, light_nights=2, rem=0.6,
                     gates=gates)
    assert set(two.failed) >= {"recalls", "distinct_queries"}
    one_query = deep_score(_snippet("a", tags), _recalls(5, 1, 5), now=NOW, light_nights=2,
                           rem=0.6, gates=gates)
    assert "distinct_queries" in one_query.failed  # the same search five times is one vote
    late = deep_score(_snippet("a", tags), _recalls(3, 3, 3), now=NOW + timedelta(days=40),
                      light_nights=2, rem=0.6, gates=gates)
    assert {"age", "score"} <= set(late.failed)  # stale: recency halves every 14 days


def test_the_kind_of_a_statement_gives_the_memory_type() -> None:
    assert [memory_type_of(_snippet("a", (), k)) for k in ("rule", "preference", "decision",
                                                           None)] == \
        ["feedback", "user", "project", "project"]
