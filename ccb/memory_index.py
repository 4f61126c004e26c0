"""``MEMORY.md``: the index of live memories, built to fit Claude Code's loading limits.

Pure: the caller decides which memories are live and how important they are. The format
follows Claude Code's auto-memory index (DESIGN.md, "Facts": ``- [Title](file.md) — hook``,
first 200 lines / 25 KB loaded), grouped by type.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ccb.model import MEMORY_TYPES, MemoryType

__all__ = [
    "DESCRIPTION_MAX_CHARS",
    "INDEX_HEADER",
    "MAX_BYTES",
    "MAX_LINES",
    "IndexEntry",
    "MemoryIndexLayout",
    "build_memory_index",
    "layout_memory_index",
]

#: First lines of every ``MEMORY.md`` dreamd writes.
INDEX_HEADER = (
    "# Memory index\n"
    "\n"
    "Maintained by dreamd from the memory files in this folder; edits here are overwritten.\n"
)

#: Most lines of ``MEMORY.md``: Claude Code loads the first 200 at session start.
MAX_LINES = 200
#: Most UTF-8 bytes of ``MEMORY.md``: Claude Code loads the first 25 KB.
MAX_BYTES = 25_000

#: Longest description kept on an index line, in characters (longer ones end with ``…``);
#: Claude Code's memory guidance keeps each index entry to one line of about 150 characters.
DESCRIPTION_MAX_CHARS = 150

_HEADINGS: dict[MemoryType, str] = {
    "user": "## User",
    "feedback": "## Feedback",
    "project": "## Project",
    "reference": "## Reference",
}
# Characters percent-encoded in a link destination: those that end or break a markdown link
# (space, parentheses, angle brackets, brackets), ``%`` and ``\\`` themselves, controls.
_URL_UNSAFE_RE = re.compile(r"[\s()<>\[\]%\\\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One live memory as the index lists it.

    ``file`` is the memory's path relative to ``MEMORY.md`` (``"tests-hit-a-real-db.md"``).
    Priority, highest first: ``pinned``, then ``resident`` (the caller's L1/L2 decision),
    then ``importance`` (any float, higher first), then ``updated`` (newer first; a naive
    datetime counts as UTC), then name and file (for determinism).
    """

    name: str
    file: str
    type: MemoryType
    description: str = ""
    pinned: bool = False
    resident: bool = False
    importance: float = 0.0
    updated: dt.datetime | dt.date | None = None


@dataclass(frozen=True, slots=True)
class MemoryIndexLayout:
    """``MEMORY.md`` as built: its ``text`` and the entries ``left_out`` to fit its limits
    (lowest priority last), which its closing line counts but does not name."""

    text: str
    left_out: tuple[IndexEntry, ...] = ()


def _timestamp(value: dt.datetime | dt.date | None) -> float:
    if value is None:
        return float("-inf")
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.timestamp()


def _priority_key(entry: IndexEntry) -> tuple[bool, bool, float, float, str, str]:
    return (
        not entry.pinned,
        not entry.resident,
        -entry.importance,
        -_timestamp(entry.updated),
        entry.name.casefold(),
        entry.file,
    )


def _escape_text(text: str) -> str:
    """One line, with ``\\ [ ] ( )`` backslash-escaped (CommonMark) so no link starts or ends."""
    one_line = " ".join(text.split())
    return re.sub(r"([\\\[\]()])", r"\\\1", one_line)


def _link_target(file: str) -> str:
    return _URL_UNSAFE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), file)


def _entry_line(entry: IndexEntry) -> str:
    return _line(entry.name, entry.file, entry.description)


@functools.lru_cache(maxsize=16_384)
def _line(name_text: str, file: str, description_text: str) -> str:
    """One entry's line; kept per (name, file, description): ``MEMORY.md`` is rebuilt after
    every write from mostly the same memories."""
    name = _escape_text(name_text) or _escape_text(file)
    line = f"- [{name}]({_link_target(file)})"
    description = " ".join(description_text.split())
    if len(description) > DESCRIPTION_MAX_CHARS:
        description = description[: DESCRIPTION_MAX_CHARS - 1].rstrip() + "…"
    if description:
        line += f" — {_escape_text(description)}"
    return line + "\n"


def _left_out_line(count: int, memory_folder: str) -> str:
    noun = "memory" if count == 1 else "memories"
    return f"- … {count} more {noun} not listed (see the {memory_folder}/ folder)\n"


def _render(
    kept: Sequence[IndexEntry], lines: dict[int, str], left_out: int, memory_folder: str
) -> str:
    parts = [INDEX_HEADER]
    for memory_type in MEMORY_TYPES:
        group = [entry for entry in kept if entry.type == memory_type]
        if group:
            parts.append(f"\n{_HEADINGS[memory_type]}\n\n")
            parts.extend(lines[id(entry)] for entry in group)
    if left_out:
        parts.append("\n" + _left_out_line(left_out, memory_folder))
    return "".join(parts)


def _fits(text: str, max_lines: int, max_bytes: int) -> bool:
    return text.count("\n") <= max_lines and len(text.encode("utf-8")) <= max_bytes


def build_memory_index(
    memories: Sequence[IndexEntry],
    *,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
    memory_folder: str = "Memory",
) -> str:
    """The text of ``MEMORY.md`` for the live ``memories``, within the limits
    (:func:`layout_memory_index`'s ``text``)."""
    return layout_memory_index(memories, max_lines=max_lines, max_bytes=max_bytes,
                               memory_folder=memory_folder).text


def layout_memory_index(
    memories: Sequence[IndexEntry],
    *,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
    memory_folder: str = "Memory",
) -> MemoryIndexLayout:
    """``MEMORY.md`` for the live ``memories``, within the limits, and the entries left out.

    Layout: :data:`INDEX_HEADER`, then one section per type that has entries (``## User``,
    ``## Feedback``, ``## Project``, ``## Reference``), each line
    ``- [name](file) — description`` in priority order (see :class:`IndexEntry`). Names and
    descriptions are collapsed to one line, ``[ ] ( ) \\`` backslash-escaped, descriptions cut to
    :data:`DESCRIPTION_MAX_CHARS`; link targets keep their letters and percent-encode
    spaces, parentheses, brackets and ``%`` (``my note.md`` → ``my%20note.md``).

    Built to fit: ``max_lines`` (newline-terminated lines; Claude Code loads the first 200)
    and ``max_bytes`` (UTF-8 bytes; 25 KB loaded) hold for the whole text. When not every
    entry fits, the lowest-priority entries are left out whole and the text ends with
    ``- … N more memories not listed (see the <memory_folder>/ folder)``. Deterministic:
    the same entries in any order give the same text. Raises ``ValueError`` when the limits
    cannot hold even the header and that line.
    """
    ordered = sorted(memories, key=_priority_key)
    lines = {id(entry): _entry_line(entry) for entry in ordered}
    total = len(ordered)
    everything = _render(ordered, lines, 0, memory_folder)
    if _fits(everything, max_lines, max_bytes):
        return MemoryIndexLayout(everything)
    if not _fits(_render([], lines, total, memory_folder), max_lines, max_bytes):
        raise ValueError(
            f"MEMORY.md limits too small: {max_lines} lines / {max_bytes} bytes cannot hold "
            "the header and the left-out line"
        )
    # With the left-out line present the size grows with every kept entry: binary search.
    low, high = 0, total - 1
    while low < high:
        middle = (low + high + 1) // 2
        text = _render(ordered[:middle], lines, total - middle, memory_folder)
        if _fits(text, max_lines, max_bytes):
            low = middle
        else:
            high = middle - 1
    return MemoryIndexLayout(_render(ordered[:low], lines, total - low, memory_folder),
                             tuple(ordered[low:]))
