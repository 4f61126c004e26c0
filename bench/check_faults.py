"""Fault injection for the version history, by the hundred: kill -9 during writes, rollbacks
and repairs — is a version ever lost, does ``dreamd check`` always come back clean?

usage: python bench/check_faults.py [--trials 200] [--seed 1] [--ops 12] [--cli-share 0.5]
                                    [--keep]

Runs ``--trials`` trials of ``tests/daemon/daemon_harness.run_versions_trial`` (the same trial
as ``tests/daemon/test_check_faults.py``), trial ``n`` with seed ``seed + n``: copy the demo
vault, index it, start the daemon subprocess (token-hash FAKE embedder: this measures files,
rows and versions, not meaning; periodic check every 1.2 s), apply ``--ops`` seeded operations
on the memories — user edits (atomic saves and in-place writes), ``remember``, ``rollback``,
``check --fix``, each API one through the real CLI in a child process (share ``--cli-share``;
SIGKILLed now and then) or in-process — SIGKILL the daemon at a random moment, go on while
it is down, restart it (sometimes killing it again during its start-up repairs), and check:
after the restart ``check`` is clean or only lists drift ``check --fix`` repairs (clean after
the fix), no version seen during the trial is lost or changed, every content a memory file
had while the daemon was settled is in its history, no ``(memory, n)`` is in the table twice,
the plain-text archive matches the table, the index equals the disk.

Each trial gets its own temp data dir and config path (``DREAMD_STORAGE__DATA_DIR``,
``DREAMD_CONFIG``), so nothing of the user's dreamd is touched. Prints trials run and failures
(seed, kill point, operations, what failed; failed trials keep their folder with every log)
and writes JSON to ``bench/results/check_faults.json``. Exit code 1 when a trial failed; never
fails on timings (durations are reported only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness_loader import isolated_base, load_daemon_harness

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "check_faults.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ops", type=int, default=12, help="operations per trial")
    parser.add_argument("--cli-share", type=float, default=0.5,
                        help="share of remember/rollback/fix run through the CLI subprocess")
    parser.add_argument("--keep", action="store_true", help="keep the temp folders")
    args = parser.parse_args()

    harness = load_daemon_harness()
    from daemon.logs import configure_logging

    configure_logging(level="warning", fmt="console")  # the in-process operations' logs
    base = isolated_base("dreamd-check-faults-")
    results: list[Any] = []
    started = time.monotonic()
    try:
        for n in range(args.trials):
            workdir = base / f"trial-{n:04}"
            os.environ["DREAMD_STORAGE__DATA_DIR"] = str(workdir / "data")
            os.environ["DREAMD_CONFIG"] = str(workdir / "config.toml")
            result = harness.run_versions_trial(args.seed + n, workdir, ops=args.ops,
                                                cli_share=args.cli_share)
            results.append(result)
            print(f"[{n + 1}/{args.trials}] {result.summary()[:400]} "
                  f"({result.duration_s:.1f} s)", flush=True)
            if result.ok and not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
    finally:
        if not args.keep and all(r.ok for r in results):
            shutil.rmtree(base, ignore_errors=True)

    failed = [r for r in results if not r.ok]
    durations = [r.duration_s for r in results]
    drift: Counter[str] = Counter()
    events: Counter[str] = Counter()
    for r in results:
        drift.update(r.drift_after_restart)
        events.update(r.log_events)
    report = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "trials": len(results),
        "failures": len(failed),
        "seed": args.seed,
        "ops_per_trial": args.ops,
        "cli_share": args.cli_share,
        "wall_s": round(time.monotonic() - started, 1),
        "trial_s_median": round(statistics.median(durations), 2) if durations else None,
        "trial_s_max": round(max(durations), 2) if durations else None,
        "cli_runs": sum(r.cli_runs for r in results),
        "cli_killed": sum(r.cli_killed for r in results),
        "restart_killed": sum(1 for r in results if r.restart_kill),
        "trials_with_drift_after_restart": sum(1 for r in results if r.drift_after_restart),
        "drift_after_restart": dict(drift.most_common()),
        "versions_seen": sum(r.versions_seen for r in results),
        "settled_contents": sum(r.settled_contents for r in results),
        "log_events": dict(events.most_common()),
        "trials_with_conflict_copies": [r.seed for r in results if r.conflict_copies],
        "failed_trials": [r.as_json() for r in failed],
        "noted_trials": [{"seed": r.seed, "notable": r.notable,
                          "conflict_copies": r.conflict_copies}
                         for r in results if r.ok and (r.notable or r.conflict_copies)],
        "workdir": str(base) if (failed or args.keep) else None,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"trials: {len(results)}  failures: {len(failed)}  wall: {report['wall_s']} s  "
          f"median trial: {report['trial_s_median']} s  -> {RESULTS.relative_to(ROOT)}")
    print(f"drift after restart: {report['drift_after_restart'] or 'none'}  "
          f"CLI runs: {report['cli_runs']} ({report['cli_killed']} killed)  "
          f"versions seen: {report['versions_seen']}")
    print(f"repairs and warnings in the logs: {report['log_events'] or 'none'}")
    if report["trials_with_conflict_copies"]:
        print(f"trials that ended with conflict copies in the vault: "
              f"{report['trials_with_conflict_copies']}")
    for r in failed:
        print("FAILED", r.summary())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
