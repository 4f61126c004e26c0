"""The patterns a claim's values are read with are skipped on a text that holds none of the
characters every match of theirs holds (``consistency.claims._PATTERN_NEEDS``): the values
read are the same as with every pattern scanned (labelled pairs of ``bench/write_pairs``
and generated text mixing the characters the patterns look for)."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consistency import claims
from consistency.claims import read_claim

PAIRS = sorted((Path(__file__).resolve().parents[2] / "bench" / "write_pairs").glob("*.jsonl"))

#: Pieces generated text is made of: the characters and words the value patterns look for.
PIECES = ["2026-03-14", "3月5日", "下午3点", "v2.3", "Postgres 15", "port 8080", "10.0.0.1:5432",
          "db1.internal", "us-east-1", "/etc/app/conf", "C:\\tmp\\x", "`make lint`", "#pay-alerts",
          "$55", "€24", "30 s", "12.5kg", "半小时", "三公斤", "百分之十", "六千五", "第3周", "Q2",
          "sprint 14", "Apt 3B", "May 1", "1st of June", "14:30", "9am", "eleven at night", "UTC+8",
          "a@b.io", "https://x.io/a", "“慢读笔记”", "《三体》", "静安区南京西路", "北京", "英文",
          "我的猫叫豆豆", "名字是小明", "twice a week", "每周三次", "周一、三", "Monday", "٣",
          "１２", " ", ", ", ". ", "\n", ":", "：", "-", "/", "the ", "is ", "not ", "点", "第",
          "月", "叫", "名"]


def _extract_every_pattern(text: str, written: date | None) -> tuple[str, list]:
    saved = claims._PATTERN_NEEDS
    claims._PATTERN_NEEDS = (None,) * len(saved)
    try:
        return claims._extract(text, written)
    finally:
        claims._PATTERN_NEEDS = saved


def _texts() -> list[str]:
    texts = []
    for path in PAIRS:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                texts += [str(row["old"]["text"]), str(row["new"]["text"])]
    return texts


def test_the_needs_follow_the_patterns() -> None:
    assert len(claims._PATTERN_NEEDS) == len(claims._PATTERNS)


def test_labelled_pairs_read_the_same_values_with_and_without_the_needs() -> None:
    texts = _texts()
    assert len(texts) > 6000
    for text in texts:
        clean = claims._clean(claims._cut(text)[0])
        assert claims._extract(clean, date(2026, 1, 1)) == \
            _extract_every_pattern(clean, date(2026, 1, 1)), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_generated_text_reads_the_same_values(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert claims._extract(text, date(2026, 6, 1)) == _extract_every_pattern(text, date(2026, 6, 1))
    assert claims._extract(text, None) == _extract_every_pattern(text, None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_every_match_holds_what_its_pattern_needs(pieces: list[str]) -> None:
    text = "".join(pieces)
    for (kind, pattern), needs in zip(claims._PATTERNS, claims._PATTERN_NEEDS, strict=True):
        if needs is None:
            continue
        for match in pattern.finditer(text):
            found = match.group(0)
            assert needs.met(set(found), re.search(r"\d", found) is not None), (kind, found)


@pytest.mark.parametrize("text", ["The request timeout is 30 s.", "我的猫叫豆豆。", "名字是小明",
                                  "Ships on 1st of June", "Deploys to us-east-1 via `make`"])
def test_a_claim_is_read_as_before(text: str) -> None:
    assert read_claim(text).values  # each of these states a value the needs let through
