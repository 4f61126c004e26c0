"""Entries as memories: an entry file (:mod:`ccb.entries`) read as one note per entry.

Every engine past the file engine keys its rows by path, so each entry becomes a
:class:`~ccb.model.Note` of its own at the *entry path* ``<file path>#<key>``
(``Memory/facts.md#3f2a9c1d``; an attached root's ``claude:facts.md#3f2a9c1d``), with a
:class:`~ccb.model.MemoryMeta` built from its fields, and goes through the same indexing,
search, context and supersession rules as a memory file. The file itself stays a note of the
index with an empty body (its name, tags and links are kept; its text lives in its entries),
so a superseded fact is not found again through the file.

Mapping of the fields (the memory file's keys, DESIGN.md): ``subj`` → ``subject`` (also the
memory's description, so the subject's words are searched), ``vf`` → ``valid_from``, ``vt``
→ ``valid_to``, ``sup`` → ``supersedes`` (an entry path), ``conf`` → ``confidence``, ``hc`` →
``hit_count`` (shown, never used: recalls live in MAGMA); ``possible_duplicate`` /
``possible_contradiction`` (the key of a line ``remember`` kept this one apart from on a
guess, :data:`POSSIBLE_PAIR_KEYS`) → the same property, as that line's entry path;
``merged_into`` (:data:`MERGED_KEY`, written by a dream) → the same property and
``status: archived``. An
entry another entry names in ``sup`` is superseded: its ``valid_to`` is the successor's
``vf`` when it has none, else it gets ``status: superseded``. The memory type is the
entry's own ``type=`` pair, else the file's frontmatter ``entry_type``, else
:data:`DEFAULT_ENTRY_TYPE`; the owner is the file's ``owner``. An entry's ``content_hash``
is the SHA-256 of its own line (without the line ending) with the properties and tags
above: an edit of another line leaves it unchanged, unless that line supersedes it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from typing import cast

from ccb.entries import Entry, EntryFile, is_entry_file, parse_entry_file
from ccb.model import MEMORY_TYPES, MemoryMeta, MemoryType, Note, Problem, PropertyValue

__all__ = [
    "DEFAULT_ENTRY_TYPE",
    "ENTRY_TYPE_KEY",
    "MERGED_KEY",
    "POSSIBLE_PAIR_KEYS",
    "TITLE_MAX_CHARS",
    "entry_notes",
    "entry_path",
    "is_entry_note",
    "is_entry_path",
    "split_entry_path",
]

#: The memory type of an entry that names none (our choice: L3 facts, retrieved by search,
#: not resident in every context; ``entry_type: user`` makes a file's entries L1).
DEFAULT_ENTRY_TYPE: MemoryType = "project"
#: Comment keys of a line ``remember`` kept apart from another line of its file on a guess
#: (the memory file's property names); the value is that line's key.
POSSIBLE_PAIR_KEYS = ("possible_duplicate", "possible_contradiction")
#: Comment key of a line a dream merged into another memory (the memory file's property
#: name): that line's key in the same file, else the keeper's path. The line is archived.
MERGED_KEY = "merged_into"
_KEY_RE = re.compile(r"^[0-9a-f]{8}(?:-[0-9]+)?$")
#: The frontmatter key of an entry file that gives its entries' memory type.
ENTRY_TYPE_KEY = "entry_type"
#: An entry's title is its text cut to this many characters (our choice: a search hit line).
TITLE_MAX_CHARS = 80

_ENTRY_PATH_RE = re.compile(r"^(?P<file>.+\.md)#(?P<key>[0-9a-f]{8}(?:-[0-9]+)?)$",
                            re.IGNORECASE)


def entry_path(file_path: str, key: str) -> str:
    """The path an entry is indexed and addressed under: ``file_path#key``."""
    return f"{file_path}#{key}"


def split_entry_path(path: str) -> tuple[str, str] | None:
    """``(file path, key)`` of an entry path, or None for the path of a file."""
    match = _ENTRY_PATH_RE.match(path)
    return (match.group("file"), match.group("key")) if match else None


def is_entry_path(path: str) -> bool:
    """True when ``path`` is an entry's path (``…​.md#<key>``), not a file's."""
    return _ENTRY_PATH_RE.match(path) is not None


def is_entry_note(note: Note, *, in_scope: bool) -> bool:
    """Whether ``note`` is read as an entry file (:func:`ccb.entries.is_entry_file`)."""
    return note.memory is None and is_entry_file(note.path, note.properties, note.body,
                                                 in_scope=in_scope)


def _memory_type(entry: Entry, properties: dict[str, PropertyValue]) -> MemoryType:
    for value in (entry.fields.get("type"), properties.get(ENTRY_TYPE_KEY)):
        if isinstance(value, str) and value.strip().casefold() in MEMORY_TYPES:
            return cast(MemoryType, value.strip().casefold())
    return DEFAULT_ENTRY_TYPE


def _entry_note(note: Note, entry_file: EntryFile, entry: Entry,
                successors: dict[str, Entry]) -> Note:
    fields = entry.fields
    path = entry_path(note.path, entry.key)
    title = entry.text if len(entry.text) <= TITLE_MAX_CHARS else (
        entry.text[: TITLE_MAX_CHARS - 1].rstrip() + "…")
    properties: dict[str, PropertyValue] = {
        "type": _memory_type(entry, dict(note.properties)), "name": title,
        "entry_of": note.path, "entry_key": entry.key}
    valid_to = fields.vt
    successor = successors.get(entry.key)
    if successor is not None:
        properties["superseded_by"] = entry_path(note.path, successor.key)
        if valid_to is None:
            valid_to = successor.fields.vf
            if valid_to is None:
                properties["status"] = "superseded"
    named = {"subject": fields.subj, "valid_from": fields.vf, "valid_to": valid_to,
             "supersedes": entry_path(note.path, fields.sup) if fields.sup else None,
             "confidence": fields.conf, "hit_count": fields.hc,
             "owner": note.properties.get("owner")}
    properties.update({k: v for k, v in named.items() if v is not None})
    merged = (fields.get(MERGED_KEY) or "").strip()
    if merged:  # a dream merged this line into another memory: archived
        properties[MERGED_KEY] = entry_path(note.path, merged) if _KEY_RE.match(merged) \
            else merged
        properties["status"] = "archived"
    for kind in POSSIBLE_PAIR_KEYS:  # an unsure pair (remember): the other line's path
        other = fields.get(kind)
        if other and other.strip() and other.strip() != entry.key:
            properties[kind] = entry_path(note.path, other.strip())
    # what the row is made of: the line, and what other lines and the frontmatter add
    made_of = json.dumps([entry_file.lines[entry.line].rstrip("\r\n"), properties,
                          list(note.tags)], default=str, ensure_ascii=False, sort_keys=True)
    memory = MemoryMeta(
        type=cast(MemoryType, properties["type"]), name=title, description=fields.subj or "",
        subject=fields.subj, valid_from=fields.vf, valid_to=valid_to,
        supersedes=(entry_path(note.path, fields.sup),) if fields.sup else (),
        owner=_text(note.properties.get("owner")),
        status=_text(properties.get("status")), source="entry")
    return Note(path=path, title=title, body=entry.text,
                content_hash=hashlib.sha256(made_of.encode("utf-8")).hexdigest(),
                properties=properties, memory=memory, tags=note.tags,
                line_ending=note.line_ending)


def _text(value: PropertyValue) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def entry_notes(note: Note, data: bytes) -> tuple[Note, tuple[Note, ...], tuple[Problem, ...]]:
    """Read entry file ``note`` (its bytes ``data``) as ``(file note, entry notes, problems)``.

    The file note is ``note`` with an empty body (no headings, links kept); each entry note
    is at its entry path (module docstring), in file order. ``problems`` are the entries'
    metadata that did not read (``kind="entry"``, located ``path:line``). Never raises.
    """
    entry_file = parse_entry_file(note.path, data, note.properties)
    by_key = {e.key: e for e in entry_file.entries}
    successors: dict[str, Entry] = {}
    for entry in entry_file.entries:
        sup = entry.fields.sup
        if sup and sup in by_key and sup != entry.key:
            successors.setdefault(sup, entry)
    entries = tuple(_entry_note(note, entry_file, e, successors) for e in entry_file.entries)
    return replace(note, body="", headings=()), entries, entry_file.problems
