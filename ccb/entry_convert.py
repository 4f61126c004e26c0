"""Converting between entry files (:mod:`ccb.entries`) and memory files, losslessly.

``dreamd export --format files`` turns each entry into a memory file
(:func:`entries_to_memories`); ``--format entries`` turns memory files into entry files
(:func:`memories_to_entries`); ``dreamd import`` does either into the memory folder.

**Entries → memory files.** Entry ``n`` (1-based) of ``facts.md`` becomes
``facts/<nnnn>-<slug of its text>.md`` (:func:`ccb.memory_file.render_memory`): name = the
text (cut to :data:`ccb.entry_notes.TITLE_MAX_CHARS`), description and body = the text,
``subject``/``valid_from``/``valid_to`` from ``subj``/``vf``/``vt``, ``supersedes`` the
memory of the ``sup`` entry, ``id`` a ULID derived from ``facts.md#key`` (the same on every
export), ``created`` = ``updated`` = ``vf`` (midnight UTC), else the export's ``now``,
``source: import``. Two more keys keep what the memory format has no place for:
``entry: facts.md#key`` and ``entry_meta:`` the comment as written (absent for a line
without one). The type is the entry's ``type=`` pair, else the file's ``entry_type``, else
:data:`ccb.entry_notes.DEFAULT_ENTRY_TYPE`.

**Memory files → entries.** A memory with an ``entry:`` key goes back to its file and
line: ``- <body> <!--m:<entry_meta>-->``, with ``subj``/``vf``/``vt`` updated in place when
the memory file's ``subject``/``valid_from``/``valid_to`` were edited. Any other memory goes
to ``<type>.md`` as one line whose comment carries what the memory file holds
(``type id name desc cr up ver pin exp src own sup body``; ``name``, ``desc`` and ``body``
only when they differ from the text, which is the body's first line).

**Lossless, and checked.** An entry file dreamd writes (``---\\ntype: entries\\n---\\n``, then
``- text <!--m:…-->`` lines) survives entries → files → entries byte for byte, and a memory
file :func:`~ccb.memory_file.render_memory` wrote survives files → entries → files. Each
conversion converts its result back and compares; what would not come back the same (a
heading in an entry file, a property the memory format does not know, an edit by hand) is
converted all the same and named in :attr:`Converted.lossy` with the reason.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import cast

from ulid import ULID

from ccb.entries import (
    ENTRIES_TYPE,
    Entry,
    EntryFile,
    parse_entry_file,
    parse_fields,
    render_comment,
    set_entry_fields,
)
from ccb.entry_notes import DEFAULT_ENTRY_TYPE, ENTRY_TYPE_KEY, TITLE_MAX_CHARS
from ccb.frontmatter_edit import set_properties
from ccb.memory_file import NewMemory, render_memory, slugify
from ccb.model import MEMORY_TYPES, MemoryMeta, MemoryType, Note
from ccb.parse import parse_note
from config.errors import FrontmatterEditError

__all__ = [
    "ENTRIES_HEADER",
    "Converted",
    "entries_to_memories",
    "memories_to_entries",
]

#: The first lines of an entry file dreamd writes.
ENTRIES_HEADER = f"---\ntype: {ENTRIES_TYPE}\n---\n"
#: The two memory-file keys an exported entry carries (module docstring).
ENTRY_KEY, ENTRY_META_KEY = "entry", "entry_meta"


@dataclass(frozen=True, slots=True)
class Converted:
    """The files a conversion made (relative POSIX path → bytes) and what would not come
    back byte for byte (``(source path, reason)``, in source order)."""

    files: dict[str, bytes] = field(default_factory=dict)
    lossy: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------------------- entries → files


def _title(text: str) -> str:
    return text if len(text) <= TITLE_MAX_CHARS else text[: TITLE_MAX_CHARS - 1].rstrip() + "…"


def _stable_id(ref: str) -> str:
    return str(ULID.from_bytes(hashlib.sha256(ref.encode("utf-8")).digest()[:16]))


def _moment(raw: str | None, fallback: datetime) -> datetime:
    if not raw:
        return fallback
    value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _day(raw: str | None) -> date | None:
    return date.fromisoformat(raw) if raw else None


def _source(raw: str | None) -> str | None:
    """``src``: absent → ``import``; empty → none written."""
    return "import" if raw is None else raw or None


def _entry_type(entry: Entry, default: object) -> MemoryType:
    for value in (entry.fields.get("type"), default):
        if isinstance(value, str) and value.strip().casefold() in MEMORY_TYPES:
            return cast(MemoryType, value.strip().casefold())
    return DEFAULT_ENTRY_TYPE


def _memory_stem(source: str, number: int, entry: Entry) -> str:
    """``facts/0003-slug`` for an entry; a memory file's own line keeps its stem."""
    if entry.fields.get("id"):
        return entry.fields.get("file") or slugify(entry.fields.get("name") or _title(
            entry.text))
    base = posixpath.splitext(source)[0]
    return f"{base}/{number:04d}-{slugify(_title(entry.text))}"


def _entry_memory(source: str, entry_file: EntryFile, entry: Entry, stems: Mapping[str, str],
                  now: datetime) -> bytes:
    """The memory file of one entry (module docstring)."""
    get = entry.fields.get
    began = entry.fields.vf
    created = _moment(get("cr"), datetime.combine(began, time(), UTC) if began else now)
    sup = entry.fields.sup
    target = posixpath.basename(stems[sup]) if sup and sup in stems else sup
    memory = NewMemory(
        name=get("name") or _title(entry.text), description=get("desc") or entry.text,
        type=_entry_type(entry, entry_file.properties.get(ENTRY_TYPE_KEY)),
        id=get("id") or _stable_id(f"{source}#{entry.key}"),
        created=created, updated=_moment(get("up"), created), body=get("body") or entry.text,
        version=int(get("ver") or 1), subject=entry.fields.subj, valid_from=began,
        valid_to=entry.fields.vt, supersedes=(target,) if target else (),
        pinned=get("pin") == "true", expires=_day(get("exp")), source=_source(get("src")),
        owner=get("own"))
    data = render_memory(memory)
    if get("id"):  # a memory file's own line: nothing more to keep
        return data
    extra: dict[str, str | None] = {ENTRY_KEY: f"{source}#{entry.key}"}
    if entry.comment is not None:
        extra[ENTRY_META_KEY] = entry.comment
    return set_properties(data, extra, path=source)


def _canonical(entry_file: EntryFile) -> bool:
    """Whether ``entry_file`` is in the form :func:`memories_to_entries` writes."""
    return "".join(entry_file.lines[:3]) == ENTRIES_HEADER and len(entry_file.lines) == 3 + len(
        entry_file.entries) and all(
        entry_file.lines[e.line] == _line(e.text, e.comment) for e in entry_file.entries)


def _line(text: str, comment: str | None) -> str:
    return f"- {text}" + (f" <!--m:{comment}-->" if comment is not None else "") + "\n"


def entries_to_memories(entry_files: Mapping[str, bytes], *, now: datetime) -> Converted:
    """Memory files for the entries of ``entry_files`` (relative path → bytes), module
    docstring. ``now`` (aware) is the ``created`` of an entry without ``vf``. A file that
    does not decode is skipped and named in ``lossy``; so is one that would not come back
    byte for byte (not in dreamd's form, or a value the memory format cannot hold)."""
    out: dict[str, bytes] = {}
    lossy: list[tuple[str, str]] = []
    for source in sorted(entry_files):
        data = entry_files[source]
        entry_file = parse_entry_file(source, data, parse_note(source, data).properties)
        if any(p.kind == "decode" for p in entry_file.problems):
            lossy.append((source, "not UTF-8 text: not converted"))
            continue
        stems = {e.key: _memory_stem(source, n, e) for n, e in enumerate(entry_file.entries, 1)}
        made: dict[str, bytes] = {}
        for entry in entry_file.entries:
            try:
                made[stems[entry.key] + ".md"] = _entry_memory(source, entry_file, entry, stems,
                                                               now)
            except (ValueError, FrontmatterEditError) as exc:
                lossy.append((f"{source}#{entry.key}", f"not converted: {exc}"))
        out.update(made)
        if not _canonical(entry_file):
            lossy.append((source, "lines other than entries, or entries not written as "
                                  "'- text <!--m:…-->', are not kept"))
        elif memories_to_entries(made).files.get(source) != entry_files[source]:
            lossy.append((source, "would not come back byte for byte"))
    return Converted(out, tuple(lossy))


# ---------------------------------------------------------------------------- files → entries


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value.isoformat() if isinstance(value, date) else str(value)


def _updated_comment(comment: str | None, meta: MemoryMeta) -> str | None:
    """``comment`` with ``subj``/``vf``/``vt`` set where the memory file says otherwise."""
    fields, _ = parse_fields(comment or "", "")
    changes: dict[str, str] = {}
    for key, ours, theirs in (("subj", fields.subj, meta.subject),
                              ("vf", fields.vf, _as_day(meta.valid_from)),
                              ("vt", fields.vt, _as_day(meta.valid_to))):
        if theirs is not None and ours != theirs:
            changes[key] = _iso(theirs)
    if not changes:
        return comment
    line = set_entry_fields(_line("x", comment), changes)
    start = line.index("<!--m:") + len("<!--m:")
    return line[start: line.rindex("-->")]


def _as_day(value: datetime | date | None) -> date | None:
    return value.date() if isinstance(value, datetime) else value


def _memory_pairs(note: Note, meta: MemoryMeta, text: str, body: str) -> list[tuple[str, str]]:
    """The comment of a memory file not made from an entry (module docstring)."""
    stem = posixpath.splitext(posixpath.basename(note.path))[0]
    pairs: list[tuple[str, str | None]] = [
        ("type", meta.type), ("subj", meta.subject),
        ("vf", _iso(meta.valid_from) if meta.valid_from else None),
        ("vt", _iso(meta.valid_to) if meta.valid_to else None),
        ("sup", meta.supersedes[0] if meta.supersedes else None),
        ("id", meta.id), ("file", stem if stem != slugify(meta.name) else None),
        ("name", meta.name if meta.name != _title(text) else None),
        ("desc", meta.description if meta.description != text else None),
        ("cr", _iso(meta.created) if meta.created else None),
        ("up", _iso(meta.updated) if meta.updated and meta.updated != meta.created else None),
        ("ver", str(meta.version) if meta.version and meta.version != 1 else None),
        ("pin", "true" if meta.pinned else None),
        ("exp", _iso(meta.expires) if meta.expires else None),
        ("own", meta.owner), ("body", body if body != text else None)]
    kept = [(k, v) for k, v in pairs if v]
    if meta.source != "import":
        kept.append(("src", meta.source or ""))
    return kept


def memories_to_entries(memory_files: Mapping[str, bytes],
                        hits: Mapping[str, int] | None = None) -> Converted:
    """Entry files for the memory files of ``memory_files`` (relative path → bytes), module
    docstring. A file that is not a memory is skipped and named in ``lossy``; so is a
    memory that would not come back byte for byte. With ``hits`` (relative path → recall
    count), every line gets ``hc=<count>`` (0 for a path not in it): asked for by the user
    only, never part of the round trip."""
    lines: dict[str, list[str]] = {}
    lossy: list[tuple[str, str]] = []
    for path in sorted(memory_files):
        note = parse_note(path, memory_files[path])
        meta = note.memory
        if meta is None:
            lossy.append((path, "not a memory file: not converted"))
            continue
        body = note.body[:-1] if note.body.endswith("\n") else note.body
        first = next((x.strip() for x in body.split("\n") if x.strip()), "") or meta.name
        origin = note.properties.get(ENTRY_KEY)
        if isinstance(origin, str) and "#" in origin:
            target = origin.rsplit("#", 1)[0]
            meta_raw = note.properties.get(ENTRY_META_KEY)
            comment = _updated_comment(meta_raw if isinstance(meta_raw, str) else None, meta)
            one = body.strip()
            text = (one if "\n" not in one else " ".join(one.split())) or first
            lines.setdefault(target, []).append(_with_hits(_line(text, comment), path, hits))
            if "\n" in body.strip():
                lossy.append((path, "a body of more than one line is joined into one"))
            continue
        target = f"{meta.type}.md"
        comment = render_comment(_memory_pairs(note, meta, first, body))
        lines.setdefault(target, []).append(f"- {first} {comment}\n")
        back = entries_to_memories({target: (ENTRIES_HEADER + lines[target][-1]).encode()},
                                   now=datetime.now(UTC)).files
        if memory_files[path] not in back.values():
            lossy.append((path, "would not come back byte for byte (a property the memory "
                                "format does not know, or an edit by hand)"))
        lines[target][-1] = _with_hits(lines[target][-1], path, hits)
    files = {target: (ENTRIES_HEADER + "".join(rows)).encode("utf-8")
             for target, rows in lines.items()}
    return Converted(files, tuple(lossy))


def _with_hits(line: str, path: str, hits: Mapping[str, int] | None) -> str:
    """``line`` with ``hc=<recall count of path>`` when ``hits`` were asked for."""
    return line if hits is None else set_entry_fields(line, {"hc": str(hits.get(path, 0))})
