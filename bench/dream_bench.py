"""Dream figures on a generated set of memories with planted duplicates and contradictions.

    .venv/bin/python bench/dream_bench.py [--count 10000] [--workdir DIR] [--json OUT]

1. Generate ``--count`` memories (``bench/memory_set.py``: exact duplicates, near-duplicates,
   contradictions, look-alikes that are not duplicates, the right answer known for each) in
   ``<workdir>/run/vault`` and index them with the default embedding model (kept in
   ``<workdir>/pristine`` and copied back for each run, so a rerun skips this step).
2. Baseline, measured in the same run: read and parse every memory file once (``parse_note``)
   — the least any dream that looks at every memory must do.
3. One dream (``dreamd dream``): its time, split into reading, planning, writing, ``MEMORY.md``
   and re-indexing the files it wrote; then the outcome against the planted answers:
   duplicates left, false merges, contradictions left open, files deleted.
4. A second dream with nothing changed (incremental: should cost a stat walk).

Timings are medians over ``--repeat`` runs, each from the pristine copy.

``--subjectless N`` takes the subject out of every N-th background memory before indexing
(as an assistant writes memories over MCP): their groups are joined by meaning.

``--dump OUT`` runs one dream instead, at a fixed clock (:data:`DUMP_CLOCK`) and without
re-indexing, and writes to ``OUT`` all it did: every action, transition and diary line, each
edited file's new bytes, the SHA-256 of every file of the vault afterwards (the dream's id
written as ``<ID>``) and the diary. Two versions of dreamd that decide alike write the same
dump byte for byte (``cmp``): the check that a faster dream changed nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from memory_set import check_outcome, generate, load_truth, write_truth  # noqa: E402

from ccb.parse import parse_note  # noqa: E402
from daemon.app import App, load  # noqa: E402
from daemon.dream import LAST_FILE  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402


def read_all(folder: Path) -> float:
    """Seconds to read and parse every ``.md`` file under ``folder``."""
    start = time.perf_counter()
    for path in folder.rglob("*.md"):
        parse_note(path.name, path.read_bytes())
    return time.perf_counter() - start


#: ``archived_reason`` values a consolidation writes (lifecycle archives write others).
CONSOLIDATION_REASONS = {"exact duplicate", "near-duplicate", "superseded", "synthesised"}


def score(memory_set: Any, vault: Path) -> dict[str, int]:
    """The planted answers against the vault, with archives by the lifecycle step told apart
    from consolidation: a look-alike or background memory archived as *inactive* is the
    lifecycle policy at work (the set's dates span 200 days), not a false merge."""
    def reason(path: str) -> str | None:
        try:
            note = parse_note(path, (vault / path).read_bytes())
        except OSError:
            return "missing"
        value = note.properties.get("archived_reason")
        return str(value) if value else None

    planted = {p for item in memory_set.planted for p in item.paths}
    innocent = [p for p in memory_set.paths if p not in planted]
    innocent += [p for item in memory_set.planted if item.kind == "lookalike" for p in item.paths]
    reasons = [reason(p) for p in innocent]
    return {
        "false_merges": sum(1 for r in reasons if r in CONSOLIDATION_REASONS or r == "missing"),
        "archived_by_lifecycle": sum(1 for r in reasons
                                     if r is not None and r not in CONSOLIDATION_REASONS),
        "innocent": len(innocent),
    }


def app_for(vault: Path) -> App:
    return App.create(load(None, None, {"vault.path": str(vault)}))


def without_subjects(memory_set: Any, every: int) -> int:
    """Take the ``subject`` out of every ``every``-th background memory (by path), as an
    assistant writes a memory over MCP; returns how many. The planted pairs keep theirs
    (their right answers rest on them)."""
    import re

    planted = {p for item in memory_set.planted for p in item.paths}
    background = [p for p in memory_set.paths if p not in planted]
    taken = 0
    for path in background[::every]:
        file = memory_set.root / path
        data = file.read_bytes()
        bare = re.sub(rb"(?m)^subject: .*\n", b"", data, count=1)
        if bare != data:
            file.write_bytes(bare)
            taken += 1
    return taken


def prepare(workdir: Path, count: int, seed: int, subjectless: int = 0) -> None:
    """Generate and index the set once (``<workdir>/pristine``); ``subjectless``: every
    that many-th background memory without its subject (:func:`without_subjects`)."""
    pristine = workdir / "pristine"
    marker = pristine / "done.json"
    run = workdir / "run"
    # the index is kept for the vault's absolute path: a workdir copied or moved elsewhere has
    # none, and its dream would plan from the words alone
    where = str((run / "vault").resolve())
    if marker.exists():
        done = json.loads(marker.read_text())
        if done.get("count") == count and done.get("vault") == where and \
                done.get("subjectless", 0) == subjectless:
            return
        if done.get("count") == count:
            print(f"{workdir} was prepared at another path: its index is not found here; "
                  "indexing again", flush=True)
    shutil.rmtree(run, ignore_errors=True)
    shutil.rmtree(pristine, ignore_errors=True)
    started = time.perf_counter()
    memory_set = generate(run / "vault", count=count, seed=seed)
    write_truth(memory_set, run / "truth.json")
    bare = without_subjects(memory_set, subjectless) if subjectless else 0
    generated = time.perf_counter() - started
    started = time.perf_counter()
    report = app_for(run / "vault").sync()
    indexed = time.perf_counter() - started
    shutil.copytree(run, pristine)
    marker.write_text(json.dumps({"count": count, "seed": seed, "vault": where,
                                  "subjectless": subjectless, "without_subject": bare,
                                  "generate_s": generated,
                                  "index_s": indexed, "chunks": report.chunks_embedded}))
    print(f"prepared {count} memories: generated in {generated:.1f} s, indexed "
          f"({report.chunks_embedded} chunks) in {indexed:.1f} s", flush=True)


def one_run(workdir: Path) -> dict[str, Any]:
    run = workdir / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(workdir / "pristine", run)
    vault = run / "vault"
    memory_set = load_truth(vault, run / "truth.json")
    baseline = read_all(vault / "Memory")
    before = {p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file()}
    app = app_for(vault)
    started = time.perf_counter()
    first = app.dreamer().dream(force=True)
    first_s = time.perf_counter() - started
    outcome = {**check_outcome(memory_set), **score(memory_set, vault)}
    after = {p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file()}
    started = time.perf_counter()
    second = app.dreamer().dream()
    second_s = time.perf_counter() - started
    return {
        "baseline_read_all_s": baseline,
        "first_dream_s": first_s,
        "first_dream_without_index_s": (first.timings_ms["total"]
                                        - first.timings_ms.get("index", 0)) / 1000,
        "first_timings_ms": dict(first.timings_ms),
        "first_counts": dict(first.plan.counts),
        "second_dream_s": second_s,
        "second_timings_ms": dict(second.timings_ms),
        "second_changed": second.plan.counts.get("changed_memories", 0),
        "files_deleted": len(before - after),
        "outcome": outcome,
    }


#: The clock of ``--dump`` (any fixed moment after the planted set's dates).
DUMP_CLOCK = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)


def dump_run(workdir: Path, out: Path) -> dict[str, Any]:
    """One dream from the pristine copy at :data:`DUMP_CLOCK`, nothing re-indexed; its
    record written to ``out`` (module docstring). Returns its timings and counts."""
    run = workdir / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(workdir / "pristine", run)
    vault = run / "vault"
    app = app_for(vault)
    cpu = time.process_time()
    report = app.dreamer(index=lambda paths: True, clock=lambda: DUMP_CLOCK).dream(force=True)
    cpu = time.process_time() - cpu
    last = json.loads((app.state_dir / LAST_FILE).read_text(encoding="utf-8"))
    dream_id = str(last["last_id"]).encode()
    plan = report.plan
    lines = [repr(step) for step in (*plan.consolidation, *plan.lifecycle)]
    lines += [f"LINE {line}" for line in plan.changes]
    for path, (_before, after, change) in sorted(plan.edits.items()):
        lines += [f"EDIT {path} {change}", after.decode("utf-8", "replace")]
    for file in sorted(p for p in vault.rglob("*") if p.is_file()):
        data = file.read_bytes().replace(dream_id, b"<ID>")
        lines.append(f"FILE {file.relative_to(vault).as_posix()} "
                     f"{hashlib.sha256(data).hexdigest()}")
    diary = (vault / "Memory" / "DREAMS.md").read_bytes().replace(dream_id, b"<ID>")
    lines += ["DIARY", diary.decode("utf-8", "replace")]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"dream_cpu_s": cpu, "timings_ms": dict(report.timings_ms),
            "counts": dict(plan.counts), "actions": len(plan.consolidation),
            "edits": len(plan.edits)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--subjectless", type=int, default=0, metavar="N",
                        help="every N-th background memory without a subject (as memories "
                        "written over MCP are); a workdir of its own")
    parser.add_argument("--consolidation-only", action="store_true",
                        help="Lifecycle thresholds out of reach (nothing archived for age): "
                        "time the merging and superseding alone.")
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/dream_bench.json")
    parser.add_argument("--dump", type=Path, default=None,
                        help="One dream at a fixed clock, not re-indexed; all it did written "
                        "to DUMP (compare two versions with cmp)")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="dreamd-dream-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(workdir / "run" / "data")
    os.environ.setdefault("DREAMD_CONFIG", str(workdir / "no-config.toml"))
    if args.consolidation_only:
        os.environ["DREAMD_LIFECYCLE__PROJECT_INACTIVE_DAYS"] = "100000"
        os.environ["DREAMD_LIFECYCLE__REFERENCE_UNUSED_DAYS"] = "100000"
    configure_logging("warning", "console")
    prepare(workdir, args.count, args.seed, args.subjectless)
    if args.dump is not None:
        print(json.dumps(dump_run(workdir, args.dump), indent=2, default=str))
        return 0
    runs = [one_run(workdir) for _ in range(args.repeat)]

    def median(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    last = runs[-1]
    outcome = last["outcome"]
    result = {
        "count": args.count, "repeat": args.repeat, "cpus": os.cpu_count(),
        "subjectless": args.subjectless,
        "consolidation_only": args.consolidation_only,
        "baseline_read_all_s": median("baseline_read_all_s"),
        "first_dream_s": median("first_dream_s"),
        "first_dream_without_index_s": median("first_dream_without_index_s"),
        "second_dream_s": median("second_dream_s"),
        # Against the first dream without its re-indexing (the second re-indexes nothing):
        # the stricter ratio.
        "second_over_first": median("second_dream_s") / median("first_dream_without_index_s"),
        "first_over_baseline": median("first_dream_without_index_s")
        / median("baseline_read_all_s"),
        "files_deleted": max(r["files_deleted"] for r in runs),
        "second_changed": max(r["second_changed"] for r in runs),
        "first_timings_ms": last["first_timings_ms"], "first_counts": last["first_counts"],
        "second_timings_ms": last["second_timings_ms"], "outcome": outcome,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
