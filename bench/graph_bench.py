"""Vault graph figures: build, an edit's update, memory, the edges table, export and the
lineage check, on a corpus, against a bare stat walk of the same vault in the same run.

    .venv/bin/python bench/graph_bench.py [--corpus obsidian-help] [--memories 2000]
                                          [--repeat 3] [--json OUT]

1. Copy ``--corpus`` (a folder, or a name under ``../shared/corpora``) into a temp folder, add
   ``--memories`` memory files whose frontmatter supersedes, merges into and derives from each
   other (chains of 5, every 50th chain closed into a loop by hand), and index it. The
   embedder is the tests' token-hash FAKE (``tests/support/fakes.py``): these are timings of
   the graph, not of meaning, and the real model would only make step 1 slower.
2. The baseline: a bare stat walk of the vault copy (``os.walk`` + ``os.stat`` of every
   file, what a restart with nothing changed costs). Then the cold build the daemon does:
   read the files, links and memory chunks of the index (``magma.store.graph_reads``,
   ``magma.graph_keeper.memory_texts``) and build the vault graph
   (``magma.vault_graph.VaultGraph.build``): medians over ``--repeat``; the peak of Python
   allocations during one build and what the graph keeps once built (``tracemalloc``), and
   the growth of the process's resident set over that build (``/proc/self/statm``).
3. Keep it in step: 200 random notes upserted with their links as they are (an edit), and 50
   removed and added back (a delete, then a new file): median, p95 and max per operation.
4. The edges table (``magma.graph_keeper.GraphKeeper``; the sync of step 1 wrote it): a
   new keeper's ``follow`` (in step: reads the fingerprint, builds nothing), its ``build``
   (what the daemon's warm-up does: read, build, rewrite the table; wall and CPU time), then
   20 notes edited on disk (a line and a link appended), each indexed by the vault's syncer
   and followed by the keeper: its whole ``follow`` (the read of the changed rows, the
   graph update, the table write), and the graph update and the table write alone.
   CPU times are given beside wall times: the machine is shared (its load average is
   printed), and wall times grow with its load.
5. Export (GraphML and node-link JSON) and the lineage check
   (``consistency.graph_checks.graph_drifts``) on the built graph.

Prints one line per figure and writes JSON to ``--json`` (default
``bench/results/graph_bench.json``). Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

from harness_loader import isolated_base

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

CORPORA = ROOT.parent / "shared" / "corpora"
RESULTS = ROOT / "bench" / "results" / "graph_bench.json"
#: Memories per planted chain: m0 ← supersedes m1 ← merged into m2 … (see ``_memories``).
CHAIN = 5


def _corpus(value: str) -> Path:
    for candidate in (Path(value).expanduser(), CORPORA / value):
        if candidate.is_dir():
            return candidate.resolve()
    raise SystemExit(f"--corpus {value}: no such folder (nor {CORPORA / value})")


def _memories(count: int) -> list[tuple[str, str]]:
    """``count`` memory files ``(vault path, text)`` in chains of :data:`CHAIN`: each
    supersedes the one before, every third is merged into the next, the last of a chain
    derives from the first; every 50th chain's first supersedes its last (a loop)."""
    files = []
    for n in range(count):
        chain, at = divmod(n, CHAIN)
        lines = [f"name: Bench memory {n}", "type: project",
                 f"created: 2026-01-{1 + at:02d}T09:00:00Z"]
        if at > 0:
            lines.append(f'supersedes: "[[bench-{n - 1}]]"')
        if at % 3 == 2 and at + 1 < CHAIN:
            lines.append(f'merged_into: "[[bench-{n + 1}]]"')
        if at == CHAIN - 1:
            lines.append(f'derived_from: "[[bench-{n - at}]]"')
        if at == 0 and chain % 50 == 0:
            lines.append(f'superseded_by: "[[bench-{n}]]"')  # a loop written by hand
        files.append((f"Memory/bench-{n}.md",
                      "---\n" + "\n".join(lines) + f"\n---\nBench memory {n}.\n"))
    return files


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 3),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
            "max": round(ordered[-1], 3)}


def _stat_walk(root: Path) -> int:
    """Stat every file under ``root`` (no reading): the files seen."""
    seen = 0
    for folder, _, names in os.walk(root):
        for name in names:
            os.stat(os.path.join(folder, name))  # noqa: PTH116, PTH118 - the bare walk
            seen += 1
    return seen


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _keeper(app: Any, vault: Path, notes: list[Any]) -> dict[str, Any]:
    """Step 4 of the module docstring."""
    from magma.edge_table import read_graph
    from magma.graph_keeper import GraphKeeper
    from magma.snippet_store import SnippetStore

    out: dict[str, Any] = {}
    # a keeper as the daemon makes one (diary snippets followed); the sync's own keeper
    # wrote the table already
    keeper = GraphKeeper(app.store, snippets=lambda: SnippetStore.open(app.store_uri))
    t = time.perf_counter()
    again = keeper.follow()
    out["table_in_step_check_ms"] = round(1000 * (time.perf_counter() - t), 1)
    out["table_in_step_built"] = again.built
    t, c = time.perf_counter(), time.process_time()
    first = keeper.build()  # what the daemon's warm-up does: read, build, rewrite the table
    out["keeper_build_ms"] = round(1000 * (time.perf_counter() - t))
    out["keeper_build_cpu_ms"] = round(1000 * (time.process_time() - c))
    out["keeper_read_and_graph_ms"] = round(first.graph_ms)
    out["keeper_table_write_ms"] = round(first.write_ms)
    out["table_rows"] = first.rows
    t = time.perf_counter()
    read_graph(app.store)
    out["table_read_graph_ms"] = round(1000 * (time.perf_counter() - t))
    syncer = app.make_syncer().syncers[0]  # the vault's, without the keeper's hook
    follows, graphs, writes, syncs = [], [], [], []
    for file in random.Random(11).sample(notes, min(20, len(notes))):
        target = vault / file.path
        with target.open("a", encoding="utf-8") as handle:
            handle.write(f"\nEdited for the graph bench, see [[{notes[0].title}]].\n")
        t = time.perf_counter()
        syncer.sync_paths([file.path])
        t1 = time.perf_counter()
        update = keeper.follow()
        follows.append(1000 * (time.perf_counter() - t1))
        syncs.append(1000 * (t1 - t))
        graphs.append(update.graph_ms)
        writes.append(update.write_ms)
    out.update(edit_index_sync_ms=_ms(syncs), edit_follow_ms=_ms(follows),
               edit_graph_update_ms=_ms(graphs), edit_table_write_ms=_ms(writes))
    return out


def run(corpus: Path, memories: int, repeat: int) -> dict[str, Any]:
    base = isolated_base("graph-bench-")
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(base / "data")
    os.environ["DREAMD_CONFIG"] = str(base / "config.toml")
    vault = base / "vault"
    shutil.copytree(corpus, vault, symlinks=True)
    for path, text in _memories(memories):
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")

    from fakes import TokenHashEmbedder

    from consistency.graph_checks import graph_drifts
    from daemon.app import App, load
    from magma.graph_keeper import memory_texts
    from magma.store import graph_reads
    from magma.vault_graph import VaultGraph, graph_text

    app = App.create(load(None, None, {"vault.path": str(vault)}), embedder=TokenHashEmbedder())
    started = time.perf_counter()
    app.sync()
    out: dict[str, Any] = {"corpus": corpus.name, "memories": memories,
                           "index_s": round(time.perf_counter() - started, 1)}
    walks, reads, builds, colds, cpus = [], [], [], [], []
    for _ in range(repeat):
        t = time.perf_counter()
        walked = _stat_walk(vault)
        walks.append(1000 * (time.perf_counter() - t))
        t0, c0 = time.perf_counter(), time.process_time()
        files, links = graph_reads(app.store)
        texts = memory_texts(app.store)
        t1 = time.perf_counter()
        held = VaultGraph.build(files, links, texts)
        reads.append(1000 * (t1 - t0))
        builds.append(1000 * (time.perf_counter() - t1))
        colds.append(1000 * (time.perf_counter() - t0))
        cpus.append(1000 * (time.process_time() - c0))
    del held
    rss = _rss_mb()
    tracemalloc.start()
    held = VaultGraph.build(files, links, texts)
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out.update(build_peak_mb=round(peak / 2**20, 1), graph_kept_mb=round(kept / 2**20, 1),
               build_rss_growth_mb=round(_rss_mb() - rss, 1))
    out.update(files=len(files), links=len(links), memory_texts=len(texts),
               nodes=held.graph.number_of_nodes(), edges=held.graph.number_of_edges(),
               relations=dict(sorted(Counter(d["relation"] for *_, d in
                                             held.graph.edges(data=True)).items())),
               stat_walk_files=walked, stat_walk_ms=_ms(walks), read_ms=_ms(reads),
               build_ms=_ms(builds), cold_read_and_build_ms=_ms(colds),
               cold_read_and_build_cpu_ms=_ms(cpus))
    by_src: dict[str, list[Any]] = {}
    for link in links:
        by_src.setdefault(link.src, []).append(link)
    rng = random.Random(7)
    notes = [f for f in files if f.kind == "note"]
    edits = []
    for file in rng.sample(notes, min(200, len(notes))):
        t = time.perf_counter()
        held.upsert(file, by_src.get(file.path, []), texts.get(file.path))
        edits.append(1000 * (time.perf_counter() - t))
    renews = []
    for file in rng.sample(notes, min(50, len(notes))):
        t = time.perf_counter()
        held.remove(file.path)
        held.upsert(file, by_src.get(file.path, []), texts.get(file.path))
        renews.append(1000 * (time.perf_counter() - t))
    out.update(edit_ms=_ms(edits), remove_and_add_ms=_ms(renews))
    for fmt in ("graphml", "json"):
        t = time.perf_counter()
        text = graph_text(held.graph, fmt)  # type: ignore[arg-type]
        out[f"{fmt}_ms"] = round(1000 * (time.perf_counter() - t))
        out[f"{fmt}_mb"] = round(len(text.encode("utf-8")) / 2**20, 1)
    t = time.perf_counter()
    drifts = graph_drifts(held.graph)
    out["check_ms"] = round(1000 * (time.perf_counter() - t))
    out["lineage_drift"] = len(drifts)
    out.update(_keeper(app, vault, notes))
    out["load_average"] = os.getloadavg()  # the machine is shared: wall times scale with it
    app.close()
    shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="obsidian-help")
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args()
    from daemon.logs import configure_logging

    configure_logging("warning", "console")
    result = run(_corpus(args.corpus), args.memories, args.repeat)
    for key, value in result.items():
        print(f"{key:>18}: {value}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
