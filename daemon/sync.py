"""Reconcile MAGMA with the vault: the one-shot sync behind ``dreamd sync`` and daemon start-up.

The walk compares ``(path, size, mtime_ns)`` with the store's file index, so a sync with
nothing changed costs one stat walk and one columnar read. Only files whose stat changed are
read and hashed; a file whose bytes hash to what the store holds only has its stat refreshed.
Changed notes are chunked, and only chunks whose content hash the store does not know are
embedded. A delete + add of the same memory ``id`` or the same content hash is a rename: the
note keeps its ``note_id`` (so history and statistics follow the file) and its vectors.

A crash at any point is healed by the next run: each batch is committed in one store write,
and the stat key of a note is written together with its chunks, never before. A plan that
removes nothing from the index (a cold index, one resumed, many edits) reads the next batch
of notes while this one is embedded and written (:mod:`daemon.read_ahead`); a plan that
removes something reads every note first, since pairing renames needs all of them.

A credential the user wrote into a note by hand is withheld from everything indexed
(:func:`consistency.withheld.withhold_credentials`: chunk text, full-text index, vectors,
properties), reported as a ``credential`` problem, and recorded in the state folder's
:class:`daemon.credential_ledger.CredentialLedger` for ``dreamd check`` and ``dreamd doctor``.
"""

from __future__ import annotations

import re
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import Protocol, TypeVar

import numpy as np
import structlog
from ulid import ULID

from ccb.entry_notes import entry_notes, is_entry_note, is_entry_path, split_entry_path
from ccb.model import ConflictCopy, FileEntry, Note, Problem, ScanResult, memory_key
from ccb.scan import VaultFilter, scan_paths, scan_vault
from ccb.writable import file_in_the_way
from config.errors import DreamdError, MassDeleteError
from daemon.credential_ledger import CredentialLedger, CredentialRecord
from daemon.entry_versions import entry_lines, origins_of, version_note
from daemon.history import VersionRecorder, note_memory_key
from daemon.interleave import Interleave, Overtaken
from daemon.read_ahead import read_ahead
from daemon.sync_memo import (
    RUN_VECTORS,
    ContentMemo,
    chunks_of,
    copies_together,
    read_indexed_note,
    run_vectors,
    withheld_of,
)
from magma.chunking import Chunk
from magma.embedder import Embedder
from magma.embedding_cache import CachingEmbedder
from magma.gc_pause import collector_paused
from magma.store import AttachmentRecord, IndexedFile, MagmaStore, NoteRecord

__all__ = [
    "Progress",
    "RootsSyncer",
    "SyncLimits",
    "SyncPlan",
    "SyncReport",
    "Syncer",
    "plan_sync",
    "stale_entry_paths",
]

log = structlog.get_logger("dreamd.sync")

T = TypeVar("T")

#: An index path of an extra root (``ccb.roots``): ``name:`` then the path inside it.
_ROOT_ROW = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}:")

#: Below this many indexed files the mass-delete guard stays quiet: deleting 3 of 4 notes in
#: a tiny vault is an ordinary edit, not an unmounted drive.
MASS_DELETE_MIN_FILES = 20
#: Deletions a long-lived syncer applied within this many seconds count together against
#: ``sync.max_delete_share``: a drive that goes away while the daemon watches arrives as many
#: small watcher batches, each below the share on its own (10 minutes: longer than any
#: unmount or cloud-sync eviction the watcher reports in pieces, shorter than a working
#: session of ordinary deletions).
MASS_DELETE_WINDOW_S = 600.0
#: Texts embedded at a time within a batch: between two slices the progress moves on and a
#: reconcile lets the user's saves and the clients waiting in (:mod:`daemon.interleave`,
#: :mod:`daemon.turns`). 64: one of the model's own batches (``magma.embedder``), about
#: half a second of embedding on one core (DESIGN.md: ≈100 chunks a second), where a whole
#: batch of ``sync.write_batch_files`` notes took 5-10 s; on a machine at load 9 on 2 cores
#: a slice of 128 took 8-10 s, what a client waited for its turn.
EMBED_SLICE_TEXTS = 64


class Progress(Protocol):
    """What a sync reports while it works (a rich progress bar in the CLI)."""

    def phase(self, name: str, total: int) -> None:
        """Start phase ``name`` with ``total`` units of work."""

    def advance(self, units: int = 1) -> None:
        """Mark ``units`` of the current phase as done."""


class _NoProgress:
    def phase(self, name: str, total: int) -> None:
        return None

    def advance(self, units: int = 1) -> None:
        return None


class _Within:
    """The progress of one part of a phase: the part's own units (its phase's ``total``,
    then :meth:`advance`; or a share given to :meth:`to`) move ``bar`` on by the part's
    share of ``units``, never past them."""

    def __init__(self, bar: Progress, units: int) -> None:
        self._bar, self._units = bar, units
        self._total = self._done = self._given = 0

    def phase(self, name: str, total: int) -> None:
        self._total, self._done = total, 0

    def advance(self, units: int = 1) -> None:
        self._done += units
        self.to(self._done / self._total if self._total else 1.0)

    def to(self, share: float) -> None:
        target = min(self._units, int(self._units * share))
        if target > self._given:
            self._bar.advance(target - self._given)
            self._given = target


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """What a stat comparison says: files to read, paths gone, and how many are unchanged."""

    new: tuple[FileEntry, ...]
    changed: tuple[FileEntry, ...]
    deleted: tuple[str, ...]
    unchanged: int


def plan_sync(entries: Iterable[FileEntry], index: Mapping[str, IndexedFile]) -> SyncPlan:
    """Compare a scan with the store's file index by ``(size, mtime_ns)`` only.

    Pure. Returns new paths, paths whose stat changed (they may still hash the same), paths in
    the index but not on disk, and the count of untouched files. Entry rows
    (``file.md#key``, :mod:`ccb.entry_notes`) are not files: they follow their file
    (:func:`stale_entry_paths`); a file named so (``scan.md#0123abcd``, an attachment) is
    a file.
    """
    new: list[FileEntry] = []
    changed: list[FileEntry] = []
    seen: set[str] = set()
    unchanged = 0
    get = index.get
    for entry in entries:  # (no tuple per file: a start at 100,000 files compares them all)
        seen.add(path := entry.path)
        known = get(path)
        if known is None:
            new.append(entry)
        elif known.size != entry.size or known.mtime_ns != entry.mtime_ns \
                or known.kind != entry.kind:
            changed.append(entry)
        else:
            unchanged += 1
    deleted = tuple(sorted(p for p in index.keys() - seen  # (an attachment may be named so)
                           if not (is_entry_path(p) and index[p].kind == "note")))
    return SyncPlan(tuple(new), tuple(changed), deleted, unchanged)


def stale_entry_paths(index: Collection[str], gone: Collection[str],
                      read: Mapping[str, Collection[str]], read_files: Collection[str]
                      ) -> list[str]:
    """Entry rows of ``index`` to remove: those of a file ``gone`` from the vault, and those
    of a file read again (``read_files``) that no longer has them (``read``: the entry paths
    of each entry file read; a file that stopped being an entry file has none). Pure."""
    gone_set, read_set = set(gone), set(read_files)
    if not gone_set and not read_set:  # nothing gone, nothing read: a start where nothing changed
        return []
    stale = []
    for path in index:
        if "#" not in path:  # a file's path (an entry's is ``file.md#key``): no regex
            continue
        parts = split_entry_path(path)
        if parts is None:
            continue
        parent = parts[0]
        if parent in gone_set or (parent in read_set and path not in read.get(parent, ())):
            stale.append(path)
    return sorted(stale)


@dataclass(frozen=True, slots=True)
class SyncReport:
    """The outcome of one reconcile. Counts are files; chunk counts are chunks."""

    added: int = 0
    modified: int = 0
    deleted: int = 0
    renamed: tuple[tuple[str, str], ...] = ()
    unchanged: int = 0
    touched: int = 0
    chunks_embedded: int = 0  # by the model
    chunks_reused: int = 0  # vectors the index held
    chunks_cached: int = 0  # vectors the embedding cache held (magma.embedding_cache)
    problems: tuple[Problem, ...] = ()
    conflict_copies: tuple[ConflictCopy, ...] = ()
    duration_s: float = 0.0
    files_total: int = 0
    changed_paths: tuple[str, ...] = field(default=(), repr=False)


@dataclass(slots=True)
class _Work:
    """Parsed notes to write, with the ids they keep."""

    notes: list[tuple[FileEntry, Note, str]] = field(default_factory=list)
    attachments: list[AttachmentRecord] = field(default_factory=list)
    touches: list[FileEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    memory_bytes: dict[str, bytes] = field(default_factory=dict)
    #: The credentials withheld from each note read (``None``: it has none).
    credentials: dict[str, CredentialRecord | None] = field(default_factory=dict)
    #: The entry paths of each entry file read (``ccb.entry_notes``).
    entry_files: dict[str, set[str]] = field(default_factory=dict)
    #: The file hash of each entry whose line is in ``memory_bytes`` (the origin of its
    #: version, :mod:`daemon.entry_versions`).
    entry_origins: dict[str, str] = field(default_factory=dict)

    def add_note(self, entry: FileEntry, note: Note, note_id: str) -> None:
        self.positions[entry.path] = len(self.notes)
        self.notes.append((entry, note, note_id))


@dataclass(frozen=True, slots=True)
class SyncLimits:
    """How a sync cuts and batches notes, and when it stops (the ``sync`` config section).

    ``chunk_max_chars``: the longest chunk, in characters. ``batch_files``: notes embedded and
    committed per store write (one table version per batch, DESIGN.md: never one per note).
    ``max_delete_share``: the share of the index a sync may remove before it stops and asks
    (``allow_mass_delete``). ``max_note_chars``: a note body is cut there (reported), after
    its inline binary data is dropped (:func:`magma.inline_data.drop_inline_data`).
    ``empty_recheck_s``: seconds to wait before believing a file read empty (an editor's
    atomic save caught between truncate and write).
    """

    chunk_max_chars: int
    batch_files: int
    max_delete_share: float
    max_note_chars: int = 500_000
    empty_recheck_s: float = 0.2



def cut_body(note: Note, max_chars: int) -> Note:
    """``note`` with its body cut at ``max_chars`` characters (``sync.max_note_chars``) and
    the links of the lines cut away left out with them, as the text is: the index holds the
    first part of a note too big to index, not its links to the end (a 50 MB log with a link
    on each line stored 735,294 link rows: 124 s of sync, 1.4 GB). A link of the line cut
    through is kept; links in properties are kept."""
    body = note.body[:max_chars]
    last = body.count("\n")  # (0-based: the line cut through)
    return replace(note, body=body,
                   links=tuple(link for link in note.links if link.line <= last))


class Syncer:
    """Runs reconciles of one vault into one store with one embedder, within ``limits``
    (:class:`SyncLimits`); ``credentials`` records the credentials withheld (none kept
    without it)."""

    def __init__(
        self,
        root: Path,
        vfilter: VaultFilter,
        store: MagmaStore,
        embedder_factory: Callable[[], Embedder],
        *,
        limits: SyncLimits,
        prefix: str = "",
        claimed: Collection[str] = (),
        recorder: VersionRecorder | None = None,
        credentials: CredentialLedger | None = None,
        entry_folder: str | None = None,
    ) -> None:
        self.root = root
        #: The vault folder (the memory folder) where ``<!--m:`` comments make entry files.
        self.entry_folder = entry_folder.strip("/") if entry_folder is not None else None
        self.recorder = recorder
        self.credentials = credentials
        self.prefix = prefix
        self.claimed = tuple(p for p in claimed if len(p) > len(prefix) and p.startswith(prefix))
        self.vfilter = vfilter
        self.store = store
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self.chunk_max_chars = limits.chunk_max_chars
        self.batch_files = limits.batch_files
        self.max_delete_share = limits.max_delete_share
        self.empty_recheck_s = limits.empty_recheck_s
        self.max_note_chars = limits.max_note_chars
        #: ``(time.monotonic(), files deleted)`` of the deletions applied lately.
        self._deleted_lately: deque[tuple[float, int]] = deque()
        #: The watcher's batches let in while a reconcile runs (:mod:`daemon.interleave`).
        self._interleave: Interleave | None = None
        #: What a reconcile that reads ahead knows of the contents read (:mod:`daemon.sync_memo`).
        self._memo: ContentMemo | None = None

    def owns(self, path: str) -> bool:
        """True when index path ``path`` belongs to this syncer's root (its prefix, and no
        longer prefix another root claims)."""
        return path.startswith(self.prefix) and not any(path.startswith(c) for c in self.claimed)

    def _index(self) -> dict[str, IndexedFile]:
        index = self.store.file_index()
        if not self.prefix and not self.claimed:
            return index
        return {path: known for path, known in index.items() if self.owns(path)}

    def _scan(self, rel_paths: Collection[str] | None = None) -> ScanResult:
        """Walk the root (or some index paths of it) and return index paths."""
        if rel_paths is None:
            scan = scan_vault(self.root, self.vfilter)
        else:
            inside = {p[len(self.prefix):] for p in rel_paths if self.owns(p)}
            scan = scan_paths(self.root, self.vfilter, inside)
        if not self.prefix and not self.claimed:
            return scan
        return _prefixed(scan, self.prefix, self.owns)

    def _embed(self, texts: Sequence[str]) -> tuple[np.ndarray, int]:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return _embed_counted(self._embedder, texts)

    # ------------------------------------------------------------------ reconcile

    def reconcile(
        self, *, progress: Progress | None = None, allow_mass_delete: bool = False,
        sweep: bool = True, interleave: Interleave | None = None,
    ) -> SyncReport:
        """Walk the vault and bring the store in line with it; ``sweep``: remove the rows of
        paths without a file row too (:meth:`magma.store.MagmaStore.orphaned_paths`, every
        chunk's path read; :class:`RootsSyncer` skips it on sealed tables). ``interleave``
        is called between commits, while reading, and between slices of embedding: the
        paths it syncs are left as it left them (:mod:`daemon.interleave`).

        Raises ``VaultError`` when the root is unreadable and ``MassDeleteError`` (the index is
        kept untouched) when the walk would remove more than ``max_delete_share`` of it.
        """
        started = time.perf_counter()
        with collector_paused():  # a record of every file, twice: magma.gc_pause
            scan = self._scan()
            index = self._index()
            plan = plan_sync(scan.entries, index)
        on_disk = {entry.path for entry in scan.entries}
        orphans = tuple(sorted(p for p in self.store.orphaned_paths() - on_disk
                               if self.owns(p))) if sweep else ()
        if orphans:
            log.warning("sync.orphans_removed", paths=len(orphans))
        self._interleave = interleave
        try:
            report = self._run(scan, index, plan, started, progress, allow_mass_delete,
                               full=True, orphans=orphans)
            self._between()  # what came during the last commit
        finally:
            self._interleave = None
        left = interleave.overtaken if interleave is not None else Overtaken()
        self._record_credentials({}, (), keep=lambda p: not self.owns(p) or p in on_disk
                                 or p in left)
        blocked = _memory_folder_blocked(self.root, self.entry_folder)
        return replace(report, problems=tuple(
            p for p in (*report.problems, *([blocked] if blocked else [])) if p.path not in left))

    def _between(self) -> None:
        """Let the watcher's batches in, when a reconcile runs (:mod:`daemon.interleave`)."""
        if self._interleave is not None:
            self._interleave()

    def _left(self, path: str) -> bool:
        """Whether the reconcile under way leaves ``path`` as a watcher batch synced it (never
        within that batch's own work)."""
        interleave = self._interleave
        return interleave is not None and not interleave.running \
            and path in interleave.overtaken

    def sync_paths(
        self, rel_paths: Collection[str], *, allow_mass_delete: bool = False,
        progress: Progress | None = None,
    ) -> SyncReport:
        """Bring the store in line with some paths only (the watcher's batches), telling
        ``progress`` how far it got.

        Each vault-relative path is looked at as it is *now*, whatever event announced it: an
        existing file is indexed (``added`` for a known path counts as modified), a folder is
        walked (children of a renamed folder arrive without events), a missing path removes
        the file, or every indexed file under it. A note that is empty now but was not is
        looked at again after ``empty_recheck_s`` (editors truncate before they write).
        Raises like :meth:`reconcile`.
        """
        started = time.perf_counter()
        wanted = {p.strip("/") for p in rel_paths if p.strip("/") and self.owns(p.strip("/"))}
        index = self._index()
        scan = self._scan(wanted)
        if self.empty_recheck_s and any(
            e.size == 0 and e.path in index and index[e.path].size > 0 for e in scan.entries
        ):
            time.sleep(self.empty_recheck_s)
            scan = self._scan(wanted)
        found = {e.path for e in scan.entries}
        folders = [p for p in wanted if p not in index and p not in found]
        considered = {  # the index looked up by path unless a folder is named
            path: known for path, known in index.items()
            if path in wanted or any(path.startswith(folder + "/") for folder in folders)
        } if folders else {path: index[path] for path in wanted if path in index}
        plan = plan_sync(scan.entries, considered)
        return self._run(scan, index, plan, started, progress, allow_mass_delete, full=False)

    def _run(
        self, scan: ScanResult, index: Mapping[str, IndexedFile], plan: SyncPlan,
        started: float, progress: Progress | None, allow_mass_delete: bool, *, full: bool,
        orphans: Sequence[str] = (),
    ) -> SyncReport:
        bar = progress or _NoProgress()
        moved: set[str] = set()
        renames: list[tuple[str, str]] = []
        if not plan.deleted and not orphans \
                and len(plan.new) + len(plan.changed) > self.batch_files:
            # nothing leaves the index (no rename to pair, nothing to guard): read ahead
            _guard_mass_delete(self, plan, index, scan, allow_mass_delete, full=full)
            report = self._read_and_write(plan, index, bar)
        else:
            work, renames = self._read_plan(plan, index, bar)
            moved = _moved_paths(plan, index, renames)
            _guard_mass_delete(self, plan, index, scan, allow_mass_delete, full=full,
                               moved=moved)
            report = self._execute(plan, index, work, renames, bar, orphans)
        # an attachment moved is removed and added again: not a deletion for the guard's window
        gone = report.deleted - len(moved) + len(renames)
        if gone > 0:
            self._deleted_lately.append((time.monotonic(), gone))
        duration = time.perf_counter() - started
        report = _replace(report, scan=scan, duration_s=duration)
        log.info(
            "sync.applied" if full else "batch.applied",
            added=report.added, modified=report.modified, deleted=report.deleted,
            renamed=len(report.renamed), unchanged=report.unchanged, touched=report.touched,
            chunks_embedded=report.chunks_embedded, chunks_reused=report.chunks_reused,
            chunks_cached=report.chunks_cached,
            problems=len(report.problems), duration_ms=round(duration * 1000),
        )
        return report

    def _read_plan(
        self, plan: SyncPlan, index: Mapping[str, IndexedFile], bar: Progress
    ) -> tuple[_Work, list[tuple[str, str]]]:
        """Read the plan's new and changed files (nothing is written) and pair its deleted
        paths with new paths of the same memory id or bytes: ``(work, [(old, new), …])``."""
        to_read = [*plan.new, *plan.changed]
        bar.phase("reading", len(to_read))
        work = self._read_files(to_read, index, bar)
        return work, _detect_renames(work, plan.deleted, index, {e.path for e in plan.new})

    def _read_and_write(
        self, plan: SyncPlan, index: Mapping[str, IndexedFile], bar: Progress
    ) -> SyncReport:
        """Read, embed and write a plan that deletes nothing, ``batch_files`` files at a time,
        the next batch read on a thread while this one is embedded and written
        (:func:`daemon.read_ahead.read_ahead`). The same rows as :meth:`_read_plan` then
        :meth:`_execute`; a file's entry rows it no longer has go in its own batch's commit."""
        to_read = copies_together([*plan.new, *plan.changed])  # (daemon.sync_memo)
        new = {e.path for e in plan.new}
        bar.phase("indexing", len(to_read))
        reports = []
        with self.store.recent_vectors.widened(RUN_VECTORS) as written:
            self._memo = ContentMemo(self.root, run_vectors(self.store, written),
                                     self.store.recent_vectors)
            try:
                with read_ahead(_batched(to_read, self.batch_files),
                                lambda files: self._read_files(files, index)) as batches:
                    for files, work in batches:
                        part = SyncPlan(tuple(e for e in files if e.path in new),
                                        tuple(e for e in files if e.path not in new), (), 0)
                        within = _Within(bar, len(files))  # moves on as it is embedded
                        reports.append(self._execute(part, index, work, [], within))
                        within.to(1.0)
            finally:
                self._memo = None
        report = _merge(reports)
        return replace(report, unchanged=plan.unchanged,
                       changed_paths=tuple(sorted(report.changed_paths)))

    def _read_files(self, files: Sequence[FileEntry], index: Mapping[str, IndexedFile],
                    bar: Progress | None = None) -> _Work:
        """Read ``files``; with ``bar`` (on the thread that writes the store, never the
        read-ahead's), tell it of each file and let the watcher's batches in between."""
        work = _Work()
        for entry in files:
            self._read_one(entry, index, work)
            if bar is not None:
                bar.advance()
                self._between()
        return work

    def _execute(
        self, plan: SyncPlan, index: Mapping[str, IndexedFile], work: _Work,
        renames: list[tuple[str, str]], bar: Progress, orphans: Sequence[str] = (),
    ) -> SyncReport:
        to_read = [*plan.new, *plan.changed]
        new_paths = {e.path for e in plan.new}
        renamed_from = {new: old for old, new in renames}
        moved = set(renamed_from.values())  # (once, not once a path: 28 s at 20,000 renames)
        deleted = [p for p in plan.deleted if p not in moved]
        for old, new in renames:
            _assign(work, new, index[old].note_id)

        stale = stale_entry_paths(index, plan.deleted, work.entry_files,
                                  {e.path for e in to_read})
        embedded, reused, cached = self._write(
            work, [*deleted, *(old for old, _ in renames), *orphans, *stale], bar, index
        )
        written = {p for p in (*work.positions, *(a.entry.path for a in work.attachments))
                   if not self._left(p)}  # (a watcher batch synced the others meanwhile)
        touched_paths = {e.path for e in work.touches}
        added = sum(
            1 for e in to_read
            if e.path in new_paths and e.path not in renamed_from and e.path in written
        )
        modified = sum(
            1 for e in to_read
            if e.path not in new_paths and e.path not in touched_paths and e.path in written
        )
        return SyncReport(
            added=added,
            modified=modified,
            deleted=len(deleted),
            renamed=tuple(renames),
            unchanged=plan.unchanged,
            touched=len(work.touches),
            chunks_embedded=embedded,
            chunks_reused=reused,
            chunks_cached=cached,
            problems=tuple(work.problems),
            changed_paths=tuple(sorted(written)),
        )

    def _read_one(self, entry: FileEntry, index: Mapping[str, IndexedFile], work: _Work) -> None:
        if self._left(entry.path):  # a watcher batch synced it during this reconcile
            return
        known = index.get(entry.path)
        if entry.kind == "attachment":
            work.attachments.append(
                AttachmentRecord(entry, known.note_id if known else str(ULID()))
            )
            return
        try:  # (inline data dropped: a clipped page's base64 images are not text)
            note, data = read_indexed_note(self.root, entry.path[len(self.prefix):], self._memo)
            if self.prefix:
                note = replace(note, path=entry.path, problems=tuple(
                    replace(p, path=self.prefix + p.path) for p in note.problems))
        except DreamdError as error:
            work.problems.append(Problem(entry.path, "read", str(error)))
            log.warning("sync.read_failed", path=entry.path, error=str(error))
            return
        if len(note.body) > self.max_note_chars:
            note = cut_body(note, self.max_note_chars)
            work.problems.append(Problem(
                entry.path, "size",
                f"note body has more than {self.max_note_chars:,} characters "
                "(sync.max_note_chars); only the first part is indexed",
            ))
        work.problems.extend(note.problems)
        if is_entry_note(note, in_scope=self._in_entry_scope(entry.path)):
            note, entries, problems = entry_notes(note, data)
            work.problems.extend(problems)
            work.entry_files[entry.path] = {e.path for e in entries}
            if self.recorder is not None and not self.prefix:  # each line's versions
                work.memory_bytes.update(entry_lines(entry.path, data))
                work.entry_origins.update({e.path: note.content_hash for e in entries})
            for entry_note in entries:
                self._keep(replace(entry, path=entry_note.path), entry_note, index, work, None)
        self._keep(entry, note, index, work, data)

    def _in_entry_scope(self, path: str) -> bool:
        """An attached root, or the vault's memory folder: where ``<!--m:`` comments make a
        file an entry file (:mod:`ccb.entries`)."""
        folder = self.entry_folder
        return bool(self.prefix) or folder == "" or (
            folder is not None and path.startswith(folder + "/"))

    def _keep(self, entry: FileEntry, note: Note, index: Mapping[str, IndexedFile],
              work: _Work, data: bytes | None) -> None:
        """Queue a note read (a file's, or an entry's: ``data`` None) unless its content
        is indexed already."""
        known = index.get(entry.path)
        if known is not None and known.kind == "note" and known.content_hash == note.content_hash:
            if data is not None:
                work.touches.append(entry)
            return
        withheld = withheld_of(note, self._memo)
        note = withheld.note
        work.credentials[entry.path] = None
        if withheld.found:
            record = CredentialRecord(entry.path, note.content_hash, withheld.found)
            work.credentials[entry.path] = record
            work.problems.append(Problem(
                entry.path, "credential",
                f"a credential written by hand at {record.describe()}: kept out of the index, "
                "search and context; move it to a secret manager and remove it from the file"))
        note_id = (note.memory.id if note.memory and note.memory.id else None) or (
            known.note_id if known else str(ULID())
        )
        if note.memory is not None and self.recorder is not None and not self.prefix \
                and data is not None:
            work.memory_bytes[entry.path] = data
        work.add_note(entry, note, note_id)

    def _write(
        self, work: _Work, deletes: Sequence[str], bar: Progress,
        index: Mapping[str, IndexedFile],
    ) -> tuple[int, int, int]:
        """Chunk, embed what is new, and commit in batches. Returns the chunks (embedded by
        the model, reused from the index, taken from the embedding cache). A path a watcher
        batch synced while this reconcile ran (:meth:`_left`) is left as that batch wrote it:
        the batch read the file later, or saw it gone."""
        embedded = reused = cached = 0
        forgotten: set[str] = set()
        bar.phase("embedding", sum(1 for _ in work.notes))
        batches = list(_batched(work.notes, self.batch_files)) or [[]]
        for number, batch in enumerate(batches):
            part = _Within(bar, len(batch))
            chunked = [(entry, note, note_id, chunks_of(note, self.chunk_max_chars, self._memo))
                       for entry, note, note_id in batch]

            def between(share: float, part: _Within = part) -> None:
                part.to(share)
                self._between()

            vectors, (model, kept, held) = _batch_vectors(
                chunked, self._memo.vectors if self._memo else self.store.known_vectors,
                self._embed, between=between)
            embedded, reused, cached = embedded + model, reused + kept, cached + held
            chunked = [c for c in chunked if not self._left(c[0].path)]
            first = number == 0
            if first:
                deletes = [path for path in deletes if not self._left(path)]
                gone_memories = _gone_memories(self.recorder, self.prefix, deletes, work, index)
                forgotten = self.recorder.archive.forgotten({k for k, _ in gone_memories}) \
                    if self.recorder is not None and gone_memories else set()
            self._offer_versions(chunked, work, index)
            if first and self.recorder is not None:
                self.recorder.gone(gone_memories)
            # Before the index too: a crash in between leaves a record of content the index
            # does not hold yet (not reported; the file is indexed again), never an index
            # without its record.
            self._record_credentials(
                {entry.path: work.credentials.get(entry.path) for entry, *_ in chunked},
                deletes if first else ())
            self.store.apply(
                upserts=_records(chunked, vectors),
                attachments=[a for a in work.attachments if not self._left(a.entry.path)]
                if first else (),
                deletes=deletes if first else (),
                touches=[t for t in work.touches if not self._left(t.path)] if first else (),
            )
            part.to(1.0)
            self._between()
        if forgotten:
            # Forgotten on another device sharing the store, gone here with the vault sync:
            # a delete only marks its rows, so the text would stay in this device's tables.
            self.store.maintain(cleanup_older_than=timedelta(0), purge=True)
            log.info("sync.forgotten_purged", memories=len(forgotten))
        # Otherwise compaction is the caller's schedule (one-shot sync: after the run; daemon:
        # every N batches), never per batch: it costs more than the write it follows.
        return embedded, reused, cached

    def _offer_versions(self, chunked: Sequence[tuple[FileEntry, Note, str, list[Chunk]]],
                        work: _Work, index: Mapping[str, IndexedFile]) -> None:
        """The versions of the memories (and entry lines) of a batch about to be committed.
        Versions before the index: a crash in between leaves the file newer than its index
        row (re-indexed next time), never the history behind the index."""
        if self.recorder is None:
            return
        self.recorder.offer([
            (note, work.memory_bytes[entry.path],
             index[entry.path].content_hash if entry.path in index else None)
            if entry.path not in work.entry_origins else  # a line (entry_versions)
            (version_note(note, work.memory_bytes[entry.path]),
             work.memory_bytes[entry.path], None)
            for entry, note, _, _ in chunked if entry.path in work.memory_bytes],
            origins_of({p: work.entry_origins[p] for entry, *_ in chunked
                        if (p := entry.path) in work.entry_origins}))

    def _record_credentials(
        self, indexed: Mapping[str, CredentialRecord | None], gone: Collection[str],
        *, keep: Callable[[str], bool] | None = None,
    ) -> None:
        """Update the credential ledger; a ledger that cannot be written is logged (the
        credentials stay withheld from the index either way)."""
        if self.credentials is None or not (indexed or gone or keep):
            return
        try:
            self.credentials.update(indexed, gone, keep=keep)
        except OSError as error:
            log.warning("sync.credentials_not_recorded", path=str(self.credentials.path),
                        error=str(error))


class RootsSyncer:
    """The vault's :class:`Syncer` and one per extra root (:mod:`ccb.roots`), used as one.

    The vault comes first and its errors propagate as :meth:`Syncer.reconcile` raises them.
    An extra root that cannot be walked (unmounted, deleted) or whose walk would empty its
    part of the index is a problem in the report, never an error: its rows are kept and the
    vault is synced anyway.
    """

    def __init__(self, syncers: Sequence[Syncer], *,
                 after: Callable[[], object] | None = None) -> None:
        if not syncers or syncers[0].prefix:
            raise ValueError("the vault's syncer comes first")
        self.syncers = tuple(syncers)
        #: Called after every reconcile and batch, once the store holds it (the vault
        #: graph follows the index: :class:`magma.graph_keeper.GraphKeeper`); a batch let in
        #: by a reconcile (:mod:`daemon.interleave`) leaves it to the reconcile's end, which
        #: follows both at once (a graph not held yet would be built again at each batch).
        self.after = after
        self._depth = 0

    @property
    def root(self) -> Path:
        return self.syncers[0].root

    def reconcile(
        self, *, progress: Progress | None = None, allow_mass_delete: bool = False,
        interleave: Interleave | None = None,
    ) -> SyncReport:
        """:meth:`Syncer.reconcile` of every root, one report (``interleave``: the watcher's
        batches let in between commits, :mod:`daemon.interleave`). Orphans are swept unless
        the store's tables are sealed (:mod:`magma.store_seal`: a start with nothing changed
        reads no chunk row); a sweep also resolves every stored link again
        (:meth:`magma.store.MagmaStore.relink`), and a sweep of every root seals them."""
        store = self.syncers[0].store
        sweep = not store.seal.holds(store.versions())
        report = self._each(lambda s: s.reconcile(progress=progress, sweep=sweep,
                                                  allow_mass_delete=allow_mass_delete,
                                                  interleave=interleave))
        if sweep and (relinked := store.relink()):
            # a crash between a batch's link and file commits, then its note put back
            log.warning("sync.links_resolved_again", sources=len(relinked))
        if sweep and not any(p.kind == "root" for p in report.problems):
            store.seal.set(store.versions())
        return report

    def sync_paths(
        self, rel_paths: Collection[str], *, allow_mass_delete: bool = False,
        progress: Progress | None = None,
    ) -> SyncReport:
        """:meth:`Syncer.sync_paths`: each index path goes to the root that owns it."""
        wanted = set(rel_paths)
        return self._each(
            lambda s: s.sync_paths({p for p in wanted if s.owns(p.strip("/"))},
                                   allow_mass_delete=allow_mass_delete, progress=progress),
            only_if=lambda s: any(s.owns(p.strip("/")) for p in wanted),
        )

    def _each(
        self, run: Callable[[Syncer], SyncReport],
        only_if: Callable[[Syncer], bool] = lambda _: True,
    ) -> SyncReport:
        vault, *extras = self.syncers
        self._depth += 1
        try:
            reports = [run(vault)] if only_if(vault) or not extras else []
            for extra in extras:
                if not only_if(extra):
                    continue
                try:
                    reports.append(run(extra))
                except DreamdError as error:
                    log.warning("sync.root_skipped", root=str(extra.root), error=str(error))
                    reports.append(SyncReport(problems=(
                        Problem(extra.prefix, "root",
                                f"{extra.root}: {error}; its index is kept"),
                    )))
        finally:
            self._depth -= 1
        if self.after is not None and not self._depth:  # (a batch within a reconcile: later)
            self.after()
        return _merge(reports)


def _guard_mass_delete(
    self: Syncer, plan: SyncPlan, index: Mapping[str, IndexedFile], scan: ScanResult,
    allowed: bool, *, full: bool, moved: Collection[str] = (),
) -> None:
    """Raise ``MassDeleteError`` when ``plan`` would remove more of ``self``'s index than
    ``sync.max_delete_share`` (with what it deleted in the last
    :data:`MASS_DELETE_WINDOW_S`), or when a full walk (``full``) found no file at all."""
    # Rows of an extra root that is no longer configured (``name:…``) leave the index
    # with the root; they are not vault files gone missing. A path in ``moved`` is at a
    # new path in this same plan (a folder moved or renamed): not gone either.
    gone = [p for p in plan.deleted if not (not self.prefix and _ROOT_ROW.match(p))
            and "#" not in p  # files: an entry line (file.md#key) goes with its file
            and p not in moved]
    if allowed:
        self._deleted_lately.clear()  # the user's word covers what came before
        return
    if not gone:
        return
    now = time.monotonic()
    while self._deleted_lately and now - self._deleted_lately[0][0] > MASS_DELETE_WINDOW_S:
        self._deleted_lately.popleft()
    lately = sum(count for _at, count in self._deleted_lately)
    # the share of what was indexed when the window opened: this batch and the lately
    # applied ones together; a whole walk counts the files it found new too (a cold
    # index resumed after the user deleted some of the few notes it had indexed: the
    # vault is there, an unmounted drive shows no file, or none new)
    indexed = sum(1 for p in index if "#" not in p)
    found = len(plan.new) - len(moved) if full else 0
    share = (len(gone) + lately) / (max(indexed, 1) + lately + found)
    small = indexed + lately < MASS_DELETE_MIN_FILES
    # An empty full walk is refused whatever the size: it is what an unmounted drive looks
    # like. (A watcher batch that finds none of its paths is ordinary.)
    if (full and not scan.entries) or (not small and share > self.max_delete_share):
        within = f", with {lately} deleted in the last {MASS_DELETE_WINDOW_S / 60:.0f} " \
            "minutes" if lately else ""
        why = ("the vault folder holds no file at all (an unmounted drive looks like "
               "this)" if full and not scan.entries else
               f"{len(gone)} of {indexed} indexed files{within} "
               f"({share:.0%}{f' of those and the {found} found new' if found else ''})"
               " are gone from the vault, more than sync.max_delete_share "
               f"({self.max_delete_share:.0%})")
        raise MassDeleteError(
            f"sync {self.root}: {why}; the index is kept. If the vault is mounted and "
            "the deletions are real, run: dreamd sync --allow-mass-delete (a running daemon "
            "applies them)"
        )


def _memory_folder_blocked(root: Path, entry_folder: str | None) -> Problem | None:
    """A file where the memory folder (``entry_folder``) or a folder above it should be:
    the vault is indexed, but remember and dream cannot write (the file is left alone)."""
    if not entry_folder:
        return None
    blocking = file_in_the_way(root / entry_folder)
    if blocking is None:
        return None
    return Problem(blocking.relative_to(root).as_posix(), "memory",
                   f"a file where the memory folder {entry_folder}/ should be: "
                   "remember and dream refuse to write until it is renamed or moved, or "
                   "vault.memory_folder names another folder (the file is left alone)")


def _gone_memories(
    recorder: VersionRecorder | None, prefix: str, deletes: Sequence[str], work: _Work,
    index: Mapping[str, IndexedFile],
) -> list[tuple[str, str]]:
    """``(history key, path)`` of the memories among ``deletes`` (vault root only) that
    do not live on under another path in this run (a rename)."""
    if recorder is None or prefix or not deletes:
        return []
    living = {note_memory_key(note) for _, note, _ in work.notes if note.memory is not None}
    gone = []
    for path in deletes:
        known = index.get(path)
        if known is not None and known.memory_type is not None and not is_entry_path(path):
            key = memory_key(known.memory_id, path)
            if key not in living:
                gone.append((key, path))
    return gone


def _assign(work: _Work, path: str, note_id: str) -> None:
    """Give the note at ``path`` the id of the file it was renamed from (memory ids win)."""
    position = work.positions.get(path)
    if position is None:
        return
    entry, note, _ = work.notes[position]
    if not (note.memory and note.memory.id):
        work.notes[position] = (entry, note, note_id)


def _merge(reports: Sequence[SyncReport]) -> SyncReport:
    if len(reports) == 1:
        return reports[0]
    return SyncReport(
        added=sum(r.added for r in reports),
        modified=sum(r.modified for r in reports),
        deleted=sum(r.deleted for r in reports),
        renamed=tuple(x for r in reports for x in r.renamed),
        unchanged=sum(r.unchanged for r in reports),
        touched=sum(r.touched for r in reports),
        chunks_embedded=sum(r.chunks_embedded for r in reports),
        chunks_reused=sum(r.chunks_reused for r in reports),
        chunks_cached=sum(r.chunks_cached for r in reports),
        problems=tuple(x for r in reports for x in r.problems),
        conflict_copies=tuple(x for r in reports for x in r.conflict_copies),
        duration_s=sum(r.duration_s for r in reports),
        files_total=sum(r.files_total for r in reports),
        changed_paths=tuple(x for r in reports for x in r.changed_paths),
    )


def _prefixed(scan: ScanResult, prefix: str, keep: Callable[[str], bool]) -> ScanResult:
    """``scan`` with ``prefix`` before every path; entries ``keep`` refuses (a path another
    root claims) are dropped."""
    entries = tuple(e for e in (replace(e, path=prefix + e.path) for e in scan.entries)
                    if keep(e.path))
    return ScanResult(
        entries=entries,
        conflict_copies=tuple(
            ConflictCopy(prefix + c.path, prefix + c.conflict_of) for c in scan.conflict_copies
            if keep(prefix + c.path)),
        problems=tuple(replace(p, path=prefix + p.path) for p in scan.problems
                       if keep(prefix + p.path)),
    )


def _replace(report: SyncReport, *, scan: ScanResult, duration_s: float) -> SyncReport:
    return replace(
        report,
        problems=tuple(scan.problems) + report.problems,
        conflict_copies=scan.conflict_copies,
        duration_s=duration_s,
        files_total=len(scan.entries),
    )


def _moved_paths(
    plan: SyncPlan, index: Mapping[str, IndexedFile], renames: Sequence[tuple[str, str]]
) -> set[str]:
    """The plan's deleted paths that are at a new path in the same plan, for the mass-delete
    guard: a note paired by :func:`_detect_renames` (same memory id or bytes), and an
    attachment (never hashed) whose file name and size reappear on a new attachment, one
    new path for one deleted path. Pure."""
    moved = {old for old, _ in renames}
    arrived = Counter((PurePosixPath(e.path).name, e.size)
                      for e in plan.new if e.kind == "attachment")
    for path in plan.deleted:
        known = index[path]
        key = (PurePosixPath(path).name, known.size)
        if known.kind == "attachment" and arrived[key] > 0:
            arrived[key] -= 1
            moved.add(path)
    return moved


def _detect_renames(
    work: _Work, deleted: Sequence[str], index: Mapping[str, IndexedFile], new_paths: set[str]
) -> list[tuple[str, str]]:
    """Pair deleted paths with new paths that carry the same memory id or the same bytes.

    Several deleted notes may hold the same bytes (empty notes, one template filled in
    nowhere yet): each is paired once, the one of the same file name first, so a moved
    folder of look-alike notes is renamed note for note, not deleted and added again."""
    if not deleted:
        return []
    by_memory_id: dict[str, str] = {}
    by_hash: dict[str, list[str]] = {}
    for path in deleted:
        known = index[path]
        if known.memory_id:
            by_memory_id.setdefault(known.memory_id, path)
        if known.content_hash:
            by_hash.setdefault(known.content_hash, []).append(path)
    renames: list[tuple[str, str]] = []
    taken: set[str] = set()
    for entry, note, _ in work.notes:
        if entry.path not in new_paths:
            continue
        old = None
        if note.memory and note.memory.id:
            old = by_memory_id.get(note.memory.id)
        if old is None or old in taken:
            old = _same_bytes(by_hash.get(note.content_hash, []), taken, entry.path)
        if old is not None and old not in taken:
            taken.add(old)
            renames.append((old, entry.path))
    return renames


def _same_bytes(candidates: Sequence[str], taken: Collection[str], new: str) -> str | None:
    """The deleted path of ``candidates`` (same bytes as ``new``) to pair with ``new``: an
    untaken one of the same file name, else the first untaken one, else ``None``."""
    free = [path for path in candidates if path not in taken]
    name = PurePosixPath(new).name
    return next((path for path in free if PurePosixPath(path).name == name),
                free[0] if free else None)


def _embed_counted(embedder: Embedder, texts: Sequence[str]) -> tuple[np.ndarray, int]:
    """The vectors of ``texts`` and how many of them the embedding cache held (the model
    embedded the others; none held without a cache)."""
    if isinstance(embedder, CachingEmbedder):
        return embedder.embed_counted(texts)
    return embedder.embed(texts), 0


def _batch_vectors(
    chunked: Sequence[tuple[FileEntry, Note, str, list[Chunk]]],
    known_vectors: Callable[[Collection[str]], Mapping[str, np.ndarray]],
    embed: Callable[[Sequence[str]], tuple[np.ndarray, int]],
    between: Callable[[float], object] | None = None,
) -> tuple[dict[str, np.ndarray], tuple[int, int, int]]:
    """The vector of each chunk of a batch by content hash: the index's (``known_vectors``)
    or embedded (``embed``: the vectors, and how many of them the embedding cache held) ->
    the vectors, and the chunks (embedded by the model, reused from the index, taken from
    the embedding cache). After a schema upgrade emptied the index the cache holds them all,
    and the model embeds none. The texts are embedded :data:`EMBED_SLICE_TEXTS` at a time,
    ``between(share)`` told after each slice what share of them is done."""
    hashes = {c.content_hash for *_, chunks in chunked for c in chunks}
    vectors = dict(known_vectors(hashes)) if hashes else {}
    missing = sorted(hashes - vectors.keys())
    held = 0
    if missing:
        texts = _texts_by_hash(chunked)
        for start in range(0, len(missing), EMBED_SLICE_TEXTS):
            hashed = missing[start:start + EMBED_SLICE_TEXTS]
            fresh, cached = embed([texts[h] for h in hashed])
            held += cached
            vectors.update(zip(hashed, fresh, strict=True))
            if between is not None:
                between((start + len(hashed)) / len(missing))
    new = set(missing)
    reused = sum(1 for *_, chunks in chunked for c in chunks if c.content_hash not in new)
    return vectors, (len(missing) - held, reused, held)


def _records(chunked: Sequence[tuple[FileEntry, Note, str, list[Chunk]]],
             vectors: Mapping[str, np.ndarray]) -> list[NoteRecord]:
    """The rows of a batch's notes, with the vector of each chunk."""
    return [
        NoteRecord(
            note=note, note_id=note_id, size=entry.size, mtime_ns=entry.mtime_ns,
            chunks=chunks, vectors=_stack([vectors[c.content_hash] for c in chunks]),
        )
        for entry, note, note_id, chunks in chunked
    ]


def _texts_by_hash(chunked: Sequence[tuple[FileEntry, Note, str, list[Chunk]]]) -> dict[str, str]:
    return {c.content_hash: c.embed_text for *_, chunks in chunked for c in chunks}


def _stack(vectors: Sequence[np.ndarray | None]) -> np.ndarray:
    assert all(v is not None for v in vectors)
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([v for v in vectors if v is not None]).astype(np.float32, copy=False)


def _batched(items: Sequence[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])
