"""The conflict arbiter: what to do about each drift the checker found. Pure.

Rules (DESIGN.md, Consistency): when a memory diverged — its file and MAGMA both changed since
the base — the **file wins** for ``user`` and ``feedback`` (what the user wrote about
themselves and how they want to be treated is theirs), the **MAGMA version wins** for
``reference`` (it is the newer knowledge), and anything else goes to **manual review**: both
versions kept, a conflict copy beside the note, an entry in ``dreamd conflicts``. The side
that loses is always kept in the history (:func:`kept_sides`), never dropped.

Stale and missing entries are re-indexed and orphans tombstoned automatically
(:func:`is_automatic`: the daemon applies these on its own); decisions that write a user's
file — taking MAGMA's version, manual review, a fresh id for a copied memory — wait for
``dreamd check --fix``. Drift that needs a person's judgement gets a :class:`Report` with
the command that settles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from consistency.checker import (
    ArchiveOutOfStep,
    Behind,
    BrokenLink,
    ChangedSource,
    Contradiction,
    Credential,
    DanglingLineage,
    Divergent,
    Drift,
    DuplicateId,
    ForgetUnfinished,
    IndexFileOutOfDate,
    JunkLineage,
    MergedIntoCycle,
    Missing,
    NotInVault,
    OpenConflict,
    Orphaned,
    PossiblePair,
    Stale,
    SupersededTwice,
    SupersedesCycle,
)
from consistency.graph_checks import FORGOTTEN

__all__ = [
    "FILE_WINS",
    "MAGMA_WINS",
    "CancelForget",
    "Decision",
    "FinishForget",
    "KeepFile",
    "ManualReview",
    "NewId",
    "RebuildMemoryIndex",
    "Reindex",
    "RepairArchive",
    "Report",
    "TakeMagma",
    "Tombstone",
    "decide",
    "is_automatic",
    "kept_sides",
]

#: Memory types whose file wins a divergence (DESIGN.md).
FILE_WINS = frozenset({"user", "feedback"})
#: Memory types whose newer MAGMA version wins a divergence (DESIGN.md: L5 knowledge).
MAGMA_WINS = frozenset({"reference"})


@dataclass(frozen=True, slots=True)
class Reindex:
    """Index ``path`` as it is now (a memory's content is also recorded as a version)."""

    path: str
    memory_key: str | None


@dataclass(frozen=True, slots=True)
class Tombstone:
    """Record that the memory's file (last at ``path``) is gone; its history stays.
    ``confirmed``: it stayed gone for the grace period."""

    path: str
    memory_key: str
    confirmed: bool


@dataclass(frozen=True, slots=True)
class RepairArchive:
    """Bring the version table and the plain-text copies in step."""


@dataclass(frozen=True, slots=True)
class RebuildMemoryIndex:
    """Regenerate ``MEMORY.md``; one dreamd did not write is kept beside it as a conflict
    copy first (``hand_edited``: then only on ``--fix``)."""

    path: str
    hand_edited: bool = False


@dataclass(frozen=True, slots=True)
class KeepFile:
    """The file wins: its content becomes the current version; MAGMA's stays in history."""

    path: str
    memory_key: str
    head_n: int
    reason: str


@dataclass(frozen=True, slots=True)
class TakeMagma:
    """MAGMA's version ``head_n`` is written to the file; with ``keep_file`` the file's
    content is first kept in the history as a side version."""

    path: str
    memory_key: str
    head_n: int
    keep_file: bool
    reason: str


@dataclass(frozen=True, slots=True)
class ManualReview:
    """Both kept: the file stays, MAGMA's version ``head_n`` goes to a conflict copy beside
    it, the file's content to the history, and the conflict is listed until resolved."""

    path: str
    memory_key: str
    head_n: int
    reason: str


@dataclass(frozen=True, slots=True)
class NewId:
    """Give the copies of a memory (``paths``) fresh ids; ``keep`` keeps the old one."""

    memory_key: str
    keep: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FinishForget:
    """Do what is left of a ``dreamd forget`` that was cut short: the user asked for it."""

    path: str
    memory_key: str
    reason: str


@dataclass(frozen=True, slots=True)
class CancelForget:
    """Keep the memory whose forget was cut short and whose file the user edited since: the
    file stays as it is (re-indexed, recorded as a version) and the forget is dropped; what
    it had done already stays done."""

    path: str
    memory_key: str
    reason: str


@dataclass(frozen=True, slots=True)
class Report:
    """Nothing dreamd should do on its own; ``hint`` says what settles it."""

    hint: str


Decision = (Reindex | Tombstone | RepairArchive | RebuildMemoryIndex | KeepFile | TakeMagma
            | ManualReview | NewId | FinishForget | CancelForget | Report)


def decide(drift: Drift) -> Decision:
    """The decision for one drift (module docstring)."""
    match drift:
        case Missing(path=path, memory_key=key) | Stale(path=path, memory_key=key):
            return Reindex(path, key)
        case Orphaned(path=path, memory_key=None):
            return Reindex(path, None)
        case Orphaned(path=path, memory_key=str() as key, confirmed=confirmed):
            return Tombstone(path, key, confirmed)
        case Divergent():
            return _divergent(drift)
        case DuplicateId(memory_key=key, paths=paths, keep=keep):
            return NewId(key, keep, tuple(p for p in paths if p != keep))
        case IndexFileOutOfDate(path=path, hand_edited=hand_edited):
            return RebuildMemoryIndex(path, hand_edited)
        case ArchiveOutOfStep():
            return RepairArchive()
        case ForgetUnfinished(path=path, memory_key=key, edited=False):
            return FinishForget(path, key, reason=(
                f"a `dreamd forget` of it was cut short; what is left of it goes (as with "
                f"`dreamd forget {path}` run again); nothing of it is brought back"))
        case ForgetUnfinished(path=path, memory_key=key):
            return CancelForget(path, key, reason=(
                f"a `dreamd forget` of it was cut short and its file was edited since: the "
                f"fix keeps the file as it is; `dreamd forget {path}` forgets it"))
    return _elsewhere_or_asked(drift)


def _elsewhere_or_asked(drift: Drift) -> Decision:
    """The decisions for what another device did and for what only the user can settle."""
    match drift:
        case Behind(deleted=True, memory_key=key, restore_n=restore):
            keep = (f"`dreamd rollback {key} --to {restore}` keeps it" if restore
                    else "`dreamd check --fix` after an edit keeps it")
            return Report(f"deleted on another device: delete the file here too, or {keep}")
        case Behind(path=path, memory_key=key, head_n=n):
            return TakeMagma(path, key, n, keep_file=False,
                             reason=f"unchanged here since this device last synced it; version "
                                    f"{n} (another device's) is newer — what the file says now "
                                    "stays in the history")
        case NotInVault(memory_key=key, head_path=path, note_exists=True):
            return Report(f"{path} is no longer a memory (its memory properties were "
                          f"removed); its history stays under {key}")
        case NotInVault(memory_key=key, head_n=n, head_path=path):
            return Report(f"made on another device ({path}); your vault sync brings the file, "
                          f"or `dreamd rollback {key} --to {n}` writes it here")
        case Contradiction(evidence=evidence):
            return Report(("judged " + evidence + "; " if evidence else "")
                          + "the next dream merges them if they say the same and supersedes "
                          "the older one if they disagree (`dreamd dream --dry-run` shows it)")
        case PossiblePair(kind=kind, evidence=evidence):
            what = "say the same" if kind == "possible_duplicate" else "disagree"
            return Report(("judged " + evidence + "; " if evidence else "")
                          + f"both are kept: they may {what}. Settle it with `dreamd conflicts "
                          "resolve MEMORY --as same|changed|different`")
        case BrokenLink(target=target):
            return Report(f"create the note [[{target}]] or fix the link")
    return _lineage_or_asked(drift)


def _lineage_or_asked(drift: Drift) -> Decision:
    """The decisions for lineage drift (:mod:`consistency.graph_checks`): each names the
    chain and is the user's to settle."""
    match drift:
        case SupersedesCycle(chain=(only,)):
            return Report(f"supersedes itself ({only} → {only}): the link is ignored; "
                          "remove it")
        case SupersedesCycle(chain=chain):
            loop = " → ".join((*chain, chain[0]))
            return Report(f"supersedes round a loop ({loop}): the loop's links are ignored, "
                          "each memory stays as its own status says; remove the wrong "
                          "`supersedes` link (`dreamd lineage` shows the chain)")
        case MergedIntoCycle(chain=(only,)):
            return Report(f"merged into itself ({only} → {only}): the link is ignored; "
                          "remove it")
        case MergedIntoCycle(chain=chain):
            loop = " → ".join((*chain, chain[0]))
            return Report(f"merged into each other round a loop ({loop}): the loop's links "
                          "are ignored, each memory stays as its own status says; remove the "
                          "wrong `merged_into` link (`dreamd lineage` shows the chain)")
        case JunkLineage(written_in=prop, value=value):
            return Report(f"its `{prop}` holds {value}, which is no link to a memory: it is "
                          f'ignored; write the memory\'s name as "[[name]]" or remove it')
        case SupersededTwice(by=by):
            return Report(f"superseded by {' and '.join(by)}: one of them should supersede "
                          "the other (`dreamd lineage` shows the chain)")
        case DanglingLineage(written_in=prop, target=target):
            return Report(f"its `{prop}` names {target}, which is no memory (forgotten or "
                          "renamed): fix or remove the link")
        case ChangedSource(chain=chain, change=change) if chain[-1] == FORGOTTEN:
            # forget took the name out of derived_from already: nothing there to update
            return Report(f"{' → '.join(chain)}: {change}; the next dream re-checks it "
                          "against its other sources (archived, recoverable, when none "
                          "holds it), or edit it and remove `forgotten_sources`")
        case ChangedSource(chain=chain, change=change):
            return Report(f"{' → '.join(chain)}: {chain[-1]} {change}; check it still "
                          "holds, then update its `derived_from`")
        case Credential(found=found):
            return Report(
                f"a credential written by hand at {', '.join(f.describe() for f in found)}: "
                "move it to a secret manager and remove it from the file (dreamd keeps it out "
                "of its index, search and context meanwhile)")
        case OpenConflict(path=path, memory_key=key, copy_exists=False):
            return KeepFile(path, key, 0, reason="its conflict copy was deleted: the file "
                                                 "is kept")
        case OpenConflict(memory_key=key, copy=copy):
            return Report(f"compare it with {copy}, then `dreamd conflicts resolve {key} "
                          "--keep file|magma|both`")
    raise AssertionError(f"no decision for {drift!r}")  # pragma: no cover


def _divergent(drift: Divergent) -> Decision:
    mtype = drift.memory_type or "note"
    if mtype in FILE_WINS:
        return KeepFile(drift.path, drift.memory_key, drift.head_n,
                        reason=f"the file wins for {mtype} memories")
    if mtype in MAGMA_WINS:
        return TakeMagma(drift.path, drift.memory_key, drift.head_n, keep_file=True,
                         reason=f"the newer version in the store wins for {mtype} memories")
    return ManualReview(drift.path, drift.memory_key, drift.head_n,
                        reason=f"{mtype} memories are settled by hand")


_AUTOMATIC: tuple[type, ...] = (Reindex, RepairArchive)


def is_automatic(decision: Decision) -> bool:
    """True for the repairs the daemon applies on its own: re-indexing stale and missing
    entries, tombstoning confirmed orphans, the version archive and ``MEMORY.md``. Decisions
    that write a user's file wait for ``dreamd check --fix``."""
    if isinstance(decision, Tombstone):
        return decision.confirmed
    if isinstance(decision, RebuildMemoryIndex):
        return not decision.hand_edited
    return isinstance(decision, _AUTOMATIC)


def kept_sides(decision: Decision) -> frozenset[Literal["file", "magma"]]:
    """Which contents of a divergent memory stay reachable after ``decision`` — in the vault
    or the history. Every divergence decision keeps both (property-tested)."""
    match decision:
        case KeepFile():
            return frozenset({"file", "magma"})  # MAGMA's version stays in history
        case TakeMagma(keep_file=True) | ManualReview():
            return frozenset({"file", "magma"})
        case TakeMagma(keep_file=False):
            return frozenset({"magma"})  # the file's content was a recorded version already
    return frozenset()
