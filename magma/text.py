"""Scripts written without spaces between words: the one definition of the CJK ranges.

Search, fusion's token estimate, the intent rules and the write-path judgement all ask "is this
character Han (or kana, or Hangul)?"; they ask it here, so a character counts the same way in
each. Ranges are Unicode blocks (Unicode 15.1, ``Blocks.txt``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ccb.memory_file import normalise_text

__all__ = ["CJK_CHAR", "CJK_RANGES", "HAN_RANGES", "NEAR_IDENTICAL_OVERLAP", "CopyForm",
           "cjk_phrases", "copy_form", "has_own_words", "holds_phrases", "near_identical",
           "same_copy", "text_tokens"]

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

#: What a section holds that says nothing of its own: its heading lines (the heading path
#: names them), embeds of other files (``![[Daily.base]]``, ``![alt](cat.png)``), template
#: placeholders (``{{date}}``, Templater's ``<% … %>``), comments (``%% … %%``, ``<!-- … -->``)
#: and, once those are gone, any run of marks without a letter, digit or CJK character
#: (list and task markers, quotes, rules, table pipes).
_NOT_OWN_WORDS = re.compile(
    r"^[ \t]{0,3}#{1,6}(?:[ \t][^\n]*)?$|!\[\[[^\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)"
    r"|\{\{[^}\n]*\}\}|<%.*?%>|%%.*?%%|<!--.*?-->", re.M | re.S)
#: A letter, digit or CJK character: what a word is made of.
_WORD_CHAR = re.compile(r"[^\W_]")

#: A Markdown task's box, ticked or not (``- [x]``, ``* [ ]``; Obsidian's other marks too).
_TASK_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[(.)\]", re.M)


def has_own_words(text: str) -> bool:
    """Does a section's ``text`` say anything beyond its headings? ``False`` for one that
    holds only heading lines, embeds of other files, template placeholders, comments and
    list, task, quote or table marks: ``"## Notes\\n\\n![[Daily.base]]"``, ``"## 笔记\\n- "``,
    ``"- [ ] {{date}}"``; ``True`` as soon as one word, number or link is left:
    ``"Use pnpm, not npm"``, ``"## Notes\\n- [[Kiln]]"``, ``"用 pnpm"``, ``"- 42"``.

    A template's empty sections and a note that is only an embedded base or picture have
    no evidence of their own for a search; their embedding is that of their title and
    headings, close to any question that names those words."""
    return _WORD_CHAR.search(_NOT_OWN_WORDS.sub(" ", text)) is not None


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


@dataclass(frozen=True, slots=True)
class CopyForm:
    """What :func:`near_identical` compares of one text (:func:`copy_form`): its task boxes
    in order, its tokens that carry a digit (sorted) and its distinct tokens."""

    tasks: tuple[str, ...]
    values: tuple[str, ...]
    tokens: frozenset[str]


def copy_form(text: str) -> CopyForm:
    """``text``'s :class:`CopyForm`, in memory files' comparison form
    (:func:`ccb.memory_file.normalise_text`): worth keeping for a text compared with several
    others (a search compares each candidate with those picked before it)."""
    tokens = text_tokens(normalise_text(text))
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
