"""Inline binary data in a note's text: not text, so not indexed.

A page clipped from the web (Obsidian Web Clipper, MarkDownload, a pasted screenshot) can
carry its images inline as base64 data URIs: ``![photo](data:image/png;base64,iVBOR…)``,
2 MB for one photo. Embedded and full-text indexed as they are, they cost hundreds of chunks
of noise, minutes of embedding, and push the note's real text past ``sync.max_note_chars``.
:func:`drop_inline_data` replaces each with a short placeholder before the note is cut and
chunked; the user's file is never changed.

What counts as inline data (everything else is left as written):

- a ``data:`` URI whose payload is base64 (``;base64,``), at least
  :data:`MIN_DATA_URI_CHARS` characters of it → ``[image data]`` (``[audio data]``,
  ``[video data]``, ``[font data]``, else ``[data]``);
- a bare run of at least :data:`MIN_BLOB_CHARS` base64 characters that holds upper- and
  lower-case letters and digits, not part of a URL or a longer word → ``[binary data]``;
- :data:`MIN_WRAPPED_LINES` or more consecutive lines each of at least
  :data:`MIN_WRAPPED_LINE_CHARS` base64 characters and nothing else (MIME and PEM wrap at
  76 and 64), mixed as above → ``[binary data]``.

A DNA sequence, a hex digest, a row of dashes or a long URL is not base64 data by these
rules. Line breaks are kept (a wrapped block keeps its line count), so heading lines stay
where the parser found them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ccb.model import Note

__all__ = [
    "MIN_BLOB_CHARS",
    "MIN_DATA_URI_CHARS",
    "MIN_WRAPPED_LINES",
    "MIN_WRAPPED_LINE_CHARS",
    "drop_inline_data",
    "without_inline_data",
]

#: Shortest base64 payload of a data URI that is dropped (our choice: a 1×1 GIF is ≈ 60;
#: a shorter payload is an example in a note about data URIs, kept as written).
MIN_DATA_URI_CHARS = 32
#: Shortest bare base64 run dropped (our choice: longer than any word, and than a SHA-512
#: hex digest, 128; random bytes of that length hold all three character classes).
MIN_BLOB_CHARS = 200
#: A wrapped blob: this many lines or more, each this long or longer (MIME wraps at 76,
#: PEM at 64; RFC 2045 and RFC 7468).
MIN_WRAPPED_LINES = 4
MIN_WRAPPED_LINE_CHARS = 60

_B64 = "A-Za-z0-9+/"
_DATA_URI = re.compile(
    r"(?<![\w-])data:(?P<type>[\w.+-]+)?(?:/[\w.+-]+)?(?:;[\w.+-]+=[\w.+%-]+)*;base64,"
    rf"(?P<payload>[{_B64}_%=-]{{{MIN_DATA_URI_CHARS},}})",
    re.IGNORECASE,
)
_BLOB = re.compile(rf"(?<![\w+/=.:%#@&?~-])[{_B64}_-]{{{MIN_BLOB_CHARS},}}={{0,2}}(?![\w+/=-])")
_WRAPPED = re.compile(
    rf"^(?:[ \t]*[{_B64}]{{{MIN_WRAPPED_LINE_CHARS},}}={{0,2}}[ \t]*\n)"
    rf"{{{MIN_WRAPPED_LINES - 1},}}[ \t]*[{_B64}]+={{0,2}}[ \t]*$",
    re.MULTILINE,
)
_MEDIA = frozenset({"image", "audio", "video", "font"})
_LOWER, _UPPER, _DIGIT = re.compile("[a-z]"), re.compile("[A-Z]"), re.compile("[0-9]")


def _mixed(text: str) -> bool:
    """Upper- and lower-case letters and digits: what base64 of real data looks like."""
    return bool(_LOWER.search(text) and _UPPER.search(text) and _DIGIT.search(text))


def _data_uri(match: re.Match[str]) -> str:
    kind = (match["type"] or "").lower()
    return f"[{kind} data]" if kind in _MEDIA else "[data]"


def _blob(match: re.Match[str]) -> str:
    text = match[0]
    if not _mixed(text):
        return text
    return "[binary data]" + "\n" * text.count("\n")


def drop_inline_data(text: str) -> str:
    """``text`` with its inline binary data replaced by placeholders (module docstring);
    the same string when it holds none. Pure; linear in ``len(text)`` (a 2 MB data URI
    costs ≈ 10 ms)."""
    if "data:" in text:
        text = _DATA_URI.sub(_data_uri, text)
    text = _BLOB.sub(_blob, text)
    return _WRAPPED.sub(_blob, text)


def without_inline_data(note: Note) -> Note:
    """``note`` with :func:`drop_inline_data` applied to its body (the note itself when the
    body holds none): what the index cuts into chunks."""
    body = drop_inline_data(note.body)
    return note if body == note.body else replace(note, body=body)
