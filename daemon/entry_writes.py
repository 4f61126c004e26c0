"""Writing entries (``file.md#key``, :mod:`ccb.entries`) through the one writer.

Every edit is minimal and goes through :class:`ccb.writer.NoteWriter` with the bytes it was
based on (compare-before-write; an edit that meets a change of the user's is merged or kept
beside as a conflict copy, never lost):

- :func:`supersede_entry_at`: the old line gets ``vt=<day>`` in its comment, the new fact is
  appended with ``vf=<day>`` and ``sup=<old key>``; ``git diff`` shows one modified line and
  one added line, nothing else.
- :func:`add_entry_at`: one line appended.
- :func:`forget_entry_at`: the entry's line removed (the only line that changes).

``hc`` (hit count) is never written here, nor on a search: recalls live in MAGMA.
Text is refused when it carries a credential (:func:`consistency.secrets.refuse_secrets`).
The caller indexes the file afterwards (the watcher, or ``Indexing.index_now``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from ccb.entries import (
    EntryFile,
    append_entry,
    format_entry_file,
    parse_entry_file,
    reparse,
    supersede_entry,
)
from ccb.entry_notes import entry_path, split_entry_path
from ccb.owner import Owner
from ccb.parse import parse_note
from ccb.writer import NoteWriter, WriteOutcome
from config.errors import EntryEditError, MemoryNotFoundError
from consistency.secrets import refuse_secrets

__all__ = ["EntryWrite", "add_entry_at", "entry_at", "forget_entry_at", "supersede_entry_at"]


@dataclass(frozen=True, slots=True)
class EntryWrite:
    """What an entry write did: the writer's ``outcome`` for the file, and the entry path
    written (the new entry's for a supersession or an addition; the removed one's for a
    forget)."""

    outcome: WriteOutcome
    entry: str


def _load(writer: NoteWriter, file_path: str, action: str) -> tuple[EntryFile, bytes]:
    data = writer.read(file_path)
    if data is None:
        raise MemoryNotFoundError(f"ccb: {action} {file_path}: no such entry file")
    entry_file = parse_entry_file(file_path, data)
    if any(p.kind == "decode" for p in entry_file.problems):
        raise EntryEditError(f"ccb: {action} {file_path}: not UTF-8 text; not edited")
    return entry_file, data


def _split(ref: str, action: str) -> tuple[str, str]:
    parts = split_entry_path(ref)
    if parts is None:
        raise EntryEditError(f"ccb: {action} {ref}: not an entry path (file.md#key)")
    return parts


def supersede_entry_at(writer: NoteWriter, ref: str, text: str, *, on: date,
                       pairs: Iterable[tuple[str, str]] = (), origin: str = "api",
                       repeat: bool = False) -> EntryWrite:
    """Supersede the entry at ``ref`` (``Memory/facts.md#3f2a9c1d``) with ``text``, valid
    from ``on`` (:func:`ccb.entries.supersede_entry`; ``repeat``: its text may be that of a
    line that is history). Raises ``EntryEditError`` (bad path, no such key, text already
    an entry), ``MemoryNotFoundError`` (no file),
    ``SecretRefusedError``, and what :meth:`NoteWriter.write` raises."""
    file_path, key = _split(ref, "supersede")
    refuse_secrets(text, where=f"supersede {ref}")
    entry_file, data = _load(writer, file_path, "supersede")
    changed, new = supersede_entry(entry_file, key, text, on=on, pairs=pairs, repeat=repeat)
    outcome = writer.write(file_path, format_entry_file(changed), base=data, origin=origin,
                           change=f"entry #{key} superseded by #{new.key}")
    return EntryWrite(outcome, entry_path(file_path, new.key))


def add_entry_at(writer: NoteWriter, file_path: str, text: str,
                 pairs: Iterable[tuple[str, str]] = (), *, origin: str = "api") -> EntryWrite:
    """Append ``- text <!--m:…-->`` to entry file ``file_path`` (created when missing).
    Raises ``EntryEditError``, ``SecretRefusedError``, and what :meth:`NoteWriter.write`
    raises."""
    refuse_secrets(text, where=f"add an entry to {file_path}")
    data = writer.read(file_path)
    entry_file = parse_entry_file(file_path, data or b"")
    if data is not None and any(p.kind == "decode" for p in entry_file.problems):
        raise EntryEditError(f"ccb: add an entry to {file_path}: not UTF-8 text; not edited")
    changed = append_entry(entry_file, text, pairs)
    new = changed.entries[-1]
    outcome = writer.write(file_path, format_entry_file(changed), base=data, origin=origin,
                           change=f"entry #{new.key} added")
    return EntryWrite(outcome, entry_path(file_path, new.key))


def entry_at(writer: NoteWriter, ref: str, *, owner: Owner | None = None) -> bool:
    """Whether the entry file of ``ref`` holds the entry: the checks of
    :func:`forget_entry_at` without the write. Raises ``EntryEditError`` (bad path, not
    UTF-8) and ``MemoryNotFoundError`` (no file, or not visible to ``owner``)."""
    file_path, key = _split(ref, "forget")
    entry_file, data = _load(writer, file_path, "forget")
    file_owner = parse_note(file_path, data).properties.get("owner")
    if owner is not None and not owner.sees(file_owner if isinstance(file_owner, str) else None):
        raise MemoryNotFoundError(f"ccb: forget {ref}: no such entry file")
    return entry_file.entry(key) is not None


def forget_entry_at(writer: NoteWriter, ref: str, *, origin: str = "api",
                    owner: Owner | None = None) -> EntryWrite:
    """Remove the line of the entry at ``ref``; every other line stays byte for byte.
    With ``owner``, an entry file of another owner is not found. Raises
    ``EntryEditError`` (bad path, no such key), ``MemoryNotFoundError`` (no file, or not
    visible to ``owner``), and what :meth:`NoteWriter.write` raises."""
    file_path, key = _split(ref, "forget")
    entry_file, data = _load(writer, file_path, "forget")
    file_owner = parse_note(file_path, data).properties.get("owner")
    if owner is not None and not owner.sees(file_owner if isinstance(file_owner, str) else None):
        raise MemoryNotFoundError(f"ccb: forget {ref}: no such entry file")
    entry = entry_file.entry(key)
    if entry is None:
        raise EntryEditError(f"ccb: forget {ref}: no entry #{key} in {file_path}")
    lines = list(entry_file.lines)
    del lines[entry.line]
    changed = reparse(entry_file, lines)
    outcome = writer.write(file_path, format_entry_file(changed), base=data, origin=origin,
                           change=f"entry #{key} forgotten")
    return EntryWrite(outcome, ref)
