"""Which form of the chunk vectors scales: exact float32, float16, int8, or a LanceDB ANN index.

    .venv/bin/python bench/vector_forms_bench.py --vectors V.npy [V2.npy …] --queries Q.npy
        [--rows 43000 700000] [--forms exact float16 int8 ivf_flat ivf_sq ivf_rq ivf_hnsw_sq
        ivf_pq] [--partitions N] [--limit 64] [--workdir DIR] [--rescore]

Every form answers the same queries for the 10 (and the 64 the search stage asks for) nearest
chunks; recall@k is the share of the exact float32 top k it returns. Latency is wall time per
query (p50, p95) on this machine, one query at a time; memory is what the form holds in the
process (the matrix bytes; for LanceDB the process's RSS growth while it searches, plus the
index's size on disk).

Vectors. ``--vectors`` are real USE multilingual v3 rows (``float32[n, 512]``, unit norm), e.g.
read from the embedding cache of an indexed vault. When ``--rows`` asks for more rows than
there are, row ``i`` is real row ``i mod n`` plus Gaussian noise of ``--noise`` per
dimension, renormalised (``--noise 0.01`` gives cosine ≈ 0.97 to the original): the set keeps
the real rows' geometry and clusters, without exact duplicates (a copied vault's identical
vectors would make a top 10 a tie). The queries (``--queries``) are real question vectors.

``--rescore`` measures the compact forms (``float16``, ``int8``, as the daemon keeps them:
:func:`magma.vector_index.in_form`) where they serve beside an ANN index: recall@10 of the
exact top ``--limit`` candidates ordered again by the form's cosines, and the time to score
100,000 chosen rows (:meth:`~magma.vector_index.ChunkVectors.scores_at`, a filtered search's
allowed rows), against float32 rows.

Forms:

* ``exact``: ``matrix @ q`` over ``float32[n, d]`` and ``argpartition`` (what the catalogue
  does today).
* ``float16``: rows stored as float16, scored in blocks of :data:`BLOCK_ROWS` up-cast to
  float32 (numpy has no BLAS for float16).
* ``int8``: each row scaled by its largest absolute value to ``[-127, 127]`` and rounded;
  scores ``(codes @ q) * scale / 127`` in blocks, as above.
* ``ivf_flat`` / ``ivf_sq`` / ``ivf_rq`` / ``ivf_hnsw_sq`` / ``ivf_pq``: a LanceDB table of
  the rows in ``--workdir`` with that index (``metric="dot"`` on unit rows), searched with
  the ``nprobes`` / ``ef`` / ``refine_factor`` settings listed in :data:`ANN_SETTINGS`
  (the table is deleted after its form is measured).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from magma.vector_ann import ANN_NPROBES_SHARE  # noqa: E402
from magma.vector_index import Int8Vectors, in_form  # noqa: E402

#: Rows up-cast at once by the float16 form (32,768 × 512 × 4 bytes = 64 MB of scratch).
BLOCK_ROWS = 32_768
KS = (10, 64)
#: ANN query settings tried per index type: (label, nprobes, ef, refine_factor). nprobes is
#: the number of IVF partitions scanned (of ``--partitions``, by default √rows: 316 at 100,000
#: rows, 836 at 700,000); refine_factor × limit candidates of the quantised scan are scored
#: again on the stored float32 vectors (LanceDB's ``refine_factor``).
ANN_SETTINGS: dict[str, list[tuple[str, int, int | None, int | None]]] = {
    "ivf_flat": [("np20", 20, None, None), ("np40", 40, None, None),
                 ("np80", 80, None, None), ("np160", 160, None, None)],
    "ivf_sq": [("np40 rf5", 40, None, 5), ("np80 rf5", 80, None, 5),
               ("np160 rf5", 160, None, 5)],
    "ivf_rq": [("np40 rf5", 40, None, 5), ("np80 rf5", 80, None, 5),
               ("np160 rf10", 160, None, 10), ("np210 rf10", 210, None, 10),
               ("a fifth rf10", 0, None, 10)],
    "ivf_hnsw_sq": [("np20 ef64", 20, 64, None), ("np40 ef128 rf2", 40, 128, 2),
                    ("np80 ef256 rf4", 80, 256, 4)],
    "ivf_pq": [("np40 rf20", 40, None, 20), ("np80 rf20", 80, None, 20),
               ("np160 rf20", 160, None, 20), ("np160 rf50", 160, None, 50),
               ("np320 rf20", 320, None, 20)],
}
#: Rows written to a LanceDB table per ``add`` (bounds the Arrow copy: 65,536 × 2 KB).
WRITE_ROWS = 65_536


def rss_mb() -> float:
    """Resident set size of this process now, MB (``/proc/self/statm``)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def grown(real: np.ndarray, rows: int, noise: float, seed: int = 24) -> np.ndarray:
    """``rows`` unit rows: ``real`` first, then real rows plus noise (see module doc)."""
    if rows <= len(real):
        return np.ascontiguousarray(real[:rows])
    rng = np.random.default_rng(seed)
    out = np.empty((rows, real.shape[1]), dtype=np.float32)
    out[: len(real)] = real
    step = 65_536
    for start in range(len(real), rows, step):
        end = min(rows, start + step)
        base = real[np.arange(start, end) % len(real)]
        block = base + rng.normal(0.0, noise, base.shape).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:end] = block
    return out


def top(scores: np.ndarray, k: int) -> np.ndarray:
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def exact_search(matrix: np.ndarray) -> Callable[[np.ndarray, int], np.ndarray]:
    return lambda q, k: top(matrix @ q, k)


def float16_search(matrix: np.ndarray) -> Callable[[np.ndarray, int], np.ndarray]:
    half = matrix.astype(np.float16)

    def search(q: np.ndarray, k: int) -> np.ndarray:
        scores = np.empty(len(half), dtype=np.float32)
        for start in range(0, len(half), BLOCK_ROWS):
            block = half[start : start + BLOCK_ROWS].astype(np.float32)
            scores[start : start + len(block)] = block @ q
        return top(scores, k)

    search.nbytes = half.nbytes  # type: ignore[attr-defined]
    return search


def int8_search(matrix: np.ndarray) -> Callable[[np.ndarray, int], np.ndarray]:
    vectors = Int8Vectors.of(matrix)

    def search(q: np.ndarray, k: int) -> np.ndarray:
        return top(vectors.scores(q), k)

    search.nbytes = vectors.nbytes  # type: ignore[attr-defined]
    return search


def percentile_ms(times: Sequence[float], p: float) -> float:
    return float(np.percentile(np.asarray(times) * 1000.0, p))


def measure(search: Callable[[np.ndarray, int], np.ndarray], queries: np.ndarray,
            truth: dict[int, list[set[int]]]) -> dict[str, float]:
    """Recall@k against ``truth`` and p50/p95 latency (ms) of ``search(q, max(KS))``."""
    search(queries[0], max(KS))  # warm
    times: list[float] = []
    recalls: dict[int, list[float]] = {k: [] for k in KS}
    for i, q in enumerate(queries):
        started = time.perf_counter()
        found = search(q, max(KS))
        times.append(time.perf_counter() - started)
        for k in KS:
            recalls[k].append(len(set(found[:k].tolist()) & truth[k][i]) / k)
    out = {f"recall@{k}": float(np.mean(recalls[k])) for k in KS}
    out["p50_ms"] = percentile_ms(times, 50)
    out["p95_ms"] = percentile_ms(times, 95)
    return out


def lance_table(matrix: np.ndarray, folder: Path) -> Any:
    """A new LanceDB table ``chunks`` in ``folder`` of ``row`` (int64) and ``vector`` (the
    rows of ``matrix``), written :data:`WRITE_ROWS` at a time."""
    import lancedb
    import pyarrow as pa

    shutil.rmtree(folder, ignore_errors=True)
    db = lancedb.connect(str(folder))
    dims = matrix.shape[1]
    table = None
    for start in range(0, len(matrix), WRITE_ROWS):
        block = matrix[start : start + WRITE_ROWS]
        data = pa.table({"row": pa.array(np.arange(start, start + len(block))),
                         "vector": pa.FixedSizeListArray.from_arrays(
                             pa.array(block.reshape(-1)), dims)})
        if table is None:
            table = db.create_table("chunks", data)
        else:
            table.add(data)
    return table


def lance_forms(matrix: np.ndarray, kind: str, workdir: Path, queries: np.ndarray,
                truth: dict[int, list[set[int]]], partitions: int | None = None,
                limit: int = max(KS)) -> None:
    """Build a LanceDB table with index ``kind`` and measure every setting of it, each search
    asking for ``limit`` rows (the vector stage asks for ``max(8n, 64)``)."""
    folder = workdir / f"lance-{kind}-{len(matrix)}"
    table = lance_table(matrix, folder)
    partitions = partitions or max(1, int(np.sqrt(len(matrix))))
    before = rss_mb()
    started = time.perf_counter()
    table.create_index(metric="dot", index_type=kind.upper(),
                       num_partitions=partitions, num_sub_vectors=64)
    built_s = time.perf_counter() - started
    disk_mb = sum(f.stat().st_size for f in (folder / "chunks.lance" / "_indices").rglob("*")
                  if f.is_file()) / 1e6
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"  {kind}: {partitions} partitions, index built in {built_s:.1f} s (RSS growth "
          f"{rss_mb() - before:.0f} MB, process peak so far {peak:.0f} MB), index on disk "
          f"{disk_mb:.1f} MB",
          flush=True)
    for label, probes, ef, refine in ANN_SETTINGS[kind]:
        before = rss_mb()
        nprobes = probes or max(1, math.ceil(partitions * ANN_NPROBES_SHARE))

        def search(q: np.ndarray, k: int, nprobes: int = nprobes, ef: int | None = ef,
                   refine: int | None = refine) -> np.ndarray:
            query = table.search(q).distance_type("dot").nprobes(nprobes).limit(max(k, limit))
            if ef is not None:
                query = query.ef(ef)
            if refine is not None:
                query = query.refine_factor(refine)
            return np.asarray(query.select(["row"]).to_arrow().column("row").to_pylist()[:k])

        got = measure(search, queries, truth)
        print(row_text(f"{kind} {label}", got, rss_mb() - before, "RSS growth"), flush=True)
    print(f"  {kind}: RSS after its searches {rss_mb():.0f} MB", flush=True)


def rescore_forms(matrix: np.ndarray, queries: np.ndarray, limit: int) -> None:
    """``--rescore`` (module doc): each form's recall@10 when it orders again the exact top
    ``limit`` candidates, and its p50 time to score 100,000 chosen rows."""
    chosen = np.sort(np.random.default_rng(1).choice(len(matrix), min(100_000, len(matrix)),
                                                     replace=False))
    for form in ("float32", "float16", "int8"):
        vectors = in_form(matrix, form)  # type: ignore[arg-type]
        found = 0
        for q in queries:
            scores = matrix @ q
            candidates = np.argpartition(-scores, limit - 1)[:limit]
            truth = set(candidates[np.argsort(-scores[candidates])][:10].tolist())
            again = candidates[np.argsort(-(vectors.rows(candidates) @ q))][:10]
            found += len(truth & set(again.tolist()))
        times = []
        for q in queries[:20]:
            started = time.perf_counter()
            vectors.scores_at(chosen, q)
            times.append(time.perf_counter() - started)
        print(f"  rescore {form:<8} top {limit} ordered again: recall@10 "
              f"{found / (10 * len(queries)):.4f}; {len(chosen):,} chosen rows scored in p50 "
              f"{percentile_ms(times, 50):.1f} ms; {vectors.nbytes / 1e6:.1f} MB", flush=True)
        del vectors


def row_text(name: str, got: dict[str, float], memory_mb: float, what: str) -> str:
    return (f"  {name:<28} recall@10 {got['recall@10']:.4f}  recall@64 {got['recall@64']:.4f}"
            f"  p50 {got['p50_ms']:7.1f} ms  p95 {got['p95_ms']:7.1f} ms  {what} "
            f"{memory_mb:8.1f} MB")


def run(real: np.ndarray, queries: np.ndarray, rows: int, forms: Sequence[str],
        noise: float, workdir: Path, partitions: int | None = None,
        limit: int = max(KS), rescore: bool = False) -> None:
    matrix = grown(real, rows, noise)
    print(f"{rows:,} rows ({min(rows, len(real)):,} real, "
             f"{max(0, rows - len(real)):,} real+noise {noise}), {len(queries)} queries",
          flush=True)
    truth: dict[int, list[set[int]]] = {k: [] for k in KS}
    exact = exact_search(matrix)
    for q in queries:
        found = exact(q, max(KS))
        for k in KS:
            truth[k].append(set(found[:k].tolist()))
    if rescore:
        rescore_forms(matrix, queries, limit)
    for form in forms:
        if form == "exact":
            print(row_text("exact float32", measure(exact, queries, truth),
                           matrix.nbytes / 1e6, "matrix"), flush=True)
        elif form in ("float16", "int8"):
            search = float16_search(matrix) if form == "float16" else int8_search(matrix)
            print(row_text(form, measure(search, queries, truth),
                           search.nbytes / 1e6, "matrix"), flush=True)  # type: ignore[attr-defined]
            del search
        else:
            lance_forms(matrix, form, workdir, queries, truth, partitions, limit)
            shutil.rmtree(workdir / f"lance-{form}-{len(matrix)}", ignore_errors=True)
        gc.collect()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=Path, nargs="+", required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--rows", type=int, nargs="+", default=[43_000, 700_000])
    parser.add_argument("--forms", nargs="+",
                        default=["exact", "float16", "int8", "ivf_hnsw_sq", "ivf_pq"])
    parser.add_argument("--noise", type=float, default=0.01)
    parser.add_argument("--queries-max", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--partitions", type=int, default=None,
                        help="IVF partitions of the LanceDB forms (default √rows)")
    parser.add_argument("--limit", type=int, default=max(KS),
                        help="rows each LanceDB search asks for (recall is taken on its first "
                        "10 and 64)")
    parser.add_argument("--rescore", action="store_true",
                        help="the compact forms ordering the exact top --limit again")
    args = parser.parse_args(argv)
    real = np.concatenate([np.load(p).astype(np.float32) for p in args.vectors])
    rng = np.random.default_rng(7)
    real = real[rng.permutation(len(real))]
    queries = np.load(args.queries).astype(np.float32)[: args.queries_max]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vector-forms-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"real vectors {len(real):,} × {real.shape[1]}; threads: 1 query at a time; "
          f"start RSS {rss_mb():.0f} MB")
    for rows in args.rows:
        run(real, queries, rows, args.forms, args.noise, workdir, args.partitions, args.limit,
            args.rescore)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
