"""A diary line, and how it is added to a daily note without touching anything else.

A diary entry is one markdown list item under a level-2 heading of the day's note::

    ## Notes
    - 14:03 Chose LanceDB over SQLite for the index: vector search without a server.
    - 16:40 Tests must use a real database. (source: session 3f2a1c9b)

``HH:MM`` is the user's local time; ``(source: …)`` names where a line came from when it was
not written by hand (a Claude Code session for ``dreamd flush``). :func:`parse_entry` reads a
line back into those parts (the dream's light sleep cuts snippets from them).

:func:`append_entry` inserts the entry's bytes at one place — after the last line of the
section, or a new section at the end — so every byte before and after that place is the
file's own: nothing is rewritten, reordered or re-encoded (CRLF files stay CRLF, bytes that
are not UTF-8 stay as they are). All of it is pure.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import time

from ccb.frontmatter import split_frontmatter
from ccb.frontmatter_edit import dominant_line_ending
from ccb.markdown import extract_headings

__all__ = [
    "DEFAULT_SECTION",
    "SECTION_LEVEL",
    "Appended",
    "DiaryEntry",
    "append_entry",
    "one_line",
    "parse_entry",
    "render_entry",
]

#: The heading ``dreamd note`` and ``memory_note`` write under when none is named (the
#: section kepano's daily-note template starts with).
DEFAULT_SECTION = "Notes"
#: Level of the headings entries are written under (``## Notes``).
SECTION_LEVEL = 2

_ENTRY = re.compile(r"^\s*[-*+]\s+(?:(\d{1,2}):(\d{2})\s+)?(.*?)"
                    r"(?:\s+\(source:\s*([^()]*)\))?\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")


@dataclass(frozen=True, slots=True)
class DiaryEntry:
    """One diary line: ``text`` (one line), the local time it was written (``None`` when the
    line has none) and its ``source`` (``None``: written by hand or by an assistant)."""

    text: str
    at: time | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Appended:
    """The note's new bytes, and the 1-based line of the file the entry is on."""

    data: bytes
    line: int


def one_line(text: str) -> str:
    """``text`` as one line: every run of whitespace (newlines, tabs, Unicode spaces) one
    space, control characters dropped, the ends trimmed."""
    kept = "".join(ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) != "Cc")
    return " ".join(kept.split())


def render_entry(entry: DiaryEntry) -> str:
    """``- HH:MM text (source: …)`` (without a line ending); parts that are ``None`` are
    left out. ``text`` is made one line (:func:`one_line`)."""
    parts = ["-"]
    if entry.at is not None:
        parts.append(f"{entry.at.hour:02d}:{entry.at.minute:02d}")
    parts.append(one_line(entry.text))
    if entry.source:
        parts.append(f"(source: {one_line(entry.source).replace('(', '').replace(')', '')})")
    return " ".join(parts)


def parse_entry(line: str) -> DiaryEntry | None:
    """A list item read back as a :class:`DiaryEntry` (a leading ``HH:MM`` is its time, a
    trailing ``(source: …)`` its source); ``None`` for a line that is not a list item.
    Lists written by hand read as entries without a time."""
    found = _ENTRY.match(line)
    if found is None or not found.group(3):
        return None
    hour, minute = found.group(1), found.group(2)
    at = None
    if hour is not None and int(hour) < 24 and int(minute) < 60:
        at = time(int(hour), int(minute))
    text = found.group(3) if at is not None or hour is None \
        else f"{hour}:{minute} {found.group(3)}"
    return DiaryEntry(text=text, at=at, source=found.group(4) or None)


def _heading_key(text: str) -> str:
    return unicodedata.normalize("NFC", " ".join(text.split())).casefold()


def _section_end(lines: list[str], start: int, end: int) -> int:
    """The index of the line after the section's last non-blank line (``start`` is the
    heading's line: an empty section ends right after it)."""
    last = start
    for index in range(start + 1, end):
        if lines[index].strip():
            last = index
    return last + 1


def append_entry(data: bytes, heading: str, entry_line: str) -> Appended:
    """``data`` (a note's bytes; ``b""`` for a new note) with ``entry_line`` added as the
    last line of the first ``## heading`` section (matched without regard to case or
    spacing; headings in code blocks do not count), or, when there is none, a new
    ``## heading`` section at the end holding it. The section ends at the next heading of
    level 1 or 2. The line ending is the note's own (``\\r\\n`` in a CRLF note).

    Only an insertion: ``data`` before the insertion point and after it is in the result
    byte for byte."""
    text = data.decode("utf-8", "surrogateescape")
    eol = dominant_line_ending(text)
    split = split_frontmatter(text)
    body_start = len(text) - len(split.body)
    lines = split.body.split("\n")
    wanted = _heading_key(heading)
    headings = extract_headings(split.body)
    own = next((h for h in headings if h.level == SECTION_LEVEL
                and _heading_key(h.text) == wanted), None)
    if own is None:
        return _new_section(text, eol, heading, entry_line)
    end = next((h.line for h in headings if h.line > own.line and h.level <= SECTION_LEVEL),
               len(lines))
    after = _section_end(lines, own.line, end)
    offset = body_start + sum(len(line) + 1 for line in lines[:after])
    # a list right after a paragraph (or an embed) would join it: a blank line first
    gap = eol if after - 1 > own.line and not _LIST_ITEM.match(lines[after - 1]) else ""
    insert = gap + entry_line + eol
    if offset > len(text):  # the section's last line is the file's, without a line ending
        # ours ends with one, so that a line added after it by hand starts on its own
        offset, insert = len(text), eol + gap + entry_line + eol
    return _spliced(text, offset, insert, entry_line)


def _new_section(text: str, eol: str, heading: str, entry_line: str) -> Appended:
    lead = ""
    if text and not text.endswith(("\n", "\r")):
        lead = eol + eol
    elif text.strip() and not text.endswith(("\n\n", "\r\n\r\n", "\r\r")):
        lead = eol
    insert = f"{lead}{'#' * SECTION_LEVEL} {one_line(heading)}{eol}{entry_line}{eol}"
    return _spliced(text, len(text), insert, entry_line)


def _spliced(text: str, offset: int, insert: str, entry_line: str) -> Appended:
    before = text[:offset].encode("utf-8", "surrogateescape")
    after = text[offset:].encode("utf-8", "surrogateescape")
    added = insert.encode("utf-8", "surrogateescape")
    where = insert.rindex(entry_line)
    line = text[:offset].count("\n") + insert[:where].count("\n") + 1
    return Appended(before + added + after, line)
