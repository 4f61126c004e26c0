"""Who answers the CLI, the hooks and MCP: the warm daemon against a cold process.

usage: .venv/bin/python bench/client_bench.py [--corpus ../shared/corpora/obsidian-help]
                                              [--subset en] [--runs 30] [--queries 50] [--keep]

Copies the corpus folder to a temp vault (the shared corpus is never touched) with a few
memory files written by ``dreamd remember``, indexes it with ``dreamd sync`` and measures,
every process a real ``dreamd`` console script started from scratch (wall time from spawn to
exit, p50 / p95 over ``--runs``):

1. baselines of the same run: ``python -c pass``, ``python -c "import typer"``;
2. with no daemon: ``dreamd context --hook`` for a ``UserPromptSubmit`` and a ``SessionStart``
   event (the README's recipe), ``dreamd --help``, ``--version``, ``status``;
3. with ``dreamd run`` serving the vault: the same hooks, ``search``, ``status``;
4. ``dreamd mcp``: spawn to the answer of ``initialize``, and the proxy's RSS (``VmRSS``);
   the daemon's RSS alone and with three MCP sessions open;
5. answers that do not depend on load: ``search --json`` for ``--queries`` questions (the
   vault's note titles, reworded) with the machine idle and with both cores busy (two
   spinning processes), through the daemon; and, as the baseline, a cold in-process search
   of ten of them under the same two conditions;
6. processes that map LanceDB while four clients write through the daemon at once (one:
   the daemon).

Prints JSON and writes ``bench/results/client_bench.json``. Never fails on timings.
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
BIN = Path(sys.executable).with_name("dreamd")
RESULTS = ROOT / "bench" / "results"

MEMORIES = [
    ("feedback", "Use pnpm, not npm, for every JavaScript project."),
    ("feedback", "Integration tests use a real database, never mocks."),
    ("user", "The user writes notes in English and Chinese and prefers metric units."),
    ("project", "The docs site release is planned for March 2027."),
]


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(p95 * 1000, 1), "n": len(ordered)}


def _timed(cmd: list[str], env: dict[str, str], cwd: Path, *, stdin: str = "",
           runs: int) -> tuple[dict[str, float], subprocess.CompletedProcess[str]]:
    times: list[float] = []
    last: subprocess.CompletedProcess[str] | None = None
    for _ in range(runs):
        start = time.perf_counter()
        last = subprocess.run(cmd, env=env, cwd=cwd, input=stdin, text=True,
                              capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    assert last is not None
    return _stats(times), last


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _tree_rss_kb(pid: int) -> int:
    """RSS of ``pid`` and its children (the console script may exec a child)."""
    total = _rss_kb(pid)
    for child in Path(f"/proc/{pid}/task").glob("*/children"):
        for cpid in child.read_text().split():
            total += _tree_rss_kb(int(cpid))
    return total


def _maps_lancedb(pid: int) -> bool:
    try:
        return "lancedb" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


class _Mcp:
    """One ``dreamd mcp`` process spoken to over stdio."""

    def __init__(self, env: dict[str, str], cwd: Path, vault: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([str(BIN), "mcp", "--vault", str(vault)], env=env, cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)

    def ask(self, ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                          "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == ident:
                return answer

    def initialize(self) -> float:
        self.ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "bench", "version": "1"}})
        return time.perf_counter() - self.started

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _queries(vault: Path, count: int) -> list[str]:
    titles = sorted(p.stem for p in vault.rglob("*.md") if not p.stem.startswith("MEMORY"))
    step = max(1, len(titles) // count)
    return [f"how do I use {t.lower()}" for t in titles[::step][:count]]


def _search_paths(env: dict[str, str], cwd: Path, vault: Path, query: str) -> list[str]:
    run = subprocess.run([str(BIN), "search", query, "--json", "-n", "10", "--vault", str(vault)],
                         env=env, cwd=cwd, text=True, capture_output=True, check=False)
    try:
        return [h["path"] for h in json.loads(run.stdout)]
    except (ValueError, KeyError, TypeError):
        return [f"error: {run.stderr.strip()[-200:]}"]


def _same_under_load(env: dict[str, str], cwd: Path, vault: Path, queries: list[str]) -> str:
    """How many of ``queries`` get the same top 10 with the machine idle and with both
    cores busy (two spinning processes): ``"n/total"``."""
    idle = [_search_paths(env, cwd, vault, q) for q in queries]
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = [_search_paths(env, cwd, vault, q) for q in queries]
    finally:
        for spinner in spinners:
            spinner.kill()
    same = sum(a == b for a, b in zip(idle, loaded, strict=True))
    return f"{same}/{len(queries)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path,
                        default=ROOT.parent / "shared" / "corpora" / "obsidian-help")
    parser.add_argument("--subset", default="en")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="dreamd-client-bench-"))
    vault = work / "vault"
    shutil.copytree(args.corpus / args.subset if args.subset else args.corpus, vault)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DREAMD_")},
           "DREAMD_STORAGE__DATA_DIR": str(work / "data"),
           "DREAMD_CONFIG": str(work / "config.toml"), "XDG_CACHE_HOME": str(work / "cache")}
    here = work / "project"
    here.mkdir()
    result: dict[str, Any] = {"corpus": f"{args.corpus.name}/{args.subset}",
                              "runs": args.runs}
    daemon: subprocess.Popen[bytes] | None = None
    try:
        for kind, text in MEMORIES:
            subprocess.run([str(BIN), "remember", text, "--type", kind, "--vault", str(vault)],
                           env=env, cwd=here, capture_output=True, check=True)
        start = time.perf_counter()
        subprocess.run([str(BIN), "sync", str(vault)], env=env, cwd=here, capture_output=True,
                       check=True)
        result["cold_sync_s"] = round(time.perf_counter() - start, 1)
        runs = args.runs
        prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "b",
                             "prompt": "how do I embed a note inside another note?"})
        session = json.dumps({"hook_event_name": "SessionStart", "session_id": "b",
                              "source": "startup"})
        hook = [str(BIN), "context", "--hook", "--budget", "1500", "--vault", str(vault)]
        base: dict[str, Any] = {}
        base["python -c pass"], _ = _timed([sys.executable, "-c", "pass"], env, here, runs=runs)
        base["import typer"], _ = _timed([sys.executable, "-c", "import typer"], env, here,
                                         runs=runs)
        result["baselines"] = base
        cold: dict[str, Any] = {}
        cold["hook UserPromptSubmit"], _ = _timed(hook, env, here, stdin=prompt,
                                                  runs=max(5, runs // 3))
        cold["hook SessionStart"], _ = _timed(hook, env, here, stdin=session,
                                              runs=max(5, runs // 3))
        cold["--help"], _ = _timed([str(BIN), "--help"], env, here, runs=runs)
        cold["--version"], _ = _timed([str(BIN), "--version"], env, here, runs=runs)
        cold["status"], _ = _timed([str(BIN), "status", "--vault", str(vault)], env, here,
                                   runs=max(5, runs // 3))
        result["no daemon"] = cold

        daemon = subprocess.Popen([str(BIN), "run", str(vault)], env=env, cwd=here,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        state = next((work / "data" / "vaults").iterdir())
        deadline = time.monotonic() + 300
        while not (state / "api.json").exists():
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit("the daemon did not open its API")
            time.sleep(0.05)
        # let the start-up check, dream gate and compaction finish, then one unmeasured call
        # of each kind (the first query is embedded once, as any new prompt would be)
        status_file = state / "daemon.json"
        while json.loads(status_file.read_text("utf-8")).get("state") != "watching":
            time.sleep(0.1)
        time.sleep(5)
        for event in (prompt, session):
            subprocess.run(hook, env=env, cwd=here, input=event, text=True,
                           capture_output=True, check=False)
        warm: dict[str, Any] = {}
        warm["hook UserPromptSubmit"], last = _timed(hook, env, here, stdin=prompt, runs=runs)
        warm["hook output chars"] = len(last.stdout)
        times = []
        for question in _queries(vault, runs):  # a new prompt each time: embedded anew
            event = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "b",
                                "prompt": question})
            begin = time.perf_counter()
            subprocess.run(hook, env=env, cwd=here, input=event, text=True,
                           capture_output=True, check=False)
            times.append(time.perf_counter() - begin)
        warm["hook UserPromptSubmit, a new prompt each time"] = _stats(times)
        warm["hook SessionStart"], _ = _timed(hook, env, here, stdin=session, runs=runs)
        warm["search"], _ = _timed([str(BIN), "search", "canvas", "--vault", str(vault)], env,
                                   here, runs=runs)
        warm["status"], _ = _timed([str(BIN), "status", "--vault", str(vault)], env, here,
                                   runs=runs)
        result["daemon running"] = warm

        mcp: dict[str, Any] = {"daemon_rss_kb_alone": _rss_kb(daemon.pid)}
        firsts, rss = [], []
        for _ in range(5):
            session_proc = _Mcp(env, here, vault)
            firsts.append(session_proc.initialize())
            rss.append(_tree_rss_kb(session_proc.proc.pid))
            session_proc.close()
        mcp["spawn to first answer"] = _stats(firsts)
        mcp["proxy_rss_kb_max"] = max(rss)
        sessions = [_Mcp(env, here, vault) for _ in range(3)]
        for s in sessions:
            s.initialize()
        mcp["daemon_rss_kb_with_3_sessions"] = _rss_kb(daemon.pid)
        mcp["proxies_rss_kb"] = [_tree_rss_kb(s.proc.pid) for s in sessions]
        writers = [subprocess.Popen([str(BIN), "remember", f"The bench host {n} is b{n}.lan.",
                                     "--type", "reference", "--vault", str(vault)],
                                    env=env, cwd=here, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for n in range(4)]
        mapping: set[int] = set()
        watched: list[subprocess.Popen[Any]] = [daemon, *writers, *(s.proc for s in sessions)]
        while any(w.poll() is None for w in writers):
            for proc in watched:
                if proc.poll() is None and _maps_lancedb(proc.pid):
                    mapping.add(proc.pid)
            time.sleep(0.01)
        mcp["processes mapping lancedb while 4 clients write"] = len(mapping)
        for s in sessions:
            s.close()
        result["mcp"] = mcp

        queries = _queries(vault, args.queries)
        result["identical answers idle vs busy, daemon"] = _same_under_load(
            env, here, vault, queries)
        daemon.terminate()
        daemon.wait(timeout=60)
        daemon = None
        result["identical answers idle vs busy, cold process (baseline)"] = \
            _same_under_load(env, here, vault, queries[:10])
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=60)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "client_bench.json").write_text(json.dumps(result, indent=2), "utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
