"""The daemon's in-memory vector index at a big vault's size, in each form, beside the store's IVF
index: resident memory, search latency unfiltered and filtered, recall@10 against exact.

    .venv/bin/python bench/vector_daemon_bench.py --build --vectors V.npy --rows 700000 \\
        --workdir DIR
    .venv/bin/python bench/vector_daemon_bench.py --workdir DIR --queries Q.npy \\
        [--forms before float32 float16 int8] [--model]

``--build`` writes a LanceDB ``chunks`` table into ``--workdir`` with the store's columns the
search reads (``chunk_id``, ``path``, ``content_hash``, ``memory_type``, ``owner``,
``vector``) and builds its IVF index as the store does (:func:`magma.vector_ann.
ensure_vector_index`). The vectors are ``bench/vector_forms_bench.py``'s: real USE rows
(``--vectors``, shuffled), past them real rows plus Gaussian noise 0.01. Seven chunks a note;
note ``i`` lies in folder ``f{k}`` with probability 2^-(k+1) (``f0`` half the notes, ``f1`` a
quarter, … ``f9`` the rest), so that folder filters keep from 50% down to 0.1% of the rows.

Each form is then measured in a process of its own (so that its RSS is its own): the
catalogue's vector part read as :func:`magma.catalogue.read_snapshot` reads it
(:func:`magma.catalogue.vectors_of`: batch by batch, in the form asked for; ``before``: the
whole table read at once into float32 rows, as dreamd did before, the heap trimmed after
too), the store's index searched as the
daemon's vector stage searches (:func:`daemon.retrieval._nearest`, ``n`` = 40 notes, the
320 rows it asks for), unfiltered and with each folder as ``path_prefix`` (keep and SQL
filter as a search with ``path_prefix`` builds them; ``before``: a filtered search scans
every row, as before). Recall@10 is the share of the exact
top 10 notes (float32 rows, every allowed row scanned) found in the form's top 10. RSS is
read from ``/proc/self/statm`` after the searches, peak from ``VmHWM``; ``--model`` loads
the embedding model first, as the daemon does, so the RSS is closer to the daemon's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from vector_forms_bench import grown, rss_mb  # noqa: E402

#: Chunks a note of the bench vault has (≈ 700,000 chunks for 100,000 notes, issue 24).
CHUNKS_PER_NOTE = 7
#: Notes the vector stage asks for (``RANK_DEPTH`` 10 × ``CANDIDATE_FACTOR`` 4).
NOTES = 40
FOLDERS = ("f1/", "f2/", "f3/", "f5/", "f7/")


def build(vectors: list[Path], rows: int, workdir: Path) -> None:
    """Write the ``chunks`` table and its IVF index (module doc)."""
    import lancedb
    import pyarrow as pa

    from magma.vector_ann import ensure_vector_index

    real = np.concatenate([np.load(p).astype(np.float32) for p in vectors])
    real = real[np.random.default_rng(7).permutation(len(real))]
    matrix = grown(real, rows, 0.01)
    np.save(workdir / "matrix.npy", matrix)  # the exact rows the recall is measured against
    notes = -(-rows // CHUNKS_PER_NOTE)
    u = np.random.default_rng(3).random(notes)
    folder = np.minimum(np.floor(-np.log2(1 - u)).astype(int), 9)
    paths = [f"f{folder[i]}/note{i:06d}.md" for i in range(notes)]
    db = lancedb.connect(str(workdir / "lance"))
    table = None
    started = time.perf_counter()
    for start in range(0, rows, 65_536):
        at = np.arange(start, min(rows, start + 65_536))
        data = pa.table({
            "chunk_id": pa.array([f"c{i:07d}" for i in at]),
            "path": pa.array([paths[i // CHUNKS_PER_NOTE] for i in at]),
            "content_hash": pa.array([f"{i:064x}" for i in at]),
            "memory_type": pa.array([None] * len(at), pa.string()),
            "owner": pa.array([None] * len(at), pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix[at].reshape(-1)), 512)})
        if table is None:
            table = db.create_table("chunks", data, mode="overwrite")
        else:
            table.add(data)
    assert table is not None
    table.optimize()
    print(f"{rows:,} rows written in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    ensure_vector_index(table, 0)
    print(f"IVF index built in {time.perf_counter() - started:.1f} s", flush=True)


def snapshot_of(table: Any, form: str) -> Any:
    """The vector part of a snapshot of ``table`` in ``form`` (``before``: read whole, float32),
    searching ``table``'s IVF index."""
    from magma.catalogue import Snapshot, _with_vectors, matrix_of, vectors_of
    from magma.gc_pause import trim_heap
    from magma.store import VECTOR_BATCH_ROWS
    from magma.vector_ann import nearest_chunk_ids
    from magma.vector_index import ExactVectors, VectorLimits

    columns = ["chunk_id", "path", "content_hash", "vector"]
    limits = VectorLimits(ann_above=0, ann_form=form if form != "before" else "float32",
                          ann_index="store")
    if form == "before":
        every = table.search().select(columns).limit(None).to_arrow()
        ids = every.column("chunk_id").to_pylist()
        paths = every.column("path").to_pylist()
        hashes = every.column("content_hash").to_pylist()
        vectors: Any = ExactVectors(np.ascontiguousarray(matrix_of(every)))
        del every
        trim_heap()
    else:
        reader = table.search().select(columns).limit(None).to_batches(VECTOR_BATCH_ROWS)
        ids, paths, hashes, vectors = vectors_of(table.count_rows(), reader, limits)
    snap: Snapshot = _with_vectors({}, {}, {}, {}, {}, ids, paths, vectors, hashes, limits)
    snap.ann = lambda vector, limit, where: nearest_chunk_ids(table, vector, limit, where)
    return snap


def measure(workdir: Path, queries: np.ndarray, form: str, model: bool) -> dict[str, Any]:
    """One form's figures (module doc), in this process."""
    import lancedb

    from daemon.retrieval import _nearest

    out: dict[str, Any] = {"form": form, "rss_start_mb": rss_mb()}
    if model:
        from magma.embedder import UniversalSentenceEncoder

        UniversalSentenceEncoder(threads=1).embed(["warm up"])
        out["rss_model_mb"] = rss_mb()
    table = lancedb.connect(str(workdir / "lance")).open_table("chunks")
    started = time.perf_counter()
    snap = snapshot_of(table, form)
    out["read_s"] = time.perf_counter() - started
    out["rows"] = len(snap.chunk_paths)
    out["vectors_mb"] = snap.chunk_vectors.nbytes / 1e6
    out["rss_read_mb"] = rss_mb()
    truths = json.loads((workdir / "truths.json").read_text())
    scanned = dataclasses.replace(snap, ann=None)  # before: a filtered search scanned all
    for name, keep, where, filtered in filters_of(snap):
        searched = scanned if form == "before" and filtered else snap
        _nearest(searched, queries[0], NOTES, keep, filtered, where)  # warm
        times, cpu, recall = [], [], []
        for q, truth in zip(queries, truths[name], strict=True):
            t0, c0 = time.perf_counter(), time.process_time()
            found = _nearest(searched, q, NOTES, keep, filtered, where)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            top = {p for p, _, _ in found[:10]}
            recall.append(len(top & set(truth)) / max(1, len(truth)))
        out[name] = {"p50_ms": float(np.percentile(times, 50) * 1e3),
                     "p95_ms": float(np.percentile(times, 95) * 1e3),
                     "cpu_p50_ms": float(np.percentile(cpu, 50) * 1e3),
                     "recall@10": float(np.mean(recall))}
    out["rss_end_mb"] = rss_mb()
    out["peak_rss_mb"] = peak_mb()
    return out


def peak_mb() -> float:
    """This process's peak RSS, MB (``VmHWM``: unlike ``ru_maxrss``, not the parent's peak
    from before the exec)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e3
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def filters_of(snap: Any) -> list[tuple[str, Callable[[str], bool], str, bool]]:
    """``(name, keep, where, filtered)``: no filter, then each of :data:`FOLDERS` as a
    search's ``path_prefix`` filters."""
    from magma.store import search_filter

    out: list[tuple[str, Callable[[str], bool], str, bool]] = [
        ("unfiltered", lambda _p: True, "", False)]
    for folder in FOLDERS:
        rows = sum(len(r) for p, r in snap.rows_by_path.items() if p.startswith(folder))
        out.append((f"folder {folder} ({rows:,} rows)",
                    lambda p, f=folder: p.startswith(f), search_filter(None, folder, None), True))
    return out


def write_truths(workdir: Path, queries: np.ndarray) -> None:
    """The exact top 10 notes of every query and filter (float32 rows of ``matrix.npy``,
    every allowed row scanned) into ``truths.json``."""
    import lancedb

    from daemon.retrieval import _nearest
    from magma.catalogue import _with_vectors
    from magma.vector_index import ExactVectors, VectorLimits

    table = lancedb.connect(str(workdir / "lance")).open_table("chunks")
    data = table.search().select(["chunk_id", "path"]).limit(None).to_arrow()
    ids, paths = data.column("chunk_id").to_pylist(), data.column("path").to_pylist()
    order = np.asarray([int(c[1:]) for c in ids])  # the bench's ids are the rows of matrix.npy
    matrix = np.load(workdir / "matrix.npy")[order]
    exact = _with_vectors({}, {}, {}, {}, {}, ids, paths, ExactVectors(matrix), ids,
                          VectorLimits())
    truths = {name: [[p for p, _, _ in _nearest(exact, q, 10, keep, filtered)]
                     for q in queries]
              for name, keep, _where, filtered in filters_of(exact)}
    (workdir / "truths.json").write_text(json.dumps(truths))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--vectors", type=Path, nargs="+")
    parser.add_argument("--rows", type=int, default=700_000)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--queries-max", type=int, default=100)
    parser.add_argument("--forms", nargs="+", default=["before", "float32", "float16", "int8"])
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--model", action="store_true", help="load the embedding model first")
    args = parser.parse_args(argv)
    if args.build:
        args.workdir.mkdir(parents=True, exist_ok=True)
        build(args.vectors, args.rows, args.workdir)
        return 0
    queries = np.load(args.queries).astype(np.float32)[: args.queries_max]
    if not (args.workdir / "truths.json").exists():
        write_truths(args.workdir, queries)
    if args.one:
        print(json.dumps(measure(args.workdir, queries, args.one, args.model)), flush=True)
        return 0
    for form in args.forms:
        command = [sys.executable, __file__, "--workdir", str(args.workdir), "--queries",
                   str(args.queries), "--queries-max", str(args.queries_max), "--one", form,
                   *(["--model"] if args.model else [])]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{form}: failed\n{done.stderr[-2000:]}", flush=True)
            continue
        print(done.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
