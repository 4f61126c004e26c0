"""First search after an edit in a long-lived process: the catalogue followed over the batch
against the catalogue read whole, in the same run.

usage: python bench/follow_bench.py [--corpus obsidian-help] [--edits 20] [--seed 0]
                                    [--workdir DIR] [--fake-embedder]

``--corpus`` is a folder, or a path under ``../shared/corpora``. With ``--workdir`` a vault and
a data dir already there (``bench/check_bench.py --workdir`` leaves them) are used as they are;
else the corpus is copied there (the shared corpus is never touched) and indexed in process
with the real default embedder (``App.sync``; minutes for a big corpus, skipped on a rerun).
``DREAMD_STORAGE__DATA_DIR`` and ``DREAMD_CONFIG`` point into that folder.

One ``App`` (as the daemon holds one) warms its search, then ``--edits`` times: a note chosen at
random gets a paragraph with a word of its own (``zq<hex>``), the daemon's own reindex path
runs (``App.make_syncer().sync_paths``: the batch, embedding the changed chunks), and the word
is searched for (``App.search``, the full pipeline): the first search pays for bringing the
in-memory catalogue, vectors and link graph to the new table versions. Edits alternate
between

- **followed**: the catalogue follows the batch (:func:`magma.catalogue.follow_snapshot`,
  what the product does), and
- **read whole** (baseline): the store forgets its record of the batch, so the catalogue is
  read whole as before (:func:`magma.catalogue.read_snapshot`).

Per mode: the batch, the first search after it and their sum (save → searchable, without the
watcher's debounce), p50 / p95 / max in ms, and whether every edit was found by its word; a
second search with nothing changed is the floor. Also one full catalogue read and one link
graph build, timed alone. Prints JSON and writes ``bench/results/follow_bench.json``. Never
fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import secrets
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPORA = ROOT.parent / "shared" / "corpora"
RESULTS = ROOT / "bench" / "results" / "follow_bench.json"


def _corpus(value: str) -> Path:
    for candidate in (Path(value).expanduser(), CORPORA / value):
        if candidate.is_dir():
            return candidate.resolve()
    raise SystemExit(f"--corpus {value}: no such folder (nor {CORPORA / value})")


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 1),
            "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
            "max": ordered[-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="obsidian-help")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--fake-embedder", action="store_true",
                        help="the tests' token-hash FAKE embedder (tests/support/fakes.py, 64 "
                        "dims): a workdir indexed by bench/check_bench.py --fake-embedder; the "
                        "vector matrix is then 8 times smaller than the model's")
    args = parser.parse_args()
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ.setdefault("LANCEDB_LOG", "error")
    work = (args.workdir or Path(f"/tmp/dreamd-follow-bench-{args.seed}")).resolve()
    vault = work / "vault"
    if not vault.exists():
        shutil.copytree(_corpus(args.corpus), vault, symlinks=True)
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(work / "data")
    os.environ["DREAMD_CONFIG"] = str(work / "config.toml")  # absent: defaults

    from daemon.app import App, load
    from daemon.graph_stage import graph_of
    from daemon.logs import configure_logging
    from magma.catalogue import read_snapshot

    configure_logging(level="warning")
    fake = None
    if args.fake_embedder:
        sys.path.insert(0, str(ROOT / "tests" / "support"))
        from fakes import TokenHashEmbedder

        fake = TokenHashEmbedder()
    app = App.create(load(None, None, {"vault.path": str(vault)}), embedder=fake)
    started = time.perf_counter()
    report = app.sync()
    sync_ms = _ms(started)
    syncer = app.make_syncer()
    started = time.perf_counter()
    app.search("warm up", limit=10, count_recall=False)
    warm_ms = _ms(started)
    retriever = app.retriever
    snap = retriever.snapshot()
    started = time.perf_counter()
    whole = read_snapshot(app.store, app.store.versions(), retriever._zone)
    read_whole_ms = _ms(started)
    started = time.perf_counter()
    graph_of(app.store, whole)
    graph_ms = _ms(started)
    rng = random.Random(args.seed)
    notes = sorted(p for p, e in snap.entries.items()
                   if e.memory_type is None and p.endswith(".md")
                   and (vault / p).is_file() and not (vault / p).is_symlink())
    runs: dict[str, dict[str, list[float]]] = {
        mode: {"batch_ms": [], "first_search_ms": [], "save_to_searchable_ms": [],
               "second_search_ms": [], "found": []} for mode in ("followed", "read_whole")}
    missed: list[dict[str, Any]] = []
    for n in range(args.edits):
        mode = "followed" if n % 2 == 0 else "read_whole"
        rel = rng.choice(notes)
        word = f"zq{secrets.token_hex(5)}"
        path = vault / rel
        path.write_bytes(path.read_bytes() + f"\n\nA line of its own: {word}.\n".encode())
        saved = time.perf_counter()
        syncer.sync_paths({rel})
        batch = _ms(saved)
        if mode == "read_whole":
            app.store._changes.forget()  # the catalogue cannot follow: read whole, as before
        started = time.perf_counter()
        hits = app.search(word, limit=10, count_recall=False)
        first = _ms(started)
        total = _ms(saved)
        started = time.perf_counter()
        app.search(word, limit=10, count_recall=False)
        second = _ms(started)
        row = runs[mode]
        row["batch_ms"].append(batch)
        row["first_search_ms"].append(first)
        row["save_to_searchable_ms"].append(total)
        row["second_search_ms"].append(second)
        row["found"].append(float(any(h.path == rel for h in hits)))
        if not row["found"][-1]:
            missed.append({"mode": mode, "path": rel, "word": word,
                           "hits": [h.path for h in hits][:3], "stages": [
                               f"{t.name}:{t.status}" for t in
                               (app.last_search_trace.stages if app.last_search_trace else ())]})
    app.close()
    result: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "vault": str(vault), "notes": len(snap.entries), "chunks": len(snap.chunk_ids),
        "edits": args.edits, "seed": args.seed,
        "embedder": "token-hash fake" if fake is not None else "default model",
        "vector_dims": int(snap.chunk_vectors.rows(0).shape[0]) if len(snap.chunk_vectors) else 0,
        "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                    "load_1min": os.getloadavg()[0]},
        "sync_ms": sync_ms, "sync_embedded": report.chunks_embedded,
        "first_search_ms": warm_ms,
        "baseline_read_whole_ms": read_whole_ms, "baseline_graph_build_ms": graph_ms,
    }
    result["missed"] = missed
    for mode, row in runs.items():
        result[mode] = {key: _summary(values) for key, values in row.items() if key != "found"}
        result[mode]["found"] = f"{int(sum(row['found']))}/{len(row['found'])}"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
