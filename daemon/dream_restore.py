"""Restore: bring an archived or superseded memory back, and remember that a user did.

``dreamd restore NAME`` undoes what a dream (or ``remember``'s supersession) set aside: the
archive keys go, the previous status comes back. A restore is the user's word that the old
fact holds again, so the memory that superseded it is superseded in turn
(:meth:`Restorer.take_back`): it no longer ``supersedes`` the restored memory, it gets
``valid_to`` and ``superseded_by``, and the restored memory ``supersedes`` it — every file
kept, both versions in the history, the chain read one way by search, ``MEMORY.md``, the
check and the lineage. ``dreamd rollback`` to a version from before a supersession does the
same. A restored memory is recorded in ``<state>/restored.json`` (path → content hash): the
dream leaves it out of consolidation and the lifecycle while it stays as restored, so the next
dream does not archive it again; an edit by the user makes it ordinary again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from ccb.frontmatter_edit import set_properties
from ccb.model import PropertyValue
from ccb.parse import parse_note
from ccb.writer import NoteWriter, WriteOutcome
from config.errors import MemoryNotFoundError
from consistency.lifecycle import is_archived

__all__ = ["ARCHIVE_KEYS", "RESTORED_FILE", "Restorer", "TakenBack", "unarchived"]

log = structlog.get_logger("dreamd.dream")

#: State file of the memories restored by hand: ``{vault path: content hash}``.
RESTORED_FILE = "restored.json"
#: Properties a dream writes to archive a memory; ``dreamd restore`` removes them.
ARCHIVE_KEYS = ("archived", "archived_reason", "merged_into", "superseded_by", "status_before")


def unarchived(path: str, data: bytes) -> bytes | None:
    """The bytes of the archived memory file ``data`` (at ``path``) brought back: the archive
    keys (:data:`ARCHIVE_KEYS`) and ``valid_to`` removed, the previous status put back
    (``None``: not an archived memory). Pure; :meth:`Restorer.restore` writes it."""
    note = parse_note(path, data)
    if note.memory is None or not is_archived(note.memory.status):
        return None
    before = note.properties.get("status_before")
    remove = [k for k in ARCHIVE_KEYS if k in note.properties]
    updates: dict[str, PropertyValue] = {}
    if isinstance(before, str) and before.strip() and not is_archived(before):
        updates["status"] = before
    else:
        remove.append("status")
    if note.memory.valid_to is not None:
        remove.append("valid_to")
    return set_properties(data, updates, remove=remove, path=path)


@dataclass(frozen=True, slots=True)
class TakenBack:
    """What restoring a memory does to the memories that had superseded it
    (:meth:`Restorer.take_back`): ``data``, the restored memory's bytes naming in
    ``supersedes`` those it now supersedes in turn; ``edits`` as ``(path, before, after,
    change)``; ``superseded``, the paths superseded by the restore; ``unlinked``, those already
    superseded themselves, which only stop naming it."""

    data: bytes
    edits: tuple[tuple[str, bytes, bytes, str], ...] = ()
    superseded: tuple[str, ...] = ()
    unlinked: tuple[str, ...] = ()


def _names(target: str, stem: str) -> bool:
    """Does the ``supersedes`` target ``target`` (as written: a stem, a path, ``x.md``)
    name the file whose stem is ``stem``? Compared as Obsidian does, case-insensitively."""
    name = target.strip().split("|")[0].split("#")[0].strip().removesuffix(".md")
    return Path(name).name.casefold() == stem.casefold()


def _links(targets: Sequence[str]) -> dict[str, PropertyValue | None]:
    """The ``supersedes`` property for ``targets`` (one link, a list, or ``supersedes:``
    left empty, as ``remember`` writes it for a memory that supersedes nothing)."""
    values: list[PropertyValue] = [f"[[{t}]]" for t in targets]
    return {"supersedes": values[0] if len(values) == 1 else values if values else None}


def _current(status: str | None, valid_to: date | datetime | None, today: date) -> bool:
    """Is a memory with this status and ``valid_to`` still current on ``today``?"""
    day = valid_to.date() if isinstance(valid_to, datetime) else valid_to
    return not is_archived(status) and (day is None or day > today)


class Restorer:
    """Restores memories of one vault and keeps the record of those restored.
    ``clock`` gives "now" in the user's zone (its day is the ``valid_to`` a restore writes)."""

    def __init__(self, *, writer: NoteWriter, memory_folder: str, state_dir: Path,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.writer = writer
        self.root = writer.root
        self.memory_folder = memory_folder.strip("/")
        self.state_dir = state_dir
        self._clock = clock

    def restore(self, stored_path: str) -> TakenBack | None:
        """Bring the archived (or superseded) memory at ``stored_path`` back: remove the
        archive keys and ``valid_to``, put back the previous status, and supersede in turn
        the memory that had superseded it (:meth:`take_back`). Returns what it took back
        from, ``None`` when it was neither archived nor superseded and nothing supersedes
        it."""
        data = self.writer.read(stored_path)
        if data is None:
            raise MemoryNotFoundError(f"restore: {stored_path} is gone")
        note = parse_note(stored_path, data)
        if note.memory is None:
            return None
        if is_archived(note.memory.status):
            restored = unarchived(stored_path, data)
            assert restored is not None
            change = "restored from the archive"
        else:  # closed by `remember`, or named by a newer memory's supersedes
            restored = set_properties(data, {}, remove=("valid_to",), path=stored_path) \
                if note.memory.valid_to is not None else data
            change = "restored: no longer superseded"
        taken = self.take_back(stored_path, restored)
        if taken.data == data and not taken.edits:
            return None
        self.settle(stored_path, taken, base=data, change=change, origin="api")
        return taken

    def take_back(self, stored_path: str, data: bytes) -> TakenBack:
        """A user's restore of the memory at ``stored_path`` to ``data`` (its content after
        the restore): every memory of the memory folder whose ``supersedes`` names it stops
        naming it; those still current are superseded by it in turn (``valid_to`` today,
        ``superseded_by``, ``updated``, ``version`` + 1), and ``data`` names them in its
        ``supersedes``; a ``superseded_by`` left in ``data`` goes. Reads only; :meth:`settle`
        writes. Nothing to take back when ``data`` is itself archived or superseded (the user
        restored a superseded state)."""
        note = parse_note(stored_path, data)
        now = self._clock()
        if note.memory is None or not _current(note.memory.status, note.memory.valid_to,
                                               now.date()):
            return TakenBack(data)
        stem = Path(stored_path).stem
        edits: list[tuple[str, bytes, bytes, str]] = []
        superseded: list[str] = []
        unlinked: list[str] = []
        folder = self.root / self.memory_folder
        for candidate in sorted(folder.glob("*.md")):
            rel = candidate.relative_to(self.root).as_posix()
            if rel == stored_path or candidate.is_symlink() or not candidate.is_file():
                continue
            before = self.writer.read(rel)
            if before is None or f"[[{stem}".casefold().encode() not in before.lower():
                continue
            other = parse_note(rel, before)
            meta = other.memory
            if meta is None or not any(_names(t, stem) for t in meta.supersedes):
                continue
            kept = [t for t in meta.supersedes if not _names(t, stem)]
            updates = _links(kept)
            if _current(meta.status, meta.valid_to, now.date()):
                updates |= {"valid_to": now.date(), "superseded_by": f"[[{stem}]]",
                            "updated": now, "version": (meta.version or 1) + 1}
                change = f"superseded by {stem}: the user restored it"
                superseded.append(rel)
            else:
                change = f"no longer supersedes {stem} (restored)"
                unlinked.append(rel)
            edits.append((rel, before, set_properties(before, updates, path=rel), change))
        own = list(note.memory.supersedes)
        own += [Path(p).stem for p in superseded if not any(_names(t, Path(p).stem) for t in own)]
        # current again: no ``superseded_by`` (``remember`` writes one with ``valid_to``)
        data = set_properties(data, _links(own) if superseded else {}, path=stored_path,
                              remove=[k for k in ("superseded_by",) if k in note.properties])
        return TakenBack(data, tuple(edits), tuple(superseded), tuple(unlinked))

    def settle(self, stored_path: str, taken: TakenBack, *, base: bytes | None, change: str,
               origin: str) -> WriteOutcome:
        """Write a restore :meth:`take_back` planned: the restored memory (on ``base``),
        then the memories it takes back from, and record it as restored by hand."""
        outcome = self.writer.write(stored_path, taken.data, base=base, origin=origin,
                                    change=change)
        if outcome.conflict_path is None:  # else the file moved on: the user settles it
            self.after_restore(stored_path, taken, outcome)
        return outcome

    def set_aside(self, stored_path: str, data: bytes | None) -> bool:
        """Is the memory file ``data`` archived or superseded today (what a rollback to a
        current version brings back, as ``dreamd restore`` does)?"""
        note = parse_note(stored_path, data) if data is not None else None
        return note is not None and note.memory is not None and not _current(
            note.memory.status, note.memory.valid_to, self._clock().date())

    def after_restore(self, stored_path: str, taken: TakenBack, outcome: WriteOutcome) -> None:
        """Write the memories ``taken`` takes back from and record ``stored_path`` as
        restored by hand (the dream then leaves it alone until it is edited)."""
        for path, before, after, what in taken.edits:
            self.writer.write(path, after, base=before, origin="api", change=what)
            log.info("dream.restore_took_back", path=path, restored=stored_path,
                     superseded=path in taken.superseded)
        kept = self.restored()
        kept[stored_path] = outcome.content_hash
        write_json_atomic(self.state_dir / RESTORED_FILE, kept)

    def carry(self, hashes: Mapping[str, str], written: Sequence[str]) -> None:
        """A restored memory the dream itself edited (a link check, a promotion) stays
        restored: its record follows the dream's write."""
        kept = self.restored()
        moved = {p: hashes[p] for p in written if p in kept and p in hashes}
        if moved:
            write_json_atomic(self.state_dir / RESTORED_FILE, {**kept, **moved})

    def restored(self) -> dict[str, str]:
        """``{path: hash}`` of memories restored by hand: left out of consolidation and the
        lifecycle while they stay as restored (an edit makes them ordinary again)."""
        data = read_json_object(self.state_dir / RESTORED_FILE)
        return {str(k): str(v) for k, v in data.items()}
