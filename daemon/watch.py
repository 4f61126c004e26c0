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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from watchfiles import Change

from ccb.roots import Root
from ccb.scan import VaultFilter
from config.errors import DreamdError, MassDeleteError
from daemon.sync import Progress, RootsSyncer, Syncer, SyncReport

__all__ = ["BatchResult", "ChangeHandler", "WatchFilter", "relative_paths"]

log = structlog.get_logger("dreamd.watch")


Roots = Path | Sequence[Root]


def _as_roots(roots: Roots) -> Sequence[Root]:
    return [Root("", roots, VaultFilter())] if isinstance(roots, Path) else roots


def relative_paths(roots: Roots, changes: Iterable[tuple[Change, str]]) -> set[str]:
    """Index paths of a batch: vault-relative for the vault, ``name:rel`` for an extra root
    (the root holding the path most closely wins, so a hidden folder of the vault that is an
    extra root is that root's). Paths outside every root are dropped. Pure."""
    return {path for path, _ in _located(_as_roots(roots), (raw for _, raw in changes))}


def _located(roots: Sequence[Root], raws: Iterable[str]) -> Iterator[tuple[str, Root]]:
    # abspath, not Path.resolve: a vault reached through a symlink keeps its spelling
    bases = [(base, root) for root in roots
             for base in {os.path.abspath(root.path), os.path.realpath(root.path)}]  # noqa: PTH100
    for raw in raws:
        absolute = os.path.abspath(raw)  # noqa: PTH100
        best: tuple[str, Root] | None = None
        for base, root in bases:
            rel = os.path.relpath(absolute, base)
            if rel == "." or rel.startswith(".."):
                continue
            if best is None or len(base) > len(best[0]):
                best = (base, root)
        if best is not None:
            base, root = best
            yield root.prefix + Path(os.path.relpath(absolute, base)).as_posix(), root


class WatchFilter:
    """A watchfiles ``watch_filter``: drops what the vault scan ignores (same rules, per root).

    Config folder, ``.trash``, dot-folders, temp and swap files, sync-conflict copies and
    dreamd's own temp files never reach the handler.
    """

    def __init__(self, root: Path | Sequence[Root], vfilter: VaultFilter | None = None) -> None:
        self._roots = ([Root("", root, vfilter or VaultFilter())] if isinstance(root, Path)
                       else list(root))

    def __call__(self, change: Change, path: str) -> bool:
        for index_path, root in _located(self._roots, [path]):
            return not root.vfilter.is_ignored(root.relative(index_path))
        return False


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one batch did: the sync report, or the exception it failed with (the paths are
    kept for retry)."""

    paths: frozenset[str]
    report: SyncReport | None = None
    failure: Exception | None = None
    duration_s: float = 0.0

    @property
    def error(self) -> str | None:
        """The failure as the status and the log show it: a dreamd error's own message, any
        other exception with its class name first."""
        if self.failure is None:
            return None
        if isinstance(self.failure, DreamdError):
            return str(self.failure)
        return f"{type(self.failure).__name__}: {self.failure}"


@dataclass(slots=True)
class ChangeHandler:
    """Applies watcher batches through one :class:`Syncer`; never lets one batch kill the loop.

    A batch that fails as a whole (store error, vault unreadable, mass delete refused) leaves
    its paths in ``pending`` so the next batch or rescan retries them; a file that fails alone
    is a problem in the report and the rest of the batch is applied. A path applied less than
    ``settle_s`` seconds ago waits in ``pending`` until then, so a file rewritten every 40 ms
    by a sync client is re-indexed about twice a second, not 25 times (case 12).
    """

    root: Roots
    syncer: Syncer | RootsSyncer
    settle_s: float = 0.5
    pending: set[str] = field(default_factory=set)
    _applied_at: dict[str, float] = field(default_factory=dict)
    #: The error the last batch failed with: the same one again (pending paths retried
    #: every tick while the daemon waits) is logged at debug level, not once a second.
    _last_error: str | None = None

    def due(self, now: float) -> bool:
        """True when some pending path may be applied at monotonic time ``now``."""
        return any(self._settled(path, now) for path in self.pending)

    def _settled(self, path: str, now: float) -> bool:
        return now - self._applied_at.get(path, float("-inf")) >= self.settle_s

    def apply_changes(
        self, changes: Iterable[tuple[Change, str]], *, now: float | None = None,
        progress: Progress | None = None,
    ) -> BatchResult:
        """Apply a watchfiles batch (plus pending paths that have settled) to the index,
        telling ``progress`` how far it got (:class:`daemon.sync.Progress`)."""
        started = time.perf_counter()
        clock = time.monotonic() if now is None else now
        paths = relative_paths(self.root, changes) | self.pending
        ready = {path for path in paths if self._settled(path, clock)}
        self.pending = paths - ready
        if not ready:
            return BatchResult(frozenset())
        try:
            report = self.syncer.sync_paths(ready, progress=progress)
        except DreamdError as error:
            self.pending |= ready
            event = "batch.refused" if isinstance(error, MassDeleteError) else "batch.failed"
            said = log.debug if str(error) == self._last_error else log.error
            said(event, error=str(error), paths=len(ready))
            self._last_error = str(error)
            return BatchResult(frozenset(ready), failure=error,
                               duration_s=time.perf_counter() - started)
        except Exception as error:  # a store or library failure must not stop the daemon
            self.pending |= ready
            log.exception("batch.crashed", paths=len(ready))
            return BatchResult(frozenset(ready), failure=error,
                               duration_s=time.perf_counter() - started)
        self._last_error = None
        for path in ready:
            self._applied_at[path] = clock
        if len(self._applied_at) > 10_000:  # forget old timestamps; they only matter briefly
            cutoff = clock - self.settle_s
            self._applied_at = {p: t for p, t in self._applied_at.items() if t >= cutoff}
        return BatchResult(frozenset(ready), report=report,
                           duration_s=time.perf_counter() - started)
