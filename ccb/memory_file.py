"""Memory files in DESIGN.md's format: file names, new files, normalised content hashes.

Pure: no I/O, no clock (times and ids come from the caller).

- :func:`slugify` / :func:`memory_path` — the file name of a memory (a lower-case slug of its
  name, like Claude Code's ``tests-hit-a-real-database.md``) and a free path for it.
- :func:`render_memory` — the bytes of a new memory file (:class:`NewMemory`).
- :func:`content_hash_normalised` — the hash used for exact-duplicate detection.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass

from ccb.frontmatter_edit import set_properties
from ccb.model import MEMORY_TYPES, MemoryType, PropertyValue
from ccb.names import nfc_key

__all__ = [
    "MAX_SLUG_BYTES",
    "RESERVED_FILE_NAMES",
    "NewMemory",
    "clean_text",
    "content_hash_normalised",
    "memory_path",
    "normalise_text",
    "render_memory",
    "slugify",
]

#: Longest slug in UTF-8 bytes: leaves room for a ``-NN`` suffix, ``.md`` and a folder under
#: the 255-byte file-name limit of ext4/APFS/NTFS, and keeps links readable.
MAX_SLUG_BYTES = 100

#: Files dreamd itself keeps in the memory folder (DESIGN.md, "Files and formats"); a memory
#: never takes these names, whatever the case.
RESERVED_FILE_NAMES: frozenset[str] = frozenset({"memory.md", "dreams.md"})

# Windows device names, reserved with any extension (Microsoft, "Naming Files, Paths, and
# Namespaces"); superscript digits included.
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"{dev}{n}" for dev in ("com", "lpt") for n in [*"123456789", "¹", "²", "³"]}
)
_DROPPED = frozenset("'’‘`´")  # apostrophes vanish: "don't" -> "dont"
_FALLBACK_SLUG = "memory"
# Characters a wikilink target cannot hold (Obsidian: ``[[a|b]]``, ``#heading``, ``^block``).
_UNLINKABLE_RE = re.compile(r"[\[\]|#^\r\n]")


def _slug_char(char: str) -> str:
    if char in _DROPPED:
        return ""
    category = unicodedata.category(char)
    if category[0] in "LNM" or char == "_":
        return char
    return "-"


def _truncate_utf8(text: str, max_bytes: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


def slugify(name: str, *, max_bytes: int = MAX_SLUG_BYTES) -> str:
    """A file stem for a memory named ``name``: ``"Tests hit a DB!"`` → ``tests-hit-a-db``.

    NFKC, lower-case; letters, digits and combining marks of every script are kept (``测试``
    stays; a mark is kept only on a letter or digit), ``_`` too; apostrophes are dropped;
    every other character (spaces, punctuation, the characters Windows/macOS/Linux forbid
    ``\\/:*?"<>|``, Obsidian's link characters ``#^[]|``, control characters, dots)
    becomes ``-``; runs of ``-`` collapse and none is left at either end, so there is never
    a leading dot or a trailing dot/space. At most
    ``max_bytes`` UTF-8 bytes (cut at a character boundary). A Windows device name (``con``,
    ``nul``, ``com1`` ...) gets ``-memory`` appended; an empty result is ``memory``.
    """
    text = unicodedata.normalize("NFKC", name).lower()
    chars: list[str] = []
    for c in text:
        piece = _slug_char(c)
        if piece and unicodedata.category(c)[0] == "M" and (
                not chars or not chars[-1] or unicodedata.category(chars[-1][-1])[0] not in "LNM"):
            piece = ""  # a mark with nothing to mark ("❤️": the emoji's variation selector)
        chars.append(piece)
    slug = re.sub(r"-{2,}", "-", "".join(chars)).strip("-_")
    cut = _truncate_utf8(slug, max_bytes)
    if cut != slug and slug[len(cut)] not in "-_" and "-" in cut[len(cut) // 2:]:
        cut = cut[: cut.rindex("-")]  # never a word or a number cut in two ("port-80" of 8080)
    slug = cut.rstrip("-_")
    if not slug:
        return _FALLBACK_SLUG
    if slug in _WINDOWS_RESERVED:
        slug = f"{slug}-{_FALLBACK_SLUG}"
    return slug


def memory_path(folder_files: Collection[str], memory_folder: str, name: str) -> str:
    """A free vault-relative path ``<memory_folder>/<slug>.md`` for a memory named ``name``.

    ``folder_files`` are the vault-relative paths of existing files (bare file names count
    as files of ``memory_folder``). A name taken case-insensitively or in another Unicode
    normalisation (macOS and Windows file systems fold case, macOS folds NFC/NFD: a slug
    must not land beside a decomposed ``crème.md``), or ``MEMORY.md``/``DREAMS.md``, gets
    ``-2``, ``-3`` … appended; the slug is shortened so that stem and suffix stay within
    :data:`MAX_SLUG_BYTES`.
    ``memory_folder`` ``""`` means the vault root.
    """
    folder = memory_folder.strip("/")
    prefix = f"{folder}/" if folder else ""
    taken = {nfc_key(entry if "/" in entry else prefix + entry).casefold()
             for entry in folder_files}
    taken |= {(prefix + reserved).casefold() for reserved in RESERVED_FILE_NAMES}
    base = slugify(name)
    counter = 1
    while True:
        suffix = "" if counter == 1 else f"-{counter}"
        stem = _truncate_utf8(base, MAX_SLUG_BYTES - len(suffix)).rstrip("-_") or _FALLBACK_SLUG
        candidate = f"{prefix}{stem}{suffix}.md"
        if nfc_key(candidate).casefold() not in taken:
            return candidate
        counter += 1


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A memory to be written as a new file (DESIGN.md's memory file format).

    ``id`` is a ULID string; ``created``/``updated`` timezone-aware datetimes (written in UTC,
    ``2026-06-15T03:01:00Z``); ``valid_from``/``valid_to``/``expires`` dates or aware
    datetimes. ``supersedes`` holds link targets of superseded memories — their file stems
    (``"tests-may-use-mocks"``), since Obsidian links resolve by file name, never by
    ``name:`` — written as ``"[[target]]"`` links. ``owner`` is one string
    ``"<user>/<agent>"`` (e.g. ``"alice/claude-code"``), the shape
    :class:`ccb.model.MemoryMeta` reads back. ``source`` is user | assistant | dream |
    import. ``body`` is markdown (What / Why / How to apply).
    """

    name: str
    description: str
    type: MemoryType
    id: str
    created: dt.datetime
    updated: dt.datetime
    body: str = ""
    version: int = 1
    subject: str | None = None
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None
    supersedes: tuple[str, ...] = ()
    pinned: bool = False
    expires: dt.date | None = None
    source: str | None = None
    owner: str | None = None
    #: File stems of the memories this one was derived from (a synthesis's sources), written
    #: as ``"[[target]]"`` links after ``supersedes``, only when there are any.
    derived_from: tuple[str, ...] = ()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _utc(value: dt.datetime, field: str) -> dt.datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"memory {field} must be timezone-aware, got {value!r}")
    return value.astimezone(dt.UTC)


def _when(value: dt.date | None, field: str) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return _utc(value, field)
    return value


def _link_list(key: str, targets: tuple[str, ...]) -> PropertyValue:
    """``targets`` as a property of wikilinks: ``None`` (none), one link, or a list."""
    for target in targets:
        if not target.strip() or _UNLINKABLE_RE.search(target):
            raise ValueError(f"memory {key}: {target!r} is not a link target")
    links: list[PropertyValue] = [f"[[{target}]]" for target in targets]
    return None if not links else links[0] if len(links) == 1 else links


def render_memory(meta: NewMemory) -> bytes:
    """The UTF-8 bytes (``\\n`` line endings) of a new memory file for ``meta``.

    Keys in DESIGN.md's order: name, description, type, id, created, updated, version,
    subject, valid_from, valid_to, supersedes, pinned, expires, source, owner. Every key is
    written, empty ones as ``key:`` (Obsidian's empty property), so a user editing the file
    sees the whole schema; ``derived_from`` (after ``supersedes``) only when it has links.
    ``name`` and ``description`` are collapsed to one line; the body follows the closing
    fence and ends with a newline (an empty body stays empty).
    Values are quoted only when needed (:func:`ccb.frontmatter_edit.render_scalar`).

    Raises ``ValueError`` for an unknown type, an empty name or id, a version below 1, a
    naive ``created``/``updated``/date-time value, or a ``supersedes`` or ``derived_from``
    target that is empty or holds a character Obsidian cannot link to (``[ ] | # ^``, line
    breaks).
    """
    if meta.type not in MEMORY_TYPES:
        raise ValueError(f"memory type must be one of {MEMORY_TYPES}, got {meta.type!r}")
    name = _one_line(meta.name)
    if not name or not meta.id.strip():
        raise ValueError("a memory needs a name and an id")
    if meta.version < 1:
        raise ValueError(f"memory version starts at 1, got {meta.version}")
    supersedes = _link_list("supersedes", meta.supersedes)
    properties: dict[str, PropertyValue] = {
        "name": name,
        "description": _one_line(meta.description) or None,
        "type": meta.type,
        "id": meta.id.strip(),
        "created": _utc(meta.created, "created"),
        "updated": _utc(meta.updated, "updated"),
        "version": meta.version,
        "subject": meta.subject or None,
        "valid_from": _when(meta.valid_from, "valid_from"),
        "valid_to": _when(meta.valid_to, "valid_to"),
        "supersedes": supersedes,
        **({"derived_from": _link_list("derived_from", meta.derived_from)}
           if meta.derived_from else {}),
        "pinned": meta.pinned,
        "expires": _when(meta.expires, "expires"),
        "source": meta.source or None,
        "owner": meta.owner or None,
    }
    header = set_properties(b"---\n---\n", properties, path=f"<new memory {name!r}>")
    body = meta.body.replace("\r\n", "\n").replace("\r", "\n")
    if body and not body.endswith("\n"):
        body += "\n"
    return header + body.encode("utf-8")


# Emphasis and code markers: *, ~~, ` anywhere; _ only at a word's edge (snake_case survives).
_QUOTES = str.maketrans({"‘": "'", "’": "'", "ʼ": "'", "“": '"', "”": '"', "「": '"', "」": '"'})
_EMPHASIS_RE = re.compile(r"\*+|~~|`+|(?<![0-9A-Za-z])_+|_+(?![0-9A-Za-z])")
_WHITESPACE_RE = re.compile(r"\s+")
_TRAILING_PUNCT_RE = re.compile(r"[\s.,;:!?。，；：！？…、]+$")


def normalise_text(text: str) -> str:
    """The comparison form of a memory's text, for exact-duplicate detection. Idempotent.

    In order: Unicode NFKC (full-width → ASCII, ligatures split); case-fold; curly quotes made
    straight; markdown emphasis/code markers removed (``*``, ``~~``, backticks, and ``_`` at a
    word's edge — ``snake_case`` keeps its ``_``); every run of whitespace becomes one space;
    trailing sentence punctuation (ASCII and CJK) stripped. So ``"Use **real** DBs."`` and
    ``"use real   DBs"`` compare equal; ``"use real DBs"`` and ``"use mock DBs"`` do not.
    """
    collapsed = _WHITESPACE_RE.sub(" ", clean_text(text)).strip()
    return _TRAILING_PUNCT_RE.sub("", collapsed)


def clean_text(text: str) -> str:
    """:func:`normalise_text` without the whitespace and punctuation steps (line breaks and
    spacing kept, for aligning two texts word by word)."""
    cleaned = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
    return _EMPHASIS_RE.sub("", cleaned)


def content_hash_normalised(text: str) -> str:
    """SHA-256 hex digest (64 hex characters) of :func:`normalise_text` of ``text``, UTF-8."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()
