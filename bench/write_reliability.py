"""Concurrent writers and a simulated Obsidian, by the dozen: is any write ever lost?

usage: python bench/write_reliability.py [--trials 30] [--seed 1] [--writers 3] [--edits 20]
                                         [--obsidian-edits 20] [--save-gap 0 0.02]

Runs ``tests/support/daemon_harness.run_writers_trial`` (the trial of
``tests/daemon/test_concurrent_writers.py``) ``--trials`` times for each ``--save-gap``:
a daemon (token-hash FAKE embedder: this is about files), ``--writers`` dreamd writer
processes and one simulated Obsidian (a STAND-IN for the desktop app, see the harness) append
unique markers to the same three memories at once, while a reader checks that no file is ever
half-written. ``--save-gap`` widens the simulated Obsidian's gap between its check of the
disk and its save (0 = as fast as it can; 0.02 = up to 20 ms, so it saves over writers'
edits and the lost-update repair must bring them back).

Prints, per gap, trials, markers written, markers lost, torn reads, conflict copies and
repairs, and writes JSON to ``bench/results/write_reliability.json``. Exit code 1 when any
marker was lost or any read was torn; never fails on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness_loader import isolated_base, load_daemon_harness

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "write_reliability.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--edits", type=int, default=20, help="edits per writer process")
    parser.add_argument("--obsidian-edits", type=int, default=20)
    parser.add_argument("--save-gap", type=float, nargs="+", default=[0.0, 0.02])
    parser.add_argument("--keep", action="store_true",
                        help="keep the temp folders (and, for a failed trial, what its "
                             "writer processes logged: processes-<seed>.log)")
    args = parser.parse_args()

    harness = load_daemon_harness()
    base = isolated_base("dreamd-writers-")
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(base / "data")
    os.environ["DREAMD_CONFIG"] = str(base / "config.toml")
    report: dict[str, Any] = {"at": datetime.now(UTC).isoformat(timespec="seconds"),
                              "args": vars(args), "gaps": []}
    failed = False
    try:
        for round_, gap in enumerate(args.save_gap):
            rows = []
            workdir = base / f"gap-{round_}"
            workdir.mkdir()
            for n in range(args.trials):
                seed = args.seed + n
                result = harness.run_writers_trial(
                    seed, workdir, writers=args.writers, edits=args.edits,
                    obsidian_edits=args.obsidian_edits, save_gap_s=gap)
                rows.append(result)
                if args.keep and not result.ok:  # what each writer logged, beside the vault
                    (workdir / f"processes-{seed}.log").write_text(
                        "\n".join(result.process_output), encoding="utf-8")
                status = "ok" if result.ok else f"LOST {result.lost} torn={result.torn_reads}"
                print(f"gap {gap:.3f}s seed {seed}: {status} ({result.markers} markers, "
                      f"{result.conflict_copies} copies, {result.healed} repairs, "
                      f"{result.duration_s:.1f} s)", flush=True)
            summary = {
                "save_gap_s": gap, "trials": len(rows),
                "markers": sum(r.markers for r in rows),
                "lost": sum(len(r.lost) for r in rows),
                "torn_reads": sum(r.torn_reads for r in rows),
                "reads": sum(r.reads for r in rows),
                "conflict_copies": sum(r.conflict_copies for r in rows),
                "repairs": sum(r.healed for r in rows),
                "index_problems": sum(len(r.index_problems) for r in rows),
                "failures": [{"seed": r.seed, "lost": r.lost, "torn": r.torn_reads,
                              "index": r.index_problems[:5]} for r in rows if not r.ok],
            }
            failed = failed or bool(summary["failures"])
            report["gaps"].append(summary)
            print(json.dumps({k: v for k, v in summary.items() if k != "failures"}))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
