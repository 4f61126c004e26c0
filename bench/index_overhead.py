"""CPU seconds per stored chunk of a cold index's work besides the model.

Usage: ``python bench/index_overhead.py VAULT [--workdir DIR] [--dims 512] [--profile]``

Indexes ``VAULT`` cold (a fresh data folder under ``--workdir``, the embedding cache off) with
a FAKE embedder of ``--dims`` dimensions (a vector drawn from a generator seeded by the text's
hash: deterministic, nearly free, and of the model's width, so the store reads and writes as
many bytes as with the model), and prints the process's CPU seconds of the whole sync (the
index, its maintenance and the vault graph built at its end), the CPU seconds spent inside the
fake embedder's calls (its own thread's), and their difference per stored chunk: the work
issue 24's cold-index ratio needs to fall, measured without the model; within it, the CPU
seconds of the store's writes, its maintenance and the vault graph. Also the 1-minute load
before and after (the machine is shared: alternate the checkouts compared).

The product code measured is ``PYTHONPATH``'s first (another checkout's dreamd measured with
this script), as in :mod:`bench.scale_bench`. ``--tables OUT``: also write the stored files,
chunks and links rows, sorted by key, to ``OUT`` (``.jsonl``; the ids new notes draw at
random replaced by their paths) to compare two checkouts' indexes with ``cmp``.
``--batch-files N``: ``sync.write_batch_files``. Never fails on timings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PRODUCT_PATH = [*(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p), str(REPO)]
sys.path[:0] = [str(REPO / "bench"), *PRODUCT_PATH]


class HashVectorEmbedder:
    """A FAKE embedder of ``dims`` dimensions: each text's vector is drawn from a generator
    seeded by its SHA-256 (deterministic, about 10 µs a text). Not a product figure."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.model_id = f"bench-hash-vector-{dims}"
        self.cpu_s = 0.0
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.thread_time()
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(self.dims)
            out[row] = vector / np.linalg.norm(vector)
        self.embedded += len(texts)
        self.cpu_s += time.thread_time() - started
        return out


def thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's threads so far, summed by thread name (Linux; empty
    elsewhere): how much of the work runs in LanceDB's own threads."""
    by_name: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for task in Path("/proc/self/task").glob("*"):
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = re.sub(r"[-_]?\d+$", "", name) or name
        by_name[name] = by_name.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return by_name


def timed_parts() -> dict[str, float]:
    """The process's CPU seconds (every thread's) spent while the main thread was inside
    the store's writes, its maintenance and the vault graph's follow, filled as they run."""
    from magma.graph_keeper import GraphKeeper
    from magma.store import MagmaStore

    spent: dict[str, float] = {}

    def timed(owner: Any, name: str, label: str) -> None:
        call = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return call(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started

        setattr(owner, name, wrapper)

    timed(MagmaStore, "apply", "store_writes")
    timed(MagmaStore, "maintain", "maintenance")
    timed(GraphKeeper, "follow", "graph")
    return spent


def load_now() -> float:
    return os.getloadavg()[0]


def table_rows(app: Any, out: Path) -> None:
    """The stored files, chunks and links rows of ``app``'s store, each table sorted by its
    key, as JSON lines in ``out``: ``indexed_at`` left out (a clock), the id a new note draws
    at random replaced by its path (a memory's own id kept), vectors as float32 hex."""
    tables = app.store._t  # (a bench reading the tables whole)
    files = tables.read(tables.files, None).to_pylist()
    ids = {row["note_id"]: "new note " + row["path"] for row in files
           if row["memory_id"] is None}
    keys = {"files": "path", "chunks": "chunk_id", "links": "link_id"}
    with out.open("w", encoding="utf-8") as sink:
        for name, key in keys.items():
            rows = tables.read(getattr(tables, name), None).to_pylist()
            for row in sorted(rows, key=lambda r: r[key]):
                row.pop("indexed_at", None)
                if "note_id" in row:
                    row["note_id"] = ids.get(row["note_id"], row["note_id"])
                if row.get("vector") is not None:
                    row["vector"] = np.asarray(row["vector"], dtype=np.float32).tobytes().hex()
                sink.write(json.dumps({"table": name, **row}, ensure_ascii=False,
                                      default=str, sort_keys=True) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="a fresh folder for the index (default: a temporary one)")
    parser.add_argument("--dims", type=int, default=512, help="the fake vectors' width")
    parser.add_argument("--tables", type=Path, default=None,
                        help="write the stored rows, sorted, to this .jsonl file")
    parser.add_argument("--batch-files", type=int, default=None,
                        help="sync.write_batch_files (default: dreamd's)")
    args = parser.parse_args(argv)
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="dreamd-overhead-"))).resolve()
    if (work / "data").exists():
        parser.error(f"--workdir {work} holds an index already: give a fresh one")
    work.mkdir(parents=True, exist_ok=True)
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(work / "data")
    os.environ["DREAMD_CONFIG"] = str(work / "config.toml")  # absent: defaults
    os.environ["DREAMD_EMBEDDING__CACHE_MB"] = "0"
    if args.batch_files is not None:
        os.environ["DREAMD_SYNC__WRITE_BATCH_FILES"] = str(args.batch_files)
    from daemon.app import App, load
    from daemon.logs import configure_logging

    configure_logging(level="warning")
    embedder = HashVectorEmbedder(args.dims)
    parts = timed_parts()
    app = App.create(load(None, None, {"vault.path": str(args.vault.resolve())}),
                     embedder=embedder)
    product = Path(sys.modules["daemon"].__file__ or "?").parent.parent
    load_before = load_now()
    started, cpu = time.perf_counter(), time.process_time()
    report = app.sync()
    wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
    stored = app.store.counts().chunks
    other_s = cpu_s - embedder.cpu_s
    print(json.dumps({
        "product": str(product), "vault": str(args.vault), "notes": report.added,
        "chunks_stored": stored, "chunks_embedded": report.chunks_embedded,
        "chunks_reused": report.chunks_reused, "wall_s": round(wall_s, 1),
        "cpu_s": round(cpu_s, 1), "fake_embedder_cpu_s": round(embedder.cpu_s, 1),
        "other_cpu_s": round(other_s, 1),
        "other_ms_per_stored_chunk": round(other_s / max(stored, 1) * 1000, 3),
        "cpu_s_within": {k: round(v, 1) for k, v in parts.items()},
        "load_before": round(load_before, 2), "load_after": round(load_now(), 2),
        "thread_cpu_s": {k: round(v, 1) for k, v in sorted(
            thread_cpu().items(), key=lambda kv: -kv[1]) if v >= 0.5},
    }))
    if args.tables is not None:
        table_rows(app, args.tables)
    app.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
