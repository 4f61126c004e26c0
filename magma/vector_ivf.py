"""An IVF over the in-memory chunk rows: how a large vault's vector stage finds its nearest
chunks from the int8 rows the snapshot already holds, without asking the store.

The rows are grouped in partitions around k-means centroids (spherical: cosine on unit rows;
:func:`train_centroids`, on a sample of the rows). A search scores the query against the
centroids, gathers the rows of the best share of the partitions and scores them on their
in-memory rows (:func:`nearest_rows`): for every vector of a question at once (the whole
question and each part of it, :func:`daemon.retrieval._by_phrases`), one gather and one
float32 matrix product, no disk read beyond the mapped codes. Each vector ranks only the rows
of its own partitions, so a batch answers what one call per vector answers.

The figures are measured by ``bench/vector_ivf_bench.py`` on the 100,000-note bench store
(928,739 real USE multilingual v3 chunk vectors, 2 shared cores).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import structlog

from magma.blas_threads import blas_threads
from magma.vector_file import SavedPartitions
from magma.vector_index import ChunkVectors, Int8Vectors, compact_scores

log = structlog.get_logger("dreamd.vectors")

__all__ = [
    "IVF_GROWTH",
    "IVF_ITERATIONS",
    "IVF_MIN_PROBES",
    "IVF_SAMPLE_PER_PARTITION",
    "IVF_SHARE",
    "SCORE_BLOCK_ROWS",
    "RowPartitions",
    "assign_rows",
    "nearest_centroids",
    "nearest_rows",
    "partition_count",
    "scores_many",
    "train_centroids",
    "trained",
]

#: Share of the partitions a search probes: a twentieth. On the bench store (above; 2 shared
#: cores, load 4–7, alternated with LanceDB's IVF_RQ as :mod:`magma.vector_ann` asks it, 320
#: rows, refine 10: CPU p50 67 ms a vector, 274 ms for 4, 273 ms for a question and its
#: parts) recall@10 of the notes against exact float32 0.982 (0.989 against the full int8
#: scan) in CPU p50 12.9 ms a vector, 59.8 ms for 4 questions, 45.7 ms for a question and
#: its parts; a tenth, 0.987 in 24.0 / 116.1 / 101.4 ms.
IVF_SHARE = 0.05
#: Fewest partitions a search probes: on a small vault (a low ``retrieval.ann_vectors_above``)
#: every partition of an IVF over up to 16² = 256 rows, as the store's index does
#: (:data:`magma.vector_ann.ANN_MIN_NPROBES`).
IVF_MIN_PROBES = 16
#: Rows appended since the rows were grouped by partition that a search looks up one by one
#: before they are grouped again: an eighth of the grouped rows, at least this many (our
#: choice: grouping 1,000,000 rows again is one sort, ≈ 0.1 s).
UNGROUPED_ROWS_MIN = 1_024
#: How far the rows may grow past (or shrink below) the rows the centroids were trained for
#: before they are trained again: twice (our choice).
IVF_GROWTH = 2.0

#: Rows of the training sample per partition, and rounds of k-means: 256 and 20. On the
#: bench store (928,740 rows, 963 partitions, 100 questions; ``bench/vector_ivf_bench.py``)
#: 64 rows and 8 rounds trained in 9 s of CPU but found 0.976 of the exact top 10 notes at a
#: twentieth of the partitions; 256 and 20, 92 s of CPU (148 s wall at load 5), 0.982 (a
#: partition's rows 18–3,168 instead of 6–4,019). Trained once a vault (saved; again when
#: it has grown twice as large).
IVF_SAMPLE_PER_PARTITION = 256
IVF_ITERATIONS = 20
#: Rows gathered at once when scoring probed rows of a form other than ``int8`` (float32 or
#: float16 rows, read through :meth:`ChunkVectors.rows`): 4,096 × 512 × 4 bytes = 8 MB.
SCORE_BLOCK_ROWS = 4_096
#: BLAS threads of a search's products (:mod:`magma.blas_threads`): one. Each product is
#: small (4,096 rows by a few queries), and OpenBLAS's second thread spins waiting for it: on
#: this 2-core machine at load 7, 24,000 gathered int8 rows scored against 4 queries took
#: 9.1 ms of CPU on one thread against 57 ms on two.
SCORE_BLAS_THREADS = 1
#: Rows assigned to their nearest centroid at once (16,384 × 1,000 centroids × 4 bytes =
#: 64 MB of scratch).
ASSIGN_BLOCK_ROWS = 16_384


def partition_count(rows: int) -> int:
    """Partitions of an IVF over ``rows`` rows: √rows (LanceDB's rule of thumb)."""
    return max(1, math.isqrt(rows))


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def nearest_centroids(matrix: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The partition of each row of ``matrix`` (``float32[n, dims]``): its centroid of
    highest dot product -> ``int32[n]`` (the rows need not be unit: a row's positive scale
    does not change its best centroid)."""
    out = np.empty(len(matrix), dtype=np.int32)
    for start in range(0, len(matrix), ASSIGN_BLOCK_ROWS):
        block = np.asarray(matrix[start : start + ASSIGN_BLOCK_ROWS], dtype=np.float32)
        out[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return out


def assign_rows(vectors: ChunkVectors, centroids: np.ndarray, start: int = 0) -> np.ndarray:
    """The partition of each row of ``vectors`` from ``start`` on -> ``int32[len - start]``
    (int8 rows are scored on their codes: the row's scale does not change its best
    centroid)."""
    out = np.empty(max(0, len(vectors) - start), dtype=np.int32)
    for begin in range(start, len(vectors), ASSIGN_BLOCK_ROWS):
        end = min(len(vectors), begin + ASSIGN_BLOCK_ROWS)
        if isinstance(vectors, Int8Vectors):
            block = vectors.codes[begin:end].astype(np.float32)
        else:
            block = vectors.rows(np.arange(begin, end))
        out[begin - start : end - start] = np.argmax(block @ centroids.T, axis=1)
    return out


def train_centroids(sample: np.ndarray, partitions: int, iterations: int = IVF_ITERATIONS,
                    seed: int = 0) -> np.ndarray:
    """Spherical k-means on the rows of ``sample`` (``[n, dims]`` of any number type, each
    row taken as its direction: int8 codes serve as they are, a quarter of the memory of
    float32 rows) -> ``float32[k, dims]`` unit centroids, ``k = min(partitions, n)``: started
    from ``k`` rows drawn with ``seed``, each round puts each row in its nearest centroid's
    partition and moves the centroid to the normalised mean of its rows; a partition left
    empty takes a row drawn again. The rows are up-cast :data:`ASSIGN_BLOCK_ROWS` at a time."""
    rng = np.random.default_rng(seed)
    n = len(sample)
    k = max(1, min(partitions, n))

    def unit(index: np.ndarray | slice) -> np.ndarray:
        return _unit(np.asarray(sample[index], dtype=np.float32))

    centroids = unit(rng.choice(n, k, replace=False))
    for _ in range(iterations):
        sums = np.zeros_like(centroids)
        counts = np.zeros(k, dtype=np.int64)
        for start in range(0, n, ASSIGN_BLOCK_ROWS):
            block = unit(slice(start, start + ASSIGN_BLOCK_ROWS))
            labels = np.argmax(block @ centroids.T, axis=1)
            found = np.bincount(labels, minlength=k)
            filled = np.flatnonzero(found)
            sums[filled] += np.add.reduceat(block[np.argsort(labels, kind="stable")],
                                            (np.cumsum(found) - found)[filled])
            counts += found
        empty = np.flatnonzero(counts == 0)
        if len(empty):
            sums[empty] = unit(rng.choice(n, len(empty), replace=False))
        centroids = _unit(sums)
    return centroids


@dataclass(frozen=True, slots=True)
class RowPartitions:
    """The IVF of a snapshot's rows: ``centroids`` (``float32[k, dims]``), the partition of
    each row (``parts``, ``int32[rows]``; ``-1`` for a row no chunk holds any more), the
    first ``grouped`` rows grouped by partition (``order``, the rows of partition ``p`` at
    ``order[starts[p]:starts[p + 1]]``, the ``-1`` rows left out) and the rows after them
    (appended since) found by their ``parts``; ``trained_rows``: the rows the centroids were
    trained for (a vault grown well past them trains again)."""

    centroids: np.ndarray
    parts: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    trained_rows: int
    grouped: int

    @classmethod
    def of(cls, centroids: np.ndarray, parts: np.ndarray, trained_rows: int) -> RowPartitions:
        """The partitions of rows whose partitions are ``parts`` (``-1``: left out)."""
        parts = np.asarray(parts, dtype=np.int32)
        order = np.argsort(parts, kind="stable").astype(np.int32)
        counts = np.bincount(parts[parts >= 0], minlength=len(centroids))
        order = order[len(parts) - int(counts.sum()):]  # the -1 rows sort first
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(centroids=centroids, parts=parts, order=order, starts=starts,
                   trained_rows=trained_rows, grouped=len(parts))

    def __len__(self) -> int:
        return len(self.parts)

    def appended(self, fresh: np.ndarray, left: np.ndarray | None = None) -> RowPartitions:
        """These partitions with rows of partitions ``fresh`` (``int32[k]``) after the rows
        held, and the rows ``left`` held by no chunk any more (``-1``)."""
        parts = np.concatenate([self.parts, np.asarray(fresh, dtype=np.int32)])
        if left is not None and len(left):
            parts[np.asarray(left, dtype=np.int64)] = -1
        if len(parts) - self.grouped > max(UNGROUPED_ROWS_MIN, self.grouped // 8):
            return RowPartitions.of(self.centroids, parts, self.trained_rows)
        return RowPartitions(centroids=self.centroids, parts=parts, order=self.order,
                             starts=self.starts, trained_rows=self.trained_rows,
                             grouped=self.grouped)

    def probed(self, queries: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the ``share`` (0–1] of partitions nearest each query of ``queries``
        (``float32[q, dims]``; at least :data:`IVF_MIN_PROBES` partitions each) ->
        ``(rows, member)``: the rows of any query's partitions (``int64[m]``, ascending) and
        whether each is in each query's own (``bool[m, q]``)."""
        k = len(self.centroids)
        probes = min(k, max(IVF_MIN_PROBES, math.ceil(share * k)))
        near = queries @ self.centroids.T
        best = np.argpartition(-near, probes - 1, axis=1)[:, :probes]
        # one row more, never probed: a row of partition -1 (no chunk) looks it up
        probe = np.zeros((k + 1, len(queries)), dtype=bool)
        probe[best, np.arange(len(queries))[:, None]] = True
        wanted = np.flatnonzero(probe[:k].any(axis=1))
        # (a grouped row left since is in its partition's list still: its part, -1, drops it)
        pieces = [self.order[self.starts[p] : self.starts[p + 1]] for p in wanted.tolist()]
        tail = np.arange(self.grouped, len(self.parts), dtype=np.int64)
        if len(tail):
            pieces.append(tail[probe[self.parts[tail]].any(axis=1)])
        rows = np.sort(np.concatenate(pieces).astype(np.int64)) if pieces \
            else np.zeros(0, dtype=np.int64)
        return rows, probe[self.parts[rows]]


def scores_many(vectors: ChunkVectors, rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The cosine of each of ``rows`` with each of ``queries`` -> ``float32[rows, q]``:
    ``int8`` rows gathered and up-cast :data:`magma.vector_index.SCRATCH_ROWS` at a time
    (:func:`magma.vector_index.compact_scores`), other forms :data:`SCORE_BLOCK_ROWS`."""
    q = np.ascontiguousarray(queries.T, dtype=np.float32)
    if isinstance(vectors, Int8Vectors):
        out = compact_scores(vectors.codes, q, rows)
        out *= vectors.scales[rows][:, None]
        return out
    out = np.empty((len(rows), len(queries)), dtype=np.float32)
    for start in range(0, len(rows), SCORE_BLOCK_ROWS):
        part = rows[start : start + SCORE_BLOCK_ROWS]
        out[start : start + len(part)] = vectors.rows(part) @ q
    return out


def nearest_rows(partitions: RowPartitions, vectors: ChunkVectors, queries: np.ndarray,
                 limit: int, share: float, allowed: np.ndarray | None = None
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each of ``queries`` (``float32[q, dims]``, unit rows), the ``limit`` rows of
    ``vectors`` nearest it among the rows of its ``share`` of the partitions
    (:meth:`RowPartitions.probed`; ``allowed``: a ``bool[rows]`` mask of the rows it may
    return) and their cosines on the in-memory rows -> ``[(int64[≤ limit], float32[≤
    limit])]`` per query, best first, equal cosines in row order."""
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
    with blas_threads(SCORE_BLAS_THREADS):
        rows, member = partitions.probed(queries, share)
        if allowed is not None:
            kept = allowed[rows]
            rows, member = rows[kept], member[kept]
        sims = scores_many(vectors, rows, queries)
    sims[~member] = -np.inf
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for column in sims.T:
        take = min(limit, int(np.count_nonzero(np.isfinite(column))))
        if take == 0:
            out.append((np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)))
            continue
        top = np.sort(np.argpartition(-column, take - 1)[:take])
        top = top[np.argsort(-column[top], kind="stable")]
        out.append((rows[top], column[top]))
    return out


def trained(vectors: ChunkVectors, seed: int = 0) -> RowPartitions:
    """An IVF of :func:`partition_count` partitions trained on
    :data:`IVF_SAMPLE_PER_PARTITION` rows of ``vectors`` a partition (drawn with ``seed``),
    every row assigned (logged: ``search.partitions_trained`` with its times)."""
    started = time.perf_counter()
    k = partition_count(len(vectors))
    rng = np.random.default_rng(seed)
    take = min(len(vectors), k * IVF_SAMPLE_PER_PARTITION)
    drawn = np.sort(rng.choice(len(vectors), take, replace=False))
    # int8 codes as they are: a quarter of float32 rows' memory (246,528 rows: 126 MB)
    sample = vectors.codes[drawn] if isinstance(vectors, Int8Vectors) else vectors.rows(drawn)
    centroids = train_centroids(sample, k, seed=seed)
    trained_s = time.perf_counter() - started
    out = RowPartitions.of(centroids, assign_rows(vectors, centroids), len(vectors))
    log.info("search.partitions_trained", rows=len(vectors), partitions=len(centroids),
             train_ms=round(trained_s * 1000), assign_ms=round(
                 (time.perf_counter() - started - trained_s) * 1000))
    return out


def fits(partitions: RowPartitions | SavedPartitions, rows: int, dims: int) -> bool:
    """Do centroids trained for ``partitions.trained_rows`` rows of ``dims`` still serve
    ``rows`` rows (within :data:`IVF_GROWTH` of them either way)?"""
    trained_rows = max(1, partitions.trained_rows)
    return partitions.centroids.shape[1] == dims \
        and trained_rows / IVF_GROWTH <= rows <= trained_rows * IVF_GROWTH


def followed(was: RowPartitions, vectors: ChunkVectors, start: int | None = None,
             left: np.ndarray | None = None) -> RowPartitions | None:
    """``was`` carried over to ``vectors``: with ``start``, the rows from ``start`` on
    appended to those ``was`` holds (``left``: rows no chunk holds any more); else every
    row assigned again. ``None`` when the centroids no longer :func:`fits` the rows
    (trained again by the caller)."""
    dims = was.centroids.shape[1]
    if not fits(was, len(vectors), dims):
        return None
    if start is not None:
        return was.appended(assign_rows(vectors, was.centroids, start), left)
    return RowPartitions.of(was.centroids, assign_rows(vectors, was.centroids),
                            was.trained_rows)
