"""Soak under kill -9, by the hundred: is anything a user wrote ever lost?

usage: python bench/soak.py [--trials 100] [--seed 1] [--operations OP ...] [--no-kill]
                            [--spare 2] [--keep]

Runs ``--trials`` trials of ``tests/support/soak_trial.run_soak_trial`` (the trial of
``tests/scenarios/test_soak.py``), trial ``n`` with seed ``seed + n`` (``--seed S --trials 1``
runs trial S again): copy the demo vault (its own data dir and config), sync it once, pick an
operation — ``dreamd sync``, ``remember`` (new, duplicate, superseding), ``dream --force``,
``rollback``, ``check --fix``, ``forget`` of a memory the trial made, or ``dreamd run`` with
random file operations — run it as a real ``dreamd`` process (token-hash FAKE embedder: this
is about files, not meaning) and SIGKILL it at a random moment while the user writes marker
lines by hand; then ``dreamd sync``, ``dreamd check`` (and ``check --fix`` once on drift) in
a new process, and look for every marker and every acknowledged ``remember``, parse every
``.md`` file, and, after a ``forget`` that said it succeeded, look for its text in the vault
and the state folder. ``--operations`` draws only from those; ``--no-kill`` lets every
operation finish (to measure how long each takes: the kill windows of ``soak_trial``).

Prints per operation: trials, kills that landed mid-operation (and of those, how many after
the operation had begun writing into the state folder), acknowledged operations, markers, lost
markers, unclean checks (drift after the restart's sync) and failures, and writes JSON to
``bench/results/soak.json`` (failed trials keep their folder, with every log). Exit code 1 on
any loss or failure; never fails on timings (durations are reported only).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness_loader import isolated_base, load_daemon_harness

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "soak.json"


def _per_operation(results: list[Any]) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = defaultdict(Counter)
    ms: dict[str, list[float]] = defaultdict(list)
    for r in results:
        row = rows[r.operation]
        row["trials"] += 1
        row["killed_mid_operation"] += r.killed
        row["killed_after_writing"] += r.wrote_before_kill
        row["acknowledged"] += r.acknowledged
        row["markers"] += len(r.markers)
        row["lost_markers"] += len(r.lost)
        row["unclean_checks"] += r.unclean
        row["trials_with_questions"] += bool(r.questions)
        row["failed"] += not r.ok
        if r.op_ms is not None:
            ms[r.operation].append(r.op_ms)
    table = {}
    for operation, row in sorted(rows.items()):
        table[operation] = dict(row)
        if ms[operation]:
            table[operation]["finished_ms_median"] = round(statistics.median(ms[operation]))
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--operations", nargs="+", help="draw only from these operations")
    parser.add_argument("--no-kill", action="store_true", help="let every operation finish")
    parser.add_argument("--spare", type=int, default=2, help="worker processes started ahead")
    parser.add_argument("--keep", action="store_true", help="keep the temp folders")
    args = parser.parse_args()

    load_daemon_harness()  # puts tests/support on sys.path
    import soak_trial

    from daemon.logs import configure_logging

    configure_logging(level="warning", fmt="console")  # the in-process preparations' logs
    unknown = set(args.operations or ()) - set(soak_trial.OPERATIONS)
    if unknown:
        parser.error(f"unknown operations {sorted(unknown)}; known: {soak_trial.OPERATIONS}")
    base = isolated_base("dreamd-soak-")
    pool = soak_trial.SessionPool(base / "workers", spare=args.spare)
    results: list[Any] = []
    started = time.monotonic()
    try:
        for n in range(args.trials):
            seed = args.seed + n
            operation = None
            if args.operations:
                operation = args.operations[seed % len(args.operations)]
            workdir = base / f"trial-{seed}"
            result = soak_trial.run_soak_trial(seed, workdir, pool, operation=operation,
                                               kill=not args.no_kill)
            results.append(result)
            print(f"[{n + 1}/{args.trials}] {result.summary()[:400]} "
                  f"({result.duration_s:.1f} s)", flush=True)
            if result.ok and not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
    finally:
        pool.close()
        if not args.keep and all(r.ok for r in results):
            shutil.rmtree(base, ignore_errors=True)

    failed = [r for r in results if not r.ok]
    durations = [r.duration_s for r in results]
    found: Counter[str] = Counter(m.found.split(":")[0] for r in results for m in r.markers)
    drift: Counter[str] = Counter()
    questions: Counter[str] = Counter()
    for r in results:
        drift.update(r.drift)
        questions.update(r.questions)
    report = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "args": vars(args),
        "trials": len(results),
        "failures": len(failed),
        "lost_markers": sum(len(r.lost) for r in results),
        "markers": sum(len(r.markers) for r in results),
        "markers_found": dict(found.most_common()),
        "unclean_checks": sum(r.unclean for r in results),
        "questions_for_the_user": dict(questions.most_common()),
        "killed_forgets_left_unfinishable": [r.seed for r in results if r.forget_unfinished],
        "phase_ms_median": {name: round(statistics.median(r.phases_ms.get(name, 0)
                                                           for r in results))
                            for name in (results[0].phases_ms if results else {})},
        "drift_after_restart": dict(drift.most_common()),
        "per_operation": _per_operation(results),
        "wall_s": round(time.monotonic() - started, 1),
        "trial_s_median": round(statistics.median(durations), 2) if durations else None,
        "trial_s_max": round(max(durations), 2) if durations else None,
        "failed_trials": [r.as_json() for r in failed],
        "noted_trials": [{"seed": r.seed, "operation": r.operation, "killed": r.killed,
                          "wrote_before_kill": r.wrote_before_kill, "notes": r.notes,
                          "questions": r.questions}
                         for r in results if r.notes or r.questions],
        "workdir": str(base) if (failed or args.keep) else None,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n",
                       encoding="utf-8")
    print(f"{'operation':<20}{'trials':>7}{'killed':>8}{'mid-write':>10}{'acked':>7}"
          f"{'markers':>9}{'lost':>6}{'unclean':>9}{'failed':>8}")
    for operation, row in report["per_operation"].items():
        print(f"{operation:<20}{row['trials']:>7}{row['killed_mid_operation']:>8}"
              f"{row['killed_after_writing']:>10}{row['acknowledged']:>7}{row['markers']:>9}"
              f"{row['lost_markers']:>6}{row['unclean_checks']:>9}{row['failed']:>8}")
    print(f"trials: {len(results)}  failures: {len(failed)}  lost markers: "
          f"{report['lost_markers']} of {report['markers']}  wall: {report['wall_s']} s  "
          f"median trial: {report['trial_s_median']} s  -> {RESULTS.relative_to(ROOT)}")
    print(f"markers found: {report['markers_found']}  drift after restart: "
          f"{report['drift_after_restart'] or 'none'}")
    print(f"questions check left to the user (not drift): "
          f"{report['questions_for_the_user'] or 'none'}")
    print(f"median ms per phase: {report['phase_ms_median']}")
    if report["killed_forgets_left_unfinishable"]:
        print(f"killed forgets whose text stayed and that `dreamd forget` run again could not "
              f"finish (not acknowledged, so not a failure): seeds "
              f"{report['killed_forgets_left_unfinishable']}")
    for r in failed:
        print("FAILED", r.summary())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
