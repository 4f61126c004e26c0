"""What the note-level BM25 index costs to build, first and again, on an indexed vault.

    .venv/bin/python bench/note_bm25_rebuild.py VAULT [--data-dir DIR] [--fake-embedder]
        [--repeat 3]

Opens the index of ``VAULT`` (``--data-dir``: its state folder, else the user's), takes the
search's snapshot and builds the note-level BM25 index of it (:mod:`magma.note_bm25`) once
from nothing (every chunk's body read from the store and tokenised) and ``--repeat`` times
again (the tokens kept by content hash: what a new snapshot costs after a save). Prints
wall and CPU seconds of each, beside the baseline of the same run: ``python -c pass``.
``--queries N`` then times ``App.search`` (limit 10, warm process) over N questions made from
the vault's note titles ("how do I use <title>"), with the note-level list on and off in
turns (each query asked both ways, the order alternating): p50 / p95 of each — the list's
cost on the search path.
``--fake-embedder`` opens the index with the tests' token-hash embedder (the builds never
embed; it only spares loading the model). Nothing is written, but with ``--saved DIR`` (a
folder of its own, emptied first): the index is then saved there as the daemon saves it
(:mod:`magma.note_bm25_files`), and the runs are a first build (bodies read, saved), a start
that reads it back, and ``--repeat`` rebuilds after an edit (one note's title changed each
time) by a process that started from the saved index: its chunks' tokens read from the
saved files, the new index saved again.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def written() -> tuple[int, int]:
    """``(wchar, write_bytes)`` of this process so far (``/proc/self/io``: bytes handed to
    ``write`` calls, bytes sent to the storage layer); ``(0, 0)`` where there is none."""
    try:
        fields = dict(line.split(": ") for line in
                      Path("/proc/self/io").read_text().splitlines())
    except OSError:
        return 0, 0
    return int(fields["wchar"]), int(fields["write_bytes"])


def timed(step: object) -> tuple[float, float]:
    """``(wall s, CPU s)`` of calling ``step``."""
    wall, cpu = time.perf_counter(), time.process_time()
    step()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu


def search_latency(app: object, snap: object, count: int) -> None:
    """p50 / p95 of ``App.search`` with the note-level list on and off, asked in turns."""
    import random
    import statistics

    from daemon import rerank

    titles = sorted({Path(p).stem for p in snap.entries})  # type: ignore[attr-defined]
    queries = [f"how do I use {t.lower()}" for t in random.Random(3).sample(
        titles, min(count, len(titles)))]
    weight = rerank.LIST_WEIGHTS["note-bm25"]
    weights = rerank.LIST_WEIGHTS  # a dict: the search reads it on each call
    times: dict[bool, list[float]] = {True: [], False: []}
    for query in queries[:5]:
        app.search(query, limit=10, count_recall=False)  # type: ignore[attr-defined]
    for i, query in enumerate(queries):
        for on in ((True, False) if i % 2 == 0 else (False, True)):
            weights["note-bm25"] = weight if on else 0.0  # type: ignore[index]
            started = time.perf_counter()
            app.search(query, limit=10, count_recall=False)  # type: ignore[attr-defined]
            times[on].append((time.perf_counter() - started) * 1000)
    weights["note-bm25"] = weight  # type: ignore[index]
    for on in (True, False):
        ordered = sorted(times[on])
        p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
        print(f"search, note list {'on ' if on else 'off'} ({len(ordered)} queries)   "
              f"p50 {statistics.median(ordered):6.1f} ms  p95 {p95:6.1f} ms")


def saved_runs(app: Any, snap: Any, folder: Path, repeat: int) -> None:
    """First build and save, a start that reads the saved index, rebuilds after edits."""
    import shutil

    from daemon.retrieval import _note_spec
    from magma.note_bm25 import NoteBm25Builder
    from magma.note_bm25_files import NoteBm25Files

    shutil.rmtree(folder, ignore_errors=True)
    spec = dict(_note_spec(snap))
    print(f"notes in the snapshot: {len(snap.entries):,}, chunks: {len(snap.chunk_paths):,}")

    def run(name: str, notes: Any) -> None:
        builder = NoteBm25Builder(app.store.chunk_bodies, NoteBm25Files(folder))
        before = written()
        wall, cpu = timed(lambda: builder._build(lambda: notes))
        after = written()
        mapped = builder._saved is not None and builder._last._index is builder._saved.index
        print(f"{name:34s}{wall:7.2f} s wall {cpu:7.2f} s CPU"
              f"  written {(after[0] - before[0]) / 1e6:7.1f} MB"
              f" (to disk {(after[1] - before[1]) / 1e6:7.1f} MB)"
              f"{'  (served mapped)' if mapped else ''}")
        if builder._held is not None:  # (held: magma.note_bm25.SAVE_GAP_S) saved as due
            before = written()
            wall, cpu = timed(builder._save_held_now)
            after = written()
            print(f"{'  then its save':34s}{wall:7.2f} s wall {cpu:7.2f} s CPU"
                  f"  written {(after[0] - before[0]) / 1e6:7.1f} MB"
                  f" (to disk {(after[1] - before[1]) / 1e6:7.1f} MB)")
        builder.close()

    run("first build (bodies read, saved)", spec)
    run("start (saved index read)", spec)
    edited = sorted(spec)
    for n in range(1, repeat + 1):
        path = edited[n * 997 % len(edited)]
        label, hashes = spec[path]
        spec[path] = (f"{label} edited {n}", hashes)
        run(f"rebuild {n} after an edit (saved)", spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--fake-embedder", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--queries", type=int, default=0)
    parser.add_argument("--saved", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.data_dir is not None:
        os.environ["DREAMD_STORAGE__DATA_DIR"] = str(args.data_dir)

    from daemon.app import App, load
    from daemon.logs import configure_logging
    from daemon.retrieval import _note_spec
    from magma.note_bm25 import NoteBm25Builder

    configure_logging(level="warning")
    embedder = None
    if args.fake_embedder:
        sys.path.insert(0, str(ROOT / "tests" / "support"))
        from fakes import TokenHashEmbedder

        embedder = TokenHashEmbedder()
    app = App.create(load(None, None, {"vault.path": str(args.vault)}), embedder=embedder)
    if not app.indexing.is_indexed():
        print(f"{args.vault} is not indexed under this state folder", file=sys.stderr)
        return 2
    snap = app.retriever.snapshot()
    if args.saved is not None:
        saved_runs(app, snap, args.saved, args.repeat)
        app.close()
        return 0
    builder = NoteBm25Builder(app.store.chunk_bodies)

    def build() -> None:
        builder._build(lambda: _note_spec(snap))  # the build thread's own step

    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    print(f"baseline: python -c pass          {time.perf_counter() - started:7.2f} s wall")
    print(f"notes in the snapshot: {len(snap.entries):,}, chunks: {len(snap.chunk_paths):,}")
    wall, cpu = timed(build)
    print(f"first build (bodies read)         {wall:7.2f} s wall {cpu:7.2f} s CPU")
    for run in range(1, args.repeat + 1):
        wall, cpu = timed(build)
        print(f"rebuild {run} (tokens kept)          {wall:7.2f} s wall {cpu:7.2f} s CPU")
    if args.queries:
        search_latency(app, snap, args.queries)
    app.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
