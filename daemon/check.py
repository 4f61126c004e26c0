"""``dreamd check`` and ``dreamd conflicts``: gather the sides, check, apply the decisions.

The checker and the arbiter are pure (:mod:`consistency.checker`, :mod:`consistency.arbiter`);
this module is their edge. :meth:`ConsistencyService.snapshot` costs one stat walk of the vault,
one columnar read of the index, one of the version table (without contents) and a listing of
the version archive: a file whose size and mtime match its index row is not read again (its
hash and memory facts come from the row). Credentials a user wrote by hand come from what the
indexer recorded when it withheld them (the state folder's ``credentials.json``,
:mod:`daemon.credential_ledger`), so finding them reads no note either.
:meth:`ConsistencyService.fix` carries out the decisions — all of them for ``dreamd check
--fix``, only the automatic ones (:func:`consistency.arbiter.is_automatic`) for the daemon —
through the single writer and the indexer, so every change is itself versioned.

Open conflicts (manual review) are kept in ``conflicts.json`` in the state dir until
``dreamd conflicts resolve ID --keep file|magma|both`` settles them.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import networkx as nx
import structlog
from ulid import ULID

from ccb.dates import as_aware
from ccb.entry_notes import POSSIBLE_PAIR_KEYS, is_entry_path
from ccb.frontmatter_edit import set_properties
from ccb.model import DIARY_FILE, Note, Problem, memory_key
from ccb.scan import VaultFilter, read_note_bytes, scan_vault
from config.errors import (
    DreamdError,
    VaultError,
)
from consistency.arbiter import (
    CancelForget,
    Decision,
    FinishForget,
    KeepFile,
    ManualReview,
    NewId,
    RebuildMemoryIndex,
    Reindex,
    RepairArchive,
    Report,
    TakeMagma,
    Tombstone,
    decide,
    is_automatic,
)
from consistency.checker import (
    Drift,
    FileSide,
    ForgetUnfinished,
    HistorySide,
    IndexSide,
    Missing,
    Snapshot,
    check,
    drift_kind,
    subject_groups,
)
from consistency.duplicates import claim_of, cosine_similarity
from consistency.graph_checks import junk_lineage
from consistency.judgement import MemorySide, judge_pair
from consistency.lifecycle import MemoryState, is_current
from consistency.withheld import FoundCredential
from daemon.conflicts import CONFLICTS_FILE, ConflictDesk, ConflictRecord, Keep
from daemon.credential_ledger import read_credentials
from daemon.entry_versions import entry_of_key
from daemon.forget_entry import forget_entry
from daemon.forget_journal import ForgetJournal
from daemon.forget_links import link_stem
from daemon.history import note_memory_key
from daemon.memories import MemoryService
from daemon.memory_index_keeper import INDEX_FILE, MemoryIndexKeeper, index_fingerprint
from daemon.memory_pool import MemoryPool, StoredMemory
from daemon.sync import MASS_DELETE_MIN_FILES
from magma.gc_pause import collector_paused
from magma.lineage import LineageMemory, LineageResolver, lineage_graph, lineage_memory
from magma.store import IndexedFile, LinkRecord, MagmaStore, stored_problems
from magma.versions import Version, current

__all__ = [
    "CONFLICTS_FILE",
    "CheckLimits",
    "CheckReport",
    "ConflictRecord",
    "ConsistencyService",
    "Finding",
    "FixReport",
    "Keep",
    "not_indexed_yet",
]

log = structlog.get_logger("dreamd.check")

@dataclass(frozen=True, slots=True)
class Finding:
    """One drift and the arbiter's decision about it."""

    drift: Drift
    decision: Decision

    @property
    def kind(self) -> str:
        return drift_kind(self.drift)

    @property
    def automatic(self) -> bool:
        return is_automatic(self.decision)


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What one check found. ``files`` were compared, ``read`` files were read again (their
    stat changed, or the memories were read to verify ``MEMORY.md`` after one changed),
    ``memories`` have a history; ``duration_s`` is wall time. ``skipped`` are the files the
    vault walk left out, each with its reason (a symlink that is a second name of a note, a
    FIFO, a link out of the vault …); ``problems`` the notes that did not read whole (a
    frontmatter that is not YAML — a template's ``{{date}}`` too —, a property that cannot
    be read), each with the parser's reason: indexed as far as they read, never modified.
    Both are said, not drift."""

    findings: tuple[Finding, ...]
    files: int
    read: int
    memories: int
    duration_s: float
    skipped: tuple[Problem, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.findings

    def counts(self) -> dict[str, int]:
        """``{drift kind: count}``, in report order."""
        return dict(Counter(f.kind for f in self.findings))


def not_indexed_yet(report: CheckReport, indexed: Collection[str]
                    ) -> tuple[CheckReport, tuple[str, ...]]:
    """While the daemon is at the vault's first index (:mod:`daemon.first_index`): the
    report without its ``missing`` findings of files not in the index (``indexed``: its
    paths), which the daemon is indexing and ``--fix`` must leave to it, and those files'
    paths, sorted."""
    waiting: dict[int, str] = {id(f): f.drift.path for f in report.findings
                               if isinstance(f.drift, Missing) and f.drift.path not in indexed}
    if not waiting:
        return report, ()
    left = tuple(f for f in report.findings if id(f) not in waiting)
    return replace(report, findings=left), tuple(sorted(set(waiting.values())))


@dataclass(frozen=True, slots=True)
class FixReport:
    """What ``fix`` did: ``applied`` as ``(finding, what happened)``, ``left`` untouched
    (not automatic, or a report for the user), ``deferred`` when a running daemon indexes."""

    applied: tuple[tuple[Finding, str], ...]
    left: tuple[Finding, ...]
    deferred: bool = False


@dataclass(slots=True)
class _Gathered:
    files: dict[str, FileSide] = field(default_factory=dict)
    read: int = 0
    #: Properties of the memory files read again (the store's are older for them).
    properties: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    memory_folder_files: list[tuple[str, str]] = field(default_factory=list)
    skipped: tuple[Problem, ...] = ()
    #: The problems of the notes read again (none: it reads whole now).
    reread: dict[str, tuple[Problem, ...]] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class CheckLimits:
    """``orphan_grace``: how long a memory may be gone from the vault before it is reported
    (``check.orphan_grace_s``); ``max_delete_share``: the share of the memories a fix may
    tombstone at once before it stops and asks (``sync.max_delete_share``)."""

    orphan_grace: timedelta
    max_delete_share: float = 0.5


#: A memory's side as a check made it: from this index row, properties (the same object) and
#: day (:meth:`ConsistencyService._memory_side`).
_KeptSide = tuple[IndexedFile, Mapping[str, Any], date, FileSide]


class ConsistencyService:
    """Checks one vault against its index and the memories' history, and repairs drift.

    Plain constructor arguments (the composition root builds it): ``desk`` settles what a
    file and its history disagree on (its writer and version recorder are this service's),
    ``index(paths) -> bool`` re-indexes vault paths (False: a running daemon does it),
    ``memories()`` gives the memory service (``MEMORY.md``), ``claimed`` are index path
    prefixes of extra roots (not part of the vault, not checked here).
    """

    def __init__(
        self, *, root: Path, vfilter: VaultFilter, store: MagmaStore, desk: ConflictDesk,
        memories: Callable[[], MemoryService], index: Callable[[Collection[str]], bool],
        memory_index: MemoryIndexKeeper, limits: CheckLimits, claimed: Collection[str] = (),
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.max_delete_share = limits.max_delete_share
        self.root = root
        self.vfilter = vfilter
        self.store = store
        self.desk = desk
        self.recorder = desk.recorder
        self.archive = desk.archive
        self.writer = desk.writer
        self._memories = memories
        self._index = index
        self.memory_folder = memory_index.memory_folder
        self.memory_index = memory_index
        self.orphan_grace = limits.orphan_grace
        self.claimed = tuple(claimed)
        self._clock = clock
        self._lineage: tuple[tuple[LineageMemory, ...], nx.MultiDiGraph] | None = None
        self._lineage_of: dict[str, tuple[Mapping[str, Any], LineageMemory]] = {}
        self._sides: dict[str, _KeptSide] = {}
        self.forgets = ForgetJournal(desk.state_dir)  # (the state folder of the history)

    # ------------------------------------------------------------------ check

    def check(self) -> CheckReport:
        """Gather the sides and check them (nothing is changed). Raises ``VaultError`` when
        the vault cannot be walked, ``StoreError`` when the store cannot be read."""
        started = time.perf_counter()
        with collector_paused():  # a snapshot of short-lived values (magma.gc_pause)
            snapshot, gathered = self._snapshot()
            findings = tuple(Finding(d, decide(d)) for d in check(snapshot))
        report = CheckReport(findings, len(snapshot.files) + len(snapshot.unchanged),
                             gathered.read,
                             len(snapshot.history), time.perf_counter() - started,
                             skipped=gathered.skipped, problems=gathered.problems)
        log.info("check.done", files=report.files, read=report.read, memories=report.memories,
                 drift=len(findings), duration_ms=round(report.duration_s * 1000),
                 **report.counts())
        return report

    def _snapshot(self) -> tuple[Snapshot, _Gathered]:
        now = self._clock()
        scan = scan_vault(self.root, self.vfilter)
        file_index, props, (all_versions, archive_out_of_step), links = self._store_reads()
        # entry rows (``file.md#key``) are derived from their file, which is checked
        claimed = self.claimed or None  # (no generator per row when no root claims any)
        rows = {path: row for path, row in file_index.items()
                if not (claimed and path.startswith(claimed))
                and not ("#" in path and is_entry_path(path))}
        if not scan.entries and rows:
            # What an unmounted drive or an evicted iCloud folder looks like: checking it
            # would tombstone every memory (sync refuses the same, MassDeleteError).
            raise VaultError(
                f"check {self.root}: the vault has no files but the index has {len(rows)}; "
                "is the drive mounted? Nothing was checked")
        gathered = _Gathered(skipped=scan.problems)
        today = now.date()
        unchanged: set[str] = set()
        memory_files: dict[str, tuple[int, int]] = {}  # in step with their rows: no entry files
        sides, self._sides = self._sides, {}  # (only this check's memories kept)
        for entry in scan.entries:
            row = rows.get(entry.path)
            if row is not None and row.size == entry.size and row.mtime_ns == entry.mtime_ns:
                if row.memory_type is None:
                    unchanged.add(entry.path)  # a note in step with its row: nothing to compare
                    continue
                memory_files[entry.path] = (entry.size, entry.mtime_ns)
                side = self._memory_side(sides, row, props.get(entry.path, {}), today)
            elif entry.kind != "note":
                side = FileSide(entry.path, f"stat:{entry.size}:{entry.mtime_ns}")
            else:
                gathered.read += 1
                try:
                    note, _ = read_note_bytes(self.root, entry.path)
                except DreamdError:
                    # unreadable now (the sync reports it): it exists, so it is not gone
                    if row is None:
                        continue
                    side = _side_from_row(row, props.get(entry.path, {}), today)
                else:
                    side = _side_from_note(note, today)
                    gathered.reread[entry.path] = note.problems
                    if note.memory is not None:
                        gathered.properties[entry.path] = note.properties
            gathered.files[entry.path] = side
            if side.memory_key is not None and self._in_memory_folder(entry.path):
                gathered.memory_folder_files.append((entry.path, side.content_hash))
        gathered.problems = _problem_files([e.path for e in scan.entries], gathered.reread,
                                           stored_problems(self.store))
        index = {path: IndexSide(path, row.content_hash if row.kind == "note" else
                                 f"stat:{row.size}:{row.mtime_ns}", _row_key(row))
                 for path, row in rows.items() if path not in unchanged}
        history: dict[str, HistorySide] = {}
        for key, versions in all_versions.items():
            head = current(versions)
            if head is None or entry_of_key(key) is not None:
                continue  # (an entry's versions follow its line: daemon.entry_versions)
            history[key] = HistorySide(
                key, head.n, head.content_hash, "tombstone" if head.kind == "tombstone"
                else "edit", head.path, head.memory_type,
                frozenset(v.content_hash for v in versions if v.kind != "tombstone"),
                restore_n=head.prev if head.kind == "tombstone" else None)
        memory_paths = {p for p, s in gathered.files.items() if s.memory_key is not None}
        broken = list(dict.fromkeys(  # one line per link, however often the file writes it
            (link.src, link.target) for link in links if link.src in memory_paths
            and not link.target.startswith(("http:", "https:"))
            # MEMORY.md exists, it is only left out of the index
            and link_stem(link.target) not in _GENERATED_STEMS))
        pending = {key: _utc(info.get("since")) for key, info in self.recorder.pending().items()}
        conflicts = self.desk.load()
        index_current, hand_edited = self._memory_index_current(gathered, today)
        memory_props = {**props, **gathered.properties}
        _link_possible_pairs(gathered.files, memory_props)
        kept, self._lineage_of = self._lineage_of, {}  # (only this check's memories kept)
        lineage_memories = tuple(self._lineage_memory(kept, path, memory_props.get(path, {}))
                                 for path in sorted(memory_paths))
        lineage = self._lineage_graph(lineage_memories)
        broken = _not_lineage(broken, lineage_memories)
        pool = self.subject_pool()
        # one stat walk; a memory file in step with its row is never an entry file, so only
        # the others are read (each check read every memory file: 1,000 of 1,001 files opened)
        entries = {s.path: s for s in pool.entries(memory_files)}
        snapshot = Snapshot(
            files=gathered.files, index=index, history=history, now=now,
            unchanged=frozenset(unchanged),
            bases=self.recorder.bases(), pending_gone=pending,
            open_conflicts={k: c.copy for k, c in conflicts.items()},
            deleted_copies=frozenset(k for k, c in conflicts.items()
                                     if self.writer.read(c.copy) is None),
            broken_links=broken,
            memory_index_path=self.memory_index.path,
            memory_index_current=index_current, memory_index_hand_edited=hand_edited,
            archive_out_of_step=archive_out_of_step,
            orphan_grace=self.orphan_grace,
            judged=self._judge_subject_groups(gathered.files, entries, pool),
            credentials=self._credentials(file_index),
            lineage=lineage, lineage_junk=junk_lineage(lineage_memories),
            entries={path: _entry_side(s, today) for path, s in entries.items()},
            forgets_unfinished=_forgets_unfinished(self.forgets, gathered.files),
        )
        return snapshot, gathered

    def _memory_side(self, kept: Mapping[str, _KeptSide], row: IndexedFile,
                     properties: Mapping[str, Any], today: date) -> FileSide:
        """The side of a memory in step with its index ``row``, ``kept`` from the last check
        while the index hands the same row and properties on the same day (1,000 memories:
        ≈7 ms of CPU)."""
        found = kept.get(row.path)
        made = found[3] if found is not None and found[0] == row \
            and found[1] is properties and found[2] == today \
            else _side_from_row(row, properties, today)
        self._sides[row.path] = (row, properties, today, made)
        return made

    def _lineage_memory(self, kept: Mapping[str, tuple[Mapping[str, Any], LineageMemory]],
                        path: str, properties: Mapping[str, Any]) -> LineageMemory:
        """:func:`magma.lineage.lineage_memory`, ``kept`` from the last check while the index
        hands the same properties (its memo: a check where nothing changed derives none
        again; 1,000 memories: ≈15 ms of CPU)."""
        found = kept.get(path)
        made = found[1] if found is not None and found[0] is properties else \
            lineage_memory(path, properties)
        self._lineage_of[path] = (properties, made)
        return made

    def _lineage_graph(self, memories: tuple[LineageMemory, ...]) -> nx.MultiDiGraph:
        """:func:`magma.lineage.lineage_graph` of ``memories``, kept for the next check while
        they stay equal (the graph is only read: :func:`consistency.checker.check`)."""
        kept = self._lineage
        if kept is not None and kept[0] == memories:
            return kept[1]
        graph = lineage_graph(memories)
        self._lineage = (memories, graph)
        return graph

    def _credentials(self, rows: Mapping[str, IndexedFile]
                     ) -> dict[str, tuple[FoundCredential, ...]]:
        """The credentials the indexer withheld, per path, from its ledger in the state
        folder: only records of the content the index holds now (``rows``, every root's)."""
        return {path: record.found
                for path, record in read_credentials(self.desk.state_dir).items()
                if (row := rows.get(path)) is not None
                and row.content_hash == record.content_hash}

    def _judge_subject_groups(
        self, files: Mapping[str, FileSide], entries: Mapping[str, StoredMemory],
        pool: MemoryPool,
    ) -> dict[tuple[str, str], tuple[str, str]]:
        """The write-time judgement of every pair of live memories — memory files and
        ``entries`` (read already) — that share owner, type and subject (few: only those
        files are read), and of every pair linked as a possible one (its evidence), with
        their first chunks' vectors from the store when indexed."""
        today = self._clock().date()
        groups = {**subject_groups([*files.values(),
                                    *(_entry_side(s, today) for s in entries.values())]),
                  **_linked_pairs(files)}
        paths = sorted({p for members in groups.values() for p in members})
        if not paths:
            return {}
        stored, read = {}, {}
        for path in paths:
            if path in entries:
                stored[path] = read[path] = entries[path]
                continue
            try:
                note, data = read_note_bytes(self.root, path)
            except DreamdError:
                continue
            read[path] = StoredMemory(path, note, data)
            if note.memory is not None:
                stored[path] = read[path]
        facts = {f.id: f for f in pool.facts(list(stored.values()), self.store)}
        return _judge_groups(groups, read, stored, facts)

    def subject_pool(self) -> MemoryPool:
        """The memory files of the subject groups, cut into chunks as the index cuts them
        (``sync.chunk_max_chars``), so a memory's first-chunk vector is the stored one."""
        return MemoryPool(self.root, self.memory_folder,
                          chunk_max_chars=self._memories().chunk_max_chars,
                          vfilter=self.vfilter)

    def _store_reads(self) -> tuple[
        dict[str, IndexedFile], dict[str, Mapping[str, Any]],
        tuple[dict[str, list[Version]], bool], list[LinkRecord],
    ]:
        """Every store read of a check: index rows, memory properties, the version table
        (with the archive's state) and the unresolved links."""
        return (self.store.file_index(), self.store.memory_properties(),
                self.archive.survey(), self.store.unresolved_links())

    def _in_memory_folder(self, path: str) -> bool:
        return path.startswith(self.memory_folder + "/") and path.rsplit("/", 1)[-1] not in {
            INDEX_FILE, DIARY_FILE}

    def _memory_index_current(self, gathered: _Gathered, today: date) -> tuple[bool, bool]:
        """(is ``MEMORY.md`` what the memories give, is what is there someone else's)."""
        target = self.root / self.memory_index.path
        try:
            data = target.read_bytes()
        except OSError:
            return not gathered.memory_folder_files, False  # no memories, no index: in step
        output = hashlib.sha256(data).hexdigest()
        hand_edited = not self.memory_index.is_dreamds(data)
        inputs = index_fingerprint(gathered.memory_folder_files, today)
        if self.memory_index.recorded(inputs, output):
            return True, False
        # No record, or the memories changed since the last build: build the text to know.
        # This reads every memory once; the record written below spares the next checks.
        service = self._memories()
        text, built_from = service.index_text()
        gathered.read += len(gathered.memory_folder_files)
        if text != data:
            return False, hand_edited
        self.memory_index.adopt(data, built_from)
        return True, False

    # ------------------------------------------------------------------ fix

    def fix(self, report: CheckReport | None = None, *, automatic_only: bool) -> FixReport:
        """Apply the decisions of ``report`` (default: a fresh check): every one, or only the
        automatic repairs. Each change goes through the writer and the indexer, so it is
        recorded as a version. Raises what the writer and the store raise."""
        report = report or self.check()
        applied: list[tuple[Finding, str]] = []
        left: list[Finding] = []
        reindex: set[str] = set()
        ordered = sorted(report.findings, key=lambda f: _APPLY_ORDER.index(type(f.decision)))
        offers: list[str] = []
        tombstones = sum(isinstance(f.decision, Tombstone) for f in ordered)
        mass = tombstones >= MASS_DELETE_MIN_FILES and \
            tombstones > self.max_delete_share * max(report.memories, 1)
        if mass:
            log.error("check.mass_delete_refused", memories=tombstones,
                      share=round(tombstones / max(report.memories, 1), 2),
                      hint="is part of the vault missing? no tombstone was recorded")
        for finding in ordered:
            decision = finding.decision
            if isinstance(decision, Report) or (automatic_only and not finding.automatic) \
                    or (mass and isinstance(decision, Tombstone)):
                left.append(finding)
                continue
            try:
                outcome = self._apply(decision, reindex, offers, force=not automatic_only)
            except DreamdError as error:
                log.warning("check.fix_failed", kind=finding.kind, error=str(error))
                left.append(finding)
                continue
            if outcome is None:
                left.append(finding)
            else:
                applied.append((finding, outcome))
        self._offer(offers)  # one read, one commit for every memory re-indexed
        deferred = False
        if reindex:
            deferred = not self._index(sorted(reindex))
        if applied:
            self._rebuild_index_if_needed(applied)
        for finding, outcome in applied:
            log.info("check.fixed", kind=finding.kind, outcome=outcome)
        return FixReport(tuple(applied), tuple(left), deferred)

    def _apply(
        self, decision: Decision, reindex: set[str], offers: list[str], *, force: bool
    ) -> str | None:
        match decision:
            case RepairArchive():
                repaired = self.archive.repair()
                return (f"version archive: {repaired.rows_added} rows added, "
                        f"{repaired.files_mirrored} files mirrored, "
                        f"{repaired.duplicates_dropped} duplicates dropped, "
                        f"{repaired.renumbered} renumbered")
            case Reindex(path=path, memory_key=key):
                if key is not None:
                    offers.append(path)
                reindex.add(path)
                return "re-indexed" + (" and versioned" if key else "")
            case Tombstone(path=path, memory_key=key, confirmed=confirmed):
                if key not in self.recorder.pending():
                    self.recorder.gone([(key, path)])  # the index still had its row
                    reindex.add(path)
                if not confirmed and not force:
                    return "marked gone; tombstoned once it stays gone" if path in reindex \
                        else None
                made = self.recorder.tombstone([key])
                return f"tombstone recorded (version {made[0].n})" if made else None
            case RebuildMemoryIndex():
                outcome = self._memories().rebuild_index()
                return f"{outcome.path} {outcome.status}"
        return self._settle(decision, reindex, offers)

    def _settle(self, decision: Decision, reindex: set[str], offers: list[str]) -> str | None:
        """:meth:`_apply` of the decisions that write a memory's file, or forget it."""
        match decision:
            case KeepFile(path=path, memory_key=key, head_n=n, reason=reason):
                data = self.desk.read(path)
                merged = self.desk.merge_with(path, key, n, data, reindex) if n else None
                if merged is not None:
                    return merged
                number = self.desk.record_head(key, path, data, f"settled: {reason}")
                self.desk.close(key)
                reindex.add(path)
                return f"the file's content is version {number}"
            case TakeMagma(path=path, memory_key=key, head_n=n, keep_file=keep, reason=reason):
                return self.desk.take_magma(path, key, n, keep, reason, reindex)
            case ManualReview(path=path, memory_key=key, head_n=n, reason=reason):
                return self.desk.manual_review(path, key, n, reason, reindex)
            case FinishForget(path=path, memory_key=key):
                if is_entry_path(path):  # one entry of an entry file (daemon.forget_entry)
                    forget_entry(self._memories(), self.forgets, self.archive, self.recorder,
                                 path)
                else:
                    self._memories().forget(key)  # (found in the journal by its key)
                return f"forgotten: what was left of {path} is gone"
            case CancelForget(path=path, memory_key=key):
                self.forgets.drop(key)
                offers.append(path)
                reindex.add(path)
                return "kept as it is now; the forget cut short is dropped"
            case NewId(memory_key=key, paths=paths):
                for path in paths:
                    data = self.desk.read(path)
                    fresh = set_properties(data, {"id": str(ULID())}, path=path)
                    self.writer.write(path, fresh, base=data, origin="arbiter",
                                      change=f"a copy of memory {key}: given its own id")
                    reindex.add(path)
                return f"new id for {', '.join(paths)}"
        return None

    def _rebuild_index_if_needed(self, applied: list[tuple[Finding, str]]) -> None:
        if any(not isinstance(f.decision, (RepairArchive, RebuildMemoryIndex))
               for f, _ in applied):
            try:
                self._memories().rebuild_index()
            except DreamdError as error:
                log.warning("check.memory_index_failed", error=str(error))

    def _offer(self, paths: list[str]) -> None:
        """Record the memories at ``paths`` as versions (the index may be up to date already:
        then the indexer would not offer them)."""
        if not paths:
            return
        rows = self.store.file_index()
        notes = []
        for path in paths:
            try:
                note, data = read_note_bytes(self.root, path)
            except DreamdError:
                continue
            row = rows.get(path)
            notes.append((note, data, row.content_hash if row else None))
        self.recorder.offer(notes)

    # ------------------------------------------------------------------ conflicts

    def conflicts(self) -> list[ConflictRecord]:
        """Open conflicts, oldest first (:meth:`daemon.conflicts.ConflictDesk.conflicts`)."""
        return self.desk.conflicts()

    def resolve(self, key: str, keep: Keep) -> str:
        """Settle the open conflict of ``key`` (:meth:`daemon.conflicts.ConflictDesk.resolve`)."""
        return self.desk.resolve(key, keep)


#: File stems of the index files dreamd generates (not indexed, but real link targets).
_GENERATED_STEMS = frozenset({"memory", "dreams"})

_APPLY_ORDER: tuple[type, ...] = (FinishForget, CancelForget, RepairArchive, Reindex, Tombstone,
                                  KeepFile, TakeMagma, ManualReview, NewId, RebuildMemoryIndex,
                                  Report)


def _forgets_unfinished(journal: ForgetJournal, files: Mapping[str, FileSide]
                        ) -> tuple[ForgetUnfinished, ...]:
    """The forgets cut short (:mod:`daemon.forget_journal`), each ``edited`` when its file is
    still there, still the memory, and not what it held when the forget began."""
    found = []
    for begun in journal.pending().values():
        side = files.get(begun.path)
        edited = side is not None and side.memory_key == begun.key \
            and begun.file_hash is not None and side.content_hash != begun.file_hash
        found.append(ForgetUnfinished(begun.path, begun.key, edited))
    return tuple(found)


def _problem_files(paths: Sequence[str], reread: Mapping[str, tuple[Problem, ...]],
                   stored: Mapping[str, tuple[Problem, ...]]) -> tuple[Problem, ...]:
    """The problems of the vault's notes at ``paths``: of those read again now, what the
    parser said now; of the others, what it said when sync read them (``stored``)."""
    return tuple(p for path in sorted(paths)
                 for p in (reread[path] if path in reread else stored.get(path, ())))


def _row_key(row: IndexedFile) -> str | None:
    if row.memory_type is None:
        return None
    return memory_key(row.memory_id, row.path)


def _side_from_row(row: IndexedFile, props: Mapping[str, Any], today: date) -> FileSide:
    key = _row_key(row)
    if key is None:
        return FileSide(row.path, row.content_hash if row.kind == "note"
                        else f"stat:{row.size}:{row.mtime_ns}")
    return FileSide(
        row.path, row.content_hash, key, row.memory_type, _text(props.get("subject")),
        _owner(props.get("owner")),
        is_current(MemoryState.of(props, past=False), today))


def _side_from_note(note: Note, today: date) -> FileSide:
    memory = note.memory
    if memory is None:
        return FileSide(note.path, note.content_hash)
    return FileSide(note.path, note.content_hash, note_memory_key(note), memory.type,
                    memory.subject, _owner(memory.owner),
                    is_current(MemoryState.of(memory, past=False), today))


def _entry_side(stored: StoredMemory, today: date) -> FileSide:
    """An entry (``file.md#key``) as the check sees a memory: its pairs kept apart on a
    guess name other entries of its file (:data:`ccb.entry_notes.POSSIBLE_PAIR_KEYS`)."""
    side = _side_from_note(stored.note, today)
    possible = tuple((kind, other) for kind in POSSIBLE_PAIR_KEYS
                     if isinstance(other := stored.note.properties.get(kind), str))
    return replace(side, possible=possible)


def _link_possible_pairs(files: dict[str, FileSide], props: Mapping[str, Mapping[str, Any]]
                         ) -> None:
    """Fill :attr:`FileSide.possible` from the memories' ``possible_duplicate`` and
    ``possible_contradiction`` links (wikilinks by file name, resolved among the memories)."""
    by_stem = {link_stem(p): p for p, side in files.items() if side.memory_key is not None}
    for path, side in list(files.items()):
        if side.memory_key is None:
            continue
        found: list[tuple[str, str]] = []
        for kind in ("possible_duplicate", "possible_contradiction"):
            value = props.get(path, {}).get(kind)
            for link in value if isinstance(value, list) else [value] if value else []:
                other = by_stem.get(link_stem(str(link)))
                if other is not None:
                    found.append((kind, other))
        if found:
            files[path] = replace(side, possible=tuple(found))


def _linked_pairs(files: Mapping[str, FileSide]) -> dict[tuple[str, str, str], list[str]]:
    """The live pairs of memory files linked as possible ones (:attr:`FileSide.possible`),
    as groups of two (paths sorted) to judge for their evidence."""
    pairs: dict[tuple[str, str, str], list[str]] = {}
    for path, side in files.items():
        for _kind, other in side.possible if side.live else ():
            twin = files.get(other)
            if twin is not None and twin.live and other != path:
                a, b = sorted((path, other))
                pairs[("", "possible pair", f"{a}\n{b}")] = [a, b]
    return pairs


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _judge_groups(groups: Mapping[Any, list[str]], read: Mapping[str, StoredMemory],
                  stored: Mapping[str, StoredMemory], facts: Mapping[str, Any]
                  ) -> dict[tuple[str, str], tuple[str, str]]:
    """``{(a, b): (verdict, evidence)}`` for the pairs of each subject group: a pair where one
    memory names the other in ``supersedes`` is settled (the older is current until the
    newer's day), the others are judged as ``remember`` judges (memories with an ``id``)."""
    judged: dict[tuple[str, str], tuple[str, str]] = {}
    ids = {path: memory_key(s.note.memory.id, path) for path, s in stored.items()
           if s.note.memory}
    for members in groups.values():
        both = [p for p in members if p in read]
        for i, a in enumerate(both):
            for b in both[i + 1:]:
                if _one_supersedes(read[a], read[b]):
                    judged[(a, b)] = ("superseded", "one supersedes the other")
        known = [p for p in members if p in stored]
        for i, a in enumerate(known):
            for b in known[i + 1:]:
                fa, fb = facts.get(ids.get(a) or ""), facts.get(ids.get(b) or "")
                if (a, b) in judged or fa is None or fb is None:
                    continue
                old, new = sorted((fa, fb), key=lambda f: (f.written or date.min, f.id))
                why = judge_pair(
                    MemorySide(old.type, old.subject, claim_of(old), old.subject_inferred),
                    MemorySide(new.type, new.subject, claim_of(new), new.subject_inferred),
                    cosine=cosine_similarity(old.embedding, new.embedding))
                judged[(a, b)] = (why.verdict, why.explain())
    return judged


def _one_supersedes(a: StoredMemory, b: StoredMemory) -> bool:
    """Does either memory name the other in its ``supersedes`` (link targets: file stems;
    an entry's: entry paths, ``file.md#key``)?"""
    if is_entry_path(a.path) or is_entry_path(b.path):
        return any(x.path in (y.note.memory.supersedes if y.note.memory else ())
                   for x, y in ((a, b), (b, a)))

    def targets(side: StoredMemory) -> set[str]:
        meta = side.note.memory
        return {link_stem(t) for t in (meta.supersedes if meta else ())}
    return link_stem(a.path) in targets(b) or link_stem(b.path) in targets(a)


def _owner(value: object) -> str | None:
    return value.strip().casefold() if isinstance(value, str) and value.strip() else None


def _utc(value: object) -> datetime:
    return as_aware(value) or datetime.now(UTC)


def _not_lineage(broken: list[tuple[str, str]], memories: tuple[LineageMemory, ...]
                 ) -> list[tuple[str, str]]:
    """``broken`` (``(path, link target)``) without the lineage links that name a memory
    by the lineage's own rule (:class:`magma.lineage.LineageResolver`: a memory's ``name``,
    a path in a subfolder): ``supersedes: "[[Alpha]]"`` names the memory called Alpha for
    the dream, ``dreamd lineage`` and the graph, so check does not call it broken."""
    resolve = LineageResolver.of((m.path, m.name) for m in memories)
    named = {(m.path, link_stem(link)) for m in memories for _, link in m.links
             if resolve(link) is not None}
    return [(path, target) for path, target in broken
            if (path, link_stem(target)) not in named]
