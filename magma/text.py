"""Scripts written without spaces between words: the one definition of the CJK ranges.

Search, fusion's token estimate, the intent rules and the write-path judgement all ask "is this
character Han (or kana, or Hangul)?"; they ask it here, so a character counts the same way in
each. Ranges are Unicode blocks (Unicode 15.1, ``Blocks.txt``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from ccb.memory_file import normalise_text

__all__ = ["CJK_CHAR", "CJK_RANGES", "HAN_RANGES", "NEAR_IDENTICAL_OVERLAP", "CopyForm",
           "cjk_phrases", "copy_form", "holds_phrases", "near_identical", "same_copy",
           "text_tokens"]

#: Han ideographs: CJK Unified Ideographs Extension A (U+3400–4DBF), CJK Unified Ideographs
#: (U+4E00–9FFF) and CJK Compatibility Ideographs (U+F900–FAFF), as a regex class body.
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: Han plus Hiragana and Katakana (U+3040–30FF) and Hangul Syllables (U+AC00–D7AF): the
#: scripts search reads by characters rather than by space-separated words.
CJK_RANGES = "\u3040-\u30ff" + HAN_RANGES + "\uac00-\ud7af"
#: One character of :data:`CJK_RANGES`.
CJK_CHAR = re.compile(f"[{CJK_RANGES}]")

#: Words (letters, digits, underscore) outside the CJK scripts, and single CJK characters.
_TOKEN = re.compile(f"[{CJK_RANGES}]|[^\\W{CJK_RANGES}]+")
#: A run of two or more CJK characters: a phrase written without spaces.
_CJK_RUN = re.compile(f"[{CJK_RANGES}]{{2,}}")
#: Share of distinct tokens two texts must share to be copies of one another (our choice:
#: a copy that lost or gained a line or a word stays above it; two chat sessions on one
#: subject share far less).
NEAR_IDENTICAL_OVERLAP = 0.8

#: A Markdown task's box, ticked or not (``- [x]``, ``* [ ]``; Obsidian's other marks too).
_TASK_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[(.)\]", re.M)


def text_tokens(text: str) -> list[str]:
    """Case-folded words, each CJK character one token: ``"Use pnpm 用 pnpm"`` ->
    ``["use", "pnpm", "用", "pnpm"]``."""
    return _TOKEN.findall(text.casefold())


def cjk_phrases(text: str) -> list[str]:
    """The runs of two or more CJK characters in ``text``, in NFKC: ``"git 提交信息 怎么写"``
    -> ``["提交信息", "怎么写"]``. A word segmenter cuts "提交信息" into 提交 + 信息 and a
    full-text OR query then matches each alone; the run itself is the phrase the user wrote."""
    return _CJK_RUN.findall(unicodedata.normalize("NFKC", text))


def holds_phrases(text: str, phrases: list[str]) -> bool:
    """Does ``text`` (in NFKC) hold every one of ``phrases`` as written (contiguous)? ``False``
    for no phrases."""
    if not phrases:
        return False
    folded = unicodedata.normalize("NFKC", text)
    return all(phrase in folded for phrase in phrases)


#: English month names (a day's spellings, :func:`_own_day`), in the calendar's order.
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
#: English weekday names, Monday first (:meth:`datetime.date.weekday`'s order).
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: Chinese weekday numerals, Monday first (星期四, 周四; Sunday is 日 or 天).
_WEEKDAYS_ZH = ("一", "二", "三", "四", "五", "六", "[日天]")
#: What a note's own day becomes in its copy form: one word, the same in every note and
#: without a digit, so it is no value and two notes filed under two days read alike there.
_OWN_DAY = " \u27e8day\u27e9 "


@dataclass(frozen=True, slots=True)
class CopyForm:
    """What :func:`near_identical` compares of one text (:func:`copy_form`): its task boxes
    in order, its tokens that carry a digit (sorted) and its distinct tokens."""

    tasks: tuple[str, ...]
    values: tuple[str, ...]
    tokens: frozenset[str]


def copy_form(text: str, *, own_day: date | None = None) -> CopyForm:
    """``text``'s :class:`CopyForm`, in memory files' comparison form
    (:func:`ccb.memory_file.normalise_text`): worth keeping for a text compared with several
    others (a search compares each candidate with those picked before it).

    ``own_day`` is the day the note itself names (its date property or file name,
    :attr:`magma.catalogue.CatalogueEntry.dated`): each full spelling of it
    (:func:`_own_day`) is left out of the values, so a chat session or a daily note filed
    again under another day (``# Chat session 2023-05-11`` / ``2023-05-23``, the rest byte
    for byte) is a copy. Any other date the text writes, a day without its year ("May 11")
    and a longer number holding the day's digits stay values: a meeting moved to another
    day is another fact."""
    compared = text if own_day is None else _own_day(own_day).sub(
        _OWN_DAY, unicodedata.normalize("NFKC", text))  # (full-width digits as ASCII)
    tokens = text_tokens(normalise_text(compared))
    return CopyForm(tuple(_TASK_MARK.findall(text)), tuple(_values(tokens)), frozenset(tokens))


def same_copy(a: CopyForm, b: CopyForm, *, overlap: float = NEAR_IDENTICAL_OVERLAP) -> bool:
    """:func:`near_identical` of the two texts ``a`` and ``b`` are the forms of."""
    if a.tasks != b.tasks or a.values != b.values:
        return False  # "- [x] Exercise" / "- [ ] Exercise": a task done one day, not the other
    if not a.tokens and not b.tokens:
        return True
    return len(a.tokens & b.tokens) / len(a.tokens | b.tokens) >= overlap


def near_identical(a: str, b: str, *, overlap: float = NEAR_IDENTICAL_OVERLAP) -> bool:
    """Are ``a`` and ``b`` copies of one text, compared in memory files' comparison form
    (:func:`ccb.memory_file.normalise_text`: NFKC, case, quotes, emphasis): the same numbers
    (a changed value is a changed fact, not a copy), the same tasks ticked and at least
    ``overlap`` of their distinct tokens shared (Jaccard)? Two empty texts are copies."""
    if _TASK_MARK.findall(a) != _TASK_MARK.findall(b):
        return False  # (before the normalising: most texts that differ differ here)
    return same_copy(copy_form(a), copy_form(b), overlap=overlap)


def _values(tokens: list[str]) -> list[str]:
    """The tokens that carry a digit (``125``, ``v3``, ``8080``), sorted."""
    return sorted(t for t in tokens if any(c.isdigit() for c in t))


@lru_cache(maxsize=1024)  # a day's pattern built once, not once a candidate a search
def _own_day(day: date) -> re.Pattern[str]:
    """The full spellings of ``day`` (year, month and day all written), case-insensitive,
    each with the day's own weekday before it or not ("Thursday, 11 May 2023", "Thu
    2023-05-11", 2023年5月11日 星期四 / (周四)):

    - year first in digits, leading zeros or not, one separator throughout: ``2023-05-11``,
      ``2023/5/11``, ``2023.05.11``;
    - 2023年5月11日 (or 号; Korean 2023년 5월 11일), spaced or not;
    - "May 11, 2023", "May 11th 2023", "11 May 2023", "11th of May, 2023" (month names in
      full or in three letters with or without a dot, "Sept" too).

    Day-first and month-first numerals are left out: ``5/11/2023`` is 11 May in one country
    and 5 November in another, and a date the note states is never taken for its own. A
    spelling inside a longer number (``12023-05-11``, ``2023-05-111``) is no spelling."""
    y, m, d = day.year, day.month, day.day
    month = _MONTHS[m - 1]
    month_word = f"(?:{month}|{month[:3]}{'|sept' if m == 9 else ''})\\.?"
    nth = f"0?{d}(?:st|nd|rd|th)?"
    weekday = _WEEKDAYS[day.weekday()]
    before = f"(?:(?<![a-z])(?:{weekday}|{weekday[:3]})\\.?,?\\s+)?"
    after_zh = (f"(?:\\s*[(\uff08]?(?:星期|礼拜|周){_WEEKDAYS_ZH[day.weekday()]}"
                f"[)\uff09]?)?")
    forms = [
        f"(?<![0-9]){y}(?P<sep>[-/.])0?{m}(?P=sep)0?{d}(?![0-9])",
        f"(?<![0-9]){y}\\s*[年년]\\s*0?{m}\\s*[月월]\\s*0?{d}\\s*[日号일]{after_zh}",
        f"(?<![a-z]){month_word}\\s+{nth},?\\s+{y}(?![0-9])",
        f"(?<![0-9]){nth}\\s+(?:of\\s+)?{month_word},?\\s+{y}(?![0-9])",
    ]
    return re.compile(f"{before}(?:{'|'.join(forms)})", re.IGNORECASE)
