"""The patterns a claim's values are read with are skipped on a text that holds none of the
characters every match of theirs holds (``consistency.claims._PATTERN_NEEDS``), and so are the
contractions and phrases its words are read through on a text that holds none of the strings
their matches hold (``_CONTRACTION_NEEDS``, ``_PHRASE_NEEDS``): the values and words read are
the same as with every pattern searched (labelled pairs of ``bench/write_pairs`` and generated
text mixing what the patterns look for)."""

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
          "月", "叫", "名", "in March", "by May", "OCTOBER", "五月", "十二月",
          "twice a week", "three times a DAY", "every other day", "every morning", "Daily",
          "biweekly", "ANNUALLY", "fortnightly", "天天", "每两周", "每天两次", "一周三次",
          # zones, clock times in words, weekdays, number words, currencies, units, ids
          "CET", "cet", "GMT+2", "Europe/Berlin", "北京时间", "noon", "MIDNIGHT",
          "ten at night", "7 in the morning", "eleven tonight", "Monday", "WEEKENDS", "thurs",
          "工作日", "星期三", "周末", "礼拜天", "forty-five", "Twenty one", "a hundred",
          "thirteen", "dollars", "Singapore dollars", "euro", "日元", "人民币", "瑞郎", "miles",
          "Kilometres", "metric", "公里", "摄氏度", "英寸", "api_key", "fooBar", "FooBar",
          "v2x", "node-18", "notes.md", "@acme/web", "T", "时", "teen", "a dozen",
          "half a dozen", "three dozen", "-x", "--force-with-lease", "NODE_ENV=production",
          "€3,50", "4B"]


def _extract_every_pattern(text: str, written: date | None) -> tuple[str, list]:
    saved = claims._scanned
    claims._scanned = lambda text: list(range(len(claims._PATTERNS)))  # type: ignore[assignment]
    try:
        return claims._extract(text, written)
    finally:
        claims._scanned = saved  # type: ignore[assignment]


def _met(text: str) -> list[int]:
    """The patterns each :class:`consistency.claims._Needs` lets through, asked one by one."""
    return [i for i, needs in enumerate(claims._PATTERN_NEEDS)
            if needs is None or needs.met(set(text), re.search(r"\d", text) is not None,
                                          lambda: claims._folded(text))]


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
    # every number word the pattern lists holds one of its needs (a word added to the
    # pattern without a need would never be searched)
    words = [*claims._EN_NUMBERS, *claims._EN_TENS.split("|"), *claims._EN_ONES.split("|")]
    for word in words:
        assert any(need in word for need in claims._NUMBER_WORD_NEEDS), word


def _corpus_texts(corpora: Path) -> list[str]:
    """Lines and paragraphs of real notes, English and Chinese: the memory samples and the
    first notes of the Obsidian help vault in both languages."""
    texts: list[str] = []
    files = sorted(p for p in (corpora / "memory-samples").rglob("*") if p.is_file())
    for lang in ("en", "zh"):
        files += sorted((corpora / "obsidian-help" / lang).rglob("*.md"))[:40]
    for path in files:
        raw = path.read_text(encoding="utf-8", errors="replace")
        texts += [p for p in raw.split("\n\n") if p.strip()][:30]
        texts += [line for line in raw.splitlines() if line.strip()][:60]
    return texts


def test_real_notes_read_the_same_values_and_words_with_and_without_the_needs(
        corpora_dir: Path) -> None:
    texts = _corpus_texts(corpora_dir)
    assert len(texts) > 2000
    for text in texts:
        clean = claims._clean(claims._cut(text)[0])
        assert claims._scanned(clean) == _met(clean), text
        assert claims._extract(clean, date(2026, 1, 1)) == \
            _extract_every_pattern(clean, date(2026, 1, 1)), text
        assert claims._prepare_words(clean) == _prepare_every_pattern(clean), text


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


#: Odd texts: a BOM, CRLF line ends, Chinese, quoted values, full-width and Arabic-Indic
#: digits, a dotless i and the long s (read as ASCII by a case-blind pattern), nothing.
ODD = ["\ufeffThe port is 8080.\r\nIt moved in MARCH.", "用户对花生过敏。\r\n每周三次", "",
       'subject: "ops # on call"', "ſecond quarter, half paſt nine", "PAST ıt", "１２ ٣ 月",
       "weekly\r\n", "路街巷道", "a@b.io: https://x.io/~a", "every DAY"]


@pytest.mark.parametrize("text", ODD)
def test_the_patterns_scanned_are_those_whose_needs_a_text_meets(text: str) -> None:
    assert claims._scanned(text) == _met(text)


def test_labelled_pairs_and_subjects_scan_the_patterns_their_needs_let_through() -> None:
    for text in _texts()[:3000]:
        for piece in (text, claims._clean(claims._cut(text)[0])):
            assert claims._scanned(piece) == _met(piece), piece


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES + ODD), max_size=12))
def test_generated_text_scans_the_patterns_its_needs_let_through(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert claims._scanned(text) == _met(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_every_match_holds_what_its_pattern_needs(pieces: list[str]) -> None:
    text = "".join(pieces)
    for (kind, pattern), needs in zip(claims._PATTERNS, claims._PATTERN_NEEDS, strict=True):
        if needs is None:
            continue
        around = "(?<=" in pattern.pattern or "(?=" in pattern.pattern
        for match in pattern.finditer(text):
            # (a pattern that asks for a character before or after its match, "=" before a
            # setting, 楼 after a floor, holds it within three characters of the match)
            found = text[max(0, match.start() - 3):match.end() + 3] if around \
                else match.group(0)
            assert needs.met(set(found), re.search(r"\d", found) is not None,
                             lambda found=found: claims._folded(found)), (kind, found)


@pytest.mark.parametrize("text", ["The request timeout is 30 s.", "我的猫叫豆豆。", "名字是小明",
                                  "Ships on 1st of June", "Deploys to us-east-1 via `make`"])
def test_a_claim_is_read_as_before(text: str) -> None:
    assert read_claim(text).values  # each of these states a value the needs let through


#: Pieces of text the contractions and phrases of ``consistency.claims._prepare_words`` look
#: for, spelt as they may be written (case, apostrophes, spaces).
WORD_PIECES = ["can't ", "Can not ", "cannot ", "won't ", "wont ", "shan't ", "isn't ", "I'm ",
               "they're ", "we've ", "you'll ", "she'd ", "it's ", "Bob's ", "doesnt ", "dont ",
               "cant ", "do not ever ", "not ever ", "can not stand ", "not a fan of ",
               "sick of ", "Tired of ", "turned on ", "switches off ", "no longer ",
               "not any more ", "not anymore ", "stopped ", "used to go ", "instead of ",
               "rather than ", "would rather ", "than ", "no more than ", "not fewer than ",
               "prefers tea to ", "prefer tabs over ", "free of ", "off-limits ", "off limits ",
               "gluten-free ", "milk ", "比起咖啡更", "相比于", "began ", "commences ",
               "every time ", "at all times ", "have to ", "needs to ", "is ok to ",
               "it is fine to ", "feel free to ", "the ", " ", "\n", "-", "'"]


def _prepare_every_pattern(text: str) -> str:
    saved = claims._CONTRACTION_SEARCHES, claims._PHRASE_SEARCHES, claims._ANY_WORD_NEED
    claims._CONTRACTION_SEARCHES = (re.compile(""),) * len(saved[0])  # found in every text
    claims._PHRASE_SEARCHES = (re.compile(""),) * len(saved[1])
    claims._ANY_WORD_NEED = re.compile("")
    try:
        return claims._prepare_words(text)
    finally:
        claims._CONTRACTION_SEARCHES, claims._PHRASE_SEARCHES, claims._ANY_WORD_NEED = saved


def test_labelled_pairs_prepare_the_same_words_with_and_without_the_needs() -> None:
    for text in _texts():
        assert claims._prepare_words(text) == _prepare_every_pattern(text), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORD_PIECES), max_size=12))
def test_generated_text_prepares_the_same_words(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert claims._prepare_words(text) == _prepare_every_pattern(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORD_PIECES), max_size=12))
def test_every_phrase_match_holds_what_it_needs(pieces: list[str]) -> None:
    text = "".join(pieces).lower()
    for (pattern, _), needs in [*zip(claims._CONTRACTIONS, claims._CONTRACTION_NEEDS,
                                     strict=True),
                                *zip(claims._PHRASES, claims._PHRASE_NEEDS, strict=True)]:
        for match in pattern.finditer(text):
            assert any(n in match.group(0) for n in needs), (pattern.pattern, match.group(0))


@pytest.mark.parametrize("text", ["once per ſecond", "each mınute", "twice a weeK", "Daıly",
                                  "İn ſeptember", "every ſecond day", "by May", "MAY 1"])
def test_a_case_blind_match_holds_its_words_as_folded(text: str) -> None:
    # ``re.IGNORECASE`` reads ſ as s, ı as i, K (Kelvin) as k and İ as i
    for (kind, pattern), needs in zip(claims._PATTERNS, claims._PATTERN_NEEDS, strict=True):
        if needs is None or not needs.words:
            continue
        for match in pattern.finditer(text):
            assert any(w in claims._folded(match.group(0)) for w in needs.words), (kind, text)


@pytest.mark.parametrize(("odd", "plain"), [
    ("Daıly standup at 9", "Daily standup at 9"),  # a dotless ı, which a case-blind pattern
    ("each mınute", "each minute"),  # reads as i: the value is looked up as the pattern read it
    ("in Aprıl 2024", "in April 2024"),
    ("Aprıl: 3 trips", "April: 3 trips"),
    ("bıweekly", "biweekly"),
    ("every ſunday", "every sunday"),
    ("every weeK", "every week"),  # the Kelvin sign
])
def test_letters_a_case_blind_pattern_reads_as_ascii_read_as_ascii(odd: str, plain: str) -> None:
    """Before, the value was looked up in its lowered form, where ı stays ı: KeyError."""
    written = date(2026, 1, 20)
    assert read_claim(odd, written=written).values == read_claim(plain, written=written).values


def test_tokens_read_alone_are_the_claims_tokens() -> None:
    """``read_tokens`` reads what ``read_claim`` reads into ``tokens``, on every labelled text,
    with and without the day it was written, and on subjects as a dream reads them."""
    texts = [*_texts(), "api.timeout", "过敏", "tools pm", "editor theme 2", "v2.3 release"]
    for text in texts:
        assert claims.read_tokens(text) == read_claim(text).tokens, text
        day = date(2026, 3, 14)
        assert claims.read_tokens(text, written=day) == read_claim(text, written=day).tokens


def test_subject_classes_tell_subjects_apart_as_the_judgement_does() -> None:
    """Two subject keys are of one subject for the judgement's gate exactly when their
    classes are equal (``consistency.judgement.subject_class``)."""
    from consistency.judgement import _same_subject, subject_class, subject_key

    raw = ["allergy", "过敏", "Editor", "编辑器", "deploy.cadence", "cadence deploy",
           "deploy_cadence", "api.timeout", "api timeout 2", "2", "🎉", "the", "a b",
           "JS.Package_Manager", "js package manager"]
    keys = [k for k in (subject_key(s) for s in raw) if k]
    for a in keys:
        for b in keys:
            assert _same_subject(a, b) == (subject_class(a) == subject_class(b)), (a, b)
    assert subject_class(subject_key("allergy")) == subject_class(subject_key("过敏"))
