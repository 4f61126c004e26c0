"""The consistency checker: where the vault (CCB) and MAGMA disagree. Pure.

Three sides are compared, per note path and per memory (DESIGN.md, Consistency):

- the **file** in the vault now (:class:`FileSide`: its content hash, memory id, type);
- this device's **index** row, which is also the *base* — the content this device last
  synced (:class:`IndexSide`);
- MAGMA's **history** of the memory, shared by every device of the store
  (:class:`HistorySide`: the current version and every hash it ever had).

For a memory with file hash F, base B and current version H:

=========================  ====================================================
F = H                      in step (the index is :class:`Stale` when B ≠ F)
B = H, F ≠ H               edited here since the last sync → :class:`Stale`
B = F, F ≠ H               MAGMA moved on (another device) → :class:`Behind`
no B, F an old version     → :class:`Behind`
otherwise                  both changed since the base → :class:`Divergent`
=========================  ====================================================

A memory the history knows but no file holds is :class:`Orphaned` when this device saw its
file go (confirmed after a grace period; then it is tombstoned, never dropped) and
:class:`NotInVault` when it never had it (another device made it). Besides: a memory id claimed
by two files (:class:`DuplicateId`), two live memories of one owner, type and subject
(:class:`Contradiction`, unless the write-time judgement calls them a series or two facts), a
pair kept apart on a guess (:class:`PossiblePair`), a memory's link to nothing
(:class:`BrokenLink`), ``MEMORY.md`` not what the memories give (:class:`IndexFileOutOfDate`),
the version table and its plain-text copies out of step (:class:`ArchiveOutOfStep`),
conflicts waiting for the user (:class:`OpenConflict`), a credential the user wrote by
hand into an indexed file (:class:`Credential`), and the drift of the memories' lineage graph
(:mod:`consistency.graph_checks`: a supersedes or merged-into loop, a memory superseded twice,
a lineage link to no memory, a lineage value that is no link, a memory derived from a changed
source). What to do about each is
:mod:`consistency.arbiter`'s decision.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from consistency.graph_checks import (
    ChangedSource,
    DanglingLineage,
    JunkLineage,
    MergedIntoCycle,
    SupersededTwice,
    SupersedesCycle,
    graph_drifts,
    names_nothing,
)
from consistency.withheld import FoundCredential
from magma.lineage import link_stem

__all__ = [
    "ArchiveOutOfStep",
    "Behind",
    "BrokenLink",
    "ChangedSource",
    "Contradiction",
    "Credential",
    "DanglingLineage",
    "Divergent",
    "Drift",
    "DuplicateId",
    "FileSide",
    "ForgetUnfinished",
    "HistorySide",
    "IndexFileOutOfDate",
    "IndexSide",
    "JunkLineage",
    "MergedIntoCycle",
    "Missing",
    "NotInVault",
    "OpenConflict",
    "Orphaned",
    "PossiblePair",
    "Snapshot",
    "Stale",
    "SupersededTwice",
    "SupersedesCycle",
    "check",
    "drift_kind",
]


# ---------------------------------------------------------------------------- the sides


@dataclass(frozen=True, slots=True)
class FileSide:
    """A file in the vault now. ``memory_key`` is the memory's history key (its id, or
    ``path:<path>``), ``None`` for a note that is not a memory; ``live`` is False for a
    superseded, expired or archived memory."""

    path: str
    content_hash: str
    memory_key: str | None = None
    memory_type: str | None = None
    subject: str | None = None
    owner: str | None = None
    live: bool = True
    #: Pairs this memory was kept apart from on a guess: ``(kind, other path)``, kind
    #: ``possible_duplicate`` or ``possible_contradiction`` (its frontmatter links).
    possible: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class IndexSide:
    """This device's index row of a path: what it last synced (the base)."""

    path: str
    content_hash: str
    memory_key: str | None = None


@dataclass(frozen=True, slots=True)
class HistorySide:
    """MAGMA's record of a memory: its current version (``head_kind`` ``tombstone`` when it
    was deleted) and every content hash any version had; ``restore_n`` is the version a
    deleted memory had before its tombstone."""

    memory_key: str
    head_n: int
    head_hash: str
    head_kind: Literal["edit", "tombstone"]
    head_path: str
    memory_type: str | None
    hashes: frozenset[str]
    restore_n: int | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one check looks at (gathered by the daemon, never read here).

    ``unchanged`` are notes (not memories) whose size and mtime equal their index row: in
    step by construction, so the gatherer leaves them out of ``files`` and ``index`` (on a
    large vault that is nearly every file) and the check only needs to know they exist.

    ``bases`` maps memory keys to the version this device last agreed with (its hash; when a
    key has none, the index row is the base); ``pending_gone`` maps memory keys whose file this
    device saw go to when it went (UTC);
    ``open_conflicts`` maps keys to their conflict copy (``deleted_copies``: keys whose copy
    the user deleted, which settles the conflict for the file); ``broken_links`` lists
    ``(memory path, link target)``; ``archive_out_of_step`` counts version rows and files that
    disagree; ``orphan_grace`` is how long a file must stay gone before its tombstone;
    ``credentials`` maps paths to the credentials the index withheld from them (as indexed
    now, :mod:`daemon.credential_ledger`)."""

    files: Mapping[str, FileSide]
    index: Mapping[str, IndexSide]
    history: Mapping[str, HistorySide]
    now: datetime
    unchanged: frozenset[str] = frozenset()
    bases: Mapping[str, str] = field(default_factory=dict)
    pending_gone: Mapping[str, datetime] = field(default_factory=dict)
    open_conflicts: Mapping[str, str] = field(default_factory=dict)
    deleted_copies: frozenset[str] = frozenset()
    broken_links: Sequence[tuple[str, str]] = ()
    memory_index_path: str | None = None
    memory_index_current: bool = True
    memory_index_hand_edited: bool = False
    archive_out_of_step: bool = False
    orphan_grace: timedelta = timedelta(minutes=5)
    #: The write-time judgement of live memories that share owner, type and subject:
    #: ``{(path_a, path_b): (verdict, explanation)}`` with ``path_a < path_b``
    #: (:func:`consistency.judgement.judge_pair`); ``None`` when not judged (every such pair
    #: is then a :class:`Contradiction`).
    judged: Mapping[tuple[str, str], tuple[str, str]] | None = None
    credentials: Mapping[str, tuple[FoundCredential, ...]] = field(default_factory=dict)
    #: The memories' lineage graph (``networkx.MultiDiGraph``, :mod:`magma.lineage`), checked
    #: by :func:`consistency.graph_checks.graph_drifts`; ``None``: not checked.
    lineage: Any = None
    #: The lineage property values that are no link, by path
    #: (:func:`consistency.graph_checks.junk_lineage`).
    lineage_junk: Sequence[JunkLineage] = ()
    #: The entries of the memory folder's entry files, by entry path (``file.md#key``,
    #: :mod:`ccb.entry_notes`): they take part in contradictions and possible pairs like
    #: memory files (their ``possible`` are entry paths); their rows and versions follow
    #: their file, which ``files`` holds.
    entries: Mapping[str, FileSide] = field(default_factory=dict)
    #: The forgets begun and not finished (:mod:`daemon.forget_journal`): each is reported
    #: instead of the drift its half-erased memory shows (:func:`_forgets_unfinished`).
    forgets_unfinished: Sequence[ForgetUnfinished] = ()


# ---------------------------------------------------------------------------- drift kinds


@dataclass(frozen=True, slots=True)
class Missing:
    """A file with no index row (``what="index"``), or a memory with no version
    (``what="history"``)."""

    path: str
    memory_key: str | None
    what: Literal["index", "history"]


@dataclass(frozen=True, slots=True)
class Stale:
    """The index (and for a memory, its history) is behind the file: edited here since the
    last sync, or the index row is older than the version recorded."""

    path: str
    memory_key: str | None
    file_hash: str
    index_hash: str | None


@dataclass(frozen=True, slots=True)
class Orphaned:
    """An index row or a live memory history whose file is gone from the vault. ``confirmed``
    once it has stayed gone for the grace period (or the index row says nothing else holds
    it)."""

    path: str
    memory_key: str | None
    confirmed: bool


@dataclass(frozen=True, slots=True)
class Behind:
    """The file is unchanged since this device synced it (or is an old version) and MAGMA
    has a newer version ``head_n`` — from another device; ``deleted`` when that version is a
    tombstone."""

    path: str
    memory_key: str
    memory_type: str | None
    head_n: int
    deleted: bool
    restore_n: int | None = None


@dataclass(frozen=True, slots=True)
class Divergent:
    """The file and MAGMA both changed since the base (``base_hash``, ``None`` when this
    device never synced the memory)."""

    path: str
    memory_key: str
    memory_type: str | None
    file_hash: str
    head_n: int
    base_hash: str | None


@dataclass(frozen=True, slots=True)
class NotInVault:
    """MAGMA has a live memory this vault never had (another device's); ``head_path`` is
    where that device keeps it."""

    memory_key: str
    head_path: str
    head_n: int
    note_exists: bool = False


@dataclass(frozen=True, slots=True)
class DuplicateId:
    """Two or more files claim one memory id (a copied memory file)."""

    memory_key: str
    paths: tuple[str, ...]
    keep: str


@dataclass(frozen=True, slots=True)
class Contradiction:
    """Live memories of one owner, type and subject: one should supersede the others (or,
    saying the same, be merged). ``evidence``: the judgement of the pair, when judged."""

    memory_type: str
    subject: str
    paths: tuple[str, ...]
    evidence: str | None = None


@dataclass(frozen=True, slots=True)
class PossiblePair:
    """Two live memories kept apart because the write-time judgement was unsure whether
    they say the same (``possible_duplicate``) or disagree (``possible_contradiction``):
    both stay until the user settles it."""

    kind: Literal["possible_duplicate", "possible_contradiction"]
    paths: tuple[str, str]
    evidence: str | None = None


@dataclass(frozen=True, slots=True)
class BrokenLink:
    """A memory links to nothing in the vault."""

    path: str
    target: str


@dataclass(frozen=True, slots=True)
class IndexFileOutOfDate:
    """``MEMORY.md`` is not what the memories give (``hand_edited``: and dreamd did not
    write what is there)."""

    path: str
    hand_edited: bool = False


@dataclass(frozen=True, slots=True)
class ArchiveOutOfStep:
    """The version table and this device's plain-text copies disagree (a crash between the
    two writes, another device's versions, a number given twice)."""


@dataclass(frozen=True, slots=True)
class OpenConflict:
    """A conflict waiting for ``dreamd conflicts resolve``; ``copy`` holds the other side."""

    path: str
    memory_key: str
    copy: str
    copy_exists: bool = True


@dataclass(frozen=True, slots=True)
class Credential:
    """A credential the user wrote by hand into a note or memory (``found``: its lines, kinds
    and redacted previews, never the secret). dreamd keeps it out of the index, search and
    context, but only the user can take it out of the file."""

    path: str
    found: tuple[FoundCredential, ...]


@dataclass(frozen=True, slots=True)
class ForgetUnfinished:
    """A ``dreamd forget`` of the memory was cut short (a kill between its steps): some of it
    may be left — its file, index rows, versions, links to it. Not another device's memory,
    nor an orphan to tombstone: ``dreamd forget`` run again, or ``check --fix``, finishes it;
    ``edited`` when its file is still there and was edited since the forget began (the user
    may want it back: ``check --fix`` keeps it, ``dreamd forget`` forgets it)."""

    path: str
    memory_key: str
    edited: bool = False


Drift = (Missing | Stale | Orphaned | Behind | Divergent | NotInVault | DuplicateId
         | Contradiction | PossiblePair | BrokenLink | IndexFileOutOfDate | ArchiveOutOfStep
         | OpenConflict | Credential | SupersedesCycle | MergedIntoCycle | SupersededTwice
         | DanglingLineage | JunkLineage | ChangedSource | ForgetUnfinished)

_KINDS: dict[type, str] = {
    Missing: "missing", Stale: "stale", Orphaned: "orphaned", Behind: "behind",
    Divergent: "divergent", NotInVault: "not_in_vault", DuplicateId: "duplicate_id",
    Contradiction: "contradiction", PossiblePair: "possible_pair", BrokenLink: "broken_link",
    IndexFileOutOfDate: "memory_index_out_of_date", ArchiveOutOfStep: "archive_out_of_step",
    OpenConflict: "open_conflict", Credential: "credential",
    SupersedesCycle: "supersedes_cycle", MergedIntoCycle: "merged_into_cycle",
    SupersededTwice: "superseded_twice", DanglingLineage: "dangling_lineage",
    JunkLineage: "junk_lineage", ChangedSource: "derived_from_changed_source",
    ForgetUnfinished: "forget_unfinished",
}


def drift_kind(drift: Drift) -> str:
    """The report name of a drift kind (``"stale"``, ``"divergent"`` …)."""
    return _KINDS[type(drift)]


# ---------------------------------------------------------------------------- the check


def check(snapshot: Snapshot) -> list[Drift]:
    """Every drift in ``snapshot``, in a stable order (by kind, then path)."""
    found: list[Drift] = []
    files, index, history = snapshot.files, snapshot.index, snapshot.history
    by_key: dict[str, list[FileSide]] = defaultdict(list)
    for file in files.values():
        if file.memory_key is not None:
            by_key[file.memory_key].append(file)
        row = index.get(file.path)
        if row is None:
            found.append(Missing(file.path, file.memory_key, "index"))
        elif file.memory_key is None and row.content_hash != file.content_hash:
            found.append(Stale(file.path, None, file.content_hash, row.content_hash))
    rows_by_key: dict[str, list[IndexSide]] = defaultdict(list)
    for row in index.values():
        if row.path in files or row.path in snapshot.unchanged:
            continue
        if row.memory_key is not None and row.memory_key not in by_key:
            rows_by_key[row.memory_key].append(row)
            found.append(Orphaned(row.path, row.memory_key, confirmed=False))
        else:  # a note, or a memory that lives on under another path: only the row goes
            found.append(Orphaned(row.path, None, confirmed=True))

    for key, claimants in by_key.items():
        if len(claimants) > 1:
            paths = tuple(sorted(f.path for f in claimants))
            head = history.get(key)
            keep = head.head_path if head is not None and head.head_path in paths else paths[0]
            found.append(DuplicateId(key, paths, keep))
            continue
        found.extend(_memory_drift(claimants[0], index.get(claimants[0].path),
                                   history.get(key), snapshot))

    found.extend(_gone_from_vault(snapshot, set(by_key) | set(rows_by_key)))
    found.extend(_contradictions([*files.values(), *snapshot.entries.values()],
                                 snapshot.judged))
    found.extend(_possible_pairs({**files, **snapshot.entries}, snapshot.judged))
    lineage = graph_drifts(snapshot.lineage) if snapshot.lineage is not None else []
    # a lineage link to nothing is reported once, as a dangling lineage link
    dangling = names_nothing(lineage)
    found.extend(BrokenLink(path, target) for path, target in snapshot.broken_links
                 if (path, link_stem(target)) not in dangling)
    found.extend(lineage)
    found.extend(snapshot.lineage_junk)
    if not snapshot.memory_index_current and snapshot.memory_index_path is not None:
        found.append(IndexFileOutOfDate(snapshot.memory_index_path,
                                        snapshot.memory_index_hand_edited))
    if snapshot.archive_out_of_step:
        found.append(ArchiveOutOfStep())
    found.extend(Credential(path, where) for path, where in snapshot.credentials.items() if where)
    return sorted(_forgets_unfinished(found, snapshot.forgets_unfinished), key=_order)


def _forgets_unfinished(found: list[Drift], begun: Sequence[ForgetUnfinished]) -> list[Drift]:
    """``found`` with each forget cut short in place of the drift of its memory (its key): an
    index row or history with no file, a file with no row, a memory "made on another
    device"; and of a forget not edited since, the links to the memory that the forget
    takes out (a broken link, a lineage link to nothing). Other drift stays."""
    if not begun:
        return found
    keys = {b.memory_key for b in begun}
    stems = {link_stem(b.path) for b in begun if not b.edited}

    def settled_by_forget(drift: Drift) -> bool:
        if getattr(drift, "memory_key", None) in keys:
            return True
        if isinstance(drift, BrokenLink):
            return link_stem(drift.target) in stems
        return isinstance(drift, DanglingLineage) and link_stem(drift.target) in stems

    return [d for d in found if not settled_by_forget(d)] + list(begun)


def _gone_from_vault(snapshot: Snapshot, seen: set[str]) -> list[Drift]:
    """Memories the history knows (not tombstoned) that no file or index row of ``seen``
    holds: gone for a while (orphaned, confirmed after the grace), or not in the vault."""
    found: list[Drift] = []
    for key, head in snapshot.history.items():
        if key in seen or head.head_kind == "tombstone":
            continue
        since = snapshot.pending_gone.get(key)
        if since is not None:
            confirmed = snapshot.now - since >= snapshot.orphan_grace
            found.append(Orphaned(head.head_path, key, confirmed=confirmed))
        else:
            found.append(NotInVault(key, head.head_path, head.head_n,
                                    note_exists=head.head_path in snapshot.files
                                    or head.head_path in snapshot.unchanged))
    return found


def _memory_drift(
    file: FileSide, row: IndexSide | None, head: HistorySide | None, snapshot: Snapshot
) -> list[Drift]:
    key = file.memory_key
    assert key is not None
    copy = snapshot.open_conflicts.get(key)
    if copy is not None:
        return [OpenConflict(file.path, key, copy, key not in snapshot.deleted_copies)]
    f = file.content_hash
    row_hash = row.content_hash if row is not None else None
    base = snapshot.bases.get(key, row_hash)
    index_behind = row is not None and row_hash != f
    if head is None:
        drifts: list[Drift] = [Missing(file.path, key, "history")]
        if index_behind:
            drifts.append(Stale(file.path, key, f, row_hash))
        return drifts
    if head.head_kind == "tombstone":
        if base == f:  # unchanged here, deleted on another device
            return [Behind(file.path, key, file.memory_type, head.head_n, deleted=True,
                           restore_n=head.restore_n)]
        return [Stale(file.path, key, f, row_hash)]  # alive here again: a new version
    if f == head.head_hash:
        return [Stale(file.path, key, f, row_hash)] if index_behind else []
    if base == head.head_hash:
        return [Stale(file.path, key, f, row_hash)]
    if base == f or (base is None and f in head.hashes):
        return [Behind(file.path, key, file.memory_type, head.head_n, deleted=False)]
    return [Divergent(file.path, key, file.memory_type or head.memory_type, f, head.head_n,
                      base)]


def subject_groups(files: Iterable[FileSide]) -> dict[tuple[str, str, str], list[str]]:
    """Live memories by ``(owner, type, subject)`` (subject case and spacing do not count),
    only the groups of two or more, paths sorted."""
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for file in files:
        if file.memory_key is None or not file.live or not file.subject or not file.memory_type:
            continue
        subject = " ".join(file.subject.casefold().split())
        groups[(file.owner or "", file.memory_type, subject)].append(file.path)
    return {key: sorted(paths) for key, paths in sorted(groups.items()) if len(paths) > 1}


def _contradictions(files: Iterable[FileSide],
                    judged: Mapping[tuple[str, str], tuple[str, str]] | None) -> list[Drift]:
    found: list[Drift] = []
    for (_owner, mtype, subject), paths in subject_groups(files).items():
        if judged is None:
            found.append(Contradiction(mtype, subject, tuple(paths)))
            continue
        for i, a in enumerate(paths):
            for b in paths[i + 1:]:
                verdict, evidence = judged.get((a, b), ("contradiction", ""))
                if verdict in {"contradiction", "duplicate"}:
                    found.append(Contradiction(mtype, subject, (a, b), evidence or None))
    return found


def _possible_pairs(files: Mapping[str, FileSide],
                    judged: Mapping[tuple[str, str], tuple[str, str]] | None) -> list[Drift]:
    pairs: dict[tuple[str, str], PossiblePair] = {}
    for file in files.values():
        if not file.live:
            continue
        for kind, other in file.possible:
            twin = files.get(other)
            if twin is None or not twin.live or other == file.path:
                continue  # settled: one of them was superseded, archived or forgotten
            a, b = sorted((file.path, other))
            if (a, b) not in pairs and kind in {"possible_duplicate", "possible_contradiction"}:
                evidence = (judged or {}).get((a, b), ("", ""))[1] or None
                pairs[(a, b)] = PossiblePair(kind, (a, b), evidence)  # type: ignore[arg-type]
    if judged:
        for (a, b), (verdict, evidence) in judged.items():
            if verdict in {"possible_duplicate", "possible_contradiction"} and (a, b) not in pairs:
                pairs[(a, b)] = PossiblePair(verdict, (a, b), evidence or None)  # type: ignore[arg-type]
    return [pairs[key] for key in sorted(pairs)]


def _order(drift: Drift) -> tuple[int, str]:
    kinds = list(_KINDS.values())
    where = getattr(drift, "path", None) or getattr(drift, "memory_key", None) or ""
    if isinstance(drift, Contradiction | PossiblePair):
        where = drift.paths[0]
    return kinds.index(drift_kind(drift)), str(where)
