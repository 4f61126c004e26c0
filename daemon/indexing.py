"""Keeping the store in step with the vault: the one-shot ``dreamd sync``, the reconcile
engine of the vault and its extra roots, and a write indexed at once — by this process when it
may write the store, else left to the daemon that holds the vault (the store's one writer)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import structlog

from config.errors import LockError, VaultError
from consistency.withheld import withhold_credentials
from daemon.credential_ledger import CredentialLedger
from daemon.first_index import PartialIndex, indexed_files, partial_index
from daemon.index_writer import BackgroundIndex
from daemon.lock import DaemonLock, read_holder
from daemon.status import (
    LAST_SYNC_FILE,
    VAULT_FILE,
    read_json,
    write_json_atomic,
    write_last_sync,
)
from daemon.sync import Progress, RootsSyncer, Syncer, SyncLimits, SyncReport
from magma.graph_keeper import GraphKeeper
from magma.inline_data import without_inline_data
from magma.snippet_store import SnippetStore
from magma.store import maintenance_due
from magma.store_seal import GRAPH_SEAL_FILE
from magma.vector_file import drop_partitions

if TYPE_CHECKING:
    from daemon.app import App
    from daemon.memory_pool import StoredMemory

log = structlog.get_logger("dreamd.app")

#: How long a one-shot command waits for another one-shot command writing the store (a
#: ``remember`` indexing its memory, a ``sync``), in seconds: one memory is indexed in well
#: under a second; a sync of a big vault may take longer, and then the write is left to the
#: next sync (``dreamd check`` lists it as missing until then).
STORE_WAIT_S = 120.0


class Indexing:
    """Indexing for one vault, with the engines of ``app`` (the composition root)."""

    def __init__(self, app: App) -> None:
        self._app = app
        #: Set by the running daemon: it indexes through its own syncer, at once, instead of
        #: taking the vault's lock (which it holds) — ``(paths, purge) -> None``.
        self.resident_index: Callable[[Collection[str], bool], None] | None = None
        #: Set by the running daemon: ``dreamd sync`` served there reconciles through the
        #: daemon's syncer — ``(progress, allow_mass_delete) -> SyncReport``.
        self.resident_sync: Callable[[Progress | None, bool], SyncReport] | None = None
        #: A ``remember``'s index write, done right after its answer
        #: (:mod:`daemon.index_writer`; :meth:`index_soon`, :meth:`settle`).
        self.background = BackgroundIndex(lambda paths: self.index_now(paths))

    def settle(self) -> None:
        """Wait for this process's pending index writes (:meth:`index_soon`): every reader
        of the store passes here first (:attr:`daemon.app.App.store`)."""
        self.background.settle()

    def asked(self, path: str) -> bool:
        """Is an index write of ``path`` waiting on the background writer (or under way)?"""
        return self.background.asked(path)

    def record_versions(self, memories: Iterable[StoredMemory], paths: Collection[str]
                        ) -> None:
        """Record the versions of the memory files at ``paths`` (``memories``: as just
        written, read back) on the background writer, before its next index write
        (:meth:`daemon.history.VersionRecorder.offer_ahead`): each write is a version,
        whatever changes the file before that index write. Not in the daemon, which
        indexes at once."""
        if self.resident_index is not None:
            return
        wanted = set(paths)
        notes = [(withhold_credentials(without_inline_data(s.note)).note, s.data)
                 for s in memories if s.path in wanted and s.note.memory is not None]
        if notes:
            self.background.submit((), lambda: self._app.recorder.offer_ahead(notes))

    def index_soon(self, paths: Collection[str]) -> bool:
        """Index these vault paths right after the caller's answer, on this process's
        background writer (:mod:`daemon.index_writer`); in the daemon, as
        :meth:`index_now` (its own deferral: :mod:`daemon.client_desk`). Returns True."""
        if self.resident_index is not None:
            return self.index_now(paths)
        self.background.submit(paths)
        return True

    def sync(
        self, *, progress: Progress | None = None, allow_mass_delete: bool = False
    ) -> SyncReport:
        """One reconcile of the vault into the store; records it for ``dreamd status``."""
        self._app.require_vault("sync")
        if self.resident_sync is not None:  # served by the daemon, the store's one writer
            return self.resident_sync(progress, allow_mass_delete)
        self.settle()
        # One writer per store (DESIGN.md: two LanceDB writers lose rows): a one-shot sync
        # takes the daemon's lock, and refuses while a daemon keeps this vault in step.
        try:
            with DaemonLock(self._app.state_dir, role="sync", wait_s=STORE_WAIT_S), \
                    self.background.holding():
                self._app.store.refresh(if_behind=True)  # (see index_now)
                report = self.make_syncer().reconcile(
                    progress=progress, allow_mass_delete=allow_mass_delete
                )
                if (report.changed_paths or report.deleted) and \
                        maintenance_due(self._app.store):
                    # fold new rows into the full-text index, compact: when enough writes
                    # wait for it, not after each save (seconds on a big vault; the rows
                    # written since are searched all the same)
                    self._app.store.maintain()
                    self._app.versions.optimize(timedelta(0))
                self._adopt_memory_index()
                self.record_sync(report)
        except LockError as error:
            holder = read_holder(self._app.state_dir)
            if holder is not None and not holder.is_daemon:
                raise LockError(f"sync {self._app.vault_root}: {error}; try again when it "
                                "has finished") from error
            raise LockError(
                f"sync {self._app.vault_root}: {error}. The running daemon already keeps the index "
                "in step with the vault; no sync is needed"
            ) from error
        return report

    def _adopt_memory_index(self) -> None:
        """A ``MEMORY.md`` this state folder has no record of, equal to what the memories
        give, is dreamd's (e.g. the vault was synced before from another data folder): record
        it, so a later rebuild does not keep it aside as a hand edit. Reads the memories once
        per state folder."""
        keeper = self._app.memory_index
        if keeper.has_record():
            return
        current = keeper.current_bytes()
        if current is None:
            return
        text, inputs = self._app.memories().index_text()
        if text == current:
            keeper.adopt(current, inputs)

    def make_syncer(self) -> RootsSyncer:
        """The reconcile engine for this vault and its extra roots, store and embedder (built
        from settings)."""
        cfg = self._app.settings.sync
        prefixes = [root.prefix for root in self._app.roots]
        ledger = CredentialLedger(self._app.state_dir)
        return RootsSyncer([
            Syncer(
                root.path, root.vfilter, self._app.store, lambda: self._app.indexing_embedder,
                limits=SyncLimits(cfg.chunk_max_chars, cfg.write_batch_files,
                                  cfg.max_delete_share, cfg.max_note_chars),
                prefix=root.prefix, claimed=prefixes,
                recorder=self._app.recorder if not root.prefix else None,
                credentials=ledger,
                entry_folder=None if root.prefix else self._app.settings.vault.memory_folder,
            )
            for root in self._app.roots
        ], after=self.graph_keeper.follow)

    @cached_property
    def graph_keeper(self) -> GraphKeeper:
        """The vault graph, held in step with the index and the diary snippets and written to
        its ``edges`` table after every sync (:class:`magma.graph_keeper.GraphKeeper`)."""
        app = self._app
        return GraphKeeper(app.store, snippets=lambda: SnippetStore.open(
            app.store_uri, device=app.settings.storage.device,
            storage_options=app.settings.storage.options),
            seal=app.state_dir / GRAPH_SEAL_FILE)

    def record_sync(self, report: SyncReport) -> None:
        """Write the state files ``dreamd status`` and ``dreamd search`` read."""
        vault = {"path": str(self._app.vault_root)}
        if read_json(self._app.state_dir / VAULT_FILE) != vault:  # (one fsync less a start)
            write_json_atomic(self._app.state_dir / VAULT_FILE, vault)
        root = self._app.vault_root
        write_last_sync(self._app.state_dir, report,
                        datetime.now(UTC).isoformat(timespec="seconds"),
                        still_there=lambda path: (root / path).is_file())

    def sync_now(self, syncer: RootsSyncer, paths: Collection[str], *, purge: bool) -> None:
        """Index ``paths`` with ``syncer`` (the caller holds the store). ``purge`` (a forget)
        also drops old table versions, takes the vectors of chunks no note holds any more
        out of the user's embedding cache and lets go of the search's snapshot (its rows, and
        the file they may be kept in, hold the forgotten notes')."""
        before = set(self._app.store.chunk_hashes(paths).values()) if purge else set()
        syncer.sync_paths(paths)
        if purge:
            self._app.store.maintain(cleanup_older_than=timedelta(0), purge=True)
            gone = before - self._app.store.stored_hashes(before)
            if gone:
                self._app.embedding_cache.evict(gone)
            retriever = vars(self._app).get("retriever")  # (made on first use)
            if retriever is not None:
                retriever.forget_snapshot()
            else:  # (the IVF's centroids saved by another process: means of the rows)
                drop_partitions(self._app.state_dir)

    def index_now(self, paths: Collection[str], *, purge: bool = False) -> bool:
        """Index these vault paths now if this process may write the store.

        While a daemon holds the vault, it is the store's one writer and its watcher indexes
        the files (recognising our write by its hash); otherwise this process takes the lock
        for the moment of the write, waiting (up to :data:`STORE_WAIT_S`) while another
        one-shot command holds it. ``purge`` also drops old table versions, so removed
        text is gone from disk (``forget``). Returns False when a daemon does the indexing,
        or when another command kept the store that long (logged: the next sync indexes it).
        """
        if self.resident_index is not None:
            self.resident_index(paths, purge)
            return True
        self.settle()  # (in order: a forget after a remember of the same file)
        try:
            with DaemonLock(self._app.state_dir, role="index", wait_s=STORE_WAIT_S), \
                    self.background.holding():
                # (what another command committed while this one waited: a write built on
                # an older version of the tables brings back rows that command replaced)
                self._app.store.refresh(if_behind=True)
                self.sync_now(self.make_syncer(), paths, purge=purge)
        except LockError as error:
            holder = read_holder(self._app.state_dir)
            if holder is not None and not holder.is_daemon:
                log.warning("index.not_now", paths=len(paths), error=str(error),
                            hint="the next dreamd sync (or the daemon) indexes it")
            else:
                log.info("index.deferred_to_daemon", paths=len(paths))
            return False
        return True

    def first_chunk_vectors(self, paths: Sequence[str]) -> dict[str, np.ndarray]:
        """``{path: float32[512]}``: the vector of each path's first chunk as indexed (paths
        not indexed yet are left out)."""
        hashes = self._app.store.chunk_hashes(paths)
        first = {cid.rpartition("#")[0]: h for cid, h in hashes.items() if cid.endswith("#0")}
        known = self._app.store.known_vectors(first.values())
        return {path: known[h] for path, h in first.items() if h in known}

    def memory_vectors(self, paths: Sequence[str]) -> dict[str, np.ndarray]:
        """:meth:`first_chunk_vectors`, after indexing the memory files among ``paths`` that
        are not indexed yet (written by hand since the last sync, with no daemon running):
        the dream judges them by meaning too, not by their words alone, before it counts
        them as seen. Other paths (a daily note's entries) are left as they are."""
        found = self.first_chunk_vectors(paths)
        folder = self._app.settings.vault.memory_folder.strip("/") + "/"
        missing = [p for p in paths if p not in found and p.startswith(folder)
                   and p.endswith(".md") and (self._app.vault_root / p).is_file()]
        if missing and self.index_now(missing):
            found.update(self.first_chunk_vectors(missing))
        return found

    def partial(self) -> PartialIndex | None:
        """:func:`daemon.first_index.partial_index` of this vault: the daemon is at the
        first index (searches and checks say how far it got), else ``None``."""
        return partial_index(self._app.state_dir,
                             lambda: indexed_files(self._app.store.file_index()))

    def is_indexed(self) -> bool:
        """Has this vault been indexed at least once (and is its folder there)?"""
        if not self._app.vault_root.is_dir():
            return False
        self._app.open_store  # noqa: B018  (first: an older store's open drops the record)
        return read_json(self._app.state_dir / LAST_SYNC_FILE) is not None \
            or bool(self._app.store.counts().files)

    def require_indexed(self, action: str) -> None:
        """Raise ``VaultError`` (saying to run ``dreamd sync``, or that the running daemon
        is at its first index and how far it got) when the vault folder is missing or has
        never been indexed."""
        self._app.require_vault(action)
        if not self.is_indexed():
            from daemon.client import daemon_starting

            starting = daemon_starting(self._app.state_dir)
            if starting is not None:  # its first index: nothing committed yet
                raise VaultError(f"{action} {self._app.vault_root}: not indexed yet: "
                                 f"{starting}; try again in a moment")
            raise VaultError(
                f"{action} {self._app.vault_root}: this vault has not been indexed yet; "
                f"run: dreamd sync {self._app.vault_root}"
            )
