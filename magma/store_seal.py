"""The seal of a store's index tables: the versions at which no orphan can be there.

An *orphan* is a chunk or link row whose file row is missing: what a crash between the chunk
and file commits of a new note leaves (:meth:`magma.store.MagmaStore.apply` commits chunks and
links first, the file row last). A full reconcile sweeps orphans by reading the path columns
of the files, chunks and links tables (:meth:`magma.store.MagmaStore.orphaned_paths`): at
100,000 notes that is 928,312 chunk paths read for a start where nothing changed.

:class:`IndexSeal` remembers, in one small JSON file (the vault's state folder), the versions
``{"files", "chunks", "links"}`` of the tables after a sweep found nothing left, and carries
them over every commit that starts from them and completes (a batch written whole, a
compaction): a crash between two commits leaves the seal at the versions before, so the
tables' versions differ from it and the next reconcile sweeps. The seal is read from the file
at every use, never kept in memory: another process's commit (a one-shot ``remember``) moves
the tables past it, and it holds again only through that process's own complete commit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ccb.atomic import write_json_atomic

__all__ = ["GRAPH_SEAL_FILE", "SEAL_FILE", "IndexSeal"]

#: The seal's file name in the vault's state folder.
SEAL_FILE = "index-seal.json"
#: The vault graph's seal (:class:`magma.graph_keeper.GraphKeeper`) in the same folder.
GRAPH_SEAL_FILE = "graph-seal.json"
#: The tables whose versions the seal names (the only ones orphans can be in, and the one
#: whose rows mark a note as fully indexed).
SEALED_TABLES = ("files", "chunks", "links")


class IndexSeal:
    """The seal kept in ``path`` (``None``: no seal is kept, every reconcile sweeps), of the
    versions of ``tables`` (:data:`SEALED_TABLES`; the vault graph's keeper seals the
    versions at which its ``edges`` table is in step, :mod:`magma.graph_keeper`)."""

    def __init__(self, path: Path | None = None, tables: tuple[str, ...] = SEALED_TABLES
                 ) -> None:
        self.path = path
        self.tables = tables

    def holds(self, versions: Mapping[str, int | None]) -> bool:
        """Whether the tables at ``versions`` (:meth:`magma.store.MagmaStore.versions`) are
        the sealed ones: no orphan can be in them. False without a seal file, or with one
        unreadable."""
        if self.path is None:
            return False
        try:
            sealed = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(sealed, dict) and all(
            sealed.get(table) == versions.get(table) for table in self.tables)

    def set(self, versions: Mapping[str, int | None]) -> None:
        """Seal the tables at ``versions``: a sweep at those versions found no orphan left.
        A failure to write is no error (the next reconcile sweeps again). Not fsynced: a
        seal a power cut loses, or leaves behind the tables, names other versions than the
        tables', and the next reconcile sweeps (two fsyncs less per commit: a ``remember``
        carries two seals)."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.path, {t: versions.get(t) for t in self.tables},
                              durable=False)
        except OSError:
            pass

    def carry(self, before: Mapping[str, int], after: Mapping[str, int]) -> None:
        """A commit (or several) moved the tables from ``before`` to ``after`` and completed:
        sealed before, they are sealed after."""
        if dict(before) != dict(after) and self.holds(before):
            self.set(after)
