"""How many compact rows a search up-casts at once (``magma.vector_index.SCRATCH_ROWS``).

usage: .venv/bin/python bench/scratch_rows_bench.py [--rows 200000] [--gathered 120000]

Scores random ``int8`` rows of 512 dimensions (the default model's) the two ways a search
does, on one BLAS thread: a scan of every row against one question (a vault below the IVF's
threshold), and a gather of sorted random rows against four questions (the IVF's probed
partitions, a question and its event phrases). Each is timed as it was done before
(``astype`` of a block of :data:`magma.vector_index.BLOCK_ROWS` or 4,096 rows: a fresh
float32 array a block) and through :func:`magma.vector_index.compact_scores` at several
scratch sizes, median of 7 runs, the two alternated in one run. Baseline: the float32
product of the same rows (what the exact form costs)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from magma import vector_index

DIMS = 512


def timed(run: Callable[[], object], repeats: int = 7) -> float:
    """Median wall of ``run`` over ``repeats`` runs after one warm-up, in ms."""
    run()
    took = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        took.append(time.perf_counter() - started)
    return float(np.median(took) * 1e3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--gathered", type=int, default=120_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    codes = rng.integers(-127, 128, size=(args.rows, DIMS), dtype=np.int8)
    matrix = codes.astype(np.float32)
    one = rng.standard_normal(DIMS).astype(np.float32)
    four = np.ascontiguousarray(rng.standard_normal((DIMS, 4)).astype(np.float32))
    picked = np.sort(rng.choice(args.rows, min(args.gathered, args.rows), replace=False))

    def fresh_scan(block: int) -> np.ndarray:
        out = np.empty(len(codes), dtype=np.float32)
        for start in range(0, len(codes), block):
            out[start : start + block] = codes[start : start + block].astype(np.float32) @ one
        return out

    def fresh_gather(block: int) -> np.ndarray:
        out = np.empty((len(picked), 4), dtype=np.float32)
        for start in range(0, len(picked), block):
            part = picked[start : start + block]
            out[start : start + len(part)] = codes[part].astype(np.float32) @ four
        return out

    def scratch(rows: int, run: Callable[[], np.ndarray]) -> float:
        was = vector_index.SCRATCH_ROWS
        vector_index.SCRATCH_ROWS = rows
        try:
            return timed(run)
        finally:
            vector_index.SCRATCH_ROWS = was

    print(f"{args.rows:,} int8 rows of {DIMS}; {len(picked):,} gathered; 1 BLAS thread; "
          f"load {os.getloadavg()[0]:.1f}")
    with threadpool_limits(1):
        for _ in range(2):
            exact = timed(lambda: matrix @ one)
            print(f"  baseline: float32 product, every row      {exact:6.1f} ms")
            print(f"  scan, fresh blocks of {vector_index.BLOCK_ROWS:,}           "
                  f"{timed(lambda: fresh_scan(vector_index.BLOCK_ROWS)):6.1f} ms")
            print(f"  gather x4, fresh blocks of 4,096           "
                  f"{timed(lambda: fresh_gather(4_096)):6.1f} ms")
            for rows in (64, 256, 1_024, 4_096):
                scan = scratch(rows, lambda: vector_index.compact_scores(codes, one))
                gather = scratch(rows, lambda: vector_index.compact_scores(codes, four, picked))
                print(f"  compact_scores, scratch of {rows:>5,}: scan {scan:6.1f} ms, "
                      f"gather x4 {gather:6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
