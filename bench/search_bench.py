"""Search latency on the 6,000-note vault plus 1,000 memories, warm process, no LLM.

usage: .venv/bin/python bench/search_bench.py [--workdir DIR]
       [--corpus ../shared/corpora/obsidian-help] [--memories 1000] [--queries 200]
       [--cli-runs 3] [--json bench/results/search_bench.json]

Vault: a copy of ``--corpus`` (default the Obsidian help vault, all 34 languages, 5,914 notes)
plus ``--memories`` memory files from ``bench/memory_set.py`` (seed 7) in the vault's memory
folder (``vault.memory_folder``, ``Memory/``). Indexed once with the default embedding model
into ``<workdir>`` (default ``$TMPDIR/dreamd-search-bench``); a later run with the same corpus
and count reuses it (a warm sync, a stat walk, checks it is current). The cold index takes
about 10 minutes on 2 cores.

Method, in ONE process after the index:

1. Warm up with 5 queries (not measured).
2. ~200 queries, ``App.search(q, limit=10, count_recall=False)``, timed end to end with
   ``time.perf_counter``: ~60 English note-title-ish queries (from ``en/`` titles, lightly
   reworded), ~40 Chinese (``zh/`` titles and hand-written questions), ~60 built from the
   generated memories (half their description reworded as a question, "remind me: who to ask
   about …?", half their subject's words in a template by type: "what do I prefer for …",
   "any rule about …", "status of …", "where do I find …"; a Chinese memory: part of its
   description), ~40 free questions ("how do I
   embed a file", "what did I decide last week about the API", "never do X?").
3. Per stage, from ``app.last_search_trace`` when the tree has it: p50/p95 of ``elapsed_ms``
   where the stage ran, and how often each status occurred (``ran``, ``skipped: deadline``,
   ``skipped: confident``, ``off``, …).
4. Baseline in the same loop: ``magma.search.hybrid_search(app.store, app.embedder, q,
   limit=10)`` (plain vector + full text + RRF, no pipeline); which of the two runs first
   alternates per query, so neither gets the other's warm caches systematically.
5. Cold CLI: wall time of ``dreamd search Q --vault VAULT --json`` in a fresh process
   (interpreter start, imports, model load, first search), ``--cli-runs`` runs, median
   (the CLI counts its hits as recalls in the bench's own store; nothing else is written).

Target: p95 < 150 ms end to end, warm process, no LLM. Prints a markdown table and writes
JSON to ``bench/results/search_bench.json``. Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from memory_set import generate  # noqa: E402

from ccb.parse import parse_note  # noqa: E402
from daemon.app import App, load  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402
from magma.search import hybrid_search  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-help"
TARGET_P95_MS = 150.0
WARMUP = ["getting started", "同步", "what do I prefer", "how do I link notes", "plugins"]

ZH_QUESTIONS = [
    "如何嵌入笔记", "同步冲突怎么办", "快捷键怎么设置", "怎样发布网站", "白板怎么用", "创建新仓库",
    "搜索语法有哪些", "日记模板", "关系图谱", "反向链接是什么", "从印象笔记导入", "属性的类型",
    "标注怎么写", "安装第三方插件", "端到端加密", "表格格式", "如何恢复删除的文件",
    "移动端如何同步", "上周关于接口的决定", "千万不要做什么",
]
FREE_QUESTIONS = [
    "how do I embed a file", "what did I decide last week about the API",
    "never force push?", "how do I link to a heading in another note",
    "what are my rules for tests", "which editor do I prefer", "can I sync without iCloud",
    "what happened yesterday", "how to make a table", "what's the shortcut to open settings",
    "how do I publish only some notes", "where are my attachments stored",
    "always use a real database?", "never log personal data?", "how to write math formulas",
    "what do I prefer for code review", "can I recover a deleted note",
    "how do templates work", "what did we agree on about deployments",
    "is there a rule about timeouts", "how do I change the theme", "what was decided about caching",
    "how do I move notes between vaults", "why did the build fail last time",
    "how to create a canvas", "what are the reference docs for the payments api",
    "how do tags differ from properties", "what's pending on the billing project",
    "how do I use the command palette", "should I use tabs or spaces", "how do I split the editor",
    "what do I like for breakfast", "when is the next release", "how to add an alias to a note",
    "never do X?", "what are the limits of Obsidian Sync", "how do I query notes with bases",
    "how do I import from Notion", "what should I remember about the ledger service",
    "how do backlinks work",
]
TEMPLATES = {
    "user": ["what do I prefer for {s}", "my preference on {s}", "how do I like {s}"],
    "feedback": ["any rule about {s}?", "what should I never do with {s}", "rules for {s}"],
    "project": ["status of {s}", "what was decided about {s}", "what's going on with {s}"],
    "reference": ["where do I find {s}", "docs for {s}", "link to {s}"],
}


# --------------------------------------------------------------------------- preparing


def _titles(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.rglob("*.md")) if folder.is_dir() else []


def prepare(workdir: Path, corpus: Path, count: int, seed: int) -> dict[str, Any]:
    """Copy the corpus, generate the memories and index them, once per (corpus, count)."""
    vault, marker = workdir / "vault", workdir / "prepared.json"
    wanted = {"corpus": str(corpus.resolve()), "memories": count, "seed": seed}
    if marker.exists():
        done = json.loads(marker.read_text())
        if {k: done.get(k) for k in wanted} == wanted:
            app = App.create(load(None, None, {"vault.path": str(vault)}))
            started = time.perf_counter()
            report = app.sync()
            done["reused"] = True
            done["warm_sync_s"] = round(time.perf_counter() - started, 2)
            done["warm_sync_changed"] = report.added + report.modified + report.deleted
            return done
    for part in ("vault", "data"):
        shutil.rmtree(workdir / part, ignore_errors=True)
    marker.unlink(missing_ok=True)
    print(f"preparing: copying {corpus} and generating {count} memories…", flush=True)
    shutil.copytree(corpus, vault)
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    generate(vault, count=count, seed=seed, memory_folder=app.settings.vault.memory_folder)
    started = time.perf_counter()
    report = app.sync()
    index_s = time.perf_counter() - started
    done = {**wanted, "files": report.files_total, "chunks_embedded": report.chunks_embedded,
            "index_s": round(index_s, 1)}
    marker.write_text(json.dumps(done, indent=1))
    print(f"indexed {report.files_total} files ({report.chunks_embedded} chunks) in "
          f"{index_s:.0f} s", flush=True)
    return {**done, "reused": False}


def _memory_queries(app: App, n: int, rng: random.Random) -> list[str]:
    """``n`` queries from the generated memories: descriptions reworded, subjects in a
    template by type (:data:`TEMPLATES`), Chinese ones cut to part of their description."""
    folder = app.vault_root / app.settings.vault.memory_folder
    memories = []
    for path in sorted(folder.glob("*.md")):
        meta = parse_note(path.name, path.read_bytes()).memory
        if meta is not None and meta.subject:
            memories.append(meta)
    picked = rng.sample(memories, min(n, len(memories)))
    out = []
    for i, meta in enumerate(picked):
        description = meta.description.strip().rstrip(".")
        if re.search(r"[\u4e00-\u9fff]", description):  # a Chinese memory: part of its words
            out.append(description[: max(4, len(description) * 2 // 3)])
        elif i % 2:  # the subject's words in a question of the memory's type
            words = re.sub(r"[._]+", " ", meta.subject or "").strip()
            out.append(rng.choice(TEMPLATES[meta.type]).format(s=words))
        else:  # the description, reworded as a question
            lead = rng.choice(["remind me: {d}?", "do you know {d}?", "{d}?", "tell me {d}"])
            out.append(lead.format(d=description[:1].lower() + description[1:]))
    return out


def build_queries(app: App, corpus: Path, total: int, seed: int) -> list[tuple[str, str]]:
    """``(category, query)`` pairs, about 30% en titles, 20% zh, 30% memory, 20% free."""
    rng = random.Random(seed)
    n_en, n_zh, n_mem = round(total * 0.3), round(total * 0.2), round(total * 0.3)
    n_free = total - n_en - n_zh - n_mem
    en_titles = _titles(corpus / "en") or _titles(corpus)
    en = []
    for title in rng.sample(en_titles, min(n_en, len(en_titles))):
        form = rng.randrange(4)
        low = title.lower()
        en.append([title, low, f"how does {low} work", f"{low} in obsidian"][form])
    zh_titles = [t for t in _titles(corpus / "zh") if re.search(r"[\u4e00-\u9fff]", t)]
    n_zh_titles = min(len(zh_titles), n_zh - min(n_zh // 2, len(ZH_QUESTIONS)))
    zh = rng.sample(zh_titles, n_zh_titles)
    zh += rng.sample(ZH_QUESTIONS, min(n_zh - len(zh), len(ZH_QUESTIONS)))
    mem = _memory_queries(app, n_mem, rng)
    free = (FREE_QUESTIONS * (1 + n_free // len(FREE_QUESTIONS)))[:n_free]
    queries = ([("en-title", q) for q in en] + [("zh", q) for q in zh]
               + [("memory", q) for q in mem] + [("free", q) for q in free])
    rng.shuffle(queries)
    return queries


# --------------------------------------------------------------------------- measuring


def pct(values: list[float], q: int) -> float:
    """The ``q``-th percentile (inclusive method); the value itself for fewer than 2."""
    if not values:
        return float("nan")
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _stats(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(pct(values, 50), 1), "p95": round(pct(values, 95), 1),
            "max": round(max(values), 1) if values else float("nan")}


def measure(app: App, queries: list[tuple[str, str]]) -> dict[str, Any]:
    """Pipeline and baseline latencies, per-stage figures and statuses."""
    for q in WARMUP:
        app.search(q, limit=10, count_recall=False)
        hybrid_search(app.store, app.embedder, q, limit=10)
    e2e: list[float] = []
    base: list[float] = []
    by_category: dict[str, list[float]] = defaultdict(list)
    traced_total: list[float] = []
    stage_ms: dict[str, list[float]] = defaultdict(list)
    stage_status: dict[str, Counter[str]] = defaultdict(Counter)
    empty = 0
    routed = 0
    slowest: list[tuple[float, str, str]] = []
    for i, (category, q) in enumerate(queries):
        def pipeline(q: str = q) -> tuple[float, int]:
            start = time.perf_counter()
            hits = app.search(q, limit=10, count_recall=False)
            return (time.perf_counter() - start) * 1000, len(hits)

        def baseline(q: str = q) -> float:
            start = time.perf_counter()
            hybrid_search(app.store, app.embedder, q, limit=10)
            return (time.perf_counter() - start) * 1000

        if i % 2:
            b = baseline()
            ms, n_hits = pipeline()
        else:
            ms, n_hits = pipeline()
            b = baseline()
        empty += not n_hits
        trace = getattr(app, "last_search_trace", None)
        e2e.append(ms)
        base.append(b)
        by_category[category].append(ms)
        slowest.append((ms, category, q))
        if trace is not None:
            traced_total.append(float(getattr(trace, "total_ms", ms)))
            intent = getattr(trace, "intent", None)
            routed += bool(getattr(intent, "types", None) or getattr(intent, "layers", None)
                           or getattr(intent, "time_range", None))
            for stage in getattr(trace, "stages", ()):
                name, status = str(stage.name), str(stage.status)
                stage_status[name][status] += 1
                if status == "ran":
                    stage_ms[name].append(float(stage.elapsed_ms))
    slowest.sort(reverse=True)
    return {
        "queries": len(queries),
        "categories": {c: len(v) for c, v in by_category.items()},
        "pipeline_ms": _stats(e2e),
        "baseline_hybrid_ms": _stats(base),
        "ratio_p50": round(pct(e2e, 50) / pct(base, 50), 2),
        "ratio_p95": round(pct(e2e, 95) / pct(base, 95), 2),
        "by_category_ms": {c: _stats(v) for c, v in sorted(by_category.items())},
        "trace": bool(traced_total),
        "trace_total_ms": _stats(traced_total) if traced_total else None,
        "stages": {name: {"ran_ms": _stats(stage_ms[name]) if stage_ms[name] else None,
                          "status": dict(stage_status[name])} for name in stage_status},
        "empty_results": empty,
        "intent_routed": routed if traced_total else None,
        "slowest": [{"ms": round(ms, 1), "category": c, "query": q} for ms, c, q in slowest[:5]],
        "meets_target": pct(e2e, 95) < TARGET_P95_MS,
    }


def cold_cli(vault: Path, query: str, runs: int) -> dict[str, Any]:
    """Median wall time of ``dreamd search`` in a fresh process (``runs`` runs)."""
    exe = REPO / ".venv" / "bin" / "dreamd"
    if not exe.exists():
        exe = Path(sys.executable).with_name("dreamd")
    times, code = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([str(exe), "search", query, "--vault", str(vault), "--json",
                               "-n", "10"], env=dict(os.environ), capture_output=True,
                              text=True, check=False)
        times.append(time.perf_counter() - start)
        code = code or done.returncode
        if done.returncode:
            print(f"dreamd search failed ({done.returncode}): {done.stderr.strip()[-300:]}",
                  file=sys.stderr)
    return {"query": query, "runs": runs, "median_s": round(statistics.median(times), 2),
            "all_s": [round(t, 2) for t in times], "exit_code": code}


# --------------------------------------------------------------------------- report


def render(result: dict[str, Any]) -> str:
    m = result["measure"]
    p, b = m["pipeline_ms"], m["baseline_hybrid_ms"]
    lines = [
        f"search on {result['prepared'].get('files', '?')} files "
        f"({result['memories']} memories), {m['queries']} queries, warm process, no LLM",
        "",
        "| what | n | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|",
        f"| App.search end to end | {p['n']} | {p['p50']} | {p['p95']} | {p['max']} |",
        f"| baseline hybrid_search | {b['n']} | {b['p50']} | {b['p95']} | {b['max']} |",
        f"| ratio pipeline / baseline | | {m['ratio_p50']} | {m['ratio_p95']} | |",
    ]
    if m["trace_total_ms"]:
        t = m["trace_total_ms"]
        lines.append(f"| trace total_ms | {t['n']} | {t['p50']} | {t['p95']} | {t['max']} |")
    for name, s in m["stages"].items():
        ran = s["ran_ms"] or {"n": 0, "p50": "-", "p95": "-", "max": "-"}
        lines.append(f"| stage {name} (ran) | {ran['n']} | {ran['p50']} | {ran['p95']} | "
                     f"{ran['max']} |")
    for category, s in m["by_category_ms"].items():
        lines.append(f"| queries: {category} | {s['n']} | {s['p50']} | {s['p95']} | {s['max']} |")
    cli = result["cold_cli"]
    lines.append(f"| cold CLI `dreamd search` (median of {cli['runs']}) | {cli['runs']} | "
                 f"{cli['median_s'] * 1000:.0f} | | {max(cli['all_s']) * 1000:.0f} |")
    lines.append("")
    if m["stages"]:
        lines.append("stage statuses: " + "; ".join(
            f"{name}: " + ", ".join(f"{k} {v}" for k, v in s["status"].items())
            for name, s in m["stages"].items()))
    else:
        lines.append("no last_search_trace in this tree: per-stage figures not available")
    lines.append(f"empty results: {m['empty_results']} of {m['queries']}"
                 + (f"; intent routed: {m['intent_routed']}" if m["intent_routed"] is not None
                    else ""))
    lines.append(f"target p95 < {TARGET_P95_MS:.0f} ms: "
                 f"{'met' if m['meets_target'] else 'NOT met'} (p95 {p['p95']} ms)")
    lines.append("slowest: " + "; ".join(f"{s['ms']} ms {s['query']!r}" for s in m["slowest"]))
    return "\n".join(lines)


def isolate(workdir: Path) -> Path:
    """Make ``workdir`` (resolved) and point this process's dreamd at it alone: no
    ``DREAMD_*`` of the user's, the index in ``<workdir>/data``, no config file; quiet logs."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]  # nothing of the user's dreamd is read or touched
    os.environ["LANCEDB_LOG"] = "error"
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(workdir / "data")
    os.environ["DREAMD_CONFIG"] = str(workdir / "no-config.toml")
    configure_logging("warning", "console")
    return workdir


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "dreamd-search-bench")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/search_bench.json")
    args = parser.parse_args()

    workdir = isolate(args.workdir)

    prepared = prepare(workdir, args.corpus, args.memories, args.seed)
    app = App.create(load(None, None, {"vault.path": str(workdir / "vault")}))
    queries = build_queries(app, args.corpus, args.queries, args.seed)
    load_before = os.getloadavg()[0]
    measured = measure(app, queries)
    cli = cold_cli(workdir / "vault", "how do I embed a file", args.cli_runs)
    result = {
        "corpus": str(args.corpus), "memories": args.memories, "cpus": os.cpu_count(),
        "load_avg_1m_before": round(load_before, 2),
        "load_avg_1m_after": round(os.getloadavg()[0], 2),
        "prepared": prepared, "target_p95_ms": TARGET_P95_MS,
        "measure": measured, "cold_cli": cli,
        "query_sample": [q for _, q in queries[:20]],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
    print(render(result))
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
