"""Versions of entries: ``dreamd history``, ``diff`` and ``rollback`` of one line.

An entry (``Memory/facts.md#3f2a9c1d``, :mod:`ccb.entry_notes`) is kept in the version
archive under :func:`ccb.model.memory_key` of its entry path (``path:Memory/facts.md#3f2a9c1d``;
an entry has no id). A version's content is the entry's **line** as the indexer read it, in
UTF-8, without its line ending (``- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;hc=2-->``): the
indexer offers a line each time it indexes it changed (its key is its text, so the versions
of one entry differ in their comment: ``vt`` set by a supersession, ``conf`` edited by
hand, …). A version's origin is the origin of the file's bytes (``api``, ``dream``,
``rollback`` when dreamd wrote them; else ``user-edit``).

Rollback writes that one line back — the line with the entry's key is replaced by the
version's line (appended when the line is gone), every other byte of the file stays — after
the current line is recorded (CONVENTIONS.md rule 8), through the one writer.

What is left out: an owner other than the vault's does not see an entry's versions (a line
does not say whose it is; its file does), and removing a line records no tombstone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ccb.entries import format_entry_file, parse_entry_file, reparse
from ccb.entry_notes import entry_notes, split_entry_path
from ccb.model import PATH_KEY_PREFIX, Note
from ccb.parse import parse_note
from ccb.writer import NoteWriter, WriteOutcome, sha256_hex
from config.errors import VersionNotFoundError

__all__ = [
    "current_entry_note",
    "entry_lines",
    "entry_of_key",
    "file_of",
    "locate_entry",
    "origins_of",
    "version_note",
    "write_entry_line",
]


def entry_lines(file_path: str, data: bytes) -> dict[str, bytes]:
    """``{entry path: its line}`` of the entry file ``file_path`` (bytes ``data``): each
    line as written, UTF-8, without its line ending (a version's content)."""
    entry_file = parse_entry_file(file_path, data)
    return {f"{file_path}#{e.key}": entry_file.lines[e.line].rstrip("\r\n").encode("utf-8")
            for e in entry_file.entries}


def version_note(note: Note, line: bytes) -> Note:
    """The entry's note as the version recorder takes it: its ``content_hash`` is the
    SHA-256 of ``line``, the content recorded."""
    return replace(note, content_hash=sha256_hex(line))


def entry_of_key(key: str) -> tuple[str, str] | None:
    """``(file path, line key)`` of a history key that names an entry, else None."""
    return split_entry_path(key.removeprefix(PATH_KEY_PREFIX)) if key.startswith(
        PATH_KEY_PREFIX) else None


def locate_entry(writer: NoteWriter, key: str) -> tuple[str, bytes] | None:
    """``(entry path, its line now)`` of the entry history ``key`` names, or None (no such
    file, or no line with that key in it)."""
    parts = entry_of_key(key)
    data = writer.read(parts[0]) if parts else None
    if parts is None or data is None:
        return None
    return next(((path, line) for path, line in entry_lines(parts[0], data).items()
                 if path == f"{parts[0]}#{parts[1]}"), None)


def current_entry_note(writer: NoteWriter, key: str) -> tuple[Note, bytes, str] | None:
    """The entry's note now (as the recorder takes it), its line and the file's hash."""
    parts = entry_of_key(key)
    data = writer.read(parts[0]) if parts else None
    if parts is None or data is None:
        return None
    _file, notes, _ = entry_notes(parse_note(parts[0], data), data)
    lines = entry_lines(parts[0], data)
    path = f"{parts[0]}#{parts[1]}"
    note = next((n for n in notes if n.path == path), None)
    if note is None:
        return None
    return version_note(note, lines[path]), lines[path], sha256_hex(data)


def write_entry_line(writer: NoteWriter, key: str, line: bytes, *, change: str
                     ) -> WriteOutcome:
    """Put ``line`` (a version's content) back as the entry of history ``key``: the line
    with that key is replaced, or the line is appended when it is gone; nothing else in
    the file changes. Raises ``VersionNotFoundError`` when the key names no entry file
    (the file is gone: restore it first) or ``line`` is not one line of text, and what
    :meth:`NoteWriter.write` raises."""
    parts = entry_of_key(key)
    if parts is None:
        raise VersionNotFoundError(f"rollback {key}: not an entry")
    file_path, entry_key_ = parts
    data = writer.read(file_path)
    if data is None:
        raise VersionNotFoundError(
            f"rollback {key}: {file_path} is gone; roll the file back first")
    text = line.decode("utf-8", "replace")
    if "\n" in text or "\r" in text:
        raise VersionNotFoundError(f"rollback {key}: the version is not one line")
    entry_file = parse_entry_file(file_path, data)
    lines = list(entry_file.lines)
    entry = entry_file.entry(entry_key_)
    ending = _ending(lines)
    if entry is not None:
        old = lines[entry.line]
        lines[entry.line] = text + old[len(old.rstrip("\r\n")):]
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += ending
        lines.append(text + ending)
    changed = format_entry_file(reparse(entry_file, lines))
    return writer.write(file_path, changed, base=data, origin="rollback", restores=True,
                        change=change)


def _ending(lines: list[str]) -> str:
    crlf = sum(1 for line in lines if line.endswith("\r\n"))
    return "\r\n" if crlf * 2 > len(lines) else "\n"


def file_of(path: str) -> str:
    """The file of an entry path, else ``path``."""
    parts = split_entry_path(path)
    return parts[0] if parts else path


def origins_of(paths: Mapping[str, str]) -> dict[str, str]:
    """``{history key: file hash}`` for entry paths (the origin of a line's version is the
    origin of its file's bytes)."""
    return {f"{PATH_KEY_PREFIX}{path}": digest for path, digest in paths.items()}

