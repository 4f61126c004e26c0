"""Typed values of the file engine: notes, links, headings, memory metadata, scan entries.

Everything past :func:`ccb.parse.parse_note` sees these frozen dataclasses, never a raw YAML
dict. Paths are vault-relative POSIX strings (``"Projects/Kiln.md"``), the same on every
platform, and are the key every engine uses for a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal, TypeAlias

__all__ = [
    "DIARY_FILE",
    "EMBED_KINDS",
    "GENERATED_FILES",
    "MEMORY_INDEX_FILE",
    "MEMORY_TYPES",
    "PATH_KEY_PREFIX",
    "PATH_LINK_KINDS",
    "SKIPPED_KINDS",
    "ConflictCopy",
    "FileEntry",
    "FileKind",
    "Heading",
    "Link",
    "LinkKind",
    "MemoryMeta",
    "MemoryType",
    "Note",
    "Problem",
    "PropertyValue",
    "ScanResult",
    "memory_key",
]

#: A normalised frontmatter value: what the user typed, as Obsidian reads it (YAML 1.2-ish:
#: only ``true``/``false`` are booleans; ``NO``, ``on``, ``007``, ``12:30`` stay text;
#: dates and date-times keep their kind and UTC offset).
PropertyValue: TypeAlias = (
    str
    | int
    | float
    | bool
    | date
    | datetime
    | list["PropertyValue"]
    | dict[str, "PropertyValue"]
    | None
)

MemoryType = Literal["user", "feedback", "project", "reference"]
MEMORY_TYPES: tuple[MemoryType, ...] = ("user", "feedback", "project", "reference")

#: The memory index dreamd generates in the memory folder (Claude Code's name for it).
MEMORY_INDEX_FILE = "MEMORY.md"
#: The dream diary dreamd appends to in the memory folder.
DIARY_FILE = "DREAMS.md"
#: Files of the memory folder dreamd writes itself: never memories, never deduplicated.
GENERATED_FILES = frozenset({MEMORY_INDEX_FILE, DIARY_FILE})

#: The key prefix of a memory file written without an ``id``: its history follows the path.
PATH_KEY_PREFIX = "path:"
#: :attr:`Problem.kind` of a file the vault walk leaves out whole without opening it (a
#: symlink out of the vault, broken, a loop or a second name of a note; a FIFO, socket or
#: device): reports list these as skipped, apart from files read with a problem.
SKIPPED_KINDS = frozenset({"symlink", "skipped"})


def memory_key(memory_id: str | None, path: str) -> str:
    """The key a memory's versions, conflicts and dream records are kept under: its ``id``,
    else ``path:<vault path>`` (a memory file without one; its history then follows the path,
    not renames)."""
    return memory_id or f"{PATH_KEY_PREFIX}{path}"

#: How a note links: ``[[x]]``, ``![[x]]``, ``[t](x)``, ``![t](x)`` (a markdown target is a
#: path, relative to the linking note first; a wikilink's is a name or a path from the root).
LinkKind = Literal["wikilink", "embed", "markdown", "markdown-embed"]
#: The kinds that embed what they link (Obsidian shows it inline).
EMBED_KINDS: frozenset[str] = frozenset({"embed", "markdown-embed"})
#: The kinds whose target is a path read from the linking note's folder first.
PATH_LINK_KINDS: frozenset[str] = frozenset({"markdown", "markdown-embed"})
FileKind = Literal["note", "attachment"]


@dataclass(frozen=True, slots=True)
class Heading:
    """A markdown heading (ATX ``#`` or setext) of a note body.

    ``line`` is the 0-based line index in :attr:`Note.body`; ``level`` is 1–6.
    """

    level: int
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class Link:
    """A link found in a note body or in a frontmatter property.

    ``target`` is the path part as written, without ``#subpath`` or ``|display``
    (``"Note"``, ``"folder/Note.md"``, ``"image.png"``); empty for a same-note link
    (``[[#Heading]]``). ``subpath`` is the heading (``"Heading"``) or block id (``"^abc"``),
    ``display`` the alias text after ``|`` or the markdown link text. ``line`` is the 0-based
    body line, or -1 for a link inside a property.
    """

    target: str
    kind: LinkKind
    subpath: str | None = None
    display: str | None = None
    line: int = -1

    @property
    def is_block_ref(self) -> bool:
        """True for ``[[Note#^block]]`` links."""
        return self.subpath is not None and self.subpath.startswith("^")


@dataclass(frozen=True, slots=True)
class MemoryMeta:
    """The memory part of a memory file (``type: user|feedback|project|reference``).

    Fields follow DESIGN.md's memory file format; absent keys are ``None`` (or the stated
    default). ``supersedes`` holds link targets (``"Tests may use mocks"``) as written.
    """

    type: MemoryType
    name: str
    description: str = ""
    id: str | None = None
    subject: str | None = None
    created: datetime | date | None = None
    updated: datetime | date | None = None
    version: int | None = None
    valid_from: datetime | date | None = None
    valid_to: datetime | date | None = None
    supersedes: tuple[str, ...] = ()
    pinned: bool = False
    expires: datetime | date | None = None
    source: str | None = None
    owner: str | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """Something dreamd could not do with a file, with a human-readable reason.

    ``kind`` is a short machine tag: ``"yaml"`` (frontmatter does not parse; body indexed as
    text), ``"properties"`` (block is a list/scalar, not a mapping), ``"decode"`` (not UTF-8;
    not indexed), ``"read"`` (I/O error), ``"symlink"`` (points out of the vault, is broken
    or a loop, or is a second name for a file indexed under its own path; skipped),
    ``"skipped"`` (a FIFO, socket or device: never opened),
    ``"memory"`` (memory keys present but unusable), ``"size"`` (body cut at
    ``sync.max_note_chars``), ``"root"`` (an extra root could not be walked; its index kept),
    ``"credential"`` (a credential written by hand: withheld from the index, reported by line).
    """

    path: str
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class Note:
    """One parsed markdown note.

    ``body`` is the decoded text after the frontmatter block, with line endings normalised to
    ``\\n`` (a BOM is stripped). ``frontmatter_raw`` is the exact text between the fences as
    it is in the file (``None`` when the file has no block), kept for display and minimal
    edits. ``content_hash`` is the SHA-256 hex digest of the file's raw bytes.
    ``problems`` lists what went wrong while parsing; a note with problems is still indexed
    (as body text) and never modified.
    """

    path: str
    title: str
    body: str
    content_hash: str
    properties: Mapping[str, PropertyValue] = field(default_factory=dict)
    frontmatter_raw: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    headings: tuple[Heading, ...] = ()
    memory: MemoryMeta | None = None
    problems: tuple[Problem, ...] = ()
    has_bom: bool = False
    line_ending: Literal["\n", "\r\n"] = "\n"
    #: Text encoding of the file (a UTF-16 file has a BOM); writers keep it.
    encoding: Literal["utf-8", "utf-16-le", "utf-16-be"] = "utf-8"


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file the vault scan keeps: vault-relative path, size in bytes, mtime in ns, kind."""

    path: str
    size: int
    mtime_ns: int
    kind: FileKind


@dataclass(frozen=True, slots=True)
class ConflictCopy:
    """A sync tool's conflict copy (never indexed, never edited) and the note it copies."""

    path: str
    conflict_of: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What one vault walk found: kept files, conflict copies, and problems (e.g. symlinks)."""

    entries: tuple[FileEntry, ...]
    conflict_copies: tuple[ConflictCopy, ...] = ()
    problems: tuple[Problem, ...] = ()
