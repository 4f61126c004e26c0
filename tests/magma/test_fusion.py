"""Fusion arithmetic: weighted RRF, recency, MMR with de-duplication, token budgets; layers and
importance (pure)."""

from __future__ import annotations

from datetime import date

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from magma.fusion import clip_to_tokens, estimate_tokens, mmr, recency, weighted_rrf
from magma.layers import (
    L1_IDENTITY,
    L2_RULES,
    L3_FACTS,
    L4_EVENTS,
    L5_PROCEDURES,
    importance,
    note_date,
    note_layer,
    type_prior,
)


def test_weighted_rrf_adds_each_lists_weighted_reciprocal_rank() -> None:
    fused = weighted_rrf({"a": ["x", "y"], "b": ["y", "x", "y"], "c": ["z"]},
                         {"a": 1.0, "b": 1.0, "c": 0.5}, k=60)
    assert fused["x"] == 1 / 61 + 1 / 62
    assert fused["y"] == 1 / 62 + 1 / 61  # a repeated id counts at its first rank
    assert fused["z"] == 0.5 / 61


def test_recency_halves_every_half_life_and_never_exceeds_one() -> None:
    assert recency(0, 30) == 1.0
    assert abs(recency(30, 30) - 0.5) < 1e-12
    assert abs(recency(90, 30) - 0.125) < 1e-12
    # a date ahead fades as one as far back does (not the full recency of today)
    assert recency(-30, 30) == recency(30, 30) and recency(-5, 30) < 1.0
    assert recency(None, 30) == 0.0


def test_mmr_drops_semantic_duplicates_and_prefers_diversity() -> None:
    base = np.array([1.0, 0.0, 0.0])
    near = np.array([0.99, 0.1, 0.0])  # cosine ≈ 0.995 with base: a duplicate
    other = np.array([0.0, 1.0, 0.0])
    half = np.array([0.8, 0.6, 0.0])  # cosine 0.8 with base: similar, not a duplicate
    scores = {"a": 1.0, "a2": 0.99, "b": 0.5, "c": 0.9}
    vectors = {"a": base, "a2": near, "b": other, "c": half}
    chosen, dropped = mmr(["a", "a2", "b", "c"], scores, vectors, limit=3, duplicate_at=0.85)
    picked = [i for i, _ in chosen]
    values = [v for _, v in chosen]
    assert values == sorted(values, reverse=True)  # a score that agrees with the order
    assert picked[0] == "a" and "a2" not in picked and dropped == {"a2": "a"}
    assert set(picked) == {"a", "b", "c"}
    kept, none = mmr(["a", "a2"], scores, vectors, limit=2, duplicate_at=None)
    assert [i for i, _ in kept] == ["a", "a2"] and none == {}
    apart, none = mmr(["a", "a2"], scores, vectors, limit=2, groups={"a": "x", "a2": "y"})
    assert [i for i, _ in apart] == ["a", "a2"] and none == {}  # different owners: never duplicates


def test_mmr_without_vectors_keeps_score_order() -> None:
    picked, dropped = mmr(["a", "b", "c"], {"a": 0.1, "b": 0.3, "c": 0.2}, {}, limit=2)
    assert [i for i, _ in picked] == ["b", "c"] and dropped == {}


def test_tokens_count_cjk_characters_one_each() -> None:
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("务必加超时") == 5
    assert estimate_tokens("") == 0


@given(st.text(max_size=3000), st.integers(min_value=1, max_value=400))
def test_clipping_never_exceeds_the_budget(text: str, budget: int) -> None:
    clipped, cut = clip_to_tokens(text, budget)
    assert estimate_tokens(clipped) <= max(budget, 1)
    assert cut == (estimate_tokens(text) > budget)
    if not cut:
        assert clipped == text


def test_clipping_prefers_a_sentence_end() -> None:
    text = "First sentence is here. " * 3 + "x" * 400
    clipped, cut = clip_to_tokens(text, 30)
    assert cut and clipped.endswith("here.…")


def test_layers_follow_the_seed_framework() -> None:
    def layer(path: str, memory_type: str | None = None, text: str = "",
              title: str = "", **props: object) -> int:
        return note_layer(path=path, title=title or path.rsplit("/", 1)[-1][:-3],
                          memory_type=memory_type, properties=props, text=text)

    assert layer("Memory/units.md", "user", "Prefers metric units") == L1_IDENTITY
    assert layer("Memory/t.md", "feedback", "Always add a timeout to API calls") == L2_RULES
    assert layer("Memory/t.md", "feedback", "务必给接口调用加超时") == L2_RULES
    assert layer("Memory/t.md", "feedback", "Tables read better than lists here") == L3_FACTS
    assert layer("Memory/p.md", "project", "We ship in May", pinned=True) == L2_RULES
    assert layer("Memory/p.md", "project", "We ship in May") == L3_FACTS
    assert layer("Daily/2026-11-30.md") == L4_EVENTS
    assert layer("Sessions/standup.md", date="2026-11-30") == L4_EVENTS
    assert layer("Sessions/standup.md") == L3_FACTS  # no date: not an event
    assert layer("Guides/How to deploy.md") == L5_PROCEDURES
    assert layer("Notes/如何烤面包.md") == L5_PROCEDURES
    assert layer("Baking/Rye loaf.md") == L3_FACTS
    # a template is a blank form: no procedure, no event, whatever its title or tags say
    assert layer("Templates/Recipe Template.md") == L3_FACTS
    assert layer("Templates/How to write a post.md") == L3_FACTS
    assert layer("Templates/2026-01-01 Daily.md") == L3_FACTS
    assert layer("Notes/Recipe Template.md") == L3_FACTS
    assert layer("模板/如何写周报.md") == L3_FACTS


def test_note_dates_come_from_properties_then_the_file_name() -> None:
    assert note_date({"date": "2023-05-21"}, "x.md") == date(2023, 5, 21)
    assert note_date({"created": "2026-01-02T10:00:00Z"}, "x.md") == date(2026, 1, 2)
    assert note_date({}, "Daily/2026-11-30 standup.md") == date(2026, 11, 30)
    assert note_date({"date": "soon"}, "Daily/2026-02-30.md") is None
    assert note_date({}, "Baking/Rye loaf.md") is None
    # an edit stamp is a fallback: the file name's day wins over it
    assert note_date({"updated": "2026-12-02"}, "Daily/2026-11-30.md") == date(2026, 11, 30)
    assert note_date({"modified": "2026-12-02T08:00"}, "Notes/Plan.md") == date(2026, 12, 2)
    assert note_date({"created": "2026-11-01", "updated": "2026-12-02"}, "x.md") \
        == date(2026, 11, 1)


def test_importance_orders_rules_over_instructions_over_preferences_over_facts() -> None:
    rule = importance(type_prior(L2_RULES, "feedback"), salient=True, recalls=0)
    instruction = importance(type_prior(L3_FACTS, "feedback"), salient=False, recalls=0)
    preference = importance(type_prior(L1_IDENTITY, "user", "prefers tea"), salient=False,
                            recalls=0)
    identity = importance(type_prior(L1_IDENTITY, "user", "is a potter"), salient=False,
                          recalls=0)
    fact = importance(type_prior(L3_FACTS, None), salient=False, recalls=0)
    assert rule > identity > instruction > preference > fact
    assert importance(0.4, salient=False, recalls=50) == importance(0.4, salient=False,
                                                                    recalls=10)


@given(st.floats(0, 1), st.booleans(), st.integers(-5, 1000), st.floats(0.001, 1))
def test_importance_stays_in_the_unit_interval(prior: float, salient: bool, recalls: int,
                                               priority: float) -> None:
    assert 0.0 <= importance(prior, salient=salient, recalls=recalls, priority=priority) <= 1.0
