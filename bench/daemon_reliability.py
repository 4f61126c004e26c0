"""kill -9 reliability of ``dreamd run``, by the hundred: does the index always heal?

usage: python bench/daemon_reliability.py [--trials 100] [--seed 1] [--ops 30] [--keep]

Runs ``--trials`` trials of ``tests/support/daemon_harness.run_trial`` (the same trial as
``tests/daemon/test_kill9.py``), trial ``n`` with seed ``seed + n``: copy the demo vault,
start the daemon subprocess (token-hash FAKE embedder: this measures rows and files, not
meaning), apply ``--ops`` seeded random file operations, ``kill -9`` it at a random moment,
apply the rest while it is down, restart, wait (bounded) for the index to equal the disk,
SIGTERM, and check every row (hashes, orphans, missing files, duplicate rows, chunks).

Each trial gets its own temp data dir and config path (``DREAMD_STORAGE__DATA_DIR``,
``DREAMD_CONFIG``), so nothing of the user's dreamd is touched. Prints trials run and
failures (with seed, kill point and operations of each failure) and writes JSON to
``bench/results/daemon_reliability.json``. Exit code 1 when a trial failed; never fails on
timings (durations are reported only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness_loader import isolated_base, load_daemon_harness

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "daemon_reliability.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ops", type=int, default=30, help="file operations per trial")
    parser.add_argument("--keep", action="store_true", help="keep the temp folders")
    args = parser.parse_args()

    harness = load_daemon_harness()
    base = isolated_base("dreamd-reliability-")
    results: list[Any] = []
    started = time.monotonic()
    try:
        for n in range(args.trials):
            workdir = base / f"trial-{n:04}"
            os.environ["DREAMD_STORAGE__DATA_DIR"] = str(workdir / "data")
            os.environ["DREAMD_CONFIG"] = str(workdir / "config.toml")
            result = harness.run_trial(args.seed + n, workdir, ops=args.ops)
            results.append(result)
            print(f"[{n + 1}/{args.trials}] {result.summary()[:300]} "
                  f"({result.duration_s:.1f} s)", flush=True)
            if result.ok and not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
    finally:
        if not args.keep and all(r.ok for r in results):
            shutil.rmtree(base, ignore_errors=True)

    failed = [r for r in results if not r.ok]
    durations = [r.duration_s for r in results]
    report = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "trials": len(results),
        "failures": len(failed),
        "seed": args.seed,
        "ops_per_trial": args.ops,
        "wall_s": round(time.monotonic() - started, 1),
        "trial_s_median": round(statistics.median(durations), 2) if durations else None,
        "failed_trials": [
            {"seed": r.seed, "kill_after_op": r.kill_after_op, "failures": r.failures,
             "ops": r.ops}
            for r in failed
        ],
        "workdir": str(base) if (failed or args.keep) else None,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"trials: {len(results)}  failures: {len(failed)}  "
          f"wall: {report['wall_s']} s  -> {RESULTS.relative_to(ROOT)}")
    for r in failed:
        print("FAILED", r.summary())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
