"""The distilled profile's pure parts: parsing the model's answer, the fact check, the body."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from consistency.profile import (
    MAX_SENTENCES,
    ProfileSentence,
    ProfileSource,
    parse_profile,
    profile_body,
    sources_hash,
    unsupported_facts,
)

SOURCES = [ProfileSource("Memory/go.md", "prefers go", "The user prefers Go 1.22.", "a"),
           ProfileSource("Memory/late.md", "works late", "Works until 23:00.", "b")]


def test_a_reply_becomes_sentences_citing_their_sources() -> None:
    reply = "```json\n" + json.dumps({"sentences": [
        {"text": "Prefers  Go 1.22.", "sources": [1]},
        {"text": "Works late.", "sources": [2, 2, 1]}]}) + "\n```"
    assert parse_profile(reply, 2) == [ProfileSentence("Prefers Go 1.22.", (0,)),
                                       ProfileSentence("Works late.", (1, 0))]


@pytest.mark.parametrize(("reply", "why"), [
    ("nothing", "no JSON"), ('{"sentences": []}', "no 'sentences'"),
    ('{"sentences": [{"text": "x", "sources": [3]}]}', "not a note number"),
    ('{"sentences": [{"text": "x", "sources": [true]}]}', "not a note number"),
    ('{"sentences": [{"text": "x"}]}', "cites no source"),
    ('{"sentences": [{"text": " ", "sources": [1]}]}', "no text"),
    (json.dumps({"sentences": [{"text": "x", "sources": [1]}] * (MAX_SENTENCES + 1)}),
     "at most"),
])
def test_a_bad_reply_is_refused_with_its_reason(reply: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_profile(reply, 2)


@given(st.text(max_size=300))
def test_any_reply_parses_or_raises_value_error(reply: str) -> None:
    with contextlib.suppress(ValueError):
        parse_profile(reply, 2)


def test_a_sentence_may_say_only_what_its_cited_sources_say() -> None:
    assert unsupported_facts(ProfileSentence("Prefers Go 1.22.", (0,)), SOURCES) == []
    assert unsupported_facts(ProfileSentence("Prefers Go 1.22 and Rust.", (0,)), SOURCES) == \
        ["Rust"]
    # a fact of another source does not count: the sentence must cite it
    assert unsupported_facts(ProfileSentence("Prefers Go until 23:00.", (0,)), SOURCES) == \
        ["23:00"]


def test_the_body_links_each_sentence_to_its_sources_and_the_hash_ignores_order() -> None:
    body = profile_body([ProfileSentence("Works late.", (1, 0))], ["[[late]]", "[[go]]"])
    assert body == "- Works late. ([[go]], [[late]])\n"
    assert sources_hash(SOURCES) == sources_hash(SOURCES[::-1])
    assert sources_hash(SOURCES) != sources_hash(SOURCES[:1])
