"""``dreamd forget file.md#key``: one entry of an entry file forgotten, in steps that a kill
may cut short and that the same command, or ``dreamd check --fix``, finishes.

The steps: the forget is written down (:mod:`daemon.forget_journal`, under the entry's
history key ``path:file.md#key`` and its entry path); the entry's line goes from its file
(every other byte stays); the file is indexed again and the old table versions that held the
entry's text are dropped; its versions go from the history (:func:`forget_entry_recorded`);
the written-down forget goes last. A kill between two steps leaves the forget in the journal:
``dreamd check`` reports it as a forget cut short, and the same ``dreamd forget`` run again
finds the entry gone from its file and does what is left (before, it answered "no entry" and
the entry's versions stayed in the history for good).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ccb.entry_notes import split_entry_path
from ccb.model import memory_key
from ccb.owner import Owner
from config.errors import EntryEditError, StoreError
from daemon.entry_writes import EntryWrite, entry_at, forget_entry_at
from daemon.forget_journal import ForgetJournal
from daemon.forget_traces import forget_entry_recorded

if TYPE_CHECKING:
    from daemon.history import VersionRecorder
    from daemon.memories import MemoryService
    from magma.versions import VersionArchive

__all__ = ["EntryForgotten", "forget_entry"]


@dataclass(frozen=True, slots=True)
class EntryForgotten:
    """What ``forget file.md#key`` did: the line's removal (``None``: a forget cut short had
    removed it already), the versions dropped, and whether the index rows were purged here
    (False: the running daemon indexes the file)."""

    ref: str
    file_path: str
    write: EntryWrite | None
    versions: int
    purged: bool


def forget_entry(service: MemoryService, journal: ForgetJournal, versions: VersionArchive,
                 recorder: VersionRecorder, ref: str, *, owner: Owner | None = None
                 ) -> EntryForgotten:
    """Forget the entry at ``ref`` (``Memory/facts.md#3f2a9c1d``) in the steps of the module
    docstring, or finish a forget of it cut short. Raises ``EntryEditError`` (bad path, no
    such entry and no forget of it begun), ``MemoryNotFoundError`` (no file, another
    owner's), and what the writer and the store raise."""
    parts = split_entry_path(ref)
    if parts is None:
        raise EntryEditError(f"ccb: forget {ref}: not an entry path (file.md#key)")
    file_path, entry_key = parts
    key = memory_key(None, ref)
    writer = service.writer
    begun = journal.pending().get(key)
    there = begun is None or (writer.read(file_path) is not None and entry_at(writer, ref,
                                                                            owner=owner))
    if begun is None:
        if not there:
            raise EntryEditError(f"ccb: forget {ref}: no entry #{entry_key} in {file_path}")
        journal.begin(key, ref, owner=None, file_hash=None, chunks=_chunks(service, ref))
    written = forget_entry_at(writer, ref, owner=owner) if there else None
    purged = service._index.index_now([file_path], purge=True)
    count = forget_entry_recorded(versions, recorder, key)
    if begun is not None and not count:
        versions.compact()  # (a forget cut short after its versions went, not compacted)
    if purged:  # (not purged: the old table versions wait for the next forget)
        journal.drop(key)
    return EntryForgotten(ref, file_path, written, count, purged)


def _chunks(service: MemoryService, ref: str) -> list[str]:
    """The content hashes of the chunks the index holds of the entry (none when the index
    cannot be read)."""
    try:
        return list(service.store.chunk_hashes([ref]).values()) if service.store else []
    except StoreError:
        return []
