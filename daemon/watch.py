"""From watchfiles batches to index updates: the change handler of ``dreamd run``.

watchfiles delivers unordered sets of ``(Change, absolute path)``: an atomic save arrives as
``added note.md`` plus ``added``/``deleted`` of a temp file, a vim save as ``added`` and
``deleted`` of the same file, a folder rename as a delete and an add of the folder with no
events for its children (DESIGN.md, cases 11 and 12). So the handler never trusts the event
kind: it turns a batch into the set of vault-relative paths it touched and lets
:meth:`daemon.sync.Syncer.sync_paths` look at each one as it is on disk now.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from watchfiles import Change

from ccb.scan import VaultFilter
from config.errors import DreamdError, MassDeleteError
from daemon.sync import Syncer, SyncReport

__all__ = ["BatchResult", "ChangeHandler", "WatchFilter", "relative_paths"]

log = structlog.get_logger("dreamd.watch")


def relative_paths(root: Path, changes: Iterable[tuple[Change, str]]) -> set[str]:
    """Vault-relative POSIX paths of a batch; paths outside ``root`` are dropped. Pure."""
    # abspath, not Path.resolve: a vault reached through a symlink keeps its spelling
    bases = {os.path.abspath(root), os.path.realpath(root)}  # noqa: PTH100
    paths: set[str] = set()
    for _change, raw in changes:
        absolute = os.path.abspath(raw)  # noqa: PTH100
        for base in bases:
            rel = os.path.relpath(absolute, base)
            if rel != "." and not rel.startswith(".."):
                paths.add(Path(rel).as_posix())
                break
    return paths


class WatchFilter:
    """A watchfiles ``watch_filter``: drops what the vault scan ignores (same rules).

    Config folder, ``.trash``, dot-folders, temp and swap files, sync-conflict copies and
    dreamd's own temp files never reach the handler.
    """

    def __init__(self, root: Path, vfilter: VaultFilter) -> None:
        self._root = root
        self._vfilter = vfilter

    def __call__(self, change: Change, path: str) -> bool:
        rel = relative_paths(self._root, [(change, path)])
        if not rel:
            return False
        (only,) = rel
        return not self._vfilter.is_ignored(only)


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one batch did: the sync report, or why it failed (the paths are kept for retry)."""

    paths: frozenset[str]
    report: SyncReport | None = None
    error: str | None = None
    duration_s: float = 0.0


@dataclass(slots=True)
class ChangeHandler:
    """Applies watcher batches through one :class:`Syncer`; never lets one batch kill the loop.

    A batch that fails as a whole (store error, vault unreadable, mass delete refused) leaves
    its paths in ``pending`` so the next batch or rescan retries them; a file that fails alone
    is a problem in the report and the rest of the batch is applied. A path applied less than
    ``settle_s`` seconds ago waits in ``pending`` until then, so a file rewritten every 40 ms
    by a sync client is re-indexed about twice a second, not 25 times (case 12).
    """

    root: Path
    syncer: Syncer
    settle_s: float = 0.5
    pending: set[str] = field(default_factory=set)
    _applied_at: dict[str, float] = field(default_factory=dict)

    def due(self, now: float) -> bool:
        """True when some pending path may be applied at monotonic time ``now``."""
        return any(self._settled(path, now) for path in self.pending)

    def _settled(self, path: str, now: float) -> bool:
        return now - self._applied_at.get(path, float("-inf")) >= self.settle_s

    def apply_changes(
        self, changes: Iterable[tuple[Change, str]], *, now: float | None = None
    ) -> BatchResult:
        """Apply a watchfiles batch (plus pending paths that have settled) to the index."""
        started = time.perf_counter()
        clock = time.monotonic() if now is None else now
        paths = relative_paths(self.root, changes) | self.pending
        ready = {path for path in paths if self._settled(path, clock)}
        self.pending = paths - ready
        if not ready:
            return BatchResult(frozenset())
        try:
            report = self.syncer.sync_paths(ready)
        except DreamdError as error:
            self.pending |= ready
            event = "batch.refused" if isinstance(error, MassDeleteError) else "batch.failed"
            log.error(event, error=str(error), paths=len(ready))
            return BatchResult(frozenset(ready), error=str(error),
                               duration_s=time.perf_counter() - started)
        except Exception as error:  # a store or library failure must not stop the daemon
            self.pending |= ready
            log.exception("batch.crashed", paths=len(ready))
            return BatchResult(frozenset(ready), error=f"{type(error).__name__}: {error}",
                               duration_s=time.perf_counter() - started)
        for path in ready:
            self._applied_at[path] = clock
        if len(self._applied_at) > 10_000:  # forget old timestamps; they only matter briefly
            cutoff = clock - self.settle_s
            self._applied_at = {p: t for p, t in self._applied_at.items() if t >= cutoff}
        return BatchResult(frozenset(ready), report=report,
                           duration_s=time.perf_counter() - started)
