"""The events a question names apart. Pure code on question texts written for these tests,
in English and Chinese."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import magma.question_shape as shape_module
from magma.question_shape import MAX_PHRASES, event_phrases


def test_public_surface_is_sorted_and_complete() -> None:
    assert shape_module.__all__ == sorted(shape_module.__all__, key=lambda n: (
        0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    assert set(shape_module.__all__) == {"MAX_PHRASES", "MIN_PHRASE_WORDS", "event_phrases"}


def test_two_events_joined_by_or_are_searched_apart() -> None:
    assert event_phrases("Which did I plant first, the basil or the chillies?") == [
        "Which did I plant first", "the basil", "the chillies"]


def test_between_and_when_cut_a_question_at_its_events() -> None:
    assert event_phrases("How many days passed between the dentist visit and the eye "
                         "exam?") == ["the dentist visit", "the eye exam"]
    assert event_phrases("How long had I been running when I signed up for the half "
                         "marathon?") == ["How long had I been running",
                                          "I signed up for the half marathon"]


def test_a_quoted_title_is_one_part_never_cut_inside() -> None:
    phrases = event_phrases("How long did I take to read 'Pride and Prejudice' and "
                            "'War and Peace'?")
    assert "Pride and Prejudice" in phrases and "War and Peace" in phrases
    assert all(p not in phrases for p in ("Pride", "Prejudice", "War", "Peace"))


def test_an_apostrophe_inside_a_word_is_no_quote() -> None:
    assert event_phrases("Did my sister's wedding come before my friend's party?") == [
        "Did my sister's wedding come", "my friend's party"]


def test_chinese_joints_cut_too() -> None:
    assert event_phrases("我先去的北京还是上海？") == ["我先去的北京", "上海"]
    # "…的时候" (at the time of …) joins two events; "什么时候" (when?) asks about one
    assert event_phrases("我搬家的时候和换工作的时候哪个先？")[:2] == ["我搬家", "换工作"]
    assert event_phrases("斑马什么时候过河和大象什么时候喝水") == [
        "斑马什么时候过河", "大象什么时候喝水"]


@pytest.mark.parametrize("question", [
    "What is my latest phone?",
    "How many books did I buy this month?",
    "When and where?",  # frame words only: nothing named
    "斑马什么时候过河",  # 什么时候 asks when: one event, not "斑马什么" and "过河"
    "我什么时候开始学吉他的？",
    "",
])
def test_a_question_naming_one_thing_is_not_cut(question: str) -> None:
    assert event_phrases(question) == []


@given(st.text(max_size=300))
def test_total_and_bounded(text: str) -> None:
    phrases = event_phrases(text)
    assert len(phrases) <= MAX_PHRASES
    assert len(phrases) != 1
    assert all(p.strip() for p in phrases)
