"""Entries in a dream: the lines of the memory folder's entry files are consolidated with the
memory files (:func:`consistency.dream.plan_consolidation`), edited the design's way.

Each live entry (``file.md#key``, :mod:`ccb.entry_notes`) is a
:class:`~consistency.dream.DreamMemory` at its entry path, written on its ``vf`` (else the
file's modification day), *changed* when its line is new or edited since the last dream
(the normalised hashes of the entries a dream saw are kept in :data:`ENTRIES_STATE_FILE`).
What an action does to an entry is one line edit of its file, through the same journal and
writer as a memory file's edit:

- **merged** (a duplicate): the line gets ``merged_into=<keeper>`` in its comment (the
  keeper's key when it is a line of the same file, else its path); the index reads such a
  line as archived (hidden, ``dreamd search --all`` shows it). A merge that would add
  sentences to an entry keeper is left out (an entry is one line): both stay, as two facts.
- **superseded**: the old line gets ``vt=`` the day the newer fact began (never after today);
  a newer line of the same file gets ``sup=<old key>`` when it names none.
- a memory file merged into or superseded by an entry is archived as usual, its
  ``merged_into`` / ``superseded_by`` linking the entry's file.

Lifecycle rules (archive, promote, demote) and ``MEMORY.md`` stay the memory files'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path

from ccb.atomic import read_json_object, write_json_atomic
from ccb.entries import format_entry_file, parse_entry_file, reparse, set_entry_fields
from ccb.entry_notes import is_entry_path, split_entry_path
from ccb.memory_file import content_hash_normalised
from consistency.dream import (
    Consolidation,
    DreamMemory,
    LinkPossible,
    MergeDuplicate,
    SupersedeOld,
)
from consistency.lifecycle import MemoryState, is_current
from daemon.dream_deep import diary_link
from daemon.dream_edits import Step, archived, step_edits, wikilink
from daemon.dream_records import MemoryRecord
from daemon.memory_pool import MemoryPool, StoredMemory

__all__ = [
    "ENTRIES_STATE_FILE",
    "DreamEntries",
    "dream_step_edits",
    "entry_link",
    "mergeable",
]

#: ``{entry path: normalised hash}`` of the entries the last dream saw (state folder).
ENTRIES_STATE_FILE = "dream-entries.json"

Edit = tuple[str, bytes, str]


def entry_link(path: str) -> str:
    """A diary link to an entry: its file's link and the key in a code span (a bare
    ``#key`` would read as a tag in Obsidian); a file's path gives :func:`diary_link`."""
    parts = split_entry_path(path)
    return f"{diary_link(parts[0])} `#{parts[1]}`" if parts else diary_link(path)


class DreamEntries:
    """The entries of one vault's memory folder, as dreams see them (``state_dir`` keeps
    :data:`ENTRIES_STATE_FILE`)."""

    def __init__(self, pool: MemoryPool, state_dir: Path) -> None:
        self._pool = pool
        self._state = state_dir / ENTRIES_STATE_FILE
        self._seen: dict[str, str] = {}

    def memories(self, today: date, memory_files: Mapping[str, MemoryRecord] | None = None
                 ) -> list[DreamMemory]:
        """The entries current on ``today``, bodies read, in path order. ``memory_files``
        are the dream's records of the memory files (never entry files: not read again
        while their size and modification time hold)."""
        last = read_json_object(self._state)
        out = []
        self._seen = {}
        known = {path: (r.size, r.mtime_ns) for path, r in (memory_files or {}).items()}
        for stored in self._pool.entries(known):
            meta = stored.note.memory
            if meta is None or not is_current(MemoryState.of(meta, past=False), today):
                continue
            norm = content_hash_normalised(stored.note.body)
            self._seen[stored.path] = norm
            out.append(DreamMemory(
                id=stored.path, path=stored.path, type=meta.type, name=meta.name,
                description=meta.description, subject=meta.subject, owner=meta.owner,
                content_hash=norm, created=meta.valid_from or _mtime_day(self._pool, stored),
                changed=last.get(stored.path) != norm, body=stored.note.body.strip()))
        return sorted(out, key=lambda m: m.path)

    def record(self) -> None:
        """Keep the entries the last :meth:`memories` call saw, for the next dream."""
        if read_json_object(self._state) != self._seen:
            write_json_atomic(self._state, dict(sorted(self._seen.items())))


def _mtime_day(pool: MemoryPool, stored: StoredMemory) -> date:
    parts = split_entry_path(stored.path)
    target = pool.root / (parts[0] if parts else stored.path)
    return datetime.fromtimestamp(target.stat().st_mtime).date()


def mergeable(actions: Sequence[Consolidation]) -> list[Consolidation]:
    """``actions`` without the merges that would add sentences to an entry (one line)."""
    return [a for a in actions if not (isinstance(a, MergeDuplicate) and a.keeper_body
                                       and is_entry_path(a.keeper_path))]


def dream_step_edits(step: Step, read: Callable[[str], bytes | None],
                     known: Mapping[str, MemoryRecord], now: datetime) -> list[Edit]:
    """:func:`daemon.dream_edits.step_edits`, with the actions about an entry carried out
    on its line (module docstring); edits are ``(file path, new bytes, diary line)``."""
    match step:
        case MergeDuplicate(keeper_path=keeper, duplicate_path=dup) if (
                is_entry_path(keeper) or is_entry_path(dup)):
            return _merge(step, read, known, now.date())
        case SupersedeOld(old_path=old, new_path=new) if is_entry_path(old) or is_entry_path(new):
            return _supersede(step, read, known, now.date())
        case LinkPossible(old_path=old, new_path=new) if is_entry_path(old) or is_entry_path(new):
            return []  # an entry's pairs live in its line (daemon.entry_remember): left out
    return step_edits(step, read, known, now)


def _file(path: str) -> str:
    parts = split_entry_path(path)
    return parts[0] if parts else path


def _ref(of: str, at: str) -> str:
    """How a line of ``at``'s file names the memory ``of``: its key in the same file, else
    its path."""
    a, b = split_entry_path(of), split_entry_path(at)
    return a[1] if a and b and a[0] == b[0] else of


def _set_fields(path: str, updates: Mapping[str, str], read: Callable[[str], bytes | None],
                only_missing: bool = False) -> bytes | None:
    """The bytes of entry ``path``'s file with ``updates`` set on its line (None: the file
    or the line is gone, or nothing changes)."""
    parts = split_entry_path(path)
    data = read(parts[0]) if parts else None
    if parts is None or data is None:
        return None
    entry_file = parse_entry_file(parts[0], data)
    entry = entry_file.entry(parts[1])
    if entry is None:
        return None
    todo = {k: v for k, v in updates.items() if not (only_missing and entry.fields.get(k))}
    if not todo:
        return None
    lines = list(entry_file.lines)
    lines[entry.line] = set_entry_fields(lines[entry.line], todo)
    return format_entry_file(reparse(entry_file, lines))


def _merge(step: MergeDuplicate, read: Callable[[str], bytes | None],
           known: Mapping[str, MemoryRecord], today: date) -> list[Edit]:
    keeper, dup = step.keeper_path, step.duplicate_path
    code = "exact duplicate" if step.kind == "exact" else "near-duplicate"
    line = f"Archived {entry_link(dup)}: {code} of {entry_link(keeper)}"
    if is_entry_path(dup):
        after = _set_fields(dup, {"merged_into": _ref(keeper, dup)}, read)
        return [(_file(dup), after, line)] if after is not None else []
    data = read(dup)
    if data is None:
        return []
    if step.keeper_body is not None:
        return []  # left out by mergeable: an entry keeper is one line
    return [(dup, archived(known, dup, data, code, today,
                           {"merged_into": wikilink(_file(keeper))}), line)]


def _supersede(step: SupersedeOld, read: Callable[[str], bytes | None],
               known: Mapping[str, MemoryRecord], today: date) -> list[Edit]:
    old, new, reason = step.old_path, step.new_path, step.reason
    line = f"{entry_link(old)} superseded by {entry_link(new)}: {reason}; closed"
    out: list[Edit] = []
    if not is_entry_path(old):
        data = read(old)
        if data is not None:
            out.append((old, archived(known, old, data, "superseded", today,
                                      {"superseded_by": wikilink(_file(new))}, close=True),
                        line))
        return out
    began = _began(new, read)
    closed = _set_fields(old, {"vt": min(began, today).isoformat() if began else
                               today.isoformat()}, read, only_missing=True)
    if closed is not None:
        out.append((_file(old), closed, line))
    if is_entry_path(new) and _file(new) == _file(old):
        overlay = {_file(old): closed} if closed is not None else {}
        named = _set_fields(new, {"sup": _ref(old, new)},
                            lambda p: overlay.get(p) or read(p), only_missing=True)
        if named is not None:
            out.append((_file(new), named, ""))
    return out


def _began(path: str, read: Callable[[str], bytes | None]) -> date | None:
    """The day the memory at ``path`` began (an entry's ``vf``), when it says."""
    parts = split_entry_path(path)
    data = read(parts[0]) if parts else None
    if parts is None or data is None:
        return None
    entry = parse_entry_file(parts[0], data).entry(parts[1])
    return entry.fields.vf if entry is not None else None

