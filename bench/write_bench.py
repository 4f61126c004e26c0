"""Writes per second through the single writer, and memory_search latency over MCP.

usage: python bench/write_bench.py [--corpus ../shared/corpora/obsidian-help/en] [--writes 100]
                                   [--queries 30]

Copies the corpus to a temp folder and indexes it (real CLI, real embedding model), then:

1. **the writer queue**: ``--writes`` new memory files through ``NoteWriter.write``
   (compare-before-write, lost-update journal, atomic swap, fsync) — writes/s — against the
   baseline of embedding each memory's chunks with the model (what indexing that write costs
   at least); the write path must not be slower: ratio writer time / embedding time < 1;
2. **remember end to end**: ``MemoryService.remember`` for ``--writes`` distinct facts (secret
   check, duplicate decision with the draft's embedding, write, MEMORY.md rebuild, indexing)
   — memories/s;
3. **memory_search over MCP**: ``dreamd mcp`` as a stdio subprocess driven by the MCP client
   library, ``--queries`` searches, p50/p95 — against the same searches in-process
   (``App.search``) as the baseline; the difference is the protocol's cost.

Prints a table and writes JSON to ``bench/results/write_bench.json``. Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERIES = [
    "how to embed a note in another note", "sync conflicts between devices",
    "keyboard shortcuts for the command palette", "publish a site with a custom domain",
    "canvas cards and connections", "daily notes template", "graph view filters",
    "properties and metadata types", "callouts syntax", "community plugins",
    "如何同步笔记", "快捷键", "link to a heading", "bookmarks", "workspace layouts",
]
FACTS = [
    "The {n}th build of the kiln controller needs a 30 s timeout on the serial port.",
    "Project {n} ships its releases on the first Tuesday of the month.",
    "Reference {n}: the glaze recipes live in binder number {n} on the studio shelf.",
    "Always run the migration check before deploying service {n}.",
]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path,
                        default=ROOT.parent / "shared" / "corpora" / "obsidian-help" / "en")
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="dreamd-write-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMD_")}
    env |= {"DREAMD_STORAGE__DATA_DIR": str(base / "data"),
            "DREAMD_CONFIG": str(base / "config.toml"), "LANCEDB_LOG": "error"}
    os.environ.clear()
    os.environ.update(env)
    vault = base / "vault"
    shutil.copytree(args.corpus, vault, symlinks=True)
    dreamd = Path(sys.executable).with_name("dreamd")
    subprocess.run([str(dreamd), "sync", str(vault)], check=True, capture_output=True)

    from ccb.memory_file import NewMemory, render_memory
    from ccb.parse import parse_note
    from daemon.app import App, load
    from magma.chunking import chunk_note

    app = App.create(load(None, None, {"vault.path": str(vault)}))
    embedder = app.embedder
    embedder.embed(["warm up"])
    from datetime import UTC, datetime

    from ulid import ULID

    files = []
    for n in range(args.writes):
        now = datetime.now(UTC)
        text = FACTS[n % len(FACTS)].format(n=n)
        data = render_memory(NewMemory(
            name=f"Bench memory {n}", description=text[:80], type="project",
            id=str(ULID()), created=now, updated=now, body=text + "\n"))
        files.append((f"Memory/bench-memory-{n}.md", data))

    started = time.perf_counter()
    for path, data in files:
        chunks = chunk_note(parse_note(path, data))
        embedder.embed([c.embed_text for c in chunks])
    embed_s = time.perf_counter() - started

    writer = app.writer
    started = time.perf_counter()
    for path, data in files:
        writer.write(path, data, base=None)
    write_s = time.perf_counter() - started

    service = app.memories()
    started = time.perf_counter()
    for n in range(args.writes):
        service.remember(FACTS[n % len(FACTS)].format(n=n + 10_000) + f" (case {n})",
                         type="project", subject=f"bench.case-{n}")
    remember_s = time.perf_counter() - started

    queries = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]
    app.store.refresh()
    in_process = []
    for query in queries:
        t = time.perf_counter()
        app.search(query, limit=10)
        in_process.append((time.perf_counter() - t) * 1000)
    over_mcp = _mcp_latencies(dreamd, vault, queries)

    result: dict[str, Any] = {
        "corpus": str(args.corpus), "writes": args.writes,
        "writer_writes_per_s": args.writes / write_s,
        "writer_ms_per_write": write_s / args.writes * 1000,
        "embed_ms_per_memory": embed_s / args.writes * 1000,
        "writer_vs_embedding": write_s / embed_s,
        "remember_per_s": args.writes / remember_s,
        "remember_ms_per_memory": remember_s / args.writes * 1000,
        "search_in_process_ms": {"p50": statistics.median(in_process),
                                 "p95": _pct(in_process, 0.95)},
        "memory_search_mcp_ms": {"p50": statistics.median(over_mcp),
                                 "p95": _pct(over_mcp, 0.95)},
    }
    for key, value in result.items():
        print(f"{key:28} {value if not isinstance(value, float) else round(value, 2)}")
    out = ROOT / "bench" / "results" / "write_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    shutil.rmtree(base, ignore_errors=True)
    return 0


def _mcp_latencies(dreamd: Path, vault: Path, queries: list[str]) -> list[float]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> list[float]:
        params = StdioServerParameters(command=str(dreamd), args=["mcp", "--vault", str(vault)],
                                       env=dict(os.environ))
        out: list[float] = []
        with open(os.devnull, "w") as devnull:
            async with (stdio_client(params, errlog=devnull) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                await session.call_tool("memory_search", {"query": "warm up", "limit": 10})
                for query in queries:
                    t = time.perf_counter()
                    result = await session.call_tool("memory_search",
                                                      {"query": query, "limit": 10})
                    out.append((time.perf_counter() - t) * 1000)
                    assert not result.is_error, result.content
        return out

    return anyio.run(run)


if __name__ == "__main__":
    sys.exit(main())
