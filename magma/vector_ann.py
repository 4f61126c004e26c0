"""LanceDB's IVF index on the chunk vectors: how the vector stage finds a large vault's nearest
chunks without scanning every row.

Below ``retrieval.ann_vectors_above`` chunks the vector stage scans the in-memory rows
(:mod:`magma.vector_index`, exact). Above it the store keeps an IVF index on the chunks
table's ``vector`` column (:func:`ensure_vector_index`, built by the store's maintenance once
the table has grown past the threshold; the same maintenance, ``optimize``, folds later rows
into it, and LanceDB scans rows not folded in yet exactly beside the index), and an unfiltered
vector stage asks it for candidate chunks (:func:`nearest_chunk_ids`), scored again on the
in-memory rows (:func:`magma.catalogue.ann_rows`), a filtered one with the filter (LanceDB's
prefilter) when the filter allows too many rows to score them in memory.

The index and its settings are measured by ``bench/vector_forms_bench.py`` on 161,970 real
USE multilingual v3 chunk vectors (2 shared cores; the figures are given at
:data:`config.settings.ANN_VECTORS_ABOVE`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from lancedb.index import IvfRq

__all__ = [
    "ANN_CANDIDATE_FACTOR",
    "ANN_INDEX_NAME",
    "ANN_MIN_NPROBES",
    "ANN_NPROBES_SHARE",
    "ensure_vector_index",
    "nearest_chunk_ids",
    "vector_index_type",
]

#: Name of the chunks table's vector index.
ANN_INDEX_NAME = "vector_ivf"
#: Share of the IVF partitions a search scans (``nprobes`` = this × partitions). The index
#: has √rows partitions (447 at 200,000 chunks, 836 at 700,000): scanning a fifth of them,
#: the quantised candidates scored again on the stored vectors, found the exact top 10
#: at recall 0.996 (p95 73 ms) at 700,000 chunks and 0.993 at 200,000, asked for the 320 rows
#: the vector stage asks for; a tenth with a refine factor of 5 gave 0.984 and 0.980
#: (``bench/vector_forms_bench.py``, ``ivf_rq``; the figures are given at
#: :data:`config.settings.ANN_VECTORS_ABOVE`). A fifth, rounded up.
ANN_NPROBES_SHARE = 0.2
#: Candidates asked of the index per row a search wants, each scored again on the in-memory
#: rows (:func:`magma.catalogue.ann_rows`): 2. On the 100,000-note bench index (928,740 real
#: chunk vectors, 100 LongMemEval questions), recall@10 of notes against an exact scan was
#: 0.971 asking for the rows alone and 0.993 asking for twice as many (0.993 for four times,
#: slower), against 1.000 with LanceDB's refine step (the best 10× scored again on the
#: stored float32 vectors, read from disk), whose query took p50 86-130 ms of wall and 92-103
#: ms of CPU against 48-59 and 39-45 ms without it (load 8).
ANN_CANDIDATE_FACTOR = 2
#: Fewest partitions a search scans: an index the user asked for on a small vault (a low
#: ``retrieval.ann_vectors_above``) has few partitions, and scanning a quarter of 7 would
#: scan 2; 16 scans every partition of an index under 289 chunks (our choice).
ANN_MIN_NPROBES = 16


def _partitions(rows: int) -> int:
    """IVF partitions of an index over ``rows`` chunks: √rows, LanceDB's own rule of thumb
    and what the bench measured."""
    return max(1, math.isqrt(rows))


def vector_index_type(table: Any) -> str | None:
    """The type of the vector index on ``table`` (``"IvfRq"``), ``None`` without one."""
    for index in table.list_indices():
        if index.name == ANN_INDEX_NAME:
            return str(index.index_type)
    return None


def ensure_vector_index(table: Any, above: int) -> bool:
    """Build the IVF index on ``table``'s ``vector`` column when it holds more than
    ``above`` rows and has none yet (IVF_RQ: RaBitQ codes, a bit per dimension; cosine on
    unit rows; √rows partitions) -> whether the table has the index now. Rows written after
    the build are folded in by the table's ``optimize``. The build reads every vector: 295–485
    s and 562–583 MB more RSS at 700,000 chunks on 2 shared cores through the older
    ``create_index(metric=…)`` call (``bench/vector_forms_bench.py``), 56 s through this one
    (``bench/vector_daemon_bench.py --build``, load 3–7; the index 59 MB). Raises what
    LanceDB raises."""
    if vector_index_type(table) is not None:
        return True
    rows = table.count_rows()
    if rows <= above:
        return False
    table.create_index("vector", config=IvfRq(distance_type="cosine",
                                              num_partitions=_partitions(rows)),
                       name=ANN_INDEX_NAME, replace=True)
    return True


def nearest_chunk_ids(table: Any, vector: np.ndarray, limit: int,
                      where: str | None = None) -> list[tuple[str, str, float]]:
    """The ``limit`` × :data:`ANN_CANDIDATE_FACTOR` chunks nearest ``vector`` (unit
    ``float32[dims]``) by the IVF index's quantised cosines (only rows matching the SQL
    filter ``where``, when given: LanceDB's prefilter) -> ``(chunk_id, path, quantised
    cosine)``, best first by it, scanning :data:`ANN_NPROBES_SHARE` of the partitions (at
    least :data:`ANN_MIN_NPROBES`). The caller scores them again on its in-memory rows
    (:func:`magma.catalogue.ann_rows`): the quantised cosines alone rank the notes roughly
    (recall@10 of notes against an exact scan 0.787 at 681,066 real chunk vectors, asked for
    320 rows). Raises what LanceDB raises."""
    stats = table.index_stats(ANN_INDEX_NAME)
    indexed = stats.num_indexed_rows if stats is not None else table.count_rows()
    nprobes = max(ANN_MIN_NPROBES, math.ceil(_partitions(indexed) * ANN_NPROBES_SHARE))
    query = (table.search(np.asarray(vector, dtype=np.float32), query_type="vector")
             .distance_type("cosine").nprobes(nprobes))
    if where:
        query = query.where(where, prefilter=True)
    rows = query.limit(limit * ANN_CANDIDATE_FACTOR).select(["chunk_id", "path"]).to_arrow()
    cosines = (1.0 - np.asarray(rows.column("_distance").to_numpy(zero_copy_only=False),
                                dtype=np.float64)).tolist()
    return list(zip(rows.column("chunk_id").to_pylist(), rows.column("path").to_pylist(),
                    cosines, strict=True))
