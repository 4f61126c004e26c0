"""The running daemon's side of its clients: the local API (:mod:`daemon.local_api`) opened
from the daemon's start (answered in a reconcile's turns, :mod:`daemon.turns`), the engines
warmed in the background after the start-up reconcile, commands and MCP sessions answered in
the warm process, and the index work a client's write leaves, done after the answer went out.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import structlog

from config.errors import DreamdError, StoreError, exit_code_for
from daemon.local_api import LocalApi, Service, Stopping
from daemon.owners import checked_owner
from daemon.work_progress import WorkProgress
from magma.gc_pause import settle_loaded

if TYPE_CHECKING:
    from daemon.runner import Daemon
    from daemon.sync import Progress, SyncReport

log = structlog.get_logger("dreamd.daemon")

#: The exit code of a command the store failed (5).
STORE_EXIT = exit_code_for(StoreError(""))


class ClientDesk:
    """The clients of one :class:`daemon.runner.Daemon` (its engines' lock, app and status)."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon
        self.api: LocalApi | None = None
        self._answering = False
        self._deferred: list[tuple[list[str], bool]] = []
        self._warm_thread: threading.Thread | None = None

    def open(self) -> None:
        """Open the local API, from the daemon's start: while the start-up reconcile runs,
        clients are answered in its turns (:mod:`daemon.turns`)."""
        self._open_api()

    def start(self) -> None:
        """Load the embedding model, the search index and the vault graph in the background
        (after the start-up reconcile): the first edit and the first client do not wait for
        them (≈2 s)."""
        self._warm_thread = threading.Thread(target=self._warm_up, name="dreamd-model-warm-up",
                                             daemon=True)
        self._warm_thread.start()

    def stop(self, *, wait_s: float) -> None:
        """Close the local API and wait up to ``wait_s`` seconds for the warm-up to end."""
        if self.api is not None:
            self.api.stop()
        if self._warm_thread is not None:
            self._warm_thread.join(timeout=wait_s)

    def refresh(self) -> None:
        """Rewrite ``api.json`` after a reload (it names the settings clients must match)."""
        if self.api is not None:
            self.api.refresh()

    def _warm_up(self) -> None:
        daemon = self._daemon
        try:
            daemon.app.embedder.embed(["warm-up"])
        except DreamdError as error:
            daemon.metrics.error("embedder", error)
            log.error("embedder.load_failed", error=str(error))
        # the vault graph first: the search's warm-up then takes its view from the graph
        # held instead of reading the whole edges table into a graph of its own (at
        # 100,000 notes, 16 s less CPU for the start)
        try:
            with daemon.lock:  # held from now on: an edit updates it, never rebuilds it
                if daemon.app.indexing.is_indexed():
                    keeper = daemon.app.indexing.graph_keeper
                    keeper.graph()
                    keeper.step_graph()  # the search's view, then patched at each edit
        except DreamdError as error:
            log.error("graph.warm_up_failed", error=str(error))
        try:
            with daemon.lock:
                if daemon.app.indexing.is_indexed():
                    daemon.app.retriever.warm()
        except DreamdError as error:
            log.error("search.warm_up_failed", error=str(error))
        settle_loaded()  # held for the daemon's life: out of each full collection

    def _open_api(self) -> None:
        """Open the local API; without it clients answer in-process, so a failure here is
        logged and the daemon goes on."""
        from daemon.mcp_server import build_server, serve_stream

        daemon = self._daemon

        def run_mcp(reader: io.BufferedIOBase, writer: io.BufferedIOBase,
                    owner: str | None) -> None:
            daemon.app.sessions.record("mcp")  # the dream gate counts client sessions
            server = build_server(daemon.app, checked_owner(owner) if owner else None,
                                  lock=daemon.turns)
            serve_stream(server, reader, writer)

        service = Service(
            fingerprint=lambda: daemon.app.settings_fingerprint, turns=daemon.turns,
            vault=str(daemon.app.vault_root),
            run_command=self._serve_command, run_mcp=run_mcp, after_answer=self._index_deferred)
        api = LocalApi(daemon.app.state_dir, service)
        try:
            api.start()
        except OSError as error:
            daemon.metrics.error("api", error)
            log.error("api.failed", error=str(error),
                      hint="clients answer in-process meanwhile")
            return
        self.api = api
        daemon.state.api = str(api.path)
        daemon.write_status()

    def _serve_command(self, argv: list[str], stdin: str | None,
                       terminal: dict[str, Any]) -> Any:
        """A client's command line (the API holds the daemon's lock); the index work its
        writes leave waits for :meth:`_index_deferred`, after the answer went out."""
        from daemon.cli import serve_command

        self._answering = True
        try:
            answer = serve_command(self._daemon.app, argv, stdin, terminal)
        finally:
            self._answering = False
        # a store error may be the store changed under the daemon: then it stops, and the
        # client answers in-process (a newer client reads the upgraded store)
        if answer is not None and answer.exit_code == STORE_EXIT and \
                (why := self._daemon.guard.changed(time.monotonic(), failed=answer.stderr)):
            raise Stopping(why)
        return answer

    def _index_deferred(self) -> None:
        """Index what the last client's command wrote (the API still holds the lock)."""
        while self._deferred:
            paths, purge = self._deferred.pop(0)
            try:
                self.resident_index(paths, purge)
            except DreamdError as error:  # the watcher retries the paths on its next look
                log.error("api.index_failed", error=str(error))

    def resident_index(self, paths: Collection[str], purge: bool) -> None:
        """A client's write, indexed by the daemon (the store's one writer): at once, or
        right after the answer when a served command wrote it (a forget purges at once)."""
        if self._answering and not purge:  # a forget's purge is done before it answers
            self._deferred.append((list(paths), purge))
            return
        self._daemon.index_write(paths, purge=purge)
        self._daemon.turns.note_indexed(paths)  # (in a reconcile's turn: it leaves them)

    def resident_sync(self, progress: Progress | None, allow_mass_delete: bool) -> SyncReport:
        """``dreamd sync`` asked of the running daemon: one reconcile by its own syncer (the
        store's one writer), with the mass-delete allowance the user gave, the watcher's
        batches let in between its commits; a daemon that waited for that allowance watches
        again. Raises as ``Syncer.reconcile``."""
        from daemon.runner import BetweenBatches

        daemon = self._daemon
        with daemon.lock, daemon.turns.reconcile():
            # the user's saves meanwhile are indexed between its commits (daemon.interleave),
            # and other clients answered there (daemon.turns)
            between = BetweenBatches(daemon, stoppable=False)
            with WorkProgress(daemon.state, daemon.write_status, "sync",
                              also=progress) as tracked:
                report = daemon.syncer.reconcile(progress=tracked,
                                                 allow_mass_delete=allow_mass_delete,
                                                 interleave=between.interleave)
            daemon.reconciled(report, between)
        daemon.write_status()
        return report
