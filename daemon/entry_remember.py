"""``remember`` meeting an entry: what a new fact does to a line of an entry file.

``remember`` judges a new fact against the live memories of its owner and type, and the
entries of the memory folder's entry files (``file.md#key``, :mod:`ccb.entry_notes`) are among
them (:meth:`daemon.memory_pool.MemoryPool.entries`). When the decision
(:func:`consistency.duplicates.decide`) is about an entry, :func:`on_entry` carries it out the
design's way, with minimal edits through the one writer (:mod:`daemon.entry_writes`):

- ``Duplicate`` and ``Update`` (the same fact, in other words): nothing is written; the
  result names the entry, ``Memory/facts.md#3f2a9c1d``. An entry is one line: the sentences
  a restatement would add are not merged into it (our choice; the memory file's way would
  make the line a paragraph).
- ``Supersede`` (a contradiction): the old line gets ``vt=<today>`` and the new fact is
  appended **to the same entry file** with ``sup=<old key>``, ``vf`` (the day the text names,
  else today), the draft's subject (else the old one's) and the old line's ``conf``: one
  modified line and one added line, the facts of one subject stay in one file. A fact that
  holds again (its old line closed) is a new line, its key the text's numbered repeat.
- ``Possible`` (an unsure pair): the new fact is appended to the same file with
  ``possible_duplicate=<old key>`` or ``possible_contradiction=<old key>`` in its comment (the
  old line is not touched); both stay live and ``dreamd conflicts`` lists the pair until
  the user settles it (:func:`settle_entry_pair`).
- ``New`` and ``Series``: not about an entry; the fact becomes a memory file as before.

A fact an entry cannot hold — more than one line, or pinned (an entry has no ``pinned``) — is
written as a memory file; on a contradiction the entry still gets ``vt`` (it no longer holds),
and on an unsure pair the two are not linked (a memory file cannot link one line).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from ccb.entries import (
    format_entry_file,
    parse_entry_file,
    remove_entry_fields,
    reparse,
    set_entry_fields,
)
from ccb.entry_notes import MERGED_KEY, POSSIBLE_PAIR_KEYS, is_entry_path, split_entry_path
from ccb.model import memory_key
from ccb.owner import Owner
from ccb.writer import NoteWriter
from config.errors import EntryEditError, MemoryNotFoundError
from consistency.duplicates import Decision, Duplicate, MemoryDraft, Possible, Supersede, Update
from consistency.lifecycle import MemoryState, is_current
from daemon.entry_writes import add_entry_at, supersede_entry_at
from daemon.memory_pool import StoredMemory

__all__ = [
    "EntryOutcome",
    "close_entry_at",
    "entry_pairs",
    "fits_an_entry",
    "on_entry",
    "settle_entry_pair",
]


@dataclass(frozen=True, slots=True)
class EntryOutcome:
    """What :func:`on_entry` did: ``path`` is where the fact now lives (an entry path),
    ``memory_id`` its history key (:func:`ccb.model.memory_key`), ``superseded`` the entry
    closed, ``linked_as`` the pair kind of an unsure pair."""

    action: Literal["duplicate", "superseded", "created"]
    memory_id: str
    path: str
    superseded: str | None = None
    reason: str | None = None
    conflict_path: str | None = None
    linked_as: str | None = None


def fits_an_entry(draft: MemoryDraft, pinned: bool) -> bool:
    """Can ``draft`` be written as a line of an entry file (one line, not pinned)?"""
    return not pinned and "\n" not in draft.body.strip() and "\r" not in draft.body.strip()


def _pairs(draft: MemoryDraft, today: date) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if draft.subject and draft.subject.strip():
        pairs.append(("subj", draft.subject.strip()))
    event_day = draft.claim.event_day if draft.claim is not None else None
    pairs.append(("vf", (event_day if event_day and event_day <= today else today).isoformat()))
    return pairs


def on_entry(writer: NoteWriter, decision: Decision, target: StoredMemory, draft: MemoryDraft,
             *, today: date, pinned: bool, origin: str) -> EntryOutcome | None:
    """Carry out ``decision`` about the entry ``target`` (module docstring); ``None`` when
    the fact is to be written as a memory file (a new fact, a series member, or one an entry
    cannot hold — after a contradicted entry got its ``vt``). Raises what
    :mod:`daemon.entry_writes` raises (``EntryEditError``, ``StaleWriteError``, …)."""
    ref = target.path
    match decision:
        case Duplicate() | Update():
            return EntryOutcome("duplicate", memory_key(None, ref), ref)
        case Supersede(reason=reason):
            if not fits_an_entry(draft, pinned):
                close_entry_at(writer, ref, on=today, origin=origin)
                return None
            # a live line with this text would have been a duplicate: any is history
            done = supersede_entry_at(writer, ref, draft.body.strip(), on=today,
                                      pairs=_pairs(draft, today), origin=origin, repeat=True)
            return EntryOutcome("superseded", memory_key(None, done.entry), done.entry,
                                superseded=ref, reason=reason,
                                conflict_path=done.outcome.conflict_path)
        case Possible(kind=kind):
            if not fits_an_entry(draft, pinned):
                return None
            file_path, key = _split(ref)
            link = f"possible_{kind}"
            done = add_entry_at(writer, file_path, draft.body.strip(),
                                [*_pairs(draft, today), (link, key)], origin=origin)
            return EntryOutcome("created", memory_key(None, done.entry), done.entry,
                                conflict_path=done.outcome.conflict_path, linked_as=link)
    return None


def _split(ref: str) -> tuple[str, str]:
    parts = split_entry_path(ref)
    if parts is None:
        raise EntryEditError(f"ccb: {ref}: not an entry path (file.md#key)")
    return parts


def close_entry_at(writer: NoteWriter, ref: str, *, on: date, origin: str = "api") -> str:
    """Give the entry at ``ref`` ``vt=<on>`` (it holds no longer), the only change to its
    file; returns the file's path. Raises ``MemoryNotFoundError`` (no file),
    ``EntryEditError`` (no such entry) and what :meth:`NoteWriter.write` raises."""
    file_path, key = _split(ref)
    data = writer.read(file_path)
    if data is None:
        raise MemoryNotFoundError(f"ccb: close {ref}: no such entry file")
    entry_file = parse_entry_file(file_path, data)
    entry = entry_file.entry(key)
    if entry is None:
        raise EntryEditError(f"ccb: close {ref}: no entry #{key} in {file_path}")
    lines = list(entry_file.lines)
    lines[entry.line] = set_entry_fields(lines[entry.line], {"vt": on.isoformat()})
    writer.write(file_path, format_entry_file(reparse(entry_file, lines)), base=data,
                 origin=origin, change=f"entry #{key} closed")
    return file_path


def entry_pairs(entries: list[StoredMemory], owner: Owner | None, today: date
                ) -> set[tuple[str, str, str]]:
    """``(kind, older entry path, newer entry path)`` of the unsure pairs among ``entries``
    that ``owner`` sees (``None``: every one) and that are both current on ``today``: a line
    naming another of its file in :data:`POSSIBLE_PAIR_KEYS` is the newer."""
    seen = [s for s in entries if s.note.memory is not None and (
        owner is None or owner.sees(s.note.memory.owner))]
    live = {s.path for s in seen if s.note.memory is not None
            and is_current(MemoryState.of(s.note.memory, past=False), today)}
    found: set[tuple[str, str, str]] = set()
    for stored in seen:
        if stored.path not in live:
            continue
        for kind in POSSIBLE_PAIR_KEYS:
            other = stored.note.properties.get(kind)
            if isinstance(other, str) and is_entry_path(other) and other in live:
                found.add((kind, other, stored.path))
    return found


def settle_entry_pair(writer: NoteWriter, entries: list[StoredMemory], ref: str,
                      answer: Literal["same", "changed", "different"], *, today: date,
                      owner: Owner | None = None, other: str | None = None,
                      origin: str = "api") -> str:
    """Settle an unsure pair of lines ``remember`` kept apart (``dreamd conflicts resolve
    Memory/facts.md#key --as …``): ``same`` archives the newer line into the older
    (``merged_into=<older key>``), ``changed`` closes the older (``vt=<today>``) and names it
    in the newer (``sup=``), ``different`` keeps both as two facts. The newer line's
    ``possible_…`` pair goes in every case; the edits are of those lines only, through the
    one writer. ``ref`` is either line (``other`` the second, when ``ref`` has several
    pairs). Returns a line for the user; raises ``MemoryNotFoundError`` when no such pair
    is open among the ``entries`` ``owner`` sees (``None``: every one)."""
    pairs = entry_pairs(entries, owner, today)
    found = [(k, a, b) for k, a, b in pairs if ref in (a, b)
             and (other is None or other in (a, b))]
    if len(found) != 1:
        listed = ", ".join(sorted(b if a == ref else a for _, a, b in found)) or "none"
        raise MemoryNotFoundError(
            f"conflicts resolve {ref}: {len(found)} possible pairs ({listed}); "
            + ("name the other line with --with" if found else
               "this line was not kept apart from another one"))
    kind, older, newer = found[0]
    file_path, older_key = _split(older)
    newer_key = _split(newer)[1]
    data = writer.read(file_path)
    if data is None:
        raise MemoryNotFoundError(f"conflicts resolve {ref}: {file_path} is gone")
    entry_file = parse_entry_file(file_path, data)
    old_entry, new_entry = entry_file.entry(older_key), entry_file.entry(newer_key)
    if old_entry is None or new_entry is None:
        raise MemoryNotFoundError(f"conflicts resolve {ref}: the line changed meanwhile")
    lines = list(entry_file.lines)
    new_line = remove_entry_fields(lines[new_entry.line], [kind])
    if answer == "same":
        new_line = set_entry_fields(new_line, {MERGED_KEY: older_key})
    elif answer == "changed":
        new_line = set_entry_fields(new_line, {"sup": older_key})
        lines[old_entry.line] = set_entry_fields(lines[old_entry.line],
                                                 {"vt": today.isoformat()})
    lines[new_entry.line] = new_line
    writer.write(file_path, format_entry_file(reparse(entry_file, lines)), base=data,
                 origin=origin, change=f"entries #{older_key} and #{newer_key}: {answer}")
    return {
        "same": f"merged {newer} into {older} (archived with merged_into)",
        "changed": f"{newer} supersedes {older} (both stay; the older has vt)",
        "different": f"kept {older} and {newer} as two facts",
    }[answer]
