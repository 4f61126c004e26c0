"""What the store keeps in memory between reads of its own tables.

Two things a long-lived process asks of the store again and again, kept so it need not read
the tables back after its own writes (``dreamd remember`` at 1,000 memories: p50 113 → 82 ms,
``bench/write_decisions.py --latency 1000``):

- :class:`FileIndexMemo`: the files table as read at one LanceDB version, carried over this
  process's own commits (exactly one commit on the version it was read at; anything else,
  another process's commit seen after a refresh included, means a read);
- :class:`RecentVectors`: the vectors of the chunks this process wrote last, by content hash.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["RECENT_VECTORS", "FileIndexMemo", "RecentVectors"]

#: Chunk vectors kept by :class:`RecentVectors` (2 MB at 512 dims): a remember judges the
#: memory written just before without reading the chunks table.
RECENT_VECTORS = 1024


class FileIndexMemo:
    """``{path: IndexedFile}`` of the files table at one version (see the module docstring);
    the values are the store's, kept as they are."""

    def __init__(self) -> None:
        self._kept: tuple[int, dict[str, Any]] | None = None

    def get(self, version: int | None) -> dict[str, Any] | None:
        """A copy of the index kept for ``version``, or ``None`` (read the table)."""
        if self._kept is None or version is None or self._kept[0] != version:
            return None
        return dict(self._kept[1])

    def keep(self, version: int | None, index: Mapping[str, Any]) -> None:
        self._kept = (version, dict(index)) if version is not None else None

    def writing(self) -> tuple[int, dict[str, Any]] | None:
        """Take the kept index before a write (nothing is kept while the write runs)."""
        kept, self._kept = self._kept, None
        return kept

    def follow(self, kept: tuple[int, dict[str, Any]] | None, before: int | None,
               after: int | None, written: Mapping[str, Any], deleted: Collection[str]) -> None:
        """Carry ``kept`` (as read at ``before``) over one commit of ``written`` (``{path:
        IndexedFile}``) and ``deleted`` that moved the table to ``after``; else keep
        nothing."""
        commits = 1 if written or deleted else 0
        if kept is None or before is None or after is None or kept[0] != before or (
                after != before + commits):
            return
        index = {path: known for path, known in kept[1].items() if path not in deleted}
        index.update(written)
        self._kept = (after, index)


class RecentVectors:
    """The last :data:`RECENT_VECTORS` chunk vectors written, by content hash."""

    def __init__(self, size: int = RECENT_VECTORS) -> None:
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def add(self, hashes: Iterable[str], vectors: np.ndarray) -> None:
        for chash, vector in zip(hashes, vectors, strict=True):
            self._vectors[chash] = np.array(vector, dtype=np.float32)
            self._vectors.move_to_end(chash)
        while len(self._vectors) > self._size:
            self._vectors.popitem(last=False)

    def drop(self, hashes: Collection[str]) -> None:
        """Forget the vectors of ``hashes`` (their text was forgotten)."""
        for chash in hashes:
            self._vectors.pop(chash, None)

    def split(self, hashes: Collection[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """``(found, missing)``: copies of the kept vectors, and the sorted hashes to read."""
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        for chash in sorted(set(hashes)):
            vector = self._vectors.get(chash)
            if vector is None:
                missing.append(chash)
            else:
                found[chash] = vector.copy()
        return found, missing
