"""The in-memory IVF's training and row assignment, off the search path.

Training the IVF over a large vault's rows (:func:`magma.vector_ivf.trained`) takes minutes of
CPU (92 s at 928,740 rows) and assigning every row to saved centroids seconds (11 s there):
the first search past ``retrieval.ann_vectors_above``, or the first after a restart that
found the vault changed, would wait for them. Instead a snapshot that needs either carries
what it needs (:class:`IvfWork`) and the store's IVF index answers its vector searches
(:attr:`magma.catalogue.Snapshot.ann`) while :class:`IvfKeeper` does the work in a thread of
its own; a later snapshot of the same rows (the same :attr:`~magma.catalogue.Snapshot.lineage`:
rows appended since, or left dead, never stacked again) takes the result, the rows appended
meanwhile assigned then. A process that ends first (a one-shot ``dreamd search``) loses the
work: the thread never holds the exit.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import structlog

from magma.chunk_columns import ChunkHashes
from magma.vector_file import (
    SavedPartitions,
    drop_partitions,
    load_partitions,
    save_partitions,
)
from magma.vector_index import ChunkVectors
from magma.vector_ivf import RowPartitions, assign_rows, fits, followed, trained

if TYPE_CHECKING:
    from magma.catalogue import Snapshot

__all__ = ["IvfKeeper", "IvfWork", "rows_key", "saved_partitions"]

log = structlog.get_logger("dreamd.ivf")

#: Niceness the keeper's thread asks for (Linux: a thread's own priority): a search shares
#: the cores with it and should win them (our choice; best effort, ignored where refused).
KEEPER_NICENESS = 10


@dataclass(frozen=True, slots=True)
class IvfWork:
    """What a snapshot's IVF needs before it answers: every row assigned to ``centroids``
    (trained for ``trained_rows`` rows), or, with ``centroids`` ``None``, training anew."""

    centroids: np.ndarray | None = None
    trained_rows: int = 0


def rows_key(hashes: Sequence[str]) -> str:
    """Which rows a snapshot holds, in their order: a digest of their content hashes
    (:meth:`magma.chunk_columns.ChunkHashes.digest`). A store indexed again (its table
    versions counted from the start) holds other rows under the same version."""
    packed = hashes if isinstance(hashes, ChunkHashes) else ChunkHashes.of(list(hashes))
    return packed.digest()


def saved_partitions(vectors: ChunkVectors, folder: Path | None, hashes: Sequence[str],
                     model: str) -> RowPartitions | IvfWork:
    """The IVF of ``vectors`` (the rows of content ``hashes``, embedded by ``model``) saved
    in ``folder`` for those very rows (:func:`rows_key`); else the work it needs: its saved
    centroids' assignment when they still :func:`magma.vector_ivf.fits` and are of
    ``model`` (or of a model not recorded), else training (another model's centroids
    would group the rows by chance)."""
    dims = vectors.rows(np.arange(min(1, len(vectors)))).shape[-1] if len(vectors) else 0
    saved = load_partitions(folder) if folder is not None else None
    if saved is None or not fits(saved, len(vectors), dims) \
            or saved.model not in ("", model):
        return IvfWork()
    if len(saved.parts) == len(vectors) and saved.rows_key == rows_key(hashes):
        return RowPartitions.of(saved.centroids, saved.parts, saved.trained_rows)
    return IvfWork(saved.centroids, saved.trained_rows)


@dataclass(slots=True)
class _Job:
    lineage: object
    rows: int
    done: Future[RowPartitions]
    #: set by a forget: the work's result is never saved (nor taken: the job is let go)
    dropped: threading.Event


class IvfKeeper:
    """Does one snapshot's :class:`IvfWork` at a time in a daemon thread (niced) and hands
    the result to a later snapshot of the same rows (:meth:`adopt`); saves it in ``folder``
    (``None``: never) for the next start, with the embedding ``model`` its rows are of."""

    def __init__(self, folder: Path | None, model: str = "") -> None:
        self._folder, self._model = folder, model
        self._job: _Job | None = None
        self._lock = threading.Lock()
        self._failed: object = None  # the rows whose work failed: not tried again

    def adopt(self, snap: Snapshot) -> Snapshot:
        """``snap`` searching its IVF when the work it needs is done (a new snapshot, the
        store's index no longer asked), else ``snap`` itself, the work started if none is
        under way (and none failed for these rows: the store's index goes on answering
        them, and rows read whole or stacked again try once more)."""
        work = snap.ivf_wanted
        if work is None:
            return snap
        with self._lock:
            job = self._job
            if job is not None and job.done.done():
                self._job = None
                ready = self._ready(job, snap)
                if isinstance(ready, RowPartitions):
                    return replace(snap, partitions=ready, ivf_wanted=None, ann=None)
                if ready is None:
                    self._failed = job.lineage
                work = ready or work
            if self._job is None and snap.lineage is not self._failed:
                self._job = self._start(snap, work)
        return snap

    def forget(self) -> None:
        """Let go of the IVF's centroids (a forget: a centroid is the mean of its partition's
        rows, of one row that row's vector): the work under way is dropped, never saved nor
        taken, and the saved partitions are deleted, so that the next snapshot read whole
        trains anew on the rows left."""
        with self._lock:
            if self._job is not None:
                self._job.dropped.set()
            self._job, self._failed = None, None
            if self._folder is not None:
                drop_partitions(self._folder)

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for the work under way -> whether none is left
        (benches and tests; a search never waits)."""
        job = self._job
        if job is None:
            return True
        with contextlib.suppress(Exception):
            job.done.result(timeout=timeout_s)
        return job.done.done()

    def _ready(self, job: _Job, snap: Snapshot) -> RowPartitions | IvfWork | None:
        """``job``'s partitions carried over to ``snap``'s rows; else the work ``snap``
        still needs (its centroids' assignment when the rows were stacked again since),
        ``None`` when the job failed."""
        try:
            done = job.done.result()
        except Exception as error:  # the search goes on with the store's index
            log.warning("search.partitions_failed", error=repr(error))
            return None
        rows = len(snap.chunk_vectors)
        if job.lineage is snap.lineage and rows >= job.rows:
            carried = done if rows == job.rows else followed(done, snap.chunk_vectors, job.rows)
            if carried is not None:
                return carried.appended(np.zeros(0, dtype=np.int32), snap.dead) \
                    if len(snap.dead) else carried
        if not fits(done, rows, done.centroids.shape[1]):
            return IvfWork()  # the rows outgrew the centroids meanwhile
        return IvfWork(done.centroids, done.trained_rows)

    def _start(self, snap: Snapshot, work: IvfWork) -> _Job:
        vectors, rows, hashes = snap.chunk_vectors, len(snap.chunk_vectors), snap.chunk_hashes
        done: Future[RowPartitions] = Future()
        dropped = threading.Event()
        folder, model, lock = self._folder, self._model, self._lock

        def run() -> None:
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), KEEPER_NICENESS)
            try:
                if work.centroids is None:
                    out = trained(vectors)
                else:
                    out = RowPartitions.of(work.centroids, assign_rows(vectors, work.centroids),
                                           work.trained_rows)
                if folder is not None:
                    # (rows left dead count in the key: a read of the table has none
                    # there, so its centroids serve it, not its rows)
                    saved = SavedPartitions(
                        centroids=out.centroids, parts=out.parts,
                        trained_rows=out.trained_rows, rows_key=rows_key(hashes),
                        model=model)
                    with lock:  # (never after a forget deleted them)
                        if not dropped.is_set():
                            save_partitions(folder, saved)
            except BaseException as error:  # handed to the search that adopts it
                done.set_exception(error)
                return
            done.set_result(out)

        threading.Thread(target=run, name="dreamd-ivf", daemon=True).start()
        return _Job(snap.lineage, rows, done, dropped)
