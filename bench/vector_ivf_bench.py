"""An IVF over the in-memory int8 chunk rows against LanceDB's IVF_RQ index, on a real store.

    PYTHONPATH=. .venv/bin/python bench/vector_ivf_bench.py [--data /work/big54/data]
        [--queries 100] [--partitions N …] [--shares 2.5 5 10 20] [--rounds 1]

Reads the chunks table of the store under ``--data`` (``vaults/*/lancedb``) in batches (never
every float32 vector at once), quantises each batch as the snapshot does
(:meth:`magma.vector_index.Int8Vectors.of`), and keeps per question the best rows by the
exact float32 vectors and by a full int8 scan: the truths. The queries are the first
``--queries`` LongMemEval oracle questions, embedded with the product's model, and the parts
of each (:func:`magma.question_shape.event_phrases`).

The IVF (:mod:`magma.vector_ivf`) is trained on a sample of the int8 rows (timed), every row
assigned (timed), then for each share of partitions probed: recall@10 of NOTES (the rows
asked for, 320 as the vector stage asks, collapsed to notes best-first, against the top 10
notes of each truth, what ``bench/scale_bench.py``'s recall row does), p50/p95 wall and CPU
ms (``time.process_time``: every thread of the process) for one vector, for a batch of 4
questions, and for the real batches (each question with parts: the question and its parts).
The baseline in the same run, alternated query by query: LanceDB's index as the product asks
it (:func:`magma.vector_ann.nearest_chunk_ids`, one call per vector). The load average is
given with each figure (the mean of its samples).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import big_vault  # noqa: E402
import longmemeval_bench as lme  # noqa: E402

from magma.question_shape import event_phrases  # noqa: E402
from magma.vector_index import Int8Vectors  # noqa: E402
from magma.vector_ivf import (  # noqa: E402
    IVF_ITERATIONS,
    IVF_SAMPLE_PER_PARTITION,
    RowPartitions,
    assign_rows,
    nearest_rows,
    partition_count,
    train_centroids,
)

#: Rows the vector stage asks for (``max(8n, 64)``, n = 10 × CANDIDATE_FACTOR 4).
ASKED_ROWS = 320
#: Best rows kept per query for the truths (ample for 10 notes).
TRUTH_ROWS = 2_000
BATCH_ROWS = 65_536


class Timings:
    """Wall and CPU times and load samples of one figure."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.load: list[float] = []

    def run(self, call: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        out = call()
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.process_time() - cpu)
        self.load.append(os.getloadavg()[0])
        return out

    def line(self) -> str:
        w50, w95 = np.percentile(self.wall, [50, 95]) * 1000
        c50, c95 = np.percentile(self.cpu, [50, 95]) * 1000
        return (f"wall p50 {w50:6.1f} p95 {w95:6.1f}  cpu p50 {c50:6.1f} p95 {c95:6.1f} ms"
                f"  load {np.mean(self.load):.1f}")


def store_table(data: Path) -> Any:
    import lancedb

    uri = next(data.glob("vaults/*/lancedb"))
    return lancedb.connect(str(uri)).open_table("chunks")


def keep_best(best: tuple[np.ndarray, np.ndarray], sims: np.ndarray, start: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """Merge a batch's scores (``float32[rows, q]``, rows from ``start``) into the best
    ``TRUTH_ROWS`` rows per query (``(int64[q, t], float32[q, t])``)."""
    rows, vals = best
    take = min(TRUTH_ROWS, len(sims))
    top = np.argpartition(-sims, take - 1, axis=0)[:take].T  # [q, take]
    cand_rows = np.concatenate([rows, top + start], axis=1)
    cand_vals = np.concatenate([vals, np.take_along_axis(sims.T, top, axis=1)], axis=1)
    keep = np.argsort(-cand_vals, axis=1, kind="stable")[:, :TRUTH_ROWS]
    return np.take_along_axis(cand_rows, keep, 1), np.take_along_axis(cand_vals, keep, 1)


def read_store(table: Any, queries: np.ndarray) -> tuple[Int8Vectors, list[str], Any, Any]:
    """The int8 rows, each row's path, and the float32 and int8 truths of ``queries``."""
    total = table.count_rows()
    codes = np.empty((total, queries.shape[1]), dtype=np.int8)
    scales = np.empty(total, dtype=np.float32)
    paths: list[str] = []
    empty = (np.zeros((len(queries), 0), np.int64), np.zeros((len(queries), 0), np.float32))
    exact, int8 = empty, empty
    done = 0
    reader = table.search().select(["path", "vector"]).limit(None).to_batches(BATCH_ROWS)
    for batch in reader:
        n = batch.num_rows
        matrix = np.asarray(batch.column("vector").flatten().to_numpy(zero_copy_only=False),
                            dtype=np.float32).reshape(n, -1)
        part = Int8Vectors.of(matrix)
        codes[done : done + n], scales[done : done + n] = part.codes, part.scales
        paths += batch.column("path").to_pylist()
        exact = keep_best(exact, matrix @ queries.T, done)
        int8 = keep_best(int8, part.rows(np.arange(n)) @ queries.T, done)
        done += n
        print(f"  read {done:,}/{total:,}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return Int8Vectors(codes=codes[:done], scales=scales[:done]), paths, exact, int8


def top_notes(rows: Sequence[int], paths: Sequence[str], k: int = 10) -> set[str]:
    notes: list[str] = []
    for row in rows:
        if paths[row] not in notes:
            notes.append(paths[row])
            if len(notes) == k:
                break
    return set(notes)


def recall(found: Sequence[set[str]], truth: Sequence[set[str]]) -> float:
    return float(np.mean([len(f & t) / max(1, len(t)) for f, t in zip(found, truth,
                                                                        strict=True)]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/big54/data"))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--partitions", type=int, nargs="*", default=None)
    parser.add_argument("--shares", type=float, nargs="*", default=[2.5, 5, 10, 20])
    parser.add_argument("--sample-per-partition", type=int, default=IVF_SAMPLE_PER_PARTITION)
    parser.add_argument("--iterations", type=int, default=IVF_ITERATIONS)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)

    from magma.embedder import UniversalSentenceEncoder
    from magma.vector_ann import nearest_chunk_ids

    questions = [q["question"] for q in lme.load_oracle(big_vault.CORPORA / "longmemeval")]
    questions = questions[: args.queries]
    embedder = UniversalSentenceEncoder()
    qv = np.asarray(embedder.embed(questions), dtype=np.float32)
    phrase_sets = [event_phrases(q) for q in questions]
    real_batches = [np.vstack([qv[i], np.asarray(embedder.embed(p), dtype=np.float32)])
                    for i, p in enumerate(phrase_sets) if p]
    print(f"vector IVF bench: {len(questions)} questions ({len(real_batches)} with parts, "
          f"{sum(map(len, real_batches))} vectors in their batches), load "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")

    table = store_table(args.data)
    started = time.perf_counter()
    vectors, paths, exact, int8 = read_store(table, qv)
    print(f"read {len(vectors):,} rows in {time.perf_counter() - started:.0f} s")
    truth_exact = [top_notes(r.tolist(), paths) for r in exact[0]]
    truth_int8 = [top_notes(r.tolist(), paths) for r in int8[0]]
    print(f"full int8 scan vs exact float32: recall@10 {recall(truth_int8, truth_exact):.4f}")

    def lance_rows(vector: np.ndarray) -> set[str]:
        found = nearest_chunk_ids(table, vector, ASKED_ROWS)
        notes: list[str] = []
        for _, path, _ in found:
            if path not in notes:
                notes.append(path)
        return set(notes[:10])

    lance_one, lance_four, lance_real = Timings(), Timings(), Timings()
    lance_found = [lance_rows(v) for v in qv]  # (untimed: the index read, warm after)
    print(f"LanceDB IVF_RQ (product's settings, {ASKED_ROWS} rows): recall@10 vs exact "
          f"{recall(lance_found, truth_exact):.4f}, vs int8 scan "
          f"{recall(lance_found, truth_int8):.4f}")
    rng = np.random.default_rng(0)
    for k in args.partitions or [partition_count(len(vectors))]:
        sample_n = min(len(vectors), k * args.sample_per_partition)
        started_cpu, started = time.process_time(), time.perf_counter()
        # the int8 codes as they are (as magma.vector_ivf.trained does)
        sample = vectors.codes[np.sort(rng.choice(len(vectors), sample_n, replace=False))]
        centroids = train_centroids(sample, k, args.iterations)
        train = (time.perf_counter() - started, time.process_time() - started_cpu)
        started_cpu, started = time.process_time(), time.perf_counter()
        parts = RowPartitions.of(centroids, assign_rows(vectors, centroids), len(vectors))
        assign = (time.perf_counter() - started, time.process_time() - started_cpu)
        sizes = np.diff(parts.starts)
        print(f"\nIVF {k} partitions (sample {sample_n:,}, {args.iterations} rounds): train "
              f"{train[0]:.1f} s wall / {train[1]:.1f} s cpu, assign {len(vectors):,} rows "
              f"{assign[0]:.1f} s wall / {assign[1]:.1f} s cpu, load {os.getloadavg()[0]:.1f}; "
              f"partition rows min/median/max {sizes.min()}/{int(np.median(sizes))}/"
              f"{sizes.max()}")
        for share in args.shares:
            one, four, real = Timings(), Timings(), Timings()
            found: list[set[str]] = []

            def ivf(batch: np.ndarray, share: float = share,
                    parts: RowPartitions = parts) -> list[Any]:
                return nearest_rows(parts, vectors, batch, ASKED_ROWS, share / 100)

            ivf(qv[:4])  # warm: the codes' pages
            for _ in range(args.rounds):
                found = []
                for v in qv:
                    lance_one.run(lambda v=v: lance_rows(v))
                    rows, _ = one.run(lambda v=v: ivf(v[None, :]))[0]
                    found.append(top_notes(rows.tolist(), paths))
                for start in range(0, len(qv) - 3, 4):
                    batch = qv[start : start + 4]
                    lance_four.run(lambda b=batch: [lance_rows(v) for v in b])
                    four.run(lambda b=batch: ivf(b))
                for batch in real_batches:
                    lance_real.run(lambda b=batch: [lance_rows(v) for v in b])
                    real.run(lambda b=batch: ivf(b))
            print(f"  share {share:4.1f}% recall@10 vs exact {recall(found, truth_exact):.4f}"
                  f" vs int8 scan {recall(found, truth_int8):.4f}")
            print(f"    1 vector      {one.line()}")
            print(f"    batch of 4    {four.line()}")
            print(f"    real batches  {real.line()}")
    print(f"\nLanceDB, alternated with the above (one call per vector, {ASKED_ROWS} rows, "
          f"refine 10):")
    print(f"    1 vector      {lance_one.line()}")
    print(f"    batch of 4    {lance_four.line()}")
    print(f"    real batches  {lance_real.line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
