"""The scale targets of a big vault, each against its baseline measured in the same run.

    .venv/bin/python bench/scale_bench.py [--vault DIR] [--quick] [--indexed-notes N [--spread]]
        [--baseline-chunks N] [--edits 20] [--queries 50] [--compact-above N] [--ann-above N]
        [--workdir DIR]
        [--index-with-cache [--cache-mb MB]] [--structure-only]
        [--rows restart,save,search,daemon]

``--vault`` is the big vault (``bench/big_vault.py`` writes one); without it a vault of
``--notes`` notes is written into ``--workdir`` first. The figures that need an index are
measured on an *indexed vault*: the first ``--indexed-notes`` notes of the vault in path order
(default 2,000; ``--quick`` 200; ``all`` for the whole vault), copied to ``--workdir`` and
indexed cold with the real default model; with ``--spread``, notes spread over the whole vault
instead, each with its copies (``copy-NN/`` of ``bench/big_vault.py``), so that the slice holds
the big vault's share of copies (a copy is read and parsed like any note, and embeds nothing
new). On two cores the model embeds ≈80–120 chunks/s, so
a 100,000-note vault (≈700,000 chunks) is a run of hours: the table says at which size each
figure was measured. The data folder lives in ``--workdir`` (``DREAMD_STORAGE__DATA_DIR``), the
user's dreamd is not touched, and the embedding cache is off (``embedding.cache_mb=0``) so that
the cold index embeds every chunk. A rerun with the same ``--workdir`` reuses the vault, the
indexed copy and its index (the cold-index row then says so).

``--index-with-cache`` builds the index *with* the user's embedding cache on
(``embedding.cache_mb`` left at its default, or ``--cache-mb``), for a vault too big to embed
in the time at hand (100,000 notes: ≈700,000 chunks, hours of the model): seed
``<workdir>/data/embedding-cache/use-multilingual-v3.sqlite`` with the vectors of the vault's
texts first (most of a big vault's chunks are copies, and copies are served by content hash).
The embedder-alone baseline is then skipped and the index row says how many chunks the model
embedded and how many came from the cache: it is *not* a cold figure (measure the cold rate on
a slice: ``--indexed-notes N`` in a workdir of its own). The cache stays on for the rows after
it. The index build prints its progress (reading, then embedding and writing) with the time
taken so far.

Rows (the issue's target table, ``issue 24``), each with what it is compared with:

* baselines: a bare ``os.walk`` + ``os.stat`` of the big vault and of the indexed vault (median
  of 3), ``python -c pass`` (median of 3);
* cold index: ``App.sync()`` of the indexed vault, distinct chunks embedded per second (wall)
  and the process's CPU seconds, then the embedder alone on the same chunks (the distinct
  chunk texts the index stored, what the model was given; a sample of ``--baseline-chunks``
  of them, evenly spaced in content-hash order, when there are more; ``all`` for every one)
  with the same threads and batch size, right after the index, and the ratio of the two rates
  (target ≥ 0.9); each with the load average when it ended (other work on the machine slows
  both, the model's two BLAS threads far more than the reading: at load 5–12 the model alone
  ran 8–30 chunks/s, so rates taken minutes apart do not compare). Less at the load's mercy:
  the share of the index's wall the model was at work (its calls timed), its rate inside
  those calls, and how long after the start it was first called. With ``--index-with-cache``
  the same sync with the cache on, not a cold figure (above);
* restart with nothing changed: a new ``App`` on the indexed vault plus ``sync()`` (nothing to
  do), against the stat walk of that vault (target ≤ 3×);
* save → searchable: the process first loads what the running daemon loads once it watches
  (the model, the search's snapshot, the vault graph); then ``--edits`` times, a line with a
  new word appended to a note, the note indexed, and a search that finds it; p50/p95
  (target p95 < 1 s), in three rows: the note indexed alone as the daemon's watcher does
  (``Indexing.index_now``; the running daemon adds its watcher's debounce), and by a full
  ``dreamd sync`` (``App.sync()``: a walk of the whole vault, ≥ the stat walk), both while
  the process still builds its first note-level BM25 index (a daemon's first minutes at
  100,000 notes); then the note indexed alone once that index is built;
* search warm: ``App.search`` of ``--queries`` LongMemEval questions, p50/p95 (target p95 ≤
  150 ms); recall@10 of the in-memory vector index in the form in use against exact float32
  (target ≥ 0.98), with ``--compact-above`` to force the int8 form on a small index
  (``--ann-above``: the store's IVF vector index);
* daemon RSS and idle CPU: ``python -m daemon run`` started on the indexed vault; the time and
  CPU of its start (until it watches, then until its background warm-up has loaded the model,
  the search index and the vault graph and opened the local API), then its RSS and its CPU
  time over 10 s, twice: 2 s after its API opened (the note-level BM25 index may still be
  built in the background then: 112-132% of a core at 100,000 notes), and once the process
  has been quiet for 5 s (the start's work done; the time until then and its peak RSS are
  printed) (targets ≤ 1.5 GB, < 1% of a core).

``--structure-only`` indexes and searches with the tests' FAKE token-hash embedder
(``tests/support/fakes.py``) instead of the model: what a save or a search costs in the
index's structure (tables, graph, catalogue, vectors: it grows with notes and chunks, not
with the model) measured on a vault too big to embed in the time at hand. Its figures are
NOT product figures (every row says so; the daemon row is skipped, its process would load
the model); its ``--workdir`` must be its own.

``--rows`` measures only some of the rows after the index (a rerun on an index built
before, e.g. with another checkout's code on ``PYTHONPATH``: the product code measured is
``PYTHONPATH``'s, the benches this checkout's; the header line says which).

Not measured here, and why, is printed at the end (resume after a kill, dream and check at
their targets, two devices on S3: their own benches and tests). Never fails on timings.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
#: Where the product code measured comes from: ``PYTHONPATH``'s folders first (another
#: checkout's dreamd measured with this checkout's benches), then this checkout.
PRODUCT_PATH = [*(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p), str(REPO)]
sys.path[:0] = [str(REPO / "bench"), *PRODUCT_PATH]

# dreamd's packages bound to PRODUCT_PATH before the bench modules below put this checkout
# first on sys.path (a package's submodules are then found through its own __path__)
for _package in ("ccb", "config", "consistency", "daemon", "magma"):
    importlib.import_module(_package)

import big_vault  # noqa: E402
import longmemeval_bench as lme  # noqa: E402

#: Notes indexed cold by default, and with ``--quick`` (a 2-core machine embeds ≈100 chunks/s;
#: 2,000 help/session notes are ≈20,000 chunks, a few minutes).
INDEXED_NOTES = 2_000
QUICK_NOTES = 200
#: Chunks the embedder alone embeds by default after the cold index (≈30–40 s of the model on
#: two idle cores): a sample of the index's own chunks, enough for a rate within a few percent.
BASELINE_CHUNKS = 3_000
#: A top folder of ``bench/big_vault.py`` that holds a copy of the base notes.
COPY_TOP = re.compile(r"^copy-\d+/")
#: The rows measured after the index (``--rows``).
ROWS = ("restart", "save", "search", "daemon")
#: Seconds the idle daemon's CPU time is watched.
IDLE_S = 10.0
NOT_MEASURED = (
    "cold index killed and resumed (0 chunks embedded twice): issue 24 item 3, its own test",
    "dream over 10k memories; check on 7k files: bench/dream_bench.py, bench/check_bench.py",
    "two devices on an S3 server: tests/scenarios/test_s3_store.py",
)


#: The embedder of ``--structure-only`` (empty: dreamd's model).
FAKE_EMBEDDER: list[Any] = []


@dataclasses.dataclass
class Table:
    """The printed rows: ``(figure, measured, baseline or target)``."""

    rows: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)

    def add(self, figure: str, measured: str, against: str) -> None:
        if FAKE_EMBEDDER and not figure.startswith("baseline"):
            figure = f"[structure only] {figure}"
        self.rows.append((figure, measured, against))
        print(f"  {figure:<44} {measured:<34} {against}", flush=True)


def median_s(call: Callable[[], Any], repeat: int = 3) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def stat_walk(root: Path) -> int:
    """Stat every file under ``root`` (plain ``os`` calls) -> files seen."""
    count = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.stat(os.path.join(folder, name))  # noqa: PTH116, PTH118
            count += 1
    return count


def percentiles_ms(times: Sequence[float]) -> tuple[float, float]:
    values = np.asarray(times) * 1000.0
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def point_env(work: Path, compact_above: int | None, ann_above: int | None = None,
              cache_mb: int | None = 0) -> None:
    """Send dreamd's data and config into ``work``; ``embedding.cache_mb`` at ``cache_mb``
    (0: the cache off; ``None``: the default); ``retrieval.compact_vectors_above`` and
    ``retrieval.ann_vectors_above`` when given."""
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(work / "data")
    os.environ["DREAMD_CONFIG"] = str(work / "config.toml")  # absent: defaults
    if cache_mb is not None:
        os.environ["DREAMD_EMBEDDING__CACHE_MB"] = str(cache_mb)
    if compact_above is not None:
        os.environ["DREAMD_RETRIEVAL__COMPACT_VECTORS_ABOVE"] = str(compact_above)
    if ann_above is not None:
        os.environ["DREAMD_RETRIEVAL__ANN_VECTORS_ABOVE"] = str(ann_above)


def indexed_copy(vault: Path, target: Path, notes: int | None, *, spread: bool = False) -> int:
    """Copy the first ``notes`` notes of ``vault`` (path order; all for ``None``) to
    ``target`` unless it is there already -> notes in ``target``. ``spread``: about ``notes``
    notes spread evenly over the vault instead, each with its copies (:func:`spread_slice`)."""
    if target.is_dir():
        return sum(1 for _ in target.rglob("*.md"))
    paths = sorted(p.relative_to(vault) for p in vault.rglob("*.md"))
    chosen = paths if notes is None else spread_slice(paths, notes) if spread else paths[:notes]
    for rel in chosen:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(vault / rel, target / rel)
    return len(chosen)


def spread_slice(paths: Sequence[Path], notes: int) -> list[Path]:
    """About ``notes`` of ``paths``, spread evenly over them: every k-th note of the base
    vault (the path below a ``copy-NN/`` top folder) with each of its copies, so that the
    slice holds the same share of copies as the whole. Pure; path order kept."""
    copies: dict[str, list[Path]] = {}
    for path in paths:
        copies.setdefault(COPY_TOP.sub("", path.as_posix()), []).append(path)
    step = max(1.0, len(paths) / max(notes, 1))
    keys = sorted(copies)
    chosen = {keys[int(i * step)] for i in range(int(len(keys) / step))}
    return [path for path in paths if COPY_TOP.sub("", path.as_posix()) in chosen]


def stored_chunk_texts(app: Any, sample: int | None) -> tuple[list[str], int]:
    """The embedded texts of the distinct chunks ``app``'s store holds, in content-hash order
    (as a sync batch gives them to the model), ``sample`` of them evenly spaced (all for
    ``None``) -> ``(texts, distinct chunks stored)``."""
    hashes = app.store.chunk_hashes()
    first: dict[str, str] = {}
    for chunk_id, chash in sorted(hashes.items()):
        first.setdefault(chash, chunk_id)
    order = sorted(first)
    if sample is not None and sample < len(order):
        order = [order[int(i * len(order) / sample)] for i in range(sample)]
    text = {c.chunk_id: c.text for c in app.store.chunks_by_id([first[h] for h in order])}
    return [text[first[h]] for h in order], len(first)


def embedder_alone(texts: Sequence[str], threads: int, batch: int) -> tuple[float, float]:
    """The default model alone over ``texts`` (loaded before the clock starts), ``batch``
    texts per call -> ``(chunks/s, CPU seconds)``."""
    from magma.embedder import UniversalSentenceEncoder

    model = UniversalSentenceEncoder(threads=threads, batch_size=batch)
    model.load()
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        model.embed(list(texts[start : start + batch]))
    took_s = max(time.perf_counter() - started, 1e-9)
    return len(texts) / took_s, time.process_time() - cpu


def timed_calls(embedder: Any) -> list[tuple[float, float]]:
    """From now on, ``(start, end)`` (``time.perf_counter``) of each ``embedder.embed`` call,
    appended to the list returned."""
    calls: list[tuple[float, float]] = []
    embed = embedder.embed

    def timed(texts: Sequence[str]) -> Any:
        begin = time.perf_counter()
        try:
            return embed(texts)
        finally:
            calls.append((begin, time.perf_counter()))

    embedder.embed = timed
    return calls


def load_now() -> str:
    """The 1-minute load average, for the row it follows."""
    return f"load {os.getloadavg()[0]:.1f}"


def baselines(table: Table, big: Path, indexed: Path) -> dict[str, float]:
    big_files = stat_walk(big)
    big_s = median_s(lambda: stat_walk(big))
    files = stat_walk(indexed)
    walk_s = median_s(lambda: stat_walk(indexed))
    python_s = median_s(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    table.add("baseline: stat walk, big vault", f"{big_s * 1000:.0f} ms", f"{big_files:,} files")
    table.add("baseline: stat walk, indexed vault", f"{walk_s * 1000:.0f} ms",
              f"{files:,} files")
    table.add("baseline: python -c pass", f"{python_s * 1000:.0f} ms", "")
    return {"walk_s": walk_s, "python_s": python_s}


class Ticker:
    """A sync's :class:`daemon.sync.Progress` printed every ``every`` units, with the seconds
    since the sync began."""

    def __init__(self, every: int = 5_000) -> None:
        self.every = every
        self.started = time.perf_counter()
        self.name = ""
        self.total = self.done = 0

    def phase(self, name: str, total: int) -> None:
        self.name, self.total, self.done = name, total, 0
        self._say()

    def advance(self, units: int = 1) -> None:
        before = self.done // self.every
        self.done += units
        if self.done // self.every > before or self.done == self.total:
            self._say()

    def _say(self) -> None:
        print(f"    {self.name}: {self.done:,}/{self.total:,} "
              f"({time.perf_counter() - self.started:.0f} s)", flush=True)


def make_app(indexed: Path) -> Any:
    """An App on ``indexed``, with the fake embedder under ``--structure-only``."""
    from daemon.app import App, load

    loaded = load(None, None, {"vault.path": str(indexed)})
    return App.create(loaded, embedder=FAKE_EMBEDDER[0]) if FAKE_EMBEDDER else App.create(loaded)


def structure_index(table: Table, app: Any, marker: Path) -> Any:
    """The index of ``app``'s vault with the fake embedder (``--structure-only``)."""
    started = time.perf_counter()
    report = app.sync(progress=Ticker())
    took_s = time.perf_counter() - started
    table.add(f"index, STRUCTURE ONLY ({report.added:,} notes, {took_s:.0f} s)",
              f"{report.chunks_embedded + report.chunks_reused:,} chunks",
              "fake embedder: not a product figure")
    marker.write_text(json.dumps({"notes": report.added, "seconds": round(took_s, 1),
                                  "structure_only": True}), "utf-8")
    return app


def cold_index(table: Table, indexed: Path, work: Path, *, with_cache: bool = False,
               baseline_chunks: int | None = BASELINE_CHUNKS) -> Any:
    """The cold index of ``indexed``, then the embedder alone on (a sample of
    ``baseline_chunks`` of) the chunks it embedded -> the App on it. ``with_cache``: no
    embedder alone, and the index is built with the user's embedding cache on."""
    app = make_app(indexed)
    marker = work / "indexed.json"
    if marker.is_file():
        table.add("cold index (reused from an earlier run)", marker.read_text("utf-8").strip(),
                  "rerun with a fresh --workdir to measure")
        return app
    if FAKE_EMBEDDER:
        return structure_index(table, app, marker)
    if with_cache:
        return index_with_cache(table, app, marker)
    settings = app.settings.embedding
    app.embedder.embed(["warm up"])  # the model's load is not indexing
    calls = timed_calls(app.embedder)
    started, cpu = time.perf_counter(), time.process_time()
    report = app.sync(progress=Ticker(every=25_000))
    took_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
    busy_s = sum(end - begin for begin, end in calls)
    table.add("cold index: the model at work", f"{busy_s / took_s:.0%} of the wall, "
              f"{report.chunks_embedded / max(busy_s, 1e-9):.1f} chunks/s in its calls",
              f"first call {calls[0][0] - started if calls else 0:.1f} s after the start")
    rate = report.chunks_embedded / max(took_s, 1e-9)
    table.add(f"cold index ({report.added:,} notes, {took_s:.0f} s)",
              f"{rate:.1f} chunks/s, {cpu_s:.0f} s CPU",
              f"{report.chunks_embedded:,} chunks embedded, {load_now()}")
    texts, distinct = stored_chunk_texts(app, baseline_chunks)
    alone, alone_cpu_s = embedder_alone(texts, settings.threads, settings.batch_size)
    sample = "all" if len(texts) == distinct else "a sample"
    table.add("baseline: embedder alone, same chunks", f"{alone:.1f} chunks/s, "
              f"{alone_cpu_s / len(texts) * report.chunks_embedded:.0f} s CPU for as many",
              f"{sample} ({len(texts):,} of {distinct:,}), {settings.threads} threads, "
              f"batch {settings.batch_size}, {load_now()}")
    table.add("cold index / embedder alone", f"ratio {rate / alone:.2f}", "target ≥ 0.9")
    marker.write_text(json.dumps({"notes": report.added, "seconds": round(took_s, 1),
                                  "cpu_s": round(cpu_s, 1), "chunks": report.chunks_embedded,
                                  "alone_chunks_s": round(alone, 2),
                                  "ratio": round(rate / alone, 3)}), "utf-8")
    return app


def index_with_cache(table: Table, app: Any, marker: Path) -> Any:
    """The index of ``app``'s vault built with the embedding cache on (``--index-with-cache``):
    chunks the model embedded are the cache's new rows (none is evicted below its bound)."""
    cache = app.embedding_cache
    rows_before = cache.stats()["rows"]
    app.embedder.embed(["warm up"])
    started = time.perf_counter()
    report = app.sync(progress=Ticker())
    took_s = time.perf_counter() - started
    by_model = cache.stats()["rows"] - rows_before
    stored = report.chunks_embedded + report.chunks_reused
    text = (f"{stored:,} chunks: {report.chunks_embedded:,} new to the store, "
            f"{by_model:,} of them by the model")
    table.add(f"index WITH the cache ({report.added:,} notes, {took_s:.0f} s)", text,
              "not a cold figure (--index-with-cache)")
    marker.write_text(json.dumps({
        "notes": report.added, "seconds": round(took_s, 1), "chunks": stored,
        "distinct": report.chunks_embedded, "embedded_by_model": by_model,
        "with_cache": True}), "utf-8")
    return app


def restart(table: Table, indexed: Path) -> None:
    """The restart row against a stat walk of the same vault timed beside it, run for run
    (a shared machine's load moves both alike; the walk at the run's start can be minutes
    and a load away)."""
    def again() -> None:
        app = make_app(indexed)
        app.sync()
        app.close()

    walks, restarts = [], []
    for _ in range(3):
        walks.append(median_s(lambda: stat_walk(indexed), repeat=1))
        restarts.append(median_s(again, repeat=1))
    took_s, walk_s = statistics.median(restarts), statistics.median(walks)
    table.add("restart, nothing changed (App + sync)", f"{took_s * 1000:.0f} ms, "
              f"{took_s / walk_s:.1f}× stat walk beside it ({walk_s * 1000:.0f} ms), "
              f"{load_now()}", "target ≤ 3× stat walk")


def warm_like_the_daemon(app: Any) -> None:
    """What the running daemon loads once it watches (:mod:`daemon.client_desk`), before
    the saves are timed: the model, the search's snapshot and indexes, the vault graph, then
    settled out of the collector's full collections as the daemon does."""
    from magma.gc_pause import settle_loaded

    app.search("warm up", limit=10, count_recall=False)
    app.indexing.graph_keeper.graph()
    app.indexing.graph_keeper.step_graph()
    settle_loaded()


def save_to_searchable(table: Table, app: Any, indexed: Path, edits: int) -> None:
    """Three rows: the daemon's way (the saved note indexed alone, as its watcher does:
    :meth:`daemon.indexing.Indexing.index_now`) and ``dreamd sync``'s (a full reconcile,
    a walk of the whole vault), each ``edits`` saves of other notes, timed from the write to
    a search that finds it, while the warm process still builds its first note-level BM25
    index in the background (what a daemon does for a while after its start); then the
    daemon's way again once that index is built (the daemon settled, as it is all day)."""
    warm_like_the_daemon(app)
    notes = sorted(indexed.rglob("*.md"))
    step = max(1, len(notes) // max(edits, 1))
    ways: list[tuple[str, Callable[[str], object]]] = [
        ("the saved note indexed", lambda rel: app.indexing.index_now([rel])),
        ("dreamd sync: a full reconcile", lambda _rel: app.sync()),
    ]
    building = "while the start's note-level BM25 index is built"
    for way, (label, index) in enumerate(ways):
        timed_saves(table, app, indexed, [notes[(i * step + way * (step // 2 or 1)) % len(notes)]
                                          for i in range(edits)], f"{label}, {building}", index)
    started = time.perf_counter()
    app.retriever.warm(bm25_wait_s=3600.0)
    app.retriever.wait_for_ivf(3600.0)
    waited_s = time.perf_counter() - started
    label, index = ways[0]
    timed_saves(table, app, indexed, [notes[(i * step + 2 * (step // 3 or 1)) % len(notes)]
                                      for i in range(edits)],
                f"{label}, settled: that index built {waited_s:.0f} s later", index)


def timed_saves(table: Table, app: Any, indexed: Path, notes: list[Path], label: str,
                index: Callable[[str], object]) -> None:
    """Append a new word to each of ``notes``, ``index`` it and search for it; one row of
    the p50 / p95 from the write to the answer, and how many searches missed the note."""
    times: list[float] = []
    missed = 0
    for i, note in enumerate(notes):
        rel = note.relative_to(indexed).as_posix()
        word = f"zqxscale{i:04d}{time.time_ns() % 10**9:09d}marker"
        started = time.perf_counter()
        with note.open("a", encoding="utf-8") as handle:
            handle.write(f"\n{word}\n")
        index(rel)
        hits = app.search(word, limit=10, count_recall=False)
        times.append(time.perf_counter() - started)
        missed += not any(h.path == rel for h in hits)
    p50, p95 = percentiles_ms(times)
    table.add(f"save → searchable ({label}; {len(notes)} edits, in process)",
              f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, {missed} not in the top 10",
              "target p95 < 1 s")


def search_warm(table: Table, app: Any, queries: int) -> None:
    from daemon.retrieval import _nearest
    from magma.catalogue import matrix_of
    from magma.vector_index import ExactVectors

    questions = [q["question"] for q in lme.load_oracle(big_vault.CORPORA / "longmemeval")]
    asked = questions[:queries]
    app.search(asked[0], limit=10, count_recall=False)  # warm: snapshot, model, indexes
    app.retriever.warm(bm25_wait_s=3600.0)  # settled: the start's note-level BM25 index built
    app.retriever.wait_for_ivf(3600.0)  # and the in-memory IVF trained (off the search path)
    times = []
    late = empty = 0
    for question in asked:
        started = time.perf_counter()
        hits = app.search(question, limit=10, count_recall=False)
        times.append(time.perf_counter() - started)
        trace = app.last_search_trace
        late += trace is not None and any(s.status == "skipped: deadline"
                                          for s in trace.stages)
        empty += not hits
    p50, p95 = percentiles_ms(times)
    table.add(f"search warm ({len(asked)} questions)",
              f"p50 {p50:.0f} ms, p95 {p95:.0f} ms; {late} with a stage past its deadline, "
              f"{empty} with no hit", "target p95 ≤ 150 ms")
    snap = app.retriever.snapshot()
    # every float32 row scanned, no vector index; rows in the snapshot's order (a snapshot
    # followed over the edits above keeps its own order, not the table's)
    every = app.store.chunk_vectors()
    row_of = {chunk: row for row, chunk in enumerate(every.column("chunk_id").to_pylist())}
    # a dead row of the snapshot (its chunk rewritten since: catalogue.follow_snapshot) is
    # scored -inf by both; its vector is any other row's
    matrix = matrix_of(every)[[row_of.get(chunk, 0) for chunk in snap.chunk_ids]]
    exact = dataclasses.replace(snap, chunk_vectors=ExactVectors(matrix), ann=None,
                                partitions=None)
    shares = []
    for vector in app.embedder.embed(asked):
        got = {p for p, _, _ in _nearest(snap, vector, 10, lambda _: True, False)}
        want = {p for p, _, _ in _nearest(exact, vector, 10, lambda _: True, False)}
        shares.append(len(got & want) / max(len(want), 1))
    form = snap.chunk_vectors.form + (f", {app.store.vector_index()} index"
                                       if snap.ann is not None else "") \
        + (", in-memory IVF" if snap.partitions is not None else "")
    table.add(f"recall@10 vs exact ({form}, {len(snap.chunk_vectors):,} chunks)",
              f"{np.mean(shares):.4f}", "target ≥ 0.98")


def daemon_idle(table: Table, indexed: Path, work: Path) -> None:
    """Start ``python -m daemon run`` on ``indexed``; the start (until watching, then until
    its warm-up opened the local API: model, search index and vault graph loaded), then RSS
    and CPU over IDLE_S once the start's work is done."""
    from daemon.app import App, load

    state_dir = App(load(None, None, {}), indexed.resolve()).state_dir
    log = (work / "daemon.log").open("ab")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(PRODUCT_PATH)}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "daemon", "run", str(indexed)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                            env=env, cwd=REPO)
    try:
        marks: dict[str, tuple[float, float]] = {}  # reached: (seconds, CPU seconds)
        while time.monotonic() - started < 1800 and proc.poll() is None:
            status = _read_json(state_dir / "daemon.json")
            if status.get("pid") == proc.pid:
                if status.get("state") == "watching" and "watching" not in marks:
                    marks["watching"] = (time.monotonic() - started, _proc_cpu_s(proc.pid))
                if status.get("api"):
                    marks["warm"] = (time.monotonic() - started, _proc_cpu_s(proc.pid))
                    break
            time.sleep(0.2)
        else:
            table.add("daemon RSS; idle CPU", f"daemon did not get warm ({sorted(marks)})",
                      str(work))
            return
        table.add("daemon start: watching; warm (API open)",
                  "; ".join(f"{s:.1f} s ({cpu:.1f} s CPU)" for s, cpu in marks.values()),
                  "nothing changed in the vault")
        time.sleep(2.0)  # the watcher's catch-up walk
        cpu_before, rss_mb = _proc_cpu_s(proc.pid), _proc_rss_mb(proc.pid)
        time.sleep(IDLE_S)
        share = (_proc_cpu_s(proc.pid) - cpu_before) / IDLE_S
        table.add("daemon RSS; CPU (2 s after warm)",
                  f"{rss_mb:.0f} MB; {share * 100:.2f}% of a core",
                  "the start's background work (the note-level BM25 build) may still run")
        settled_s = settle(proc.pid, started)
        cpu_before, rss_mb = _proc_cpu_s(proc.pid), _proc_rss_mb(proc.pid)
        parts = {name: _proc_rss_mb(proc.pid, f"{name}:") for name in ("RssAnon", "RssFile")}
        time.sleep(IDLE_S)
        share = (_proc_cpu_s(proc.pid) - cpu_before) / IDLE_S
        # RssFile: mapped files' pages (the int8 rows beside the vector index, the saved
        # note-level BM25 index), which the kernel may drop and read again
        table.add("daemon RSS; idle CPU (start's work done)",
                  f"{rss_mb:.0f} MB (" + ", ".join(f"{k} {v:.0f}" for k, v in parts.items())
                  + f"); {share * 100:.2f}% of a core",
                  f"settled {settled_s:.0f} s after the start "
                  f"({_proc_cpu_s(proc.pid):.0f} s CPU by then), peak RSS "
                  f"{_proc_rss_mb(proc.pid, 'VmHWM:'):.0f} MB; targets ≤ 1.5 GB; < 1%")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_rss_mb(pid: int, field: str = "VmRSS:") -> float:
    """A memory ``field`` of ``/proc/PID/status`` (``VmRSS:`` now, ``VmHWM:`` its peak), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


#: The daemon's start is done once it used less than this share of a core over
#: :data:`SETTLE_WINDOW_S` (our choice: well above an idle process's, well below a build's).
SETTLE_SHARE = 0.05
SETTLE_WINDOW_S = 5.0


def settle(pid: int, started: float, limit_s: float = 1800.0) -> float:
    """Wait until process ``pid`` is quiet (:data:`SETTLE_SHARE` of a core over
    :data:`SETTLE_WINDOW_S`), at most ``limit_s`` seconds after ``started``
    (``time.monotonic()``) -> seconds since ``started``."""
    while time.monotonic() - started < limit_s:
        before = _proc_cpu_s(pid)
        time.sleep(SETTLE_WINDOW_S)
        if _proc_cpu_s(pid) - before < SETTLE_SHARE * SETTLE_WINDOW_S:
            break
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, help="the big vault (default: written here)")
    parser.add_argument("--notes", type=int, default=big_vault.DEFAULT_NOTES)
    parser.add_argument("--quick", action="store_true", help="small index, few edits/queries")
    parser.add_argument("--indexed-notes", default=None, help="notes indexed cold, or 'all'")
    parser.add_argument("--spread", action="store_true",
                        help="the indexed notes spread over the vault, each with its copies")
    parser.add_argument("--baseline-chunks", default=str(BASELINE_CHUNKS),
                        help="chunks of the index the embedder alone embeds, or 'all'")
    parser.add_argument("--edits", type=int, default=None)
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--compact-above", type=int, default=None,
                        help="retrieval.compact_vectors_above for this run")
    parser.add_argument("--ann-above", type=int, default=None,
                        help="retrieval.ann_vectors_above for this run")
    parser.add_argument("--no-daemon", action="store_true", help="skip the daemon RSS row")
    parser.add_argument("--rows", default=",".join(ROWS),
                        help=f"rows measured after the index, of {','.join(ROWS)}")
    parser.add_argument("--index-with-cache", action="store_true",
                        help="build the index with the embedding cache on (not a cold figure)")
    parser.add_argument("--cache-mb", type=int, default=None,
                        help="embedding.cache_mb with --index-with-cache (default: dreamd's)")
    parser.add_argument("--structure-only", action="store_true",
                        help="the fake token-hash embedder: NOT product figures")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = set(args.rows.split(","))
    if unknown := rows - set(ROWS):
        parser.error(f"--rows: no row {', '.join(sorted(unknown))} (rows: {', '.join(ROWS)})")
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="dreamd-scale-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    point_env(work, args.compact_above, args.ann_above,
              cache_mb=args.cache_mb if args.index_with_cache else 0)
    from daemon.logs import configure_logging

    configure_logging(level="warning")
    big = args.vault or work / "vault"
    if args.vault is None and not big.is_dir():
        big_vault.main([str(big), "--notes", str(args.notes)])
    wanted = args.indexed_notes or str(QUICK_NOTES if args.quick else INDEXED_NOTES)
    indexed = work / f"indexed-{wanted}{'-spread' if args.spread else ''}"
    notes = indexed_copy(big, indexed, None if wanted == "all" else int(wanted),
                         spread=args.spread)
    product = Path(sys.modules["daemon"].__file__ or "?").parent.parent
    print(f"scale bench: big vault {big}, indexed vault {notes:,} notes ({indexed}), "
          f"{os.cpu_count()} cores, dreamd from {product}, {load_now()}")
    if args.structure_only:
        sys.path.insert(0, str(REPO / "tests" / "support"))
        from fakes import TokenHashEmbedder

        FAKE_EMBEDDER.append(TokenHashEmbedder())
        print("STRUCTURE ONLY: the tests' fake token-hash embedder, not the model; "
              "these are NOT product figures")
    table = Table()
    baselines(table, big, indexed)
    app = cold_index(table, indexed, work, with_cache=args.index_with_cache,
                     baseline_chunks=None if args.baseline_chunks == "all"
                     else int(args.baseline_chunks))
    if "restart" in rows:
        restart(table, indexed)
    if "save" in rows:
        save_to_searchable(table, app, indexed, args.edits or (5 if args.quick else 20))
    if "search" in rows:
        search_warm(table, app, args.queries or (10 if args.quick else 50))
    app.close()
    if "daemon" in rows and not args.no_daemon and not args.structure_only:
        daemon_idle(table, indexed, work)
    print("not measured by this script:")
    for line in NOT_MEASURED:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
