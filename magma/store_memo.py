"""What the store keeps in memory between reads of its own tables.

Two things a long-lived process asks of the store again and again, kept so it need not read
the tables back after its own writes (``dreamd remember`` at 1,000 memories: p50 113 → 82 ms,
``bench/write_decisions.py --latency 1000``):

- :class:`FileIndexMemo`: the files table as read at one LanceDB version, carried over this
  process's own commits (exactly one commit on the version it was read at; anything else,
  another process's commit seen after a refresh included, means a read);
- :class:`TableMemo`: one read of a table (the memory properties, the unresolved links) as
  it was at one LanceDB version: a check of a vault where nothing changed reads neither again
  (``bench/check_bench.py``, 7,000 files: 9 ms and 10 ms of CPU per check, measured with
  ``time.process_time``);
- :class:`RecentVectors`: the vectors of the chunks this process wrote last, by content hash;
- :class:`StoreChanges`: the paths each of this process's own batches wrote, so the search's
  in-memory catalogue and vectors follow a batch by re-reading those paths only
  (:func:`magma.catalogue.follow_snapshot`);
- :class:`WrittenRows`: what the vault graph reads of the notes this process's batches just
  wrote (their file row, their links, a memory's text), handed to
  :class:`magma.graph_keeper.GraphKeeper` instead of read back: a ``remember`` at 1,000
  memories reads no row for its graph step.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CHANGES_KEPT",
    "RECENT_VECTORS",
    "WRITTEN_KEPT",
    "FileIndexMemo",
    "RecentVectors",
    "StoreChanges",
    "StoreDelta",
    "TableMemo",
    "WrittenNote",
    "WrittenRows",
]

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
        """Carry ``kept`` (as read at ``before``, and taken by :meth:`writing`) over one
        commit of ``written`` (``{path: IndexedFile}``) and ``deleted`` that moved the table
        to ``after``; else keep nothing."""
        commits = 1 if written or deleted else 0
        if kept is None or before is None or after is None or kept[0] != before or (
                after != before + commits):
            return
        index = kept[1]  # (this memo's own dict, taken by writing(): changed in place, not
        for path in deleted:  # copied at each batch of a cold index of 100,000 notes)
            index.pop(path, None)
        index.update(written)
        self._kept = (after, index)


class TableMemo:
    """One value read from a table, kept for the table version it was read at (``None``:
    a table that cannot say its version; nothing is kept then). The value is shared: the
    caller copies what it hands out."""

    def __init__(self) -> None:
        self._kept: tuple[int, Any] | None = None

    def read(self, version: int | None, load: Callable[[], Any]) -> Any:
        """The value kept for ``version``, else ``load()`` (kept for ``version``)."""
        if self._kept is not None and version is not None and self._kept[0] == version:
            return self._kept[1]
        value = load()
        self._kept = (version, value) if version is not None else None
        return value


class RecentVectors:
    """The last :data:`RECENT_VECTORS` chunk vectors written (or about to be: a ``remember``'s
    draft, :meth:`daemon.memories.MemoryService.remember`), by content hash; more while a
    large reconcile runs (:meth:`widened`)."""

    def __init__(self, size: int = RECENT_VECTORS) -> None:
        self._base = self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        # (a remember adds its draft's while the background index write adds its rows')
        self._lock = threading.Lock()
        #: Each :meth:`widened` block running: its size, and the hashes added since it began.
        self._widened: list[tuple[int, set[str]]] = []
        #: How many :meth:`drop` of some text forgotten there were (a memory of the texts
        #: read, :class:`daemon.sync_memo.ContentMemo`, lets go of them all then).
        self.forgets = 0

    @property
    def size(self) -> int:
        return self._size

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Keep the vectors of ``hashes`` (the last :attr:`size` of them), the oldest
        kept let go beyond :attr:`size`."""
        with self._lock:
            for _, added in self._widened:
                added.update(hashes)
            start = max(0, len(hashes) - self._size)
            block = np.array(vectors[start:], dtype=np.float32)  # (one copy; rows are views)
            kept = self._vectors
            for chash, vector in zip(hashes[start:], block, strict=True):
                kept.pop(chash, None)
                kept[chash] = vector
            self._trim()

    def _trim(self) -> None:
        while len(self._vectors) > self._size:
            self._vectors.popitem(last=False)

    @contextmanager
    def widened(self, size: int) -> Iterator[set[str]]:
        """Keep up to ``size`` vectors while the block runs (a large reconcile: the chunks
        it meets again, a copy's, come back without a read), and yield the set of every
        hash added meanwhile (by anyone: what the tables may hold that they did not
        before), filled as they come."""
        block: tuple[int, set[str]] = (size, set())
        with self._lock:
            self._widened.append(block)
            self._size = max([self._base, *(wide for wide, _ in self._widened)])
        try:
            yield block[1]
        finally:
            with self._lock:
                self._widened = [kept for kept in self._widened if kept is not block]
                self._size = max([self._base, *(wide for wide, _ in self._widened)])
                self._trim()

    def drop(self, hashes: Collection[str]) -> None:
        """Forget the vectors of ``hashes`` (their text was forgotten)."""
        with self._lock:
            self.forgets += 1 if hashes else 0
            for chash in hashes:
                self._vectors.pop(chash, None)

    def split(self, hashes: Collection[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """``(found, missing)``: copies of the kept vectors, and the sorted hashes to read."""
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        with self._lock:
            for chash in sorted(set(hashes)):
                vector = self._vectors.get(chash)
                if vector is None:
                    missing.append(chash)
                else:
                    found[chash] = vector.copy()
        return found, missing


#: Batches :class:`StoreChanges` remembers (our choice: a reader that fell further behind than
#: this many of the process's own batches reads the tables whole, as it would without them).
CHANGES_KEPT = 256


@dataclass(frozen=True, slots=True)
class StoreDelta:
    """What this process's own batches changed between two table versions: the ``paths``
    written, touched or deleted, and whether the set of stored paths stayed the same
    (``same_paths``: no file was added or removed, so no other note's links were resolved
    again)."""

    paths: frozenset[str]
    same_paths: bool


class StoreChanges:
    """The paths of each of this process's own batches, by the table versions before and after
    it (``{table: version}``, :meth:`magma.store.MagmaStore.versions`), so that a reader of one
    version can follow the store to a later one by re-reading only those paths.

    A chain from a version to the current one exists only through batches recorded here; a
    commit of anything else (another process's, seen after a refresh) leaves a gap, and
    :meth:`since` answers ``None``: read the tables whole.
    """

    def __init__(self, size: int = CHANGES_KEPT) -> None:
        self._steps: deque[tuple[dict[str, int], dict[str, int], StoreDelta]] = deque(
            maxlen=size)

    def record(self, before: Mapping[str, int], after: Mapping[str, int],
               paths: Collection[str], *, same_paths: bool) -> None:
        """One batch moved the tables from ``before`` to ``after`` writing ``paths``."""
        if dict(before) != dict(after):
            self._steps.append((dict(before), dict(after),
                                StoreDelta(frozenset(paths), same_paths)))

    def forget(self) -> None:
        """Nothing recorded holds any more (the tables were rewritten or replaced)."""
        self._steps.clear()

    def since(self, versions: Mapping[str, int], now: Mapping[str, int]) -> StoreDelta | None:
        """The union of the batches from ``versions`` to ``now``; an empty delta when they
        are equal; ``None`` when the recorded batches do not lead from one to the other."""
        at, now = dict(versions), dict(now)
        paths: set[str] = set()
        same = True
        steps = list(self._steps)
        start = next((i for i, (before, _a, _d) in enumerate(steps) if before == at), None)
        if at == now:
            return StoreDelta(frozenset(), True)
        if start is None:
            return None
        for before, after, delta in steps[start:]:
            if before != at:
                return None
            paths |= delta.paths
            same = same and delta.same_paths
            at = after
            if at == now:
                return StoreDelta(frozenset(paths), same)
        return None


#: Notes whose written rows :class:`WrittenRows` keeps until the graph takes them: a
#: ``remember`` or a watcher's batch writes a few; a sync of more is read back, as before
#: (the rows of a whole vault are not held twice).
WRITTEN_KEPT = 256


@dataclass(frozen=True, slots=True)
class WrittenNote:
    """What the vault graph reads of one note a batch wrote, as the tables hold it after that
    batch: its ``files`` row's ``content_hash``, ``file`` (a :class:`magma.store.GraphFileRow`),
    ``links`` (its :class:`magma.store.LinkRecord` rows, in the order
    :func:`magma.store.link_records` gives) and ``text`` (a memory's chunk bodies in order,
    joined by newlines, as :func:`magma.graph_keeper.memory_texts` reads them; ``None`` for
    other notes and memories without chunks)."""

    content_hash: str
    file: Any
    links: tuple[Any, ...]
    text: str | None


class WrittenRows:
    """The :class:`WrittenNote` of each path this process's batches wrote since the graph
    last took them (:meth:`take`). A note is only ever what a read of the tables would give
    at the hash it names: a later batch that deletes it or resolves its links again drops it
    (:meth:`drop`), a refresh that sees another process's commits forgets all of them, and
    more than ``size`` paths waiting forgets all of them (the graph reads those back)."""

    def __init__(self, size: int = WRITTEN_KEPT) -> None:
        self.size = size
        self._notes: dict[str, WrittenNote] = {}

    @property
    def room(self) -> int:
        """How many more notes are kept (a batch of more is read back instead)."""
        return max(0, self.size - len(self._notes))

    def after(self, changed: Iterable[str], notes: Iterable[WrittenNote]) -> None:
        """A batch changed the rows of ``changed`` paths (written, deleted, or their links
        resolved again): those kept are dropped, then ``notes`` (what it wrote, or none) kept."""
        for path in changed:
            self._notes.pop(path, None)
        for note in notes:
            self._notes[note.file.path] = note
        if len(self._notes) > self.size:
            self._notes.clear()

    def forget(self) -> None:
        self._notes.clear()

    def take(self) -> dict[str, WrittenNote]:
        """The notes kept, by path (what the graph reads of each at the hash it names;
        paths not there are read); none are kept after."""
        notes, self._notes = self._notes, {}
        return notes
