"""Where a credential pattern can match, found without running it at every character.

Python's ``re`` skips ahead quickly only for a pattern that opens on a literal or a character
set without ``(?i)``. Most of :mod:`consistency.secrets`' patterns open on a lookbehind
(``(?<![A-Za-z0-9_\\-])``: the token stands alone) or are case-insensitive, so
``pattern.search`` runs the whole pattern at every position of a note: a 10,000-character
help page costs milliseconds per rule, and a cold index of a 100,000-note vault spent most of
its reading there (a profile of 2,000 notes of ``bench/big_vault.py``'s vault: 17 s of CPU in
the secret rules, 3 s parsing; ``bench/read_profile.py``).

:func:`match_heads` reads a compiled pattern's own syntax tree and returns the literals one of
which every match *starts* with (zero-width assertions before them skipped), or ``None`` when
it cannot say (an opening that is not literal). :class:`HeadSearch` then finds those literals
with ``str.find`` (case-folded for a ``(?i)`` pattern) and calls ``pattern.match`` only there,
in order: the first position where it matches is the match ``pattern.search`` returns, with
the same groups (``match`` at a position tries exactly what ``search`` tries there, and a
lookbehind or ``\\b`` sees the characters before the position in both). Where the case-folded
text would not line up with the text (a character folding to two, or ``ı``, which ``(?i)``
matches to ``i`` and ``str.casefold`` keeps: :data:`FOLD_UNSAFE`), the plain search is used.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from re import _constants as _c  # type: ignore[attr-defined]  # the parser re compiles with
from re import _parser as _p  # type: ignore[attr-defined]
from typing import Any

__all__ = ["FOLD_UNSAFE", "HeadSearch", "heads_of", "match_heads"]

#: Characters ``(?i)`` matches to a head's character where ``str.casefold`` does not give
#: that character: the dotless ``ı`` (``re`` pairs it with ``i``; its fold is itself). Found
#: by comparing ``re``'s case-insensitive match with ``str.casefold`` over every code point
#: for every head character (``tests/consistency/test_secret_heads.py`` does it again); ``İ``
#: folds to two characters, which the length test catches.
FOLD_UNSAFE = frozenset("ı")
#: More alternatives than this and a pattern's heads are not worth finding one by one.
MAX_HEADS = 400
#: At most this many characters of a character set are taken as heads (``[@4]``, ``[ñn]``).
MAX_SET = 4

_ZERO_WIDTH = {_c.AT, _c.ASSERT, _c.ASSERT_NOT}
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)}


def match_heads(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """The literals one of which every match of ``pattern`` starts with -> the shortest
    covering set (a head that another extends is dropped), case-folded for a ``(?i)``
    pattern; ``None`` when some match may start otherwise (an opening that is no literal, a
    flag changed inside, more than :data:`MAX_HEADS` alternatives). Never raises."""
    try:
        parsed = _p.parse(pattern.pattern, pattern.flags)
        heads = _sequence(list(parsed))
    except (_Unsure, RecursionError, ValueError, TypeError, re.error):
        return None
    found = {text for text, _complete in heads}
    if not found or "" in found:
        return None
    if pattern.flags & re.IGNORECASE:
        folded = {text.casefold() for text in found}
        if any(len(text.casefold()) != len(text) for text in found):
            return None
        found = folded
    kept = sorted(found, key=len)
    covering: list[str] = []
    for text in kept:
        if not any(text.startswith(shorter) for shorter in covering):
            covering.append(text)
    return tuple(sorted(covering))


@functools.cache
def heads_of(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """:func:`match_heads` of ``pattern``, read once per pattern (a module's patterns are
    read on first use, not at import: 44 ms for :mod:`consistency.secrets`' 79 rules)."""
    return match_heads(pattern)


class _Unsure(Exception):
    """A construct :func:`match_heads` does not read: no heads."""


def _sequence(items: list[tuple[Any, Any]]) -> set[tuple[str, bool]]:
    """``(literal so far, the sequence went on literally to its end)`` of each way through."""
    heads: set[tuple[str, bool]] = {("", True)}
    for item in items:
        if not any(complete for _text, complete in heads):
            break
        step = _item(item)
        grown: set[tuple[str, bool]] = set()
        for text, complete in heads:
            if complete:
                grown.update((text + more, ends) for more, ends in step)
            else:
                grown.add((text, False))
        heads = grown
        if len(heads) > MAX_HEADS:
            raise _Unsure
    return heads


def _item(item: tuple[Any, Any]) -> set[tuple[str, bool]]:
    op, av = item
    if op is _c.LITERAL:
        return {(chr(av), True)}
    if op in _ZERO_WIDTH:
        return {("", True)}
    if op is _c.IN:
        chars = [chr(value) for kind, value in av if kind is _c.LITERAL]
        if len(chars) != len(av) or len(chars) > MAX_SET:
            return {("", False)}
        return {(ch, True) for ch in chars}
    if op is _c.SUBPATTERN:
        _group, add_flags, del_flags, inner = av
        if (add_flags | del_flags) & re.IGNORECASE:
            raise _Unsure
        return _sequence(list(inner))
    if op is _c.BRANCH:
        return set().union(*(_sequence(list(way)) for way in av[1]))
    if op in _REPEATS:
        low, _high, inner = av
        if low == 0:
            return {("", False)}
        return {(text, False) for text, _ in _sequence(list(inner))}
    return {("", False)}


class HeadSearch:
    """``pattern.search(text, pos)`` that tries ``pattern.match`` only where one of
    ``heads`` (:func:`match_heads`) stands: the same match, or ``None`` where the search
    finds none. ``folded`` is ``text.casefold()`` (used for a ``(?i)`` pattern)."""

    def __init__(self, pattern: re.Pattern[str], heads: Iterable[str], text: str,
                 folded: str) -> None:
        self.pattern = pattern
        self.text = text
        haystack = folded if pattern.flags & re.IGNORECASE else text
        starts: set[int] = set()
        for head in heads:
            at = haystack.find(head)
            while at >= 0:
                starts.add(at)
                at = haystack.find(head, at + 1)
        self.starts = sorted(starts)

    @staticmethod
    def usable(pattern: re.Pattern[str], text: str, folded: str) -> bool:
        """Whether the heads' positions in the haystack are positions in ``text``."""
        if not pattern.flags & re.IGNORECASE:
            return True
        return len(folded) == len(text) and not any(ch in text for ch in FOLD_UNSAFE)

    def search(self, pos: int) -> re.Match[str] | None:
        """The first match at or after ``pos``, as ``pattern.search(text, pos)``."""
        starts, match, text = self.starts, self.pattern.match, self.text
        for index in range(bisect.bisect_left(starts, pos), len(starts)):
            found = match(text, starts[index])
            if found is not None:
                return found
        return None
