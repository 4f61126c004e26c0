"""Save-to-searchable latency while the daemon's start-up reconcile indexes a large vault.

usage: python bench/save_during_index.py [--corpus ../shared/corpora/obsidian-help]
                                         [--notes 0] [--after-files 256] [--tree PATH]
                                         [--threads 2] [--timeout-s 3600] [--stop-when-found]
                                         [--keep]

Copies the corpus (its first ``--notes`` notes by path; 0: all of them) to a temp folder
(the shared corpus is never touched), starts ``python -m daemon run VAULT`` (the real daemon,
real model; the code of ``--tree``, this checkout by default: give another checkout to
measure it on the same vault) with an empty index, waits until its status file says the
reconcile has indexed ``--after-files`` files, then saves a new note holding a unique token
(``zq<hex>``) and polls the index every 100 ms with :func:`magma.search.fulltext_only` (a
read-only store in this process, refreshed before each look: another process's commits are
not seen otherwise) until the token is found. Reports the latency, whether the reconcile was
still under way then (and how far), and when the reconcile ended; then one ``dreamd search``
for the token (in-process, as a user's command during the reconcile) and SIGTERM
(``--stop-when-found``: at once, the time SIGTERM took to end the daemon reported; else once
the reconcile ended).

Prints JSON and writes ``bench/results/save_during_index.json``. Never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path,
                        default=ROOT.parent / "shared" / "corpora" / "obsidian-help")
    parser.add_argument("--notes", type=int, default=0)
    parser.add_argument("--after-files", type=int, default=256)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=3600.0)
    parser.add_argument("--stop-when-found", action="store_true")
    parser.add_argument("--keep", action="store_true")
    return parser.parse_args()


def copy_notes(corpus: Path, vault: Path, limit: int) -> int:
    notes = sorted(corpus.rglob("*.md"))
    notes = notes[:limit] if limit else notes
    for note in notes:
        target = vault / note.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
    return len(notes)


def status_of(path: Path, pid: int) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("pid") == pid else {}


def main() -> None:
    args = parse_args()
    work = Path(tempfile.mkdtemp(prefix="dreamd-save-during-index-"))
    vault = work / "vault"
    notes = copy_notes(args.corpus, vault, args.notes)
    env = {**os.environ, "DREAMD_STORAGE__DATA_DIR": str(work / "data"),
           "DREAMD_CONFIG": str(work / "absent.toml"), "LANCEDB_LOG": "error",
           "DREAMD_EMBEDDING__THREADS": str(args.threads), "DREAMD_LOGGING__FORMAT": "json",
           "PYTHONPATH": str(args.tree)}
    for key in ("DREAMD_STORAGE__DATA_DIR", "DREAMD_CONFIG", "LANCEDB_LOG"):
        os.environ[key] = env[key]
    from daemon.app import App, load
    from magma.search import fulltext_only

    status_path = App(load(None, None, {}), vault.resolve()).state_dir / "daemon.json"
    app: Any = None
    results: dict[str, Any] = {"corpus": str(args.corpus), "notes": notes,
                               "tree": str(args.tree), "after_files": args.after_files}
    log = (work / "daemon.log").open("wb")
    started = time.monotonic()
    daemon = subprocess.Popen([sys.executable, "-m", "daemon", "run", str(vault)], env=env,
                              cwd=args.tree, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = started + args.timeout_s
        while True:  # the reconcile under way, past --after-files
            status = status_of(status_path, daemon.pid)
            work_now = status.get("work") or {}
            if work_now.get("kind") == "reconcile" and work_now.get("done", 0) >= args.after_files:
                break
            if status.get("state") == "watching" or daemon.poll() is not None \
                    or time.monotonic() > deadline:
                raise SystemExit(f"no reconcile under way to save into: {status}")
            time.sleep(0.1)
        app = App.create(load(None, None, {"vault.path": str(vault)}))  # (a reader)
        token = f"zq{secrets.token_hex(6)}"
        (vault / f"Saved during the index {token}.md").write_text(
            f"# Saved while the vault was indexed\n\nThe token {token} marks this note.\n",
            encoding="utf-8")
        saved = time.monotonic()
        results["saved_at_s"] = round(saved - started, 1)
        results["work_at_save"] = work_now
        found_at: float | None = None
        while found_at is None and time.monotonic() < deadline:
            app.store.refresh()
            if fulltext_only(app.store, token, limit=1):
                found_at = time.monotonic()
            time.sleep(0.1)
        if found_at is None:  # (reported: the latency is more than this)
            results["not_found_within_s"] = round(time.monotonic() - saved, 1)
            results["work_then"] = status_of(status_path, daemon.pid).get("work")
            return
        found = found_at
        status = status_of(status_path, daemon.pid)
        results["save_to_searchable_s"] = round(found - saved, 2)
        results["state_when_found"] = status.get("state")
        results["work_when_found"] = status.get("work")
        search = subprocess.run([sys.executable, "-m", "daemon", "search", "--json",
                                 "--vault", str(vault), token], env=env, cwd=args.tree,
                                capture_output=True, text=True, check=False)
        results["dreamd_search"] = {
            "code": search.returncode, "found": token in search.stdout,
            "said": search.stderr.strip().splitlines()[-1:] if search.stderr else []}
        while not args.stop_when_found \
                and status_of(status_path, daemon.pid).get("state") != "watching":
            if daemon.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if not args.stop_when_found:
            results["reconcile_ended_s_after_save"] = round(time.monotonic() - saved, 1)
        results["found_before_reconcile_ended"] = results["state_when_found"] == "reconciling"
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            asked = time.monotonic()
            try:
                results["exit_code"] = daemon.wait(timeout=120)
                results["sigterm_to_exit_s"] = round(time.monotonic() - asked, 1)
            except subprocess.TimeoutExpired:
                daemon.kill()
        log.close()
        if app is not None:
            app.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        report(results)


def report(results: dict[str, Any]) -> None:
    text = json.dumps(results, indent=2, ensure_ascii=False)
    print(text)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "save_during_index.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
