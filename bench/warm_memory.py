"""What a warm daemon's process holds in memory on an indexed vault, in the daemon's order.

    DREAMD_STORAGE__DATA_DIR=DATA .venv/bin/python bench/warm_memory.py INDEXED_VAULT [--fake]

In process, what ``dreamd run`` loads once it watches (:mod:`daemon.client_desk`): a sync
with nothing to do, the vault graph (``GraphKeeper.graph`` and the search's view of it), the
search's warm-up (``Retriever.warm``: snapshot, model, full-text index), then the first
note-level BM25 index, waited for. After each step the process's RSS (after a garbage
collection and glibc's ``malloc_trim``: freed pages count as freed) and, at the end, its CPU
seconds, the note-level BM25 index's arrays (``mapped``: read from the index saved by an
earlier run, :mod:`magma.note_bm25_files`, in ``DATA``: remove ``DATA/vaults/*/note-bm25`` to
time a first start) and the token lexicon kept in the heap for its rebuilds. Linux with glibc
only.

``--rebuild`` then times a rebuild of the index as after an edit (one note's title changed),
in the build thread's own step.

``--searches N`` then runs N searches as a client asks them (``Retriever.search``: note names
of the vault as queries, three in five unfiltered, the others in ``help/`` or ``copy-03/``)
and prints their p50 / p95 (wall, and the process's CPU time: every thread's, LanceDB's
too), then the process's anonymous and file-backed memory
(``RssAnon``, ``RssFile``: the mapped BM25 index and vector rows are file pages) after the
5th and the Nth, as they are and once trimmed as the daemon's quiet pause does
(:func:`daemon.runner.trim_now`), and what LanceDB's caches of the store hold.

``--hits JSON`` writes each search's hits (path, score, reasons, snippet), and
``--no-deadlines`` gives every stage a hundred times its deadline, so that they never
depend on the machine's speed: two trees' files of hits are then the same, or one changed
what search returns.

``--fake`` uses the tests' token-hash embedder (``tests/support/fakes.py``) instead of the
model, for an index built by ``bench/scale_bench.py --structure-only``: the model is then
never loaded (≈0.2–0.3 GB less than the daemon), and its vectors are not the model's; every
other part is the daemon's.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))

from config.settings import Settings  # noqa: E402
from daemon.app import App, load  # noqa: E402
from daemon.retrieval import _note_index  # noqa: E402
from magma.gc_pause import bound_heap  # noqa: E402
from magma.store import cache_bytes  # noqa: E402

#: Longest wait for the first note-level BM25 index (s; at 100,000 notes it takes 80-150 s
#: of one core).
BM25_WAIT_LIMIT_S = 1800


def rss() -> float:
    """RSS in MB after a collection and ``malloc_trim``."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return psutil.Process().memory_info().rss / 2**20


def rss_kinds() -> str:
    """RssAnon and RssFile in MB, as they are and after a collection and ``malloc_trim``."""
    def read() -> str:
        fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text()
                      .splitlines() if line.startswith(("RssAnon", "RssFile")))
        return " ".join(f"{k} {int(v.split()[0]) / 1024:,.0f}" for k, v in fields.items())
    before = read()
    rss()
    return f"{before} MB; trimmed {read()} MB"


def searches(app: Any, vault: Path, count: int, hits_file: Path | None = None) -> None:
    """``count`` searches of note names (module docstring), timed, with the memory after the
    5th and the last."""
    import datetime

    names = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    step_ = max(1, len(names) // 30)
    asked: list[tuple[str, str | None]] = [(Path(p).stem.replace("-", " "), None)
                                           for p in names[::step_][:30]]
    asked += [(Path(p).stem.replace("-", " "), "help/") for p in names[5::step_ * 3][:10]]
    asked += [(Path(p).stem.replace("-", " "), "copy-03/") for p in names[7::step_ * 3][:10]]
    now = datetime.datetime(2026, 12, 6, 12, 0, tzinfo=datetime.UTC)
    app.retriever.search("warm one", limit=10, now=now)
    times, cpu, answers = [], [], []
    for i in range(count):
        if i == 5:
            print(f"after 5 searches: {rss_kinds()}; LanceDB caches "
                  f"{cache_bytes(app.store) / 2**20:,.0f} MB", flush=True)
        text, prefix = asked[i % len(asked)]
        began, began_cpu = time.perf_counter(), time.process_time()
        found = app.retriever.search(text, limit=10, path_prefix=prefix, now=now)
        times.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
        answers.append({"query": text, "folder": prefix, "hits": [
            [h.path, h.score, list(h.why), h.snippet] for h in found.hits]})
    if hits_file is not None:
        hits_file.write_text(json.dumps(answers, ensure_ascii=False, indent=1), encoding="utf-8")
    p50, p95 = np.percentile(times, [50, 95])
    c50, c95 = np.percentile(cpu, [50, 95])
    print(f"{count} searches: p50 {p50:,.0f} ms, p95 {p95:,.0f} ms; CPU of the process "
          f"(every thread) p50 {c50:,.0f} ms, p95 {c95:,.0f} ms; load "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"after {count} searches: {rss_kinds()}; LanceDB caches "
          f"{cache_bytes(app.store) / 2**20:,.0f} MB", flush=True)


def step(name: str, work: Any) -> None:
    began = time.perf_counter()
    work()
    print(f"{name:28s} {time.perf_counter() - began:7.1f} s   RSS {rss():7,.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", type=Path)
    parser.add_argument("--fake", action="store_true", help="the tests' fake embedder")
    parser.add_argument("--rebuild", action="store_true",
                        help="then a rebuild of the index as after an edit (one title changed)")
    parser.add_argument("--searches", type=int, default=0, metavar="N",
                        help="then N searches, timed, and the memory they leave")
    parser.add_argument("--hits", type=Path, metavar="JSON",
                        help="write each search's hits (path, score, reasons, snippet)")
    parser.add_argument("--no-deadlines", action="store_true",
                        help="stage deadlines ×100: the hits then never depend on the "
                             "machine's speed (compare two trees' --hits)")
    args = parser.parse_args()
    bound_heap()  # as the daemon's run does
    overrides: dict[str, Any] = {"vault.path": str(args.vault)}
    if args.no_deadlines:
        overrides["retrieval.progressive_search.stages"] = [
            {"name": s.name, "limit": s.limit, "timeout_ms": s.timeout_ms * 100}
            for s in Settings().retrieval.progressive_search.stages]
    loaded = load(None, None, overrides)
    if args.fake:
        from fakes import TokenHashEmbedder

        app = App.create(loaded, embedder=TokenHashEmbedder())
    else:
        app = App.create(loaded)
    print(f"{'start':28s} {'':9s}   RSS {rss():7,.0f} MB")
    step("sync (nothing to do)", app.sync)
    keeper = app.indexing.graph_keeper
    step("vault graph and its view", lambda: (keeper.graph(), keeper.step_graph()))
    step("search warm-up", app.retriever.warm)

    def first_bm25() -> None:
        began = time.perf_counter()
        snap = app.retriever.snapshot()
        while not _note_index(app.retriever._bm25, snap, 5.0).paths:
            if time.perf_counter() - began > BM25_WAIT_LIMIT_S:
                raise SystemExit("bench: no note-level BM25 index within the wait")

    step("first note-level BM25 index", first_bm25)
    if args.rebuild:
        from daemon.retrieval import _note_spec

        spec = dict(_note_spec(app.retriever.snapshot()))
        path = sorted(spec)[len(spec) // 2]
        spec[path] = (f"{spec[path][0]} edited", spec[path][1])
        step("rebuild after an edit", lambda: app.retriever._bm25._build(lambda: spec))
    print(f"CPU {sum(os.times()[:2]):.0f} s; peak RSS "
          f"{psutil.Process().memory_info().rss / 2**20:,.0f} MB")
    builder = app.retriever._bm25
    lexicon = builder._lexicon
    if lexicon is None:
        print("token lexicon: none in the heap (the saved index's tokens seed the next build)")
    else:
        arrays = sum(a.nbytes for a in lexicon.chunks.values()) / 2**20
        print(f"token lexicon: {len(lexicon.chunks):,} chunks, {arrays:,.0f} MB of arrays, "
              f"{lexicon.vocabulary_size:,} tokens")
    index = builder._last._index
    if index is not None:
        sizes = {k: f"{v.nbytes / 2**20:,.0f} MB" + (" mapped" if isinstance(v, np.memmap)
                                                      else "")
                 for k, v in index.scores.items() if hasattr(v, "nbytes")}
        print(f"note-level BM25 index: {len(builder._last.paths):,} notes, "
              f"{len(index.vocab_dict):,} tokens, {sizes}")
    if args.searches:
        searches(app, args.vault, args.searches, args.hits)

if __name__ == "__main__":
    main()
