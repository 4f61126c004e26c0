"""Vault graph figures: build, an edit's update, export and the lineage check, on a corpus.

    .venv/bin/python bench/graph_bench.py [--corpus obsidian-help] [--memories 2000]
                                          [--repeat 3] [--json OUT]

1. Copy ``--corpus`` (a folder, or a name under ``../shared/corpora``) into a temp folder, add
   ``--memories`` memory files whose frontmatter supersedes, merges into and derives from each
   other (chains of 5, every 50th chain closed into a loop by hand), and index it. The
   embedder is the tests' token-hash FAKE (``tests/support/fakes.py``): these are timings of
   the graph, not of meaning, and the real model would only make step 1 slower.
2. Read the files and links of the index (``magma.store.graph_reads``) and build the vault
   graph (``magma.vault_graph.VaultGraph.build``): medians over ``--repeat``, and the peak of
   Python allocations during one build (``tracemalloc``).
3. Keep it in step: 200 random notes upserted with their links as they are (an edit), and 50
   removed and added back (a delete, then a new file): median, p95 and max per operation.
4. Export (GraphML and node-link JSON) and the lineage check
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
    from magma.store import graph_reads
    from magma.vault_graph import VaultGraph, graph_text

    app = App.create(load(None, None, {"vault.path": str(vault)}), embedder=TokenHashEmbedder())
    started = time.perf_counter()
    app.sync()
    out: dict[str, Any] = {"corpus": corpus.name, "memories": memories,
                           "index_s": round(time.perf_counter() - started, 1)}
    reads, builds = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        files, links = graph_reads(app.store)
        t1 = time.perf_counter()
        held = VaultGraph.build(files, links)
        reads.append(1000 * (t1 - t0))
        builds.append(1000 * (time.perf_counter() - t1))
    tracemalloc.start()
    VaultGraph.build(files, links)
    out["build_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    tracemalloc.stop()
    out.update(files=len(files), links=len(links), nodes=held.graph.number_of_nodes(),
               edges=held.graph.number_of_edges(), read_ms=_ms(reads), build_ms=_ms(builds))
    by_src: dict[str, list[Any]] = {}
    for link in links:
        by_src.setdefault(link.src, []).append(link)
    rng = random.Random(7)
    notes = [f for f in files if f.kind == "note"]
    edits = []
    for file in rng.sample(notes, min(200, len(notes))):
        t = time.perf_counter()
        held.upsert(file, by_src.get(file.path, []))
        edits.append(1000 * (time.perf_counter() - t))
    renews = []
    for file in rng.sample(notes, min(50, len(notes))):
        t = time.perf_counter()
        held.remove(file.path)
        held.upsert(file, by_src.get(file.path, []))
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
