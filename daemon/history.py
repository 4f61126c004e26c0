"""Versions of memories as they change: recording, history, diff and rollback.

:class:`VersionRecorder` is what the indexer calls: every memory note it is about to index is
offered as a version (:class:`magma.versions.VersionArchive` skips unchanged content), and
every memory file it is about to drop from the index is marked *gone*. A gone memory gets a
tombstone version only once the checker sees it still gone after ``check.orphan_grace_s``
(editors and sync tools delete and re-create files); the mark is written before the index
forgets the file, so a crash cannot lose it. The origin of a version comes from the writer
(:meth:`ccb.writer.NoteWriter.origin_of`): bytes dreamd wrote are ``api``, ``dream``,
``rollback`` or ``arbiter``; anything else is a ``user-edit``.

:class:`HistoryService` answers ``dreamd history``, ``diff`` and ``rollback`` (and the MCP
tools ``memory_history`` and ``memory_rollback``). Rollback writes the old version's exact
bytes through the single writer, as a new version, after archiving unrecorded current content
(CONVENTIONS.md rule 8), so a rollback can itself be rolled back.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import filelock
import structlog

from ccb.atomic import read_json_object, write_bytes_atomic
from ccb.model import PATH_KEY_PREFIX, Note, memory_key
from ccb.names import nfc_key
from ccb.owner import Owner
from ccb.parse import parse_note
from ccb.scan import read_note_bytes
from ccb.writer import NoteWriter, WriteOutcome
from config.errors import DreamdError, MemoryNotFoundError, VersionNotFoundError
from consistency.arbiter import KeepFile, ManualReview, TakeMagma, decide
from consistency.checker import Divergent
from daemon.dream_restore import Restorer, TakenBack
from daemon.entry_versions import (
    current_entry_note,
    entry_of_key,
    locate_entry,
    origins_of,
    write_entry_line,
)
from daemon.lock import held
from magma.store import MagmaStore
from magma.versions import NewVersion, Version, VersionArchive, VersionKind, current

if TYPE_CHECKING:
    from daemon.memories import MemoryService

__all__ = [
    "BASES_FILE",
    "PENDING_TOMBSTONES_FILE",
    "HistoryService",
    "MemoryLocator",
    "RollbackResult",
    "VersionRecorder",
    "forget_remains",
    "note_memory_key",
]

log = structlog.get_logger("dreamd.history")

#: State-dir file of memories whose file went away, ``{key: {"path", "since"}}`` (ISO UTC).
PENDING_TOMBSTONES_FILE = "tombstones-pending.json"
#: State-dir file of the version each memory was last in step with here, ``{key: hash}``.
BASES_FILE = "history-bases.json"
#: How long a process waits for another's update of those files, in seconds.
LOCK_TIMEOUT_S = 60.0


def note_memory_key(note: Note) -> str:
    """:func:`ccb.model.memory_key` of a parsed memory file."""
    assert note.memory is not None
    return memory_key(note.memory.id, note.path)


def _lines_json(mapping: Mapping[str, str]) -> str:
    """``json.dumps(mapping, ensure_ascii=False, indent=0, sort_keys=True) + "\\n"`` (one
    pair a line), by the C encoder: an indent takes the pure-Python one, 11 ms for the
    bases of 1,000 memories on every ``remember``."""
    if not mapping:
        return "{}\n"
    pairs = json.dumps(mapping, ensure_ascii=False, sort_keys=True, separators=(",\n", ": "))
    return "{\n" + pairs[1:-1] + "\n}\n"


class VersionRecorder:
    """Offers memory notes to the version archive as the indexer writes them (module doc).

    ``origin_of(content_hash) -> (origin, change) | None`` names dreamd's own writes;
    ``state_dir`` holds the pending tombstones. Raises what the archive raises."""

    def __init__(
        self, archive: VersionArchive, state_dir: Path,
        origin_of: Callable[[str], tuple[str, str] | None],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.archive = archive
        self._pending_file = state_dir / PENDING_TOMBSTONES_FILE
        self._bases_file = state_dir / BASES_FILE
        self._origin_of = origin_of
        self._clock = clock
        # The daemon and CLI processes read-modify-write the bases and the gone marks, and
        # decide a version on the bases they read: one at a time (reentrant in a process).
        self._lock = filelock.FileLock(state_dir / "history.lock", timeout=LOCK_TIMEOUT_S)
        # {key: content hash} recorded by offer_ahead, until the index offers the same bytes
        self._ahead: dict[str, str] = {}

    def offer(self, notes: Sequence[tuple[Note, bytes, str | None]],
              origins: Mapping[str, str] | None = None) -> list[Version]:
        notes = [n for n in notes if not self._recorded_ahead(n[0])]
        if not notes:
            return []
        with self._locked():
            return self._offer(notes, origins or {})

    def offer_ahead(self, notes: Sequence[tuple[Note, bytes]]) -> list[Version]:
        """:meth:`offer` of memory files as just written, before their index write (which
        offers the same bytes again and is let through at once: they are recorded). A
        memory with a history but no base on this device (made on another device) is left
        to the index write, which knows the index row it replaces."""
        with self._locked(), self.archive.lease():
            wanted = [(n, d, None) for n, d in notes if n.memory is not None]
            known = self.archive.all_versions({note_memory_key(n) for n, _, _ in wanted})
            bases = self.bases()
            wanted = [(n, d, h) for n, d, h in wanted
                      if note_memory_key(n) in bases or not known.get(note_memory_key(n))]
            made = self._offer_known(wanted, known, {}) if wanted else []
        self._ahead.update({note_memory_key(n): n.content_hash for n, _, _ in wanted})
        return made

    def _recorded_ahead(self, note: Note) -> bool:
        """Did :meth:`offer_ahead` record ``note``'s bytes? (Asked once per key: any later
        offer of it is decided on the archive again.)"""
        key = note_memory_key(note) if note.memory is not None else None
        return key is not None and self._ahead.pop(key, None) == note.content_hash

    def _offer(self, notes: Sequence[tuple[Note, bytes, str | None]],
               origins: Mapping[str, str]) -> list[Version]:
        """Record each memory note's bytes (with the hash its index row had before, or
        ``None``) as a version when they differ from its current one; returns the versions
        made. Memories offered are no longer pending deletion. ``origins`` maps a history
        key to the content hash whose writer names the version's origin when its own does
        not (an entry's line: its file's bytes, :mod:`daemon.entry_versions`).

        The current version moves only when this device's base is the current version (an
        edit here) or the arbiter lets the file win a divergence (``user``/``feedback``); a
        file that diverged otherwise is kept as a side version for ``dreamd check``, and a
        file unchanged since its base (another device moved on) is left alone.
        """
        wanted = [(n, d, h) for n, d, h in notes if n.memory is not None]
        if not wanted:
            return []
        with self.archive.lease():  # read once; the record under the same lease
            known = self.archive.all_versions({note_memory_key(n) for n, _, _ in wanted})
            return self._offer_known(wanted, known, origins)

    def _offer_known(self, wanted: Sequence[tuple[Note, bytes, str | None]],
                     known: dict[str, list[Version]], origins: Mapping[str, str]
                     ) -> list[Version]:
        heads = {key: head for key, versions in known.items()
                 if (head := current(versions)) is not None}
        bases = self.bases()
        items: list[NewVersion] = []
        moved: dict[str, str] = {}
        for note, data, row_hash in wanted:
            assert note.memory is not None
            key, f = note_memory_key(note), note.content_hash
            head = heads.get(key)
            base = self._base(head, bases.get(key, row_hash))
            origin, change = self._origin_of(f) or (
                self._origin_of(origins[key]) if key in origins else None) or ("user-edit", "")
            kind: VersionKind = "edit"
            if head is None or (head.kind == "edit" and head.content_hash in {f, base}):
                pass
            elif head.kind == "tombstone" or base == f:
                if base == f:
                    continue  # unchanged here; the newer version is another device's
            else:
                decision = decide(Divergent(note.path, key, note.memory.type, f, head.n, base))
                if isinstance(decision, KeepFile):
                    change = f"{change or 'edited here'}; won over version {head.n}: " \
                             f"{decision.reason}"
                else:
                    assert isinstance(decision, TakeMagma | ManualReview)
                    kind = "kept"
                    change = (f"{change or 'edited here'} while version {head.n} was made "
                              f"elsewhere; kept for dreamd check ({decision.reason})")
            if kind == "edit":
                moved[key] = f
            items.append(NewVersion(
                memory_id=key, path=note.path, content=data, origin=origin, change_log=change,
                kind=kind, memory_type=note.memory.type, name=note.memory.name,
            ))
        made = self.archive.record(items, now=self._clock(), known=known)
        self.set_bases(moved)
        self._clear_pending({i.memory_id for i in items})
        return made

    def _base(self, head: Version | None, base: str | None) -> str | None:
        """The version this device agreed with: ``base``, or the current version when a
        dreamd process of this device wrote its bytes (its origin is known here) — a process
        killed between recording a version and keeping it as the base (kill -9, a power cut)
        left ``base`` behind, and the next edit here would pass for a divergence."""
        if head is not None and head.kind == "edit" and base != head.content_hash \
                and self._origin_of(head.content_hash) is not None:
            return head.content_hash
        return base

    def bases(self) -> dict[str, str]:
        """``{key: content hash}`` of the version this device last agreed with, per memory
        (the base of :mod:`consistency.checker`)."""
        data = read_json_object(self._bases_file)
        return {k: v for k, v in data.items() if isinstance(v, str)}

    def set_bases(self, changes: Mapping[str, str | None]) -> None:
        """Set (or, with ``None``, drop) the base of some memories."""
        if not changes:
            return
        with self._locked():
            self._set_bases(changes)

    def _set_bases(self, changes: Mapping[str, str | None]) -> None:
        bases = self.bases()
        for key, value in changes.items():
            if value is None:
                bases.pop(key, None)
            else:
                bases[key] = value
        write_bytes_atomic(self._bases_file, _lines_json(bases).encode("utf-8"))

    def gone(self, memories: Sequence[tuple[str, str]]) -> None:
        """Mark ``(key, path)`` memories whose file left the vault (before the index drops
        them): the checker tombstones them once they stay gone."""
        if not memories:
            return
        with self._locked():
            self._gone(memories)

    def _gone(self, memories: Sequence[tuple[str, str]]) -> None:
        heads = self.archive.heads({key for key, _ in memories})
        live = [(k, p) for k, p in memories if k in heads and heads[k].kind != "tombstone"]
        if not live:
            return  # no history (or forgotten): nothing to tombstone
        pending = self.pending()
        stamp = self._clock().isoformat()
        for key, path in live:
            pending.setdefault(key, {"path": path, "since": stamp})
        self._save_pending(pending)

    def pending(self) -> dict[str, dict[str, str]]:
        """``{key: {"path", "since"}}`` of memories marked gone and not yet tombstoned."""
        data = read_json_object(self._pending_file)
        return {k: v for k, v in data.items() if isinstance(v, dict)
                and isinstance(v.get("path"), str) and isinstance(v.get("since"), str)}

    def tombstone(self, keys: Collection[str]) -> list[Version]:
        """Record tombstones for pending ``keys`` and clear their marks."""
        with self._locked():
            return self._tombstone(keys)

    def _tombstone(self, keys: Collection[str]) -> list[Version]:
        pending = self.pending()
        items = [NewVersion(memory_id=k, path=pending[k]["path"], content=b"",
                            origin="user-edit", change_log="the file was deleted",
                            kind="tombstone") for k in sorted(keys) if k in pending]
        made = self.archive.record(items, now=self._clock())
        self.set_bases({v.memory_id: None for v in made})
        self._clear_pending(set(keys))
        return made

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return held(self._lock, "history", LOCK_TIMEOUT_S)

    def forget(self, key: str) -> None:
        """Drop what this device keeps about a forgotten memory (its base, a gone mark: the
        mark names its old path)."""
        self.set_bases({key: None})
        self._clear_pending({key})

    def _clear_pending(self, keys: set[str]) -> None:
        with self._locked():
            self._clear_pending_locked(keys)

    def _clear_pending_locked(self, keys: set[str]) -> None:
        pending = self.pending()
        if keys & pending.keys():
            self._save_pending({k: v for k, v in pending.items() if k not in keys})

    def _save_pending(self, pending: dict[str, dict[str, str]]) -> None:
        text = json.dumps(pending, ensure_ascii=False, indent=1) + "\n"
        write_bytes_atomic(self._pending_file, text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class RollbackResult:
    """What ``rollback`` did: the file written and the version it restored."""

    memory_id: str
    path: str
    restored: int
    status: str
    conflict_path: str | None = None
    #: Memories that had superseded it, superseded by it in turn (the user's restore is
    #: the word that the old fact holds again: :meth:`daemon.dream_restore.Restorer.take_back`).
    superseded: tuple[str, ...] = ()
    #: Memories, superseded themselves, that only stopped naming it in ``supersedes``.
    unlinked: tuple[str, ...] = ()


def forget_remains(memories: MemoryService, history: HistoryService, id_or_name: str
                   ) -> tuple[str, str] | None:
    """What ``forget`` is to erase: ``None`` for a memory with a file
    (:meth:`MemoryService.find`), else ``(history key, path)`` of one whose file is gone
    (:meth:`HistoryService.remains`), or of one whose forget was cut short (a kill between
    its steps: :mod:`daemon.forget_journal`; its versions may be gone already). Raises the
    error of ``find`` (no such memory, or several) when none names one."""
    try:
        memories.find(id_or_name)
        return None
    except MemoryNotFoundError as missing:
        begun = memories.unfinished_forget(id_or_name)
        if begun is not None:
            return begun
        try:
            return history.remains(id_or_name)
        except MemoryNotFoundError:
            raise missing from None


class HistoryService:
    """History, diff and rollback of one vault's memories.

    ``locate(key) -> (path, bytes) | None`` finds a memory's file now (``None`` when it has
    none in the vault); ``index(paths) -> bool`` rebuilds ``MEMORY.md`` and re-indexes after a
    write (:meth:`daemon.memories.MemoryService.after_change`), which records the rollback
    as a version; ``visible(content) -> bool`` says whether the caller may see a version
    (its owner then), so an owner never reads what another owner's version said;
    ``restorer`` takes a restored memory back from those that had superseded it
    (:meth:`daemon.dream_restore.Restorer.take_back`; ``None``: the file alone is written).
    """

    def __init__(
        self, archive: VersionArchive, writer: NoteWriter, recorder: VersionRecorder,
        locate: Callable[[str], tuple[str, bytes] | None],
        resolve: Callable[[str], str],
        index: Callable[[Collection[str]], bool],
        visible: Callable[[bytes], bool] = lambda data: True,
        restorer: Restorer | None = None,
    ) -> None:
        self._visible = visible
        self.restorer = restorer
        self.archive = archive
        self.writer = writer
        self.recorder = recorder
        self._locate = locate
        self._resolve = resolve
        self._index = index

    def key(self, id_or_name: str) -> str:
        """The history key of a memory named by id, name, file name or path (a deleted
        memory by its id). Raises :class:`MemoryNotFoundError`."""
        return self._resolve(id_or_name)

    def history(self, id_or_name: str) -> list[Version]:
        """Every version of the memory, oldest first. Raises ``MemoryNotFoundError`` when it
        has none."""
        key = self.key(id_or_name)
        versions = self._visible_versions(key)
        if not versions:
            raise MemoryNotFoundError(
                f"history: {id_or_name}: no versions recorded yet (the indexer records one "
                "when it first sees the memory; run dreamd sync)"
            )
        return versions

    def remains(self, id_or_name: str) -> tuple[str, str]:
        """``(history key, vault path)`` of a memory whose file is gone but whose versions
        dreamd keeps: what ``forget`` can still erase (a forget cut short by a crash, a
        file deleted by hand). Raises :class:`MemoryNotFoundError` when there is no such
        history, or the memory still has a file."""
        key = self.key(id_or_name)
        versions = self._visible_versions(key)
        if not versions or self._locate(key) is not None:
            raise MemoryNotFoundError(f"memory {id_or_name!r}: no memory has that id or name")
        return key, versions[-1].path

    def diff(self, id_or_name: str, a: int, b: int | None = None) -> str:
        """Unified diff of version ``a`` to ``b`` (default: the file as it is now).
        Raises ``VersionNotFoundError``."""
        key = self.key(id_or_name)
        old = self._content(key, a)
        if b is None:
            found = self._locate(key)
            new, label = (found[1], f"{found[0]} (now)") if found else (b"", "(no file)")
        else:
            new, label = self._content(key, b), f"version {b}"
        lines = difflib.unified_diff(
            _text(old).splitlines(keepends=True), _text(new).splitlines(keepends=True),
            fromfile=f"version {a}", tofile=label)
        return "".join(lines)

    def rollback(self, id_or_name: str, n: int) -> RollbackResult:
        """Write version ``n``'s exact bytes back as the memory's file, recorded as a new
        version (origin ``rollback``). Unrecorded current content is archived first. A
        version from before the memory was superseded is the user's word that it holds
        again: the memories that had superseded it are superseded by it in turn, its
        ``supersedes`` names them (the one line that differs from version ``n``), and the
        dream leaves it as restored (:meth:`daemon.dream_restore.Restorer.take_back`).
        Raises ``VersionNotFoundError`` (also for a tombstone or a number it never had)."""
        key = self.key(id_or_name)
        self._content(key, n)  # VersionNotFoundError for one the caller may not see
        version = self.archive.get(key, n)
        if version.kind == "tombstone":
            raise VersionNotFoundError(
                f"rollback {key}: version {n} records the deletion; roll back to "
                f"{version.prev or n - 1} to restore what it said before")
        data = self.archive.content(key, n)
        if entry_of_key(key) is not None:  # one line of an entry file
            return self._rollback_line(key, n, data)
        found = self._locate(key)
        if found is not None:
            path, now_bytes = found
            note = parse_note(path, now_bytes)
            if note.memory is not None:
                self.recorder.offer([(note, now_bytes, None)])  # CONVENTIONS.md rule 8
        else:
            path, now_bytes = version.path, None
        head = current(self.archive.history(key))
        taken = self.restorer.take_back(path, data) if self.restorer else TakenBack(data)
        outcome: WriteOutcome = self.writer.write(
            path, taken.data, base=now_bytes, origin="rollback", restores=True,
            change=f"rollback to version {n}" + (f" (from {head.n})" if head else "")
            + "".join(f"; supersedes {Path(p).stem} in turn" for p in taken.superseded))
        if self.restorer is not None and outcome.conflict_path is None and (
                taken.edits or self.restorer.set_aside(path, now_bytes)):
            self.restorer.after_restore(path, taken, outcome)
        else:
            taken = TakenBack(data)
        self._index([path, *(edit[0] for edit in taken.edits)])
        log.info("memory.rolled_back", memory_id=key, to=n, path=path, status=outcome.status,
                 superseded=list(taken.superseded))
        return RollbackResult(key, path, n, outcome.status, outcome.conflict_path,
                              taken.superseded, taken.unlinked)

    def _rollback_line(self, key: str, n: int, data: bytes) -> RollbackResult:
        """Rollback of an entry: its line now is recorded, then version ``n``'s line is
        written in its place (:mod:`daemon.entry_versions`)."""
        now = current_entry_note(self.writer, key)
        if now is not None:  # CONVENTIONS.md rule 8
            self.recorder.offer([(now[0], now[1], None)], origins_of({now[0].path: now[2]}))
        head = current(self.archive.history(key))
        outcome = write_entry_line(self.writer, key, data, change=f"rollback to version {n}"
                                   + (f" (from {head.n})" if head else ""))
        self._index([outcome.path])
        path = key.removeprefix(PATH_KEY_PREFIX)
        log.info("memory.rolled_back", memory_id=key, to=n, path=path, status=outcome.status)
        return RollbackResult(key, path, n, outcome.status, outcome.conflict_path)

    def _visible_versions(self, key: str) -> list[Version]:
        versions = self.archive.history(key)
        shown, last_visible = [], False
        for version in versions:
            if version.kind == "tombstone":
                ok = last_visible
            else:
                ok = last_visible = self._visible(self.archive.content(key, version.n))
            if ok:
                shown.append(version)
        return shown

    def _content(self, key: str, n: int) -> bytes:
        """Version ``n``'s bytes if the caller may see them; else, like a number that does
        not exist, ``VersionNotFoundError``."""
        version = self.archive.get(key, n)
        data = self.archive.content(key, n) if version.kind != "tombstone" else b""
        if version.kind != "tombstone" and not self._visible(data):
            numbers = ", ".join(str(v.n) for v in self._visible_versions(key)) or "none"
            raise VersionNotFoundError(
                f"versions: {key} has no version {n} (versions {numbers}; see its history)")
        return data


def _text(data: bytes) -> str:
    """A version's bytes as text for a diff (UTF-16 files have a BOM)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8-sig", "replace")


class MemoryLocator:
    """Where a memory of the vault is, for :class:`HistoryService`: by id, name, file name or
    path (a deleted memory by the id or name its history recorded), acting for ``owner``
    (``None``: the vault's owner, who sees every memory)."""

    def __init__(self, memories: MemoryService, archive: VersionArchive, store: MagmaStore,
                 vault_root: Path, owner: Owner | None) -> None:
        self.memories = memories
        self.archive = archive
        self.store = store
        self.vault_root = vault_root
        self.owner = owner

    def resolve(self, id_or_name: str) -> str:
        """The history key of a memory. Raises :class:`MemoryNotFoundError`."""
        try:
            return note_memory_key(self.memories.find(id_or_name).note)
        except MemoryNotFoundError:
            pass
        wanted = id_or_name.strip()
        versions = self.archive.history(wanted) or self.archive.history(memory_key(None, wanted))
        if not versions:
            # by name, by the path of a memory without an id, or by the path a memory with
            # an id was last at (its file deleted by hand), compared in NFC
            folded, path_key = nfc_key(wanted).casefold(), nfc_key(memory_key(None, wanted))
            for key, history in self.archive.all_versions().items():
                if nfc_key(key) == path_key or any(
                        nfc_key(v.name or "").casefold() == folded for v in history) or (
                        history and nfc_key(history[-1].path) == nfc_key(wanted)):
                    versions = history
                    break
        if not versions or not self._sees_history(versions):
            raise MemoryNotFoundError(
                f"memory {id_or_name!r}: no memory or history has that id or name")
        return versions[0].memory_id

    def locate(self, key: str) -> tuple[str, bytes] | None:
        """``(path, bytes)`` of the memory's file now, or ``None`` when it has none; for an
        entry, ``(entry path, its line)`` (:mod:`daemon.entry_versions`)."""
        if entry_of_key(key) is not None:
            return locate_entry(self.memories.writer, key)
        for stored in self.memories.memories():
            if note_memory_key(stored.note) == key:
                return stored.path, stored.data
        # a memory outside the memory folder: the index knows where its id lives
        for path, row in self.store.file_index().items():
            if row.memory_type is None or memory_key(row.memory_id, path) != key:
                continue
            try:
                note, data = read_note_bytes(self.vault_root, path)
            except DreamdError:
                continue
            if note.memory is not None and note_memory_key(note) == key and (
                    self.owner is None or self.owner.sees(note.memory.owner)):
                return path, data
        return None

    def visible(self, data: bytes) -> bool:
        """May the owner see a version with this content (its owner then)?"""
        if self.owner is None:
            return True
        note = parse_note("memory.md", data)
        return note.memory is not None and self.owner.sees(note.memory.owner)

    def _sees_history(self, versions: list[Version]) -> bool:
        """May the owner see the history of a memory that has no file any more? Decided by
        the owner its last recorded content names."""
        if self.owner is None:
            return True
        edits = [v for v in versions if v.kind != "tombstone"]
        if not edits:
            return False
        last = edits[-1]
        note = parse_note(last.path, self.archive.content(last.memory_id, last.n))
        return note.memory is not None and self.owner.sees(note.memory.owner)
