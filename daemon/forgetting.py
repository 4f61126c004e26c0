"""``dreamd forget``: a memory deleted for good, in steps that a kill may cut short and that
the same command finishes when it is run again.

The steps, in order: the forget is written down (:mod:`daemon.forget_journal`); the file goes
and with it dreamd's recent copies of it; its name goes from the links of other memories
(:func:`daemon.forget_links.unlink_forgotten`) and from the dream diary; the recent copies of
any file that holds its id or a link to it go; ``MEMORY.md`` is rebuilt and the index rows
are deleted and purged — the old table versions, the search's vector file and its IVF, the
vectors cached of its chunks —; then its version history, recalls, dream records and the
copies of ``MEMORY.md`` that list it (``Forgetting.history``, the composition root's). The
written-down forget goes last, once the purge is done. Each step does nothing when it was
done already, so a forget begun again after a kill at any point does only what is left.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ccb.model import DIARY_FILE, PATH_KEY_PREFIX, memory_key
from ccb.names import nfc_key
from ccb.parse import detect_conflict_copy
from ccb.write_transport import sha256_hex
from config.errors import MemoryNotFoundError, StoreError
from daemon.forget_journal import ForgetJournal
from daemon.forget_links import Unlinked, unlink_forgotten
from daemon.forget_traces import forget_recorded, scrub_copies, scrub_diary
from daemon.memory_index_keeper import INDEX_FILE

if TYPE_CHECKING:
    from daemon.app import App
    from daemon.memories import MemoryService
    from daemon.memory_pool import StoredMemory
    from magma.store import MagmaStore

__all__ = ["ForgetReport", "Forgetting", "forget_memory"]


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What ``forget`` removed, for the user to read."""

    memory_id: str
    path: str
    removed: tuple[str, ...]
    name: str = ""  # its ``name`` ("" when its file was gone already)


@dataclass(frozen=True, slots=True)
class Forgetting:
    """What a forget needs besides the memory service: the ``journal`` of forgets begun, and
    ``history(key, stem, chunk hashes) -> (versions dropped, canvases written)``, which takes
    the memory out of the state folder's records, the version history and the vectors
    cached of its chunks (:meth:`of`: an app's)."""

    journal: ForgetJournal
    history: Callable[[str, str, Collection[str]], tuple[int, list[str]]]

    @classmethod
    def of(cls, app: App) -> Forgetting:
        """The forget steps of ``app``'s vault and state folder."""
        return cls(ForgetJournal(app.state_dir), functools.partial(_forget_held, app))


def _forget_held(app: App, key: str, stem: str, chunks: Collection[str]
                 ) -> tuple[int, list[str]]:
    """:func:`daemon.forget_traces.forget_recorded` in ``app``'s state (the versions
    forgotten), the memory out of the copies of ``MEMORY.md`` and the canvases (the canvases
    written or deleted, vault paths), and the vectors of its ``chunks`` (content hashes) that
    no chunk of the index holds any more out of the user's embedding cache (a forget cut
    short after its rows went: the purge no longer knew them)."""
    scrubbed = scrub_copies(app.writer, app.memory_index.path, stem)
    count = forget_recorded(app.versions, app.recorder, app.recalls, app.state_dir, key, stem)
    if chunks:
        app.embedding_cache.evict(set(chunks) - app.store.stored_hashes(chunks))
    return count, [p for p in scrubbed if p.endswith(".canvas")]


def forget_memory(service: MemoryService, forgetting: Forgetting | None, id_or_name: str, *,
                  remains: tuple[str, str] | None = None) -> ForgetReport:
    """Delete a memory for good: its file, then (through the service's index) its rows, then
    what ``forgetting`` erases. ``remains`` (``(history key, vault path)``) forgets a memory
    whose file is gone already (a file deleted by hand); a forget cut short is found in the
    journal by the name it was given (the module docstring)."""
    service._index.settle()  # the remembers' pending writes first, never amid the forget's
    journal = forgetting.journal if forgetting is not None else None
    if remains is None:
        remains = _target(service, journal, id_or_name)
    key, path = remains
    stored = _file_of(service, key, path)  # (killed before the file went: it goes now)
    memory_id = "" if key.startswith(PATH_KEY_PREFIX) else key
    stem = Path(path).stem  # as stored, and as a link would spell it
    chunks: Collection[str] = _chunk_hashes(service.store, path)
    if journal is not None:  # (before the first step: a kill after it leaves it there)
        owner = stored.note.memory.owner if stored and stored.note.memory else None
        chunks = journal.begin(key, path, owner=owner, chunks=chunks,
                               file_hash=sha256_hex(stored.data) if stored else None).chunks
    writer = service.writer
    with writer.batch():  # (no remember decides on a half-forgotten memory)
        if stored is not None:
            writer.delete(path, expect=stored.data)
        elif writer.read(path) is None:
            writer.delete(path, expect=b"")  # the recent copies a forget cut short left
        unlinked = unlink_forgotten(
            writer, [s for s in service._all_memories() if s.path != path], stem,
            origin=service.origin, forgotten=stored)
        diary = f"{service.memory_folder}/{DIARY_FILE}"
        in_diary = scrub_diary(writer, diary, stem, service._clock().date(),
                               origin=service.origin)
        writer.forget_copies([*{f"[[{stem}".encode(), f"[[{nfc_key(stem)}".encode()},
                              *([memory_id.encode()] if memory_id else [])])
    purged = service.after_change([path, *unlinked.edited, *([diary] * in_diary)], purge=True)
    count, canvases = forgetting.history(key, stem, chunks) \
        if forgetting is not None else (None, [])
    if canvases:
        service._index.index_now(canvases)  # in step for check, as every file dreamd writes
    if journal is not None and purged:  # (not purged: the rows wait for the next forget)
        journal.drop(key)
    return ForgetReport(memory_id, path, _forget_lines(
        path, unlinked, diary if in_diary else None, count, purged,
        _conflict_copies(writer.root, path), canvases),
        stored.note.memory.name or "" if stored and stored.note.memory else "")


def _target(service: MemoryService, journal: ForgetJournal | None, id_or_name: str
             ) -> tuple[str, str]:
    """``(history key, path)`` of the memory ``id_or_name`` names: of its file
    (:meth:`MemoryService.find`), else of a forget of it cut short. Raises the error of
    ``find`` when neither names one."""
    try:
        stored = service.find(id_or_name)
    except MemoryNotFoundError:
        begun = journal.find(id_or_name) if journal is not None else None
        if begun is None or (service.owner is not None and not service.owner.sees(begun.owner)):
            raise
        return begun.key, begun.path
    assert stored.note.memory is not None
    return memory_key(stored.note.memory.id, stored.path), stored.path


def _file_of(service: MemoryService, key: str, path: str) -> StoredMemory | None:
    """The file at ``path`` when it is the memory of history key ``key``, else ``None``
    (gone, or another memory's now: that one stays)."""
    if service.writer.read(path) is None:
        return None
    try:
        stored = service.find(path)
    except MemoryNotFoundError:
        return None
    meta = stored.note.memory
    return stored if meta is not None and stored.path == path \
        and memory_key(meta.id, stored.path) == key else None


def unfinished_forget(service: MemoryService, forgetting: Forgetting | None,
                      id_or_name: str) -> tuple[str, str] | None:
    """``(history key, path)`` of the forget cut short that ``id_or_name`` names and the
    service's owner may see, or ``None``."""
    if forgetting is None:
        return None
    begun = forgetting.journal.find(id_or_name)
    if begun is None or (service.owner is not None and not service.owner.sees(begun.owner)):
        return None
    return begun.key, begun.path


def _chunk_hashes(store: MagmaStore | None, path: str) -> set[str]:
    """The content hashes of the chunks the index holds of ``path`` (none: no store, or one
    that cannot be read)."""
    if store is None:
        return set()
    try:
        return set(store.chunk_hashes([path]).values())
    except StoreError:
        return set()


def _conflict_copies(root: Path, path: str) -> list[str]:
    """Vault paths of the conflict copies kept beside the memory at ``path``."""
    folder = (root / path).parent
    if not folder.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in folder.iterdir()
                  if detect_conflict_copy(p.relative_to(root).as_posix()) == path)


def _forget_lines(path: str, unlinked: Unlinked, diary: str | None, versions: int | None,
                  purged: bool, copies: list[str], canvases: list[str]) -> tuple[str, ...]:
    """``forget``'s report: what went (``canvases``: those it was taken out of), and what
    stayed for the user to decide."""
    removed = [f"file {path}", f"its line in {INDEX_FILE}",
               "dreamd's recent copies of it (kept to repair lost updates)",
               *_unlinked_lines(unlinked),
               *([f"its name in the dream diary {diary} (now 'a memory was forgotten')"]
                 if diary else [])]
    if versions is not None:
        removed.append(f"its version history ({versions} version(s), store and state folder),"
                       " its name in other memories' earlier versions, its dream record")
    if purged:
        removed.append("its chunks, vectors, full-text rows and links in the index, "
                       "and the old index versions that still held its text")
    else:
        removed.append("its rows in the index: the running daemon removes them as it sees "
                       "the file go; old index versions are dropped at its next compaction")
    if canvases:
        removed.append(f"its cards in the canvases: {', '.join(canvases)}")
    if copies:
        removed.append("NOT removed: conflict copies that hold versions of it (delete them "
                       "yourself if they should go too): " + ", ".join(copies))
    return tuple(removed)


def _unlinked_lines(unlinked: Unlinked) -> list[str]:
    """``forget``'s report of the other memories that named the forgotten one."""
    lines = []
    if unlinked.edited:
        lines.append("its name in the links of other memories (supersedes, superseded_by, "
                     "possible pairs): " + ", ".join(unlinked.edited))
    lines.extend(f"NOTE: {path} is current again: the forgotten memory had superseded it "
                 "(forget it too if it no longer holds)" for path in unlinked.current_again)
    lines.extend(f"NOTE: {path} stays superseded, now by [[{successor}]]"
                 for path, successor in unlinked.relinked)
    if unlinked.named_by_user:
        lines.append("NOT removed: its name in text you wrote in " +
                     ", ".join(unlinked.named_by_user))
    return lines
