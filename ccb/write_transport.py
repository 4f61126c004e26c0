"""How bytes reach a vault file: the physical write under :class:`ccb.writer.NoteWriter`.

:class:`WriteTransport` puts the bytes the writer decided on: directly — an atomic swap, or in
place when ``obsidian.direct.atomic_writes`` is off (:func:`ccb.atomic.replace_bytes_in_place`)
— or, for dreamd's own files in the memory folder when ``obsidian.mode`` says so, through the
Obsidian CLI (``create … overwrite`` with the whole content, read back to the byte; retried,
then written directly unless the fallback is off). Each put reports what it displaced, so the
writer's compare, merge and conflict copies stay above this seam. ``on_written(path, hash)``
is told before the bytes can appear (the daemon's watcher recognises its own writes).
"""

from __future__ import annotations

import errno
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from ccb.atomic import (
    FileBeingWrittenError,
    replace_bytes_in_place,
    swap_bytes_atomic,
    write_bytes_atomic,
)
from ccb.atomic_batch import StagedSwaps
from ccb.obsidian_cli import ObsidianCliError, WriteMode, WriteRouter, content_problem

__all__ = ["Put", "WriteTransport", "sha256_hex", "short_hash"]

log = structlog.get_logger("dreamd.writer")


@dataclass(frozen=True, slots=True)
class Put:
    """What one physical write did: ``written`` (our bytes are on disk) with ``found`` the
    bytes they displaced (``None``: no file); or not written (a CLI write found the file
    changed right before it) with ``found`` the bytes on disk. ``via``: ``cli`` or
    ``direct``."""

    written: bool
    found: bytes | None
    via: str


class WriteTransport:
    """The physical writes of one vault (see the module docstring).

    ``router`` decides when dreamd's own files go through the Obsidian CLI (``None``: always
    direct); ``read(path)`` reads a vault file (``None``: none); ``note_origin(bytes, (origin,
    change))`` records who wrote bytes before they can appear; ``keep_copy(path, data,
    current)`` writes ``data`` beside ``path`` as a conflict copy and returns its path.
    """

    def __init__(
        self, *, router: WriteRouter | None, on_written: Callable[[str, str], None] | None,
        atomic_writes: bool, read: Callable[[str], bytes | None],
        note_origin: Callable[[bytes, tuple[str, str]], None],
        keep_copy: Callable[[str, bytes, bytes], str | None],
    ) -> None:
        self._router = router
        self._on_written = on_written
        self._atomic_writes = atomic_writes
        self._read = read
        self._note_origin = note_origin
        self._keep_copy = keep_copy
        #: A batch's staged swaps (:mod:`ccb.atomic_batch`), while one is under way.
        self.staged: StagedSwaps | None = None

    def direct(self, rel_path: str) -> bool:
        """Whether :meth:`put` writes ``rel_path`` by an atomic swap now (not in place, not
        through the Obsidian CLI): the writes a batch can stage."""
        if not self._atomic_writes:
            return False
        router = self._router
        return router is None or not (router.is_memory_path(rel_path)
                                      and router.write_mode().uses_cli)

    def create(self, target: Path, rel_path: str, data: bytes) -> None:
        """Write a new file (a conflict copy) directly: atomically, or in place."""
        if self._on_written is not None:
            self._on_written(rel_path, sha256_hex(data))
        if self._atomic_writes:
            write_bytes_atomic(target, data)
        else:
            replace_bytes_in_place(target, data)

    def mode(self) -> WriteMode:
        """How memory files are written now, and why (``dreamd doctor``, status): the
        router's :meth:`~ccb.obsidian_cli.WriteRouter.write_mode`, or ``direct`` when this
        writer has none."""
        if self._router is None:
            return WriteMode("direct", "no Obsidian CLI configured for this writer")
        return self._router.write_mode()

    def put(
        self, target: Path, rel_path: str, want: bytes, *, expect: bytes | None,
        tag: tuple[str, str],
    ) -> Put:
        """Write ``want`` at ``rel_path`` by the way in effect: through the Obsidian CLI for
        dreamd's own files when the mode says so and the content can travel byte for byte
        (:func:`ccb.obsidian_cli.content_problem`), else directly. Raises
        ``FileBeingWrittenError`` (nothing written), ``ObsidianCliError`` (CLI failed and
        ``obsidian.fallback.enabled`` is off; the file is as it was), ``OSError``."""
        router = self._router
        if router is not None and router.is_memory_path(rel_path) \
                and router.write_mode().uses_cli:
            problem = content_problem(want)
            if problem is None:
                return self._put_cli(router, target, rel_path, want, expect=expect, tag=tag)
            log.info("write.direct", path=rel_path,
                     reason=f"the Obsidian CLI cannot carry this content: {problem}")
        return self.put_direct(target, rel_path, want)

    def put_direct(self, target: Path, rel_path: str, want: bytes) -> Put:
        """Swap ``want`` in atomically (or write it in place when ``atomic_writes`` is off)."""
        if self._on_written is not None:
            self._on_written(rel_path, sha256_hex(want))  # before the event can arrive
        if self._atomic_writes:
            staged = self.staged
            return Put(True, swap_bytes_atomic(target, want) if staged is None
                       else staged.swap(target, want), "direct")
        return Put(True, replace_bytes_in_place(target, want), "direct")

    def _put_cli(
        self, router: WriteRouter, target: Path, rel_path: str, want: bytes,
        *, expect: bytes | None, tag: tuple[str, str],
    ) -> Put:
        """Write ``want`` through ``obsidian create … overwrite``, compare-before-write on
        every attempt: the file is read right before each call, and when it is no longer what
        we expect nothing is written and what is there comes back (``written=False``). After
        each call the file is read back and must be exactly ``want``. A failed attempt is tried
        again up to ``router.max_retries`` times (not after a timeout in ``auto``, which
        starts the cool-down, nor when the CLI is missing or acts on another vault); then the
        file is written directly if ``router.fallback``, else ``ObsidianCliError`` is raised
        with the file put back as it was.

        The CLI cannot tell what it replaced: an editor's save landing during the call itself
        (after our read) is overwritten unseen, as with a rename where ``renameat2`` is
        missing; the lost-update journal repairs the converse (an editor saving over us)."""
        digest = sha256_hex(want)
        # Known before the bytes can appear: the indexer of another process (the daemon's
        # watcher) names the version of these bytes by their origin.
        self._note_origin(want, tag)
        known = expect  # what we may replace: expect, or what a failed attempt of ours left
        attempts = 1 + router.max_retries
        last: ObsidianCliError | None = None
        for attempt in range(1, attempts + 1):
            if self._on_written is not None:
                self._on_written(rel_path, digest)  # before the event can arrive
            current = self._read(rel_path)
            if current == want:  # a failed attempt of ours landed after all
                return Put(True, expect, "cli")
            if current != known:
                return Put(False, current, "cli")
            if current == b"" and want:
                raise FileBeingWrittenError(errno.EBUSY, "the file is being written "
                                            "(found empty)", str(target))
            error = _create(router, target, rel_path, want)
            after = self._read(rel_path)
            if after == want:
                if error is not None:
                    log.warning("write.cli_error_but_written", path=rel_path, error=str(error))
                log.info("write.cli", path=rel_path, attempt=attempt, hash=digest[:8])
                return Put(True, expect, "cli")
            if error is None:
                error = ObsidianCliError(
                    f"obsidian CLI: create path={rel_path}: the file read back differs from "
                    f"what was sent (sent {digest[:8]}…, found {short_hash(after) or 'no file'})")
            if after != known:
                # Bytes that are neither what we expected nor what we sent: a broken CLI
                # write, or an editor's save in that very moment; nobody can tell which. They
                # are kept in a conflict copy before anything replaces them.
                kept = self._keep_copy(rel_path, after, b"") if after else None
                log.warning("write.cli_left", path=rel_path, found=short_hash(after), kept=kept,
                            reason="a failed CLI write left other bytes; kept in a conflict "
                                   "copy, then replaced")
                known = after
            last = error
            log.warning("write.cli_failed", path=rel_path, attempt=attempt, attempts=attempts,
                        kind=error.kind, error=str(error))
            if _gives_up(router, error):
                break
        assert last is not None
        if not router.fallback:
            if known != expect:
                self._put_back(target, rel_path, expect, known)
            raise ObsidianCliError(
                f"ccb: write {rel_path}: the Obsidian CLI failed ({last}) and "
                "obsidian.fallback.enabled = false, so it was not written directly; the file "
                "is as it was", kind=last.kind)
        log.warning("write.fallback", path=rel_path, to="direct", error=str(last))
        put = self.put_direct(target, rel_path, want)
        if put.found == known:
            return Put(True, expect, "direct")
        return put

    def _put_back(self, target: Path, rel_path: str, expect: bytes | None,
                  left: bytes | None) -> None:
        """Undo what a failed CLI write left (``left``) at ``rel_path``: ``expect`` goes back
        (or the file goes, when there was none). Bytes found there that are not ``left`` — an
        editor's, just now — stay, and ``expect`` is not lost: it is on disk or in a copy."""
        if expect is None:
            if self._read(rel_path) == left:
                target.unlink(missing_ok=True)
            return
        displaced = self.put_direct(target, rel_path, expect).found
        if displaced not in (left, None):
            self.put_direct(target, rel_path, displaced)
            self._keep_copy(rel_path, expect, displaced)


def _create(router: WriteRouter, target: Path, rel_path: str, want: bytes
            ) -> ObsidianCliError | None:
    """One ``obsidian create … overwrite`` of ``want``; the error, or ``None``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        router.ensure_vault()
        router.cli.create(rel_path, want.decode("utf-8"))
    except ObsidianCliError as failed:
        return failed
    return None


def _gives_up(router: WriteRouter, error: ObsidianCliError) -> bool:
    """Tell ``router`` of a failed attempt; is another attempt pointless (a timeout in
    ``auto``, which starts the cool-down; the CLI missing, acting on another vault, or
    refusing)?"""
    if error.kind == "timeout":
        router.note_timeout()
        if router.configured == "auto":
            return True
    else:
        router.note_failure()
    return error.kind in {"missing", "vault", "refused"}


def sha256_hex(data: bytes) -> str:
    """SHA-256 hex digest of ``data`` (the content hash used everywhere in dreamd)."""
    return hashlib.sha256(data).hexdigest()


def short_hash(data: bytes | None) -> str | None:
    """The first eight hex digits of ``data``'s hash, for logs (``None``: no file)."""
    return None if data is None else sha256_hex(data)[:8]
