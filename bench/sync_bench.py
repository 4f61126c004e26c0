"""Sync and search figures on a real vault, each against a baseline measured in the same run.

usage: python bench/sync_bench.py [--corpus ../shared/corpora/obsidian-help] [--queries 50]

Copies the corpus to a temp folder (the shared corpus is never touched), then measures:

1. the embedder's own throughput on exactly the chunks the vault yields (baseline), and a cold
   ``dreamd sync`` (subprocess, real CLI) over the same vault: chunks/s and the ratio;
2. a second ``dreamd sync`` with nothing changed against a bare ``os.walk`` + ``stat`` of the
   vault: time, ratio, chunks embedded (must be 0);
3. touching one note (one paragraph appended) and syncing: chunks embedded vs that note's chunks;
4. ``dreamd search`` p50/p95 over ``--queries`` queries (English, Chinese, a 2-character Chinese
   query, exact identifiers), in-process through the same code the CLI uses, against a bare
   LanceDB vector query (query embedding + ``table.search(vec).limit(10)``) on the same table;
5. peak RSS of the cold sync process and the store's size on disk.

Prints a table and writes JSON to ``bench/results/sync_bench.json``. Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccb.parse import parse_note  # noqa: E402
from ccb.scan import VaultFilter, scan_vault  # noqa: E402
from magma.chunking import chunk_note  # noqa: E402
from magma.embedder import UniversalSentenceEncoder  # noqa: E402

QUERIES_EN = [
    "how to embed a note in another note", "sync conflicts between devices",
    "keyboard shortcuts for the command palette", "publish a site with a custom domain",
    "canvas cards and connections", "create a new vault",
    "search operators and regular expressions",
    "daily notes template", "graph view filters", "backlinks and outgoing links",
    "import notes from Evernote", "properties and metadata types", "callouts syntax",
    "how to install a community plugin", "end-to-end encryption of synced data",
    "format tables in markdown", "bookmarks", "workspace layouts", "link to a heading",
    "file recovery snapshots",
]
QUERIES_ZH = [
    "如何嵌入笔记", "同步冲突", "快捷键", "发布网站", "白板", "创建新仓库", "搜索语法",
    "日记模板", "关系图谱", "反向链接", "导入笔记", "属性", "标注", "第三方插件", "端到端加密",
]
QUERIES_SHORT = ["同步", "插件", "标签", "链接", "模板"]
QUERIES_EXACT = ["userIgnoreFilters", "obsidian://open", "cssclasses", "alwaysUpdateLinks",
                 "Ctrl+Shift+F", "[[Internal links]]", "app.json", "permalink", "mermaid",
                 "MathJax"]


def _dreamd(*args: str, env: dict[str, str]) -> tuple[float, float, dict[str, object]]:
    """Run the real CLI; return (seconds, peak RSS MiB of the child, parsed JSON)."""
    exe = Path(sys.executable).with_name("dreamd")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"dreamd {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024, json.loads(done.stdout)


def _stat_walk(root: Path) -> float:
    start = time.perf_counter()
    for folder, _dirs, files in os.walk(root):
        for name in files:
            (Path(folder) / name).stat()
    return time.perf_counter() - start


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/obsidian-help")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="dreamd-bench-"))
    vault = work / "vault"
    shutil.copytree(args.corpus, vault)
    env = {**os.environ, "DREAMD_STORAGE__DATA_DIR": str(work / "data"),
           "DREAMD_CONFIG": str(work / "absent.toml"), "LANCEDB_LOG": "error",
           "DREAMD_EMBEDDING__THREADS": str(args.threads)}
    results: dict[str, object] = {"corpus": str(args.corpus), "threads": args.threads}

    # 1. baseline: the embedder alone on the chunks this vault yields
    scan = scan_vault(vault, VaultFilter.for_vault(vault))
    texts = [
        chunk.embed_text
        for entry in scan.entries if entry.kind == "note"
        for chunk in chunk_note(parse_note(entry.path, (vault / entry.path).read_bytes()))
    ]
    unique = list(dict.fromkeys(texts))
    embedder = UniversalSentenceEncoder(threads=args.threads)
    embedder.embed(unique[:8])  # load the model outside the timing
    start = time.perf_counter()
    embedder.embed(unique)
    embed_s = time.perf_counter() - start
    results["chunks"] = len(texts)
    results["unique_chunks"] = len(unique)
    results["embedder_chunks_per_s"] = len(unique) / embed_s
    del embedder

    # 2. cold sync through the CLI
    cold_s, rss_mib, cold = _dreamd("sync", str(vault), "--json", env=env)
    results["cold_sync_s"] = cold_s
    cold_rate = int(cold["chunks_embedded"]) / cold_s  # type: ignore[call-overload]
    results["cold_sync_chunks_per_s"] = cold_rate
    results["cold_vs_embedder"] = cold_rate / (len(unique) / embed_s)
    results["cold_sync_peak_rss_mib"] = rss_mib
    results["cold_report"] = {k: cold[k] for k in ("added", "chunks_embedded", "files_total")}
    results["problems"] = len(cold["problems"])  # type: ignore[arg-type]

    # 3. second sync, nothing changed, against a bare stat walk (best of 3 each)
    walks = [_stat_walk(vault) for _ in range(3)]
    warm_runs = [_dreamd("sync", str(vault), "--json", env=env) for _ in range(3)]
    results["stat_walk_s"] = min(walks)
    results["warm_sync_s"] = min(r[0] for r in warm_runs)
    results["warm_sync_internal_s"] = min(float(r[2]["duration_s"]) for r in warm_runs)  # type: ignore[arg-type]
    results["warm_vs_walk"] = (
        min(float(r[2]["duration_s"]) for r in warm_runs) / min(walks)  # type: ignore[arg-type]
    )
    results["warm_chunks_embedded"] = max(int(r[2]["chunks_embedded"]) for r in warm_runs)  # type: ignore[call-overload]

    # 4. touch one note
    target = vault / "en" / "Editing and formatting" / "Basic formatting syntax.md"
    if not target.exists():
        target = next(vault.rglob("*.md"))
    note_chunks = len(chunk_note(parse_note(target.name, target.read_bytes())))
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n\nA paragraph appended by the benchmark to change one chunk.\n")
    _s, _r, touched = _dreamd("sync", str(vault), "--json", env=env)
    results["touch_one_note"] = {"note_chunks": note_chunks,
                                 "chunks_embedded": touched["chunks_embedded"],
                                 "modified": touched["modified"]}

    # 5. search latency, in-process, against a bare LanceDB query on the same table
    for key in ("DREAMD_STORAGE__DATA_DIR", "DREAMD_CONFIG", "LANCEDB_LOG"):
        os.environ[key] = env[key]
    from daemon.app import App, load

    app = App.create(load(None, None, {"vault.path": str(vault)}))
    queries = (QUERIES_EN + QUERIES_ZH + QUERIES_SHORT + QUERIES_EXACT) * 2
    queries = queries[: args.queries]
    app.search("warm up", limit=10)
    import lancedb

    table = lancedb.connect(app.store_uri).open_table("chunks")
    dreamd_ms, bare_ms = [], []
    for query in queries:
        start = time.perf_counter()
        app.search(query, limit=10)
        dreamd_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        vector = app.embedder.embed([query])[0]
        table.search(vector).limit(10).to_list()
        bare_ms.append((time.perf_counter() - start) * 1000)

    def pct(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q) - 1]

    results["search_ms"] = {"p50": statistics.median(dreamd_ms), "p95": pct(dreamd_ms, 95)}
    results["bare_lancedb_ms"] = {"p50": statistics.median(bare_ms), "p95": pct(bare_ms, 95)}
    results["search_p50_minus_bare_ms"] = statistics.median(dreamd_ms) - statistics.median(bare_ms)
    results["store_mib"] = _du(Path(app.store_uri)) / 2**20

    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sync_bench.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(json.dumps(results, indent=2, ensure_ascii=False))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
