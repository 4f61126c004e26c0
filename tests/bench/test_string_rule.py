"""The string rule kept as the latency baseline of ``bench/write_decisions.py`` still behaves
as it did in the product: bounded and symmetric."""

from __future__ import annotations

import string_rule as rule
from hypothesis import given
from hypothesis import strategies as st

from consistency.duplicates import MemoryDraft

words = st.sampled_from(["use", "pnpm", "npm", "not", "never", "always", "30s", "60s",
                         "用", "不要", "偏好", "timeout", "the", "is", "dark", "light"])
texts = st.lists(words, min_size=0, max_size=12).map(" ".join)


@given(st.text(max_size=80), st.text(max_size=80))
def test_bigram_similarity_symmetric_and_bounded(a: str, b: str) -> None:
    s = rule.bigram_similarity(a, b)
    assert 0.0 <= s <= 1.0
    assert s == rule.bigram_similarity(b, a)
    assert rule.bigram_similarity(a, a) == 1.0


@given(texts, texts)
def test_contradiction_is_symmetric(a: str, b: str) -> None:
    assert (rule.contradiction_reason(a, b) is None) == (rule.contradiction_reason(b, a) is None)


def test_the_readme_example_and_a_changed_number() -> None:
    assert rule.contradiction_reason("Use pnpm, not npm", "Use npm, not pnpm")
    assert rule.contradiction_reason("The timeout is 30s.", "The timeout is 60s.")
    assert rule.contradiction_reason("Prefers dark mode.", "Prefers dark mode.") is None


def test_fact_text_joins_name_description_body() -> None:
    memory = MemoryDraft("user", "ui", "Dark mode", "Prefers dark mode", "  \n", "h")
    assert rule.fact_text(memory) == "Dark mode\nPrefers dark mode"
