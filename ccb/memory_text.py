"""What the text of a memory to write must be: Unicode, not empty, with a word, not too long.

Pure checks, run first by every write path that takes a memory's text from outside
(``dreamd remember``, MCP ``memory_write``, a dream's extracted fact), before anything is
embedded, judged or written. Sizes are counted in characters (Unicode code points), so the
limit holds the same amount of text in any script: counted in UTF-8 bytes, Chinese would get a
third of what English gets, and emoji a quarter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from config.errors import (
    EmptyMemoryError,
    MemoryEncodingError,
    MemoryTooLargeError,
    WordlessMemoryError,
)

__all__ = ["MAX_CHARS_SETTING", "checked_field", "checked_memory_text", "has_word"]

#: The setting that bounds a memory's text, as error messages name it.
MAX_CHARS_SETTING = "memory.max_chars"

#: A code point Python can hold but UTF-8 cannot: what bytes that were not UTF-8 become when
#: an argument or stdin is decoded with ``surrogateescape`` (PEP 383).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Characters a text may hold and still be blank: format characters (zero-width space and
#: joiner, BOM) and spaces.
_INVISIBLE = frozenset({"Cf", "Zs"})


def has_word(text: str) -> bool:
    """True when ``text`` holds a letter or a digit of any script (Unicode categories ``L*``
    and ``N*``: ``a``, ``é``, ``中``, ``か``, ``한``, ``7``, ``٣``), not only emoji, punctuation,
    symbols or spaces."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


def checked_field(value: str, *, where: str, max_chars: int) -> None:
    """Refuse a field of a memory (its text, name, description or subject) that is longer
    than ``max_chars`` characters or holds bytes that were not UTF-8. ``where`` names it in
    the message (``remember: memory name``).

    Raises ``MemoryTooLargeError`` (checked first: ``len`` costs nothing whatever the size) or
    ``MemoryEncodingError``.
    """
    if len(value) > max_chars:
        raise MemoryTooLargeError(
            f"{where}: {len(value):,} characters, more than {MAX_CHARS_SETTING} "
            f"({max_chars:,}); nothing was written — shorten it, split it into several "
            f"memories, or raise {MAX_CHARS_SETTING} (e.g. --set {MAX_CHARS_SETTING}="
            f"{max(len(value), max_chars * 2)})")
    bad = _SURROGATE.search(value)
    if bad is not None:
        byte = ord(bad.group()) - 0xDC00 if 0xDC80 <= ord(bad.group()) <= 0xDCFF else None
        what = f"byte 0x{byte:02x}" if byte is not None else "a lone surrogate"
        raise MemoryEncodingError(
            f"{where}: not UTF-8 text ({what} at character {bad.start() + 1}); nothing was "
            "written — convert it to UTF-8 first (e.g. iconv -t UTF-8)")


def checked_memory_text(text: str, *, max_chars: int, where: str = "remember",
                        fields: Mapping[str, str | None] | None = None) -> str:
    """The body of a memory to write: ``text`` without leading and trailing whitespace.
    ``fields`` (name, description, subject; ``None`` when not given) are checked with
    :func:`checked_field` too.

    Raises, in this order (the cheap checks first; nothing is written in any case):
    ``MemoryTooLargeError`` when it has more than ``max_chars`` characters
    (``memory.max_chars``), ``MemoryEncodingError`` when it holds bytes that were not UTF-8,
    ``EmptyMemoryError`` when nothing visible is left, ``WordlessMemoryError`` when no
    letter or digit of any script is (``🎉🎉``, ``!!!``, ``→``).
    """
    body = text.strip()
    checked_field(body, where=f"{where}: the memory text", max_chars=max_chars)
    for key, value in (fields or {}).items():
        checked_field(value or "", where=f"{where}: the memory {key}", max_chars=max_chars)
    if not any(unicodedata.category(ch) not in _INVISIBLE for ch in body):
        raise EmptyMemoryError(f"{where}: the memory text is empty; nothing was written")
    if not has_word(body):
        shown = body if len(body) <= 40 else body[:39] + "…"
        raise WordlessMemoryError(
            f"{where}: the memory text has no words ({shown!r}: no letter or digit in any "
            "script, only emoji, punctuation or symbols); nothing was written — say the fact "
            "in words")
    return body
