"""What a memory's text must be before anything is embedded or written (ccb.memory_text)."""

from __future__ import annotations

import os
import time

import pytest

from ccb.memory_text import checked_memory_text, has_word
from config.errors import (
    EmptyMemoryError,
    MemoryEncodingError,
    MemoryTextError,
    MemoryTooLargeError,
    WordlessMemoryError,
    exit_code_for,
)
from config.settings import MEMORY_MAX_CHARS, Settings


@pytest.mark.parametrize("text", [
    "🎉🎉", "  🎉 🎊  ", "!!!", "...?", "→ ← ↑", "👍🏽", "🇩🇪🇫🇷", "👨‍👩‍👧", "— · —", "()[]{}",
    "★☆", "\u200b🎉\u200d",
])
def test_a_text_without_a_word_is_refused(text: str) -> None:
    assert not has_word(text)
    with pytest.raises(WordlessMemoryError, match="no words") as refused:
        checked_memory_text(text, max_chars=MEMORY_MAX_CHARS)
    assert "nothing was written" in str(refused.value)
    assert exit_code_for(refused.value) == 2


@pytest.mark.parametrize("text", [
    "电池", "用户住在杭州", "東京に住んでいる", "ひらがな", "カタカナ", "한국어", "Ελληνικά",
    "русский", "عربي", "עברית", "हिन्दी", "ไทย", "42", "٣", "🎉 launch day", "café", "x", "²",
])
def test_a_word_in_any_script_is_a_word(text: str) -> None:
    assert checked_memory_text(f"  {text}\n", max_chars=MEMORY_MAX_CHARS) == text


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "\u200b\u200d\ufeff", "\u3000 \u00a0"])
def test_a_blank_text_is_empty(text: str) -> None:
    with pytest.raises(EmptyMemoryError, match="empty"):
        checked_memory_text(text, max_chars=MEMORY_MAX_CHARS)


def test_the_limit_counts_characters_in_any_script() -> None:
    """Chinese (3 bytes a character in UTF-8) and emoji (4) get as many characters as
    English: the limit is one of text, not of bytes."""
    assert MEMORY_MAX_CHARS == 65_536
    for unit in ("a", "中", "🎉a"):
        text = (unit * MEMORY_MAX_CHARS)[:MEMORY_MAX_CHARS]
        assert checked_memory_text(text, max_chars=MEMORY_MAX_CHARS) == text
        with pytest.raises(MemoryTooLargeError) as refused:
            checked_memory_text(text + unit[0], max_chars=MEMORY_MAX_CHARS)
        message = str(refused.value)
        assert "65,537 characters" in message and "memory.max_chars (65,536)" in message
        assert "nothing was written" in message
    # surrounding whitespace is not counted
    assert checked_memory_text("  " + "a" * 10 + "\n\n", max_chars=10) == "a" * 10


def test_a_huge_text_is_refused_before_it_is_read() -> None:
    huge = "a" * 50_000_000
    started = time.perf_counter()
    with pytest.raises(MemoryTooLargeError):
        checked_memory_text(huge, max_chars=MEMORY_MAX_CHARS)
    assert time.perf_counter() - started < 1.0  # a strip and a len; no scan of the text


def test_the_name_description_and_subject_are_bounded_too() -> None:
    for key in ("name", "description", "subject"):
        with pytest.raises(MemoryTooLargeError, match=f"the memory {key}"):
            checked_memory_text("a fact", max_chars=100, fields={key: "n" * 101})
    assert checked_memory_text("a fact", max_chars=100,
                               fields={"name": None, "subject": "s" * 100}) == "a fact"


def test_bytes_that_are_not_utf8_are_named() -> None:
    text = os.fsdecode(b"caf\xe9 opens at nine")  # a Latin-1 argument, as Python receives it
    with pytest.raises(MemoryEncodingError, match=r"byte 0xe9 at character 4"):
        checked_memory_text(text, max_chars=MEMORY_MAX_CHARS)
    with pytest.raises(MemoryEncodingError, match="the memory name"):
        checked_memory_text("fine", max_chars=100, fields={"name": os.fsdecode(b"\xff")})


def test_every_refusal_is_a_memory_text_error_with_the_usage_exit_code() -> None:
    for error in (EmptyMemoryError(""), WordlessMemoryError(""), MemoryTooLargeError(""),
                  MemoryEncodingError("")):
        assert isinstance(error, MemoryTextError) and exit_code_for(error) == 2


def test_the_limit_is_a_setting() -> None:
    assert Settings().memory.max_chars == MEMORY_MAX_CHARS
    assert Settings(memory={"max_chars": 1000}).memory.max_chars == 1000
    assert Settings(memory={"maxChars": 2000}).memory.max_chars == 2000
    with pytest.raises(ValueError, match="greater than 0"):
        Settings(memory={"max_chars": 0})
