"""What the live-integration options cost: engines, the verifier, the intent cache, write modes.

usage: .venv/bin/python bench/integration_bench.py [--workdir DIR] [--queries 100]
       [--verifier-delay-ms 30] [--writes 20] [--json bench/results/integration_bench.json]

Vault: the search bench's (``bench/search_bench.py``: the Obsidian help vault, all 34
languages, plus 1,000 generated memories: 7,049 files, 43,508 chunks), indexed once into
``<workdir>`` (default ``$TMPDIR/dreamd-search-bench``, shared with that bench; a cold index
takes about 20 minutes on 2 cores).

Measured in one warm process, each against a baseline measured in the same run:

1. **Engines**: ``App.search`` p50/p95 over the same queries under each
   ``retrieval.default_strategy``; the baseline is the default, ``both-priority-ccb``.
2. **FusionVerifier**: search with ``llm.verifier`` pointed at a loopback FAKE of the OpenAI
   chat protocol that answers ``{"relevant": true}`` after ``--verifier-delay-ms`` (the fake
   stands in for a model; the number measured is dreamd's own overhead around the calls:
   10 calls at once, one deadline), against the same search without a verifier.
3. **Intent cache**: microseconds per lookup that misses by key and scans 10,000 cached
   512-float vectors for a query close in meaning, against a lookup by key alone; and how many
   of 20 hand-written paraphrase pairs the real model puts at or above
   ``cache.semantic_threshold`` (0.9), and how many pairs that name different days it would
   have joined without the day guard.
4. **Write modes**: ``dreamd remember`` through the Python API, ``obsidian.mode = direct``
   against ``cli`` with the test suite's stand-in CLI (``tests/support/obsidian_standin.py``, a
   Python script: its own start-up, about 40 ms, dominates; the real Obsidian CLI's cost is
   its own), in a small temp vault.

Prints a markdown table and writes JSON. Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402
from search_bench import DEFAULT_CORPUS, build_queries, isolate, pct, prepare  # noqa: E402

from daemon.app import App, load  # noqa: E402
from magma.intent import NO_INTENT, IntentCache  # noqa: E402

STRATEGIES = ("both-priority-ccb", "both-priority-magma", "ccb-only", "magma-only")

#: Paraphrase pairs (same intent) and pairs that differ only in the days they name.
PARAPHRASES = [
    ("what units do I prefer", "which units do I like"),
    ("code editor", "the code editor"),
    ("how do I deploy the app", "how do I deploy the application"),
    ("any rule about force pushing", "is there a rule about force pushing"),
    ("where are the API docs", "where can I find the API docs"),
    ("status of the kiln project", "kiln project status"),
    ("what do I prefer for coffee", "what coffee do I prefer"),
    ("how to clean the kiln shelves", "how do I clean the kiln shelves"),
    ("my favourite text editor", "my favorite text editor"),
    ("rules for writing tests", "rules about writing tests"),
    ("我喜欢什么单位", "我偏好什么单位"),
    ("如何部署应用", "怎么部署应用"),
    ("sourdough starter feeding", "feeding the sourdough starter"),
    ("link to the design doc", "the design doc link"),
    ("who do I ask about billing", "whom do I ask about billing"),
    ("never commit secrets", "do not commit secrets"),
    ("what is my timezone", "which timezone am I in"),
    ("release checklist", "the release checklist"),
    ("dark mode preference", "preference for dark mode"),
    ("payments API timeout", "timeout for the payments API"),
]
DAY_PAIRS = [
    ("what did I do yesterday", "what did I do last week"),
    ("notes from today", "notes from yesterday"),
    ("meetings this week", "meetings last week"),
    ("what happened in May", "what happened in June"),
    ("昨天做了什么", "上周做了什么"),
]


def _stats(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(pct(values, 50), 1), "p95": round(pct(values, 95), 1)}


def _time_searches(app: App, queries: list[str]) -> list[float]:
    for query in queries[:5]:
        app.search(query, count_recall=False)
    times = []
    for query in queries:
        started = time.perf_counter()
        app.search(query, count_recall=False)
        times.append((time.perf_counter() - started) * 1000)
    return times


def engines(vault: Path, queries: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for strategy in STRATEGIES:
        app = App.create(load(None, None, {"vault.path": str(vault),
                                           "retrieval.default_strategy": strategy}))
        try:
            out[strategy] = _stats(_time_searches(app, queries))
        finally:
            app.close()
    return out


class _ManyCallsServer(ThreadingHTTPServer):
    """A loopback server that queues many connections at once (the verifier opens one per
    hit; the default backlog of 5 makes the rest wait for a TCP retry)."""

    request_queue_size = 64


class FakeVerifier:
    """A FAKE OpenAI chat endpoint on loopback: ``{"relevant": true}`` after ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(delay_s)
                body = json.dumps({"choices": [{"message": {
                    "role": "assistant", "content": '{"relevant": true}'}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = _ManyCallsServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def verifier(vault: Path, queries: list[str], delay_ms: float) -> dict[str, Any]:
    fake = FakeVerifier(delay_ms / 1000)
    plain = App.create(load(None, None, {"vault.path": str(vault)}))
    checked = App.create(load(None, None, {
        "vault.path": str(vault), "llm.verifier.enabled": True, "llm.verifier.model": "fake",
        "llm.verifier.base_url": fake.url, "llm.verifier.timeout_s": 5}))
    try:
        base = _time_searches(plain, queries)
        with_verifier = _time_searches(checked, queries)
        stage = [s.elapsed_ms for s in (checked.last_search_trace.stages
                                        if checked.last_search_trace else ())
                 if s.name == "verifier"]
    finally:
        plain.close()
        checked.close()
        fake.server.shutdown()
    return {"delay_ms": delay_ms, "baseline": _stats(base), "with_verifier": _stats(with_verifier),
            "last_verifier_stage_ms": round(stage[0], 1) if stage else None,
            "overhead_p50_ms": round(pct(with_verifier, 50) - pct(base, 50) - delay_ms, 1)}


def intent_cache(app: App) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    today = date(2026, 12, 1)
    cache = IntentCache(ttl_s=86400, max_size=10_000, semantic_threshold=0.9)
    vectors = rng.normal(size=(10_000, 512)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i, vector in enumerate(vectors):
        cache.put(f"query {i}", today, NO_INTENT, vector)
    probe = rng.normal(size=512).astype(np.float32)
    probe /= np.linalg.norm(probe)
    runs = 200
    started = time.perf_counter()
    for i in range(runs):
        cache.lookup(f"query {i}", today)
    by_key = (time.perf_counter() - started) / runs * 1e6
    started = time.perf_counter()
    for i in range(runs):
        cache.lookup(f"new {i}", today, probe)
    by_meaning = (time.perf_counter() - started) / runs * 1e6
    texts = [t for pair in PARAPHRASES + DAY_PAIRS for t in pair]
    embedded = np.asarray(app.embedder.embed(texts), dtype=np.float32)
    cos = [float(embedded[2 * i] @ embedded[2 * i + 1]) for i in range(len(texts) // 2)]
    para, days = cos[: len(PARAPHRASES)], cos[len(PARAPHRASES):]
    return {"entries": 10_000, "lookup_by_key_us": round(by_key, 1),
            "lookup_by_meaning_us": round(by_meaning, 1),
            "paraphrases_at_0_9": sum(c >= 0.9 for c in para), "paraphrases": len(para),
            "paraphrase_cosines": [round(c, 2) for c in para],
            "day_pairs_at_0_9": sum(c >= 0.9 for c in days), "day_pairs": len(days),
            "day_pair_cosines": [round(c, 2) for c in days]}


def write_modes(writes: int) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="dreamd-write-modes-"))
    bin_dir = base / "bin"
    bin_dir.mkdir()
    standin = bin_dir / "obsidian"
    standin.write_text(f"#!{sys.executable}\n" + (REPO / "tests/support/obsidian_standin.py")
                       .read_text(encoding="utf-8"), encoding="utf-8")
    standin.chmod(0o755)
    os.environ["OBSIDIAN_STANDIN_DIR"] = str(base / "standin")
    (base / "standin").mkdir()
    out: dict[str, Any] = {}
    try:
        for mode in ("direct", "cli"):
            vault = base / f"vault-{mode}"
            (vault / ".obsidian").mkdir(parents=True)
            app = App.create(load(None, None, {
                "vault.path": str(vault), "storage.data_dir": str(base / f"data-{mode}"),
                "obsidian.mode": mode, "obsidian.cli.command": str(standin)}))
            try:
                app.sync()
                service = app.memories()
                times = []
                for i in range(writes):
                    started = time.perf_counter()
                    service.remember(f"Bench fact number {i}: the kiln holds {i} shelves.",
                                     type="project", name=f"bench fact {i}")
                    times.append((time.perf_counter() - started) * 1000)
                out[mode] = _stats(times)
            finally:
                app.close()
        calls = base / "standin" / "calls.jsonl"
        out["cli_calls"] = (len(calls.read_text(encoding="utf-8").splitlines())
                            if calls.exists() else 0)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def render(result: dict[str, Any]) -> str:
    lines = ["| engines (`retrieval.default_strategy`) | p50 ms | p95 ms |", "|---|---|---|"]
    for name, stats in result["engines"].items():
        lines.append(f"| {name} | {stats['p50']} | {stats['p95']} |")
    v = result["verifier"]
    lines += ["", f"| verifier (fake answers after {v['delay_ms']:g} ms) | p50 ms | p95 ms |",
              "|---|---|---|",
              f"| without | {v['baseline']['p50']} | {v['baseline']['p95']} |",
              f"| with | {v['with_verifier']['p50']} | {v['with_verifier']['p95']} |",
              f"| overhead beyond the model's own delay (p50) | {v['overhead_p50_ms']} | |"]
    c = result["intent_cache"]
    lines += ["", f"intent cache, {c['entries']:,} entries: lookup by key "
              f"{c['lookup_by_key_us']} µs, by meaning {c['lookup_by_meaning_us']} µs; "
              f"paraphrases at ≥ 0.9: {c['paraphrases_at_0_9']}/{c['paraphrases']}; pairs "
              f"naming other days at ≥ 0.9: {c['day_pairs_at_0_9']}/{c['day_pairs']} "
              "(kept apart by the day guard)"]
    w = result["write_modes"]
    lines += ["", "| write mode | p50 ms | p95 ms |", "|---|---|---|",
              f"| direct | {w['direct']['p50']} | {w['direct']['p95']} |",
              f"| cli (stand-in) | {w['cli']['p50']} | {w['cli']['p95']} |",
              f"| CLI calls logged | {w['cli_calls']} | |"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path,
                        default=Path(tempfile.gettempdir()) / "dreamd-search-bench")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--verifier-delay-ms", type=float, default=30.0)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--json", type=Path,
                        default=REPO / "bench/results/integration_bench.json")
    args = parser.parse_args()
    workdir = isolate(args.workdir)
    prepared = prepare(workdir, DEFAULT_CORPUS, 1000, 7)
    vault = workdir / "vault"
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    queries = [q for _, q in build_queries(app, DEFAULT_CORPUS, args.queries, 7)]
    result = {
        "cpus": os.cpu_count(), "load_avg_1m_before": round(os.getloadavg()[0], 2),
        "prepared": prepared, "queries": len(queries),
        "engines": engines(vault, queries),
        "verifier": verifier(vault, queries[:50], args.verifier_delay_ms),
        "intent_cache": intent_cache(app),
    }
    del os.environ["DREAMD_STORAGE__DATA_DIR"]
    result["write_modes"] = write_modes(args.writes)
    result["load_avg_1m_after"] = round(os.getloadavg()[0], 2)
    app.close()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(render(result))
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
