"""Compare-before-write for files inside the vault: never last-writer-wins.

Every write names the hash of the bytes it was based on. If the file still has that hash it
is replaced atomically (:mod:`ccb.atomic`). If someone changed it meanwhile — the user in
Obsidian, a sync tool, another dreamd process — the writer re-reads it and merges
(:func:`ccb.merge.merge_note`) when the two edits touched different properties or sections;
otherwise it keeps the file as it is and writes our version beside it as a conflict copy
``<name>.conflict-<YYYYMMDD-HHMMSS>.md`` (syncthing's pattern), which the user settles. Either
way nothing anyone wrote is lost.

One process writes at a time: :class:`NoteWriter` takes a per-vault writer lock
(``writer.lock`` in the state dir) around each compare-and-replace, so dreamd's own
processes (daemon, CLI, MCP server) queue behind each other; editors, which take no lock,
are caught by the compare. ``on_written(path, content_hash)`` lets the daemon's watcher
recognise its own writes (echo suppression by content hash).

**Lost updates from editors.** The compare cannot stop an editor that read the file before
our write and saves after it: the editor's save replaces ours (its check and its write are not
one step, and it takes no lock). So every write is journaled for :data:`HEAL_WINDOW_S` — the
bytes it was based on and the bytes it wrote, in ``recent-writes/`` of the state dir — and
:meth:`NoteWriter.heal` checks the file against it (:mod:`ccb.write_repair`): when our added
lines are gone, our edit is merged back into what the editor saved (or, if both touched the
same lines, written beside it as a conflict copy). Every write heals its own path first; the
daemon heals the paths of every watcher batch, so an editor's late save is repaired within a
batch.

**Write paths** (``obsidian.mode``, decided by :class:`ccb.obsidian_cli.WriteRouter`). A file
is written directly — an atomic swap, or in place when ``obsidian.direct.atomic_writes`` is
off (:func:`ccb.atomic.replace_bytes_in_place`) — or, for dreamd's own files in the memory
folder only, through the Obsidian CLI (``create … overwrite`` with the whole content, read back
to the byte; retried, then written directly unless the fallback is off). Every path keeps the
compare (a CLI write re-reads the file right before each call), ``on_written`` before each
attempt, and the journal; a user's notes and conflict copies are always written directly.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import filelock
import structlog

from ccb.atomic import (
    FileBeingWrittenError,
)
from ccb.atomic_batch import StagedSwaps, sweep_staged
from ccb.merge import merge_note
from ccb.obsidian_cli import WriteMode, WriteRouter
from ccb.scan import realpath_under
from ccb.writable import not_writable
from ccb.write_records import (
    HEAL_WINDOW_S,
    ORIGIN_WINDOW_S,
    GeneratedFiles,
    OriginLog,
    WriteJournal,
)
from ccb.write_repair import LostUpdates
from ccb.write_transport import WriteTransport, sha256_hex, short_hash
from config.errors import LockError, StaleWriteError, VaultError

__all__ = [
    "HEAL_WINDOW_S",
    "ORIGIN_WINDOW_S",
    "NoteWriter",
    "WriteOutcome",
    "conflict_copy_path",
    "sha256_hex",
]

log = structlog.get_logger("dreamd.writer")

#: How long a write waits for another dreamd process holding the writer lock, in seconds.
WRITER_LOCK_TIMEOUT_S = 30.0

#: Rounds of "an editor wrote between our compare and our swap" before giving up and
#: keeping every displaced version as a conflict copy (each round needs a new editor save
#: inside a window of microseconds; three in a row do not happen by chance).
_MAX_RACES = 4

_JOURNAL_DIR = "recent-writes"
#: How long a write waits for a file found empty to be written by its editor, and how often it
#: looks, in seconds (an in-place save's truncate-to-write gap is milliseconds).
SETTLE_WAIT_S = 0.5
SETTLE_STEP_S = 0.05
_HEALED = "an editor saved over dreamd's write; both edits merged"


def _merged(change: str) -> str:
    return f"{change} (merged with an edit made meanwhile)" if change else \
        "merged with an edit made meanwhile"

WriteStatus = Literal["created", "written", "merged", "conflict", "unchanged", "healed"]


#: Longest file name most file systems take, in bytes (ext4, APFS, NTFS: 255).
_NAME_MAX = 255


def conflict_copy_path(rel_path: str, now: datetime) -> str:
    """``Memory/x.md`` → ``Memory/x.conflict-20261130-101500.md`` (UTC stamp). A name that
    would pass :data:`_NAME_MAX` bytes has its stem cut (at a character boundary): the copy
    must be writable, or what it keeps would be lost."""
    stem, dot, suffix = rel_path.rpartition(".")
    if not dot or "/" in suffix:
        stem, suffix = rel_path, ""
    stamp = now.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    tail = f".conflict-{stamp}" + (f".{suffix}" if suffix else "")
    folder, slash, name = stem.rpartition("/")
    room = _NAME_MAX - len(tail.encode()) - 4  # (a second copy's ".conflict2-")
    name = name.encode()[:room].decode("utf-8", errors="ignore") or "note"
    return f"{folder}{slash}{name}{tail}"


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What a write did. ``content_hash`` is the hash of the file at ``path`` afterwards;
    ``conflict_path`` is set when our version went to a conflict copy instead."""

    path: str
    status: WriteStatus
    content_hash: str
    conflict_path: str | None = None


class NoteWriter:
    """The single writer of one vault's files (see module docstring).

    ``root`` is the vault, ``lock_dir`` the state dir (outside the vault) for ``writer.lock``.
    Paths are vault-relative POSIX strings; a path that resolves outside the vault raises
    ``VaultError``. ``router`` decides when dreamd's own files go through the Obsidian CLI
    (``None``: always direct); ``atomic_writes=False`` writes files in place instead of
    temp file + rename (``obsidian.direct.atomic_writes``).
    """

    def __init__(
        self,
        root: Path,
        lock_dir: Path,
        *,
        on_written: Callable[[str, str], None] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        router: WriteRouter | None = None,
        atomic_writes: bool = True,
    ) -> None:
        self.root = root.resolve()
        lock_dir.mkdir(parents=True, exist_ok=True)
        self._journal = lock_dir / _JOURNAL_DIR
        self._process_lock = filelock.FileLock(lock_dir / "writer.lock",
                                               timeout=WRITER_LOCK_TIMEOUT_S)
        self._thread_lock = threading.RLock()
        #: The thread whose :meth:`batch` holds the process lock now (its writes take it
        #: again for nothing: 0.1 ms each, a tenth of a dream's thousands of writes)
        self._batch_thread: int | None = None
        self._recent = WriteJournal(self._journal)
        self._lost = LostUpdates(
            self._recent, key=self._journal_key, clock=clock,
            fork=lambda path, data, current: self._fork(path, data, current).conflict_path)
        self._origins = OriginLog(self._journal)
        self._generated = GeneratedFiles(self._journal)
        self._journal_writes = True
        self._clock = clock
        self._transport = WriteTransport(
            router=router, on_written=on_written, atomic_writes=atomic_writes, read=self.read,
            note_origin=self._origins.note,
            keep_copy=lambda path, data, current: self._fork(path, data, current).conflict_path)

    def _writer_lock(self) -> contextlib.AbstractContextManager[None]:
        """The writer lock (:func:`_held`); within this thread's :meth:`batch`, the batch's
        hold of the process lock stands for it."""
        within = self._batch_thread == threading.get_ident()
        return _held(self._thread_lock, None if within else self._process_lock)

    def _absolute(self, rel_path: str) -> Path:
        target = Path(realpath_under(str(self.root), rel_path))  # (self.root is real)
        if not target.is_relative_to(self.root) or target == self.root:
            raise VaultError(f"ccb: write {rel_path}: path leaves the vault")
        return target

    def read(self, rel_path: str) -> bytes | None:
        """Current bytes of a vault file; ``None`` when there is none (or its folder is a file)."""
        return _bytes_at(self._absolute(rel_path))

    def write(
        self, rel_path: str, data: bytes, *, base: bytes | None, origin: str = "api",
        change: str = "", restores: bool = False, heal: bool = True,
    ) -> WriteOutcome:
        """Write ``data`` at ``rel_path``, based on ``base`` (``None``: the file is new).

        ``origin`` (``api``, ``dream``, ``rollback``, ``arbiter``) and ``change`` (one line)
        are remembered for the bytes written, so the version the indexer records for them
        names who made the change (:meth:`origin_of`). ``restores``: ``data`` is an earlier
        version restored byte for byte (a rollback), so its ``updated:`` stamp is an old one
        and the lost-update repair, which reads stamps, would take the user's next edit of it
        for an editor's stale buffer: the path's journal is cleared instead of extended.
        ``heal=False``: the write is not journaled for the lost-update repair (a dream's
        status-only edits, thousands at a time: an editor's stale save over one undoes it, the
        next dream does it again, and nothing anyone wrote is lost).

        Same bytes on disk → ``unchanged``; file still equal to ``base`` (or absent when
        ``base`` is ``None``) → atomic replace; changed meanwhile → merge, else conflict copy.
        Before comparing, edits of ours that an editor saved over are merged back (module
        docstring), so a write never builds on a file that lost one.
        Raises ``StaleWriteError`` when a file we based an edit on has been deleted (we do not
        resurrect what the user removed; the caller decides), ``VaultError`` for paths outside
        the vault, ``ObsidianCliError`` (a ``VaultError``) when a CLI write failed and
        ``obsidian.fallback.enabled`` is off, ``VaultNotWritableError`` when the folder refuses
        writes, ``OSError`` for other I/O failures (the file is left as it was in each case).
        """
        with self._writer_lock():
            self._journal_writes = heal
            try:
                outcome = self._write_locked(rel_path, data, base=base, tag=(origin, change))
            finally:
                self._journal_writes = True
            if restores:
                self._lost.drop(rel_path)
            return outcome

    def _write_locked(
        self, rel_path: str, data: bytes, *, base: bytes | None, tag: tuple[str, str]
    ) -> WriteOutcome:
        """:meth:`write` with the writer lock held."""
        target = self._absolute(rel_path)
        origin, change = tag
        current = _bytes_at(target)  # (:meth:`read` of the path just resolved)
        if current is None and base is not None:
            raise StaleWriteError(
                f"ccb: write {rel_path}: the file was deleted since it was read "
                f"(expected {sha256_hex(base)[:8]}…, found no file)"
            )
        if current == b"" and base:  # an editor's in-place save, caught mid-way?
            current = _settled(self.read, rel_path)
        theirs = self._lost.repaired(rel_path, current)
        if theirs == data:
            if theirs == current:
                return WriteOutcome(rel_path, "unchanged", sha256_hex(data))
            return self._place(target, rel_path, data, "healed", expect=current, tag=tag)
        if theirs == base:
            status: WriteStatus = "created" if current is None else "written"
            return self._place(target, rel_path, data, status, expect=current, tag=tag)
        assert theirs is not None
        merged = (merge_note(base, data, theirs, now=self._lost.stamp())
                  if base is not None else None)
        if merged is not None:
            outcome = self._place(target, rel_path, merged, "merged", expect=current,
                                  tag=(origin, _merged(change)))
            log.info("write.merged", path=rel_path)
            return outcome
        if theirs != current:
            self._place(target, rel_path, theirs, "healed", expect=current)
        return self._fork(rel_path, data, theirs)

    def _place(
        self, target: Path, rel_path: str, data: bytes, status: WriteStatus,
        *, expect: bytes | None, tag: tuple[str, str] = ("user-edit", _HEALED),
    ) -> WriteOutcome:
        """Put ``data`` where ``expect`` was (:meth:`_put`: an atomic swap, an in-place write,
        or the Obsidian CLI). If an editor wrote in the moment between our compare and the
        write, what it wrote comes back from the put: it is merged with ours, or kept with ours
        in a conflict copy, until the file settles (:data:`_MAX_RACES` rounds; after that the
        last displaced version goes to a conflict copy too). Nothing displaced is ever dropped.
        The write is journaled against ``expect`` — the whole of our edit."""
        want, conflict_path, first = data, None, expect
        for round_ in range(_MAX_RACES):
            digest = sha256_hex(want)
            want_tag = tag if want == data else (tag[0], _merged(tag[1]))
            try:
                put = self._transport.put(target, rel_path, want, expect=expect, tag=want_tag)
            except FileBeingWrittenError:
                raise StaleWriteError(
                    f"ccb: write {rel_path}: an editor was saving the file in that very moment "
                    "(found empty); left to it, not written — try again") from None
            displaced = put.found
            if not put.written:
                # Found changed right before a CLI write: nothing of ours is on disk; what is
                # there is handled as a displaced version (merged, or ours to a copy).
                log.warning("write.raced", path=rel_path, via="cli",
                            reason="the file changed between the compare and the write")
                if displaced is None:
                    if round_ == _MAX_RACES - 1:
                        raise StaleWriteError(f"ccb: write {rel_path}: the file kept being "
                                              "deleted and created meanwhile; not written")
                    expect = None  # deleted meanwhile: the write stands, as after a delete
                    continue
                # (an older buffer saved over earlier writes of ours: those come back first)
                theirs = self._lost.repaired(rel_path, displaced) or displaced
                merged = (merge_note(expect, want, theirs, now=self._lost.stamp())
                          if expect is not None else None)
                if merged is None or round_ == _MAX_RACES - 1:
                    if theirs != displaced:
                        self._place(target, rel_path, theirs, "healed", expect=displaced)
                    conflict_path = self._fork(rel_path, want, theirs).conflict_path
                    return WriteOutcome(rel_path, "conflict", sha256_hex(theirs),
                                        conflict_path)
                expect, want, status = displaced, self._lost.restamp(merged, rel_path), "merged"
                continue
            log.debug("write.swapped", path=rel_path, wrote=digest[:8], via=put.via,
                      expected=short_hash(expect), displaced=short_hash(displaced))
            if displaced == expect or displaced is None:
                # (None: deleted in that very moment; the write stands, as after a delete)
                self._remember(rel_path, first, want, want_tag)
                return WriteOutcome(rel_path, status, digest, conflict_path)
            log.warning("write.raced", path=rel_path,
                        reason="the file changed between the compare and the write")
            self._remember(rel_path, first, want, tag)  # on disk: an editor may build on it
            if round_ == _MAX_RACES - 1:
                conflict_path = self._fork(rel_path, displaced, want).conflict_path
                return WriteOutcome(rel_path, "conflict", digest, conflict_path)
            merged, copy = self._merge_displaced(rel_path, expect, want, displaced)
            conflict_path = copy or conflict_path
            if merged is not None:
                expect, want = want, self._lost.distinct(merged, rel_path, first)
                status = "merged"
            else:  # theirs goes back in place, ours beside it
                if copy is None:
                    conflict_path = self._fork(rel_path, want, displaced).conflict_path
                expect, want = want, self._lost.distinct(displaced, rel_path, first)
                status = "conflict"
        raise AssertionError("unreachable")  # pragma: no cover

    def _merge_displaced(self, rel_path: str, expect: bytes | None, want: bytes,
                         displaced: bytes) -> tuple[bytes | None, str | None]:
        """What replaces ``want`` (just swapped in, journaled) when its swap displaced an
        editor's save: the save with our edits since the version it was built on merged in —
        ``expect``, or an older buffer's version saved over earlier writes of ours
        (:meth:`ccb.write_repair.LostUpdates.repair`, which finds it by its stamp) — and the
        conflict copy our write went to, if it did. ``None``: they clash (ours is in the copy
        then, when the repair found the version; else not yet). A save whose stamp is no
        version of ours (the user rewrote it) is taken as an edit of ``expect``."""
        found = self._lost.repair(rel_path, displaced)
        if found.since is not None:
            return (None if found.clash else found.data), found.conflict_path
        merged = (merge_note(expect, want, displaced, now=self._lost.stamp())
                  if expect is not None else None)
        return (None if merged is None else self._lost.restamp(merged, rel_path)), None

    def write_mode(self) -> WriteMode:
        """How memory files are written now, and why (``dreamd doctor``, status):
        :meth:`ccb.write_transport.WriteTransport.mode`."""
        return self._transport.mode()

    # ------------------------------------------------------------------ lost-update journal

    def heal(
        self, rel_paths: Iterable[str] | None = None, *, wait: bool = True
    ) -> list[WriteOutcome] | None:
        """Repair lost updates (module docstring) of ``rel_paths``, or of every journaled
        path; forget journal entries older than :data:`HEAL_WINDOW_S`. Returns what was
        written (``healed``: our edits merged back; ``conflict``: one went to a copy).
        ``wait=False`` returns ``None`` at once when another process is writing: call again
        soon. Raises ``OSError`` for I/O failures of the vault."""
        wanted = None if rel_paths is None else _keys_in(self._journal_key, rel_paths)
        if wanted is not None:
            # only a path dreamd wrote lately has an update to lose: a folder the watcher
            # reports beside it ("Memory" made by the first remember) is no file to read
            recent = self._recent.load()
            wanted = [p for p in wanted if p in recent]
            if not wanted:
                return []  # the common case, without taking the lock
        try:
            self._process_lock.acquire(timeout=WRITER_LOCK_TIMEOUT_S if wait else 0)
        except filelock.Timeout:
            return None
        try:
            with self._thread_lock:
                outcomes: list[WriteOutcome] = []
                for path in wanted if wanted is not None else list(self._recent.load()):
                    current = self.read(path)
                    repaired = self._lost.repaired(path, current)
                    if repaired is not None and repaired != current:
                        outcomes.append(self._place(self._absolute(path), path, repaired,
                                                    "healed", expect=current))
                return outcomes
        finally:
            self._process_lock.release()

    def write_generated(self, rel_path: str, data: bytes) -> WriteOutcome:
        """Write a file dreamd generates whole (``MEMORY.md``): no base to compare with, but
        if the file on disk is not what dreamd last generated there — someone edited it by
        hand — their version is kept beside it as a conflict copy first. The hash of each
        generated write (what dreamd generated, never an edit merged into it in the moment
        of the swap) is kept in ``generated.json``. Raises as :meth:`write` and
        :func:`_refuse_link`."""
        _refuse_link(self.root, rel_path)
        target = self._absolute(rel_path)
        with self._writer_lock():
            current = self.read(rel_path)
            if current == data:
                return WriteOutcome(rel_path, "unchanged", sha256_hex(data))
            conflict_path = None
            if current is not None and self._generated.hash_of(rel_path) != sha256_hex(current):
                conflict_path = self._fork(rel_path, current, data).conflict_path
                log.warning("write.kept_hand_edit", path=rel_path, copy=conflict_path)
            outcome = self._place(target, rel_path, data,
                                  "created" if current is None else "written", expect=current,
                                  tag=("api", "index rebuilt"))
            self._generated.record(rel_path, sha256_hex(data))  # (not a hand edit merged in)
            return WriteOutcome(rel_path, outcome.status, outcome.content_hash,
                                conflict_path or outcome.conflict_path)

    def generated_hash(self, rel_path: str) -> str | None:
        """Hash of what dreamd last generated at ``rel_path``, ``None`` when never here."""
        return self._generated.hash_of(rel_path)

    def adopt_generated(self, rel_path: str, data: bytes) -> None:
        """Record ``data`` as what dreamd generated at ``rel_path`` (a check found the file
        equal to what dreamd would write), so the next :meth:`write_generated` does not take
        it for a hand edit."""
        with self._writer_lock():
            self._generated.record(rel_path, sha256_hex(data))

    def delete(self, rel_path: str, *, expect: bytes) -> int:
        """Delete ``rel_path`` for good (``dreamd forget``) if it still holds ``expect``, under
        the writer lock (no dreamd write can land between the check and the delete), and drop
        every journaled copy of it, so its text is gone from the state dir too. A link in the
        vault names the file it points to: that file goes, and the link with it. Returns how
        many journal entries went. Raises ``StaleWriteError`` when the file changed."""
        target = self._absolute(rel_path)
        with self._writer_lock():
            current = self.read(rel_path)
            if current is not None and current != expect:
                raise StaleWriteError(
                    f"ccb: delete {rel_path}: the file changed since it was read "
                    f"(expected {sha256_hex(expect)[:8]}…, found {sha256_hex(current)[:8]}…); "
                    "run the command again"
                )
            dropped = self._lost.drop(rel_path)  # while the name still leads to the file
            target.unlink(missing_ok=True)
            named = self.root / rel_path
            if named.is_symlink() and named.resolve() == target:
                named.unlink()  # a link in the vault to the forgotten file: its name goes too
            return dropped

    def forget_copies(self, markers: Sequence[bytes]) -> int:
        """Drop every journaled copy, of any path (a name before a rename), that holds one
        of ``markers`` (a forgotten memory's id, its name in links); how many went."""
        with self._writer_lock():
            return self._recent.drop_holding(markers)

    def _journal_key(self, rel_path: str) -> str:
        """The vault path a file's journal entries are kept under: the file itself, whatever
        link or spelling named it (``Memory/./a.md``, a link to ``Memory/a.md``), so a forget
        by any of its names leaves none of its text behind."""
        return self._absolute(rel_path).relative_to(self.root).as_posix()

    def origin_of(self, content_hash: str) -> tuple[str, str] | None:
        """``(origin, change)`` of a recent write of these bytes by dreamd, or ``None``: then
        the bytes are someone else's edit (:meth:`ccb.write_records.OriginLog.settled`)."""
        return self._origins.settled(content_hash, self._process_lock, own=self._recent.held)

    @contextmanager
    def batch(self, stage: Mapping[str, bytes] | None = None, within: str = "") -> Iterator[None]:
        """Many writes (a dream's) under one hold of the writer lock (others wait as for one
        write), the recent-writes journal and origins saved every ``BATCH_SAVE_EVERY`` writes
        (:mod:`ccb.write_records`) and at the end, not by each (n writes cost O(n²)). ``stage``:
        files' new bytes made durable ahead (:func:`_staged`, under the vault folder ``within``;
        not in a batch within a batch)."""
        with self._writer_lock():
            if self._recent.held:
                yield  # already in a batch
                return
            self._recent.hold()
            self._origins.hold()
            self._batch_thread = threading.get_ident()
            try:
                with _staged(self._transport, self._absolute, stage, self.root / within):
                    yield
            finally:
                self._batch_thread = None
                self._origins.release()
                self._recent.release()

    def _remember(
        self, rel_path: str, based_on: bytes | None, data: bytes,
        tag: tuple[str, str] = ("user-edit", ""),
    ) -> None:
        """Note who wrote ``data`` (the origins) and, unless the write is not to be healed
        (:meth:`write`'s ``heal``), journal it (:meth:`ccb.write_repair.LostUpdates.remember`)."""
        self._origins.note(data, tag)
        if self._journal_writes:
            self._lost.remember(rel_path, based_on, data)
        self._origins.count_write()

    def write_conflict_copy(self, rel_path: str, data: bytes) -> str:
        """Write ``data`` beside ``rel_path`` as a new conflict copy (the arbiter's manual
        review); returns the copy's vault path. Raises like :meth:`write`."""
        with self._writer_lock():
            current = self.read(rel_path) or b""
            copy = self._fork(rel_path, data, current).conflict_path
        assert copy is not None
        return copy

    def _fork(self, rel_path: str, data: bytes, current: bytes) -> WriteOutcome:
        """Write ``data`` beside ``rel_path`` as a new conflict copy (``current`` stays)."""
        copy = conflict_copy_path(rel_path, self._clock())
        n = 1
        while self.read(copy) is not None:
            n += 1
            copy = conflict_copy_path(rel_path, self._clock()).replace(
                ".conflict-", f".conflict{n}-", 1)
        self._transport.create(self._absolute(copy), copy, data)
        log.warning("write.conflict", path=rel_path, conflict_copy=copy)
        return WriteOutcome(rel_path, "conflict", sha256_hex(current), conflict_path=copy)


def _bytes_at(target: Path) -> bytes | None:
    """The bytes of the vault file at the resolved path ``target``; ``None`` when there is
    none (or its folder is a file)."""
    try:
        return target.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


@contextmanager
def _held(thread_lock: threading.RLock, process_lock: filelock.BaseFileLock | None
          ) -> Iterator[None]:
    """The writer lock: this process's threads, then other processes (``process_lock``;
    ``None``: held already, by this thread's batch). Raises ``LockError``
    when another process keeps it past :data:`WRITER_LOCK_TIMEOUT_S` (a long dream, a
    stuck process), instead of the lock library's own exception; and, for every write made
    under it, ``VaultNotWritableError`` (:func:`ccb.writable.not_writable`) instead of the
    ``OSError`` of a folder that refuses writes (the write it stopped left the file as it
    was)."""
    with thread_lock:
        try:
            if process_lock is not None:
                process_lock.acquire()
        except filelock.Timeout:
            assert process_lock is not None
            raise LockError(
                f"ccb: another dreamd process has held the writer lock of this vault for over "
                f"{WRITER_LOCK_TIMEOUT_S:.0f} s ({process_lock.lock_file}); nothing was "
                "written — try again when it has finished") from None
        try:
            yield
        except OSError as error:
            refused = not_writable(error)
            if refused is None:
                raise
            raise refused from error
        finally:
            if process_lock is not None:
                process_lock.release()


@contextmanager
def _staged(transport: WriteTransport, absolute: Callable[[str], Path],
            files: Mapping[str, bytes] | None, within: Path) -> Iterator[int]:
    """A batch's staged swaps (:mod:`ccb.atomic_batch`): unless ``files`` is ``None``, the
    staged files a killed batch left under the folder ``within`` swept, then ``files`` (vault
    path: bytes) written ahead and
    made durable together, so that each write of exactly those bytes swaps them in without
    fsyncs of its own; the folders are fsynced once at the end, before the lock goes (a
    staged name is the holder's). Only atomic swaps under ``within`` are staged; yields how
    many. Raises ``OSError`` when a file cannot be staged (nothing staged is swapped in)."""
    swaps = StagedSwaps()
    transport.staged = swaps
    try:
        targets: dict[Path, bytes] = {}
        if files is not None:
            folder = within.resolve()
            sweep_staged(folder)
            for rel_path, data in files.items():
                try:
                    target = absolute(rel_path)
                except VaultError:
                    continue
                if target.is_relative_to(folder) and transport.direct(rel_path):
                    targets[target] = data
            swaps.stage(targets)
        yield len(targets)
    finally:
        transport.staged = None
        swaps.finish()


def _settled(read: Callable[[str], bytes | None], rel_path: str) -> bytes:
    """The file's bytes once it is no longer empty. An editor that saves in place truncates
    the file and then writes it; merging that empty moment as "the user deleted it all"
    would drop the memory's text. Waits up to :data:`SETTLE_WAIT_S`; raises
    ``StaleWriteError`` when the file stays empty (nothing is written then)."""
    deadline = time.monotonic() + SETTLE_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(SETTLE_STEP_S)
        current = read(rel_path)
        if current is None:
            raise StaleWriteError(f"ccb: write {rel_path}: the file was deleted meanwhile")
        if current:
            return current
    raise StaleWriteError(
        f"ccb: write {rel_path}: the file is empty (an editor may be saving it); "
        "not written — try again")


def _keys_in(key: Callable[[str], str], rel_paths: Iterable[str]) -> list[str]:
    """``key`` of each path; a path that leaves the vault has none (it has no journal)."""
    keys = []
    for path in rel_paths:
        try:
            keys.append(key(path))
        except VaultError:
            continue
    return keys


def _refuse_link(root: Path, rel_path: str) -> None:
    """Raise VaultError when a file dreamd generates is a link: writing through it would
    overwrite the note it points to; the link is the user's, left as it is."""
    if (root / rel_path).is_symlink():
        raise VaultError(f"ccb: write {rel_path}: it is a link to another file; dreamd leaves "
                         "it as it is (remove the link to let dreamd write it)")
