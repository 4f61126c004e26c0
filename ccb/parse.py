"""Parse one note's bytes into a :class:`ccb.model.Note` (pure: no I/O, no clock).

This is the boundary of CONVENTIONS.md rule 9: nothing past :func:`parse_note` sees a raw
YAML dict. Parsing never raises on any input; what goes wrong becomes a
:class:`ccb.model.Problem` on the note, and the note is still indexed as body text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Literal, TypeVar

from ccb.dates import as_date
from ccb.frontmatter import load_properties, split_frontmatter
from ccb.markdown import (
    extract_aliases,
    extract_headings,
    extract_links,
    extract_property_links,
    extract_tags,
    mask_code_and_comments,
    mask_code_and_html_comments,
)
from ccb.model import (
    MEMORY_TYPES,
    Heading,
    Link,
    MemoryMeta,
    MemoryType,
    Note,
    Problem,
    PropertyValue,
)
from ccb.names import nfc_key

__all__ = [
    "decode_note_bytes",
    "detect_conflict_copy",
    "memory_meta",
    "parse_note",
]

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_LE_BOM = b"\xff\xfe"
_UTF16_BE_BOM = b"\xfe\xff"

Encoding = Literal["utf-8", "utf-16-le", "utf-16-be"]
_T = TypeVar("_T")


def decode_note_bytes(data: bytes, path: str) -> tuple[str, bool, Encoding, tuple[Problem, ...]]:
    """Decode a note's bytes: ``(text, has_bom, encoding, problems)``.

    UTF-8 (a BOM is stripped, ``has_bom=True``); UTF-16 with a BOM (LE or BE); anything else
    that is not valid UTF-8 is decoded with U+FFFD replacements and reported as
    ``Problem(kind="decode")`` — the note is still indexed as text.
    """
    encoding: Encoding
    if data.startswith(_UTF8_BOM):
        payload, has_bom, encoding = data[3:], True, "utf-8"
    elif data.startswith(_UTF16_LE_BOM):
        payload, has_bom, encoding = data[2:], True, "utf-16-le"
    elif data.startswith(_UTF16_BE_BOM):
        payload, has_bom, encoding = data[2:], True, "utf-16-be"
    else:
        payload, has_bom, encoding = data, False, "utf-8"
    codec: str = encoding
    try:
        return payload.decode(codec), has_bom, encoding, ()
    except UnicodeDecodeError as exc:
        reason = (
            f"not valid {codec.upper()} at byte {exc.start + (len(data) - len(payload))}: "
            f"{exc.reason}; decoded with replacement characters"
        )
        text = payload.decode(codec, errors="replace")
        return text, has_bom, encoding, (Problem(path=path, kind="decode", reason=reason),)


def _dominant_line_ending(text: str) -> Literal["\n", "\r\n"]:
    crlf = text.count("\r\n")
    lone_lf = text.count("\n") - crlf
    return "\r\n" if crlf > lone_lf else "\n"


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --------------------------------------------------------------------------- memory


def _lookup(properties: Mapping[str, PropertyValue], key: str) -> PropertyValue:
    """A memory key at top level, else under ``metadata:`` (newer Claude Code shape)."""
    if key in properties and properties[key] is not None:
        return properties[key]
    nested = properties.get("metadata")
    if isinstance(nested, dict):
        return nested.get(key)
    return None


def _memory_type(properties: Mapping[str, PropertyValue]) -> MemoryType | None:
    for value in (properties.get("type"), _nested(properties, "type")):
        if isinstance(value, str):
            lowered = value.strip().lower()
            for memory_type in MEMORY_TYPES:
                if lowered == memory_type:
                    return memory_type
    return None


def _nested(properties: Mapping[str, PropertyValue], key: str) -> PropertyValue:
    nested = properties.get("metadata")
    return nested.get(key) if isinstance(nested, dict) else None


def _as_date(value: PropertyValue) -> dt.datetime | dt.date | None:
    """Lenient date: ``date``/``datetime`` as is, ISO text (``Z`` allowed, space or ``T``),
    else the leading ``YYYY-MM-DD`` of the text as :func:`ccb.dates.as_date` reads it
    (``2026-06-01 (moved)`` is the 1st): every reader of a memory's days agrees on them."""
    if value is None or isinstance(value, dt.datetime | dt.date):
        return value
    if isinstance(value, str):
        text = value.strip().strip("\"'")
        if not text:
            return None
        try:
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                return dt.date.fromisoformat(text)
            return dt.datetime.fromisoformat(text)
        except ValueError:
            day = as_date(text)
            if day is not None:
                return day
    raise ValueError(f"cannot read {value!r} as a date")


def _as_int(value: PropertyValue) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"cannot read {value!r} as a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise ValueError(f"cannot read {value!r} as a whole number")


_TRUE_WORDS = frozenset({"true", "yes", "on", "y", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "n", "0", ""})


def _as_bool(value: PropertyValue) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise ValueError(f"cannot read {value!r} as true/false")


def _as_owner(value: PropertyValue) -> str | None:
    """An ``owner`` value: text as is; anything else (a list, a mapping) becomes a marker
    no reader's owner matches (``ccb.owner``), so the memory is visible to the vault only."""
    if isinstance(value, list | dict):
        return "!" + json.dumps(value, default=str, ensure_ascii=False)
    return _as_text(value)


def _as_text(value: PropertyValue) -> str | None:
    if value is None:
        return None
    if isinstance(value, list | dict):
        raise ValueError(f"expected text, found {type(value).__name__}")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip()
    return text or None


_LINK_TARGET_RE = re.compile(r"^!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]$")


def _link_target(text: str) -> str:
    """``"[[X|alias]]"`` → ``"X"``; plain text is kept (stripped)."""
    stripped = text.strip()
    match = _LINK_TARGET_RE.match(stripped)
    return match.group(1).strip() if match else stripped


def _as_targets(value: PropertyValue) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    targets: list[str] = []
    for item in items:
        text = _as_text(item)
        if text:
            target = _link_target(text)
            if target:
                targets.append(target)
    return tuple(targets)


def memory_meta(
    properties: Mapping[str, PropertyValue], title: str, path: str
) -> tuple[MemoryMeta | None, tuple[Problem, ...]]:
    """The memory part of a note, or ``(None, ())`` when it is not a memory file.

    A memory has ``type`` in user|feedback|project|reference at top level or under
    ``metadata:``. Keys follow DESIGN.md's memory format and are looked up at top level, then
    under ``metadata:``. ``name`` defaults to ``title``. A value that cannot be read is left
    at its default and reported as ``Problem(kind="memory")``; the note still parses.
    """
    memory_type = _memory_type(properties)
    if memory_type is None:
        return None, ()
    problems: list[Problem] = []

    def read(key: str, convert: Callable[[PropertyValue], _T | None], default: _T) -> _T:
        try:
            result = convert(_lookup(properties, key))
        except ValueError as exc:
            problems.append(Problem(path=path, kind="memory", reason=f"memory key {key!r}: {exc}"))
            return default
        return default if result is None else result

    meta = MemoryMeta(
        type=memory_type,
        name=read("name", _as_text, title),
        description=read("description", _as_text, ""),
        id=read("id", _as_text, None),
        subject=read("subject", _as_text, None),
        created=read("created", _as_date, None),
        updated=read("updated", _as_date, None),
        version=read("version", _as_int, None),
        valid_from=read("valid_from", _as_date, None),
        valid_to=read("valid_to", _as_date, None),
        supersedes=read("supersedes", _as_targets, ()),
        pinned=read("pinned", _as_bool, False),
        expires=read("expires", _as_date, None),
        source=read("source", _as_text, None),
        # an owner that cannot be read must hide the memory, never share it: "!" marks it
        owner=read("owner", _as_owner, None),
        status=read("status", _as_text, None),
    )
    return meta, tuple(problems)


# --------------------------------------------------------------------------- conflict copies

# Syncthing: ``<stem>.sync-conflict-YYYYMMDD-HHMMSS-<DEVICE><ext>`` (docs.syncthing.net,
# "Conflicting Changes"). Obsidian Sync: ``Name (Conflicted copy DEVICE YYYYMMDDHHMM).md``
# (Obsidian Help, "Troubleshoot Obsidian Sync"). Dropbox: ``Name (Device's conflicted copy
# YYYY-MM-DD).ext``.
_SYNCTHING_RE = re.compile(
    r"^(?P<stem>.+?)\.sync-conflict-\d{8}-\d{6}-[A-Za-z0-9]+(?P<ext>\.[^.]*)?$"
)
# dreamd's own conflict copies (ccb.writer): ``<stem>.conflict[N]-YYYYMMDD-HHMMSS<ext>``.
_DREAMD_RE = re.compile(r"^(?P<stem>.+?)\.conflict\d*-\d{8}-\d{6}(?P<ext>\.[^.]*)?$")
_OBSIDIAN_SYNC_RE = re.compile(
    r"^(?P<stem>.+?) \((?i:conflicted copy) .+ \d{12}\)(?P<ext>\.[^.]*)?$"
)
_DROPBOX_RE = re.compile(
    r"^(?P<stem>.+?) \(.+'s (?i:conflicted copy) \d{4}-\d{2}-\d{2}(?: \(\d+\))?\)(?P<ext>\.[^.]*)?$"
)


def detect_conflict_copy(path: str) -> str | None:
    """The original's vault path when ``path`` names a sync tool's conflict copy, else None.

    ``"A/Reading list.sync-conflict-20240305-184500-ABCDEF1.md"`` → ``"A/Reading list.md"``;
    ``"Meeting notes (Conflicted copy Laptop2 202403051845).md"`` → ``"Meeting notes.md"``;
    dreamd's own ``"Memory/x.conflict-20261130-101500.md"`` → ``"Memory/x.md"``.
    """
    folder, _, name = path.rpartition("/")
    if "onflict" not in name:
        return None
    for pattern in (_SYNCTHING_RE, _DREAMD_RE, _OBSIDIAN_SYNC_RE, _DROPBOX_RE):
        match = pattern.match(name)
        if match:
            original = match.group("stem") + (match.group("ext") or "")
            return f"{folder}/{original}" if folder else original
    return None


# --------------------------------------------------------------------------- note


def _posix_stem(path: str) -> str:
    """``PurePosixPath(path).stem``, read off the string: the last component (empty ones and
    ``.`` are none) without its last suffix. Every note a dream or a sync reads is named by
    it; building the path object took a tenth of parsing a memory file's properties and
    body (cProfile, the planted 10,000 memories of ``bench/dream_bench.py``)."""
    name = next((part for part in reversed(path.split("/")) if part and part != "."), "")
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name



def parse_note(path: str, data: bytes, *, markdown: bool = True) -> Note:
    """Parse the raw bytes of the note at vault-relative POSIX ``path`` into a :class:`Note`.

    ``title`` is the file stem in NFC (:func:`ccb.names.nfc_key`: a name a Mac stored
    decomposed reads as typed; ``path`` stays as stored); ``content_hash`` the SHA-256 hex
    digest of ``data``; ``line_ending`` the dominant one of the file; ``body`` has ``\\n``
    line endings. Links come from the body (0-based body lines) and from property values
    (line -1). ``markdown=False``: the body's markdown is not read — ``tags``, ``links`` and
    ``headings`` are empty, all else as with it (a reader of a memory's properties and body
    alone, such as a dream: a quarter of the time of parsing a memory file). Never raises.
    """
    content_hash = hashlib.sha256(data).hexdigest()
    title = nfc_key(_posix_stem(path))
    text, has_bom, encoding, problems = decode_note_bytes(data, path)
    split = split_frontmatter(text)
    properties, property_problems = load_properties(split.raw, path)
    body = _normalise_newlines(split.body)
    memory, memory_problems = memory_meta(properties, title, path)
    tags, links, headings = _outline(properties, body) if markdown else ((), (), ())
    return Note(
        path=path,
        title=title,
        body=body,
        content_hash=content_hash,
        properties=properties,
        frontmatter_raw=split.raw,
        tags=tags,
        aliases=extract_aliases(properties),
        links=links,
        headings=headings,
        memory=memory,
        problems=problems + property_problems + memory_problems,
        has_bom=has_bom,
        line_ending=_dominant_line_ending(text),
        encoding=encoding,
    )


def _outline(properties: Mapping[str, PropertyValue], body: str
             ) -> tuple[tuple[str, ...], tuple[Link, ...], tuple[Heading, ...]]:
    """The tags, links and headings of a note (:func:`parse_note`)."""
    masked = mask_code_and_comments(body)  # a heading in an Obsidian comment is none
    readable = mask_code_and_html_comments(body)  # a link or tag in one is (ccb.markdown)
    links = extract_property_links(properties) + extract_links(body, masked=readable)
    return (extract_tags(properties, body, masked=readable), links,
            extract_headings(body, masked=masked))
