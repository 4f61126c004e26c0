"""What a long reconcile lets in between its commits: the files the user saves meanwhile.

A first index of a 100,000-note vault takes most of an hour. The daemon watches the vault
all along, and :meth:`daemon.sync.Syncer.reconcile` calls an :class:`Interleave` between two
commits of its own (and between two slices of a batch's embedding, and while it reads): the
daemon's watcher batches are indexed there, at once, instead of after the whole reconcile.

The reconcile then leaves every path such a batch synced to the watcher (:class:`Overtaken`):
the batch read the file after the reconcile did, or saw it gone, and any later change comes
as another event. So a note the reconcile read before the user saved it is never written
over the newer one; a note it has not reached yet is not indexed twice; a deleted or renamed
one is not brought back; and an entry file's rows (``file.md#key``) go with their file. A
path the batch synced that is a folder (a folder renamed or deleted) covers everything under
it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from ccb.entry_notes import split_entry_path

__all__ = ["Interleave", "Overtaken"]


class Overtaken:
    """Index paths synced by watcher batches during one reconcile (vault-relative, or
    ``name:path`` of an extra root); a path is in it when it, a folder above it, or (for an
    entry row ``file.md#key``) its file was synced."""

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self._paths: set[str] = set()
        self.add(paths)

    def add(self, paths: Iterable[str]) -> None:
        self._paths.update(p.strip("/") for p in paths if p.strip("/"))

    def __bool__(self) -> bool:
        return bool(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        if not self._paths or not isinstance(path, str):
            return False
        if path in self._paths:
            return True
        parts = split_entry_path(path) if "#" in path else None
        base = parts[0] if parts is not None else path
        while True:
            if base in self._paths:
                return True
            if "/" not in base:
                return False
            base = base.rpartition("/")[0]


class Interleave:
    """Called by a reconcile between its commits: ``run()`` indexes what the user changed
    since the last call (the daemon's watcher batches, under the engines' lock the
    reconcile holds) and returns the index paths it synced, which the reconcile then leaves
    to it (:attr:`overtaken`). A call made while ``run`` is at work (its batch goes through
    the same syncer) does nothing, and :attr:`running` tells the syncer that the work under
    way is the batch's, not the reconcile's."""

    def __init__(self, run: Callable[[], Collection[str]]) -> None:
        self._run = run
        self.overtaken = Overtaken()
        self.running = False

    def __call__(self) -> None:
        if self.running:
            return
        self.running = True
        try:
            synced = self._run()
        finally:
            self.running = False
        self.overtaken.add(synced)
