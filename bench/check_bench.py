"""``dreamd check`` on a real vault plus generated memories, against a bare stat walk.

usage: python bench/check_bench.py [--corpus obsidian-help] [--memories 1000] [--stale 100]
                                   [--repeat 5] [--seed 1] [--threads N]
                                   [--workdir DIR] [--keep] [--fake-embedder]

quick run:  python bench/check_bench.py --corpus obsidian-help/en --memories 100
full run:   python bench/check_bench.py --workdir /tmp/dreamd-check-full   (≈10 min the first
            time: the whole corpus is embedded; a rerun with the same --workdir skips that)

``--corpus`` is a folder, or a path under ``../shared/corpora`` (``obsidian-help/en``). The
corpus is copied into a vault (the shared corpus is never touched), ``--memories`` memory
files in dreamd's format are added to ``<vault>/Memory/`` (``ccb.memory_file.render_memory``,
ULID ids, types cycling user/feedback/project/reference, distinct names, descriptions, bodies
and subjects, all deterministic from ``--seed``), and the vault is indexed in-process with the
real default embedder (``App.sync``; ``--fake-embedder``: the tests' token-hash fake). With
``--workdir`` the vault and the data dir stay there and a later run with the same corpus,
memories and seed skips the copy and the sync (it says
so, and compacts the store first: earlier runs' fixes leave one version-table fragment per
version, which would slow this run's checks); without it everything lives in a fresh temp
folder removed at the end (unless ``--keep``).
``DREAMD_STORAGE__DATA_DIR`` and ``DREAMD_CONFIG`` point into that folder, every other
``DREAMD_*`` variable is cleared: nothing of the user's dreamd is touched.

Then, in the same process:

0. **warm-up**: one ``check()`` and ``fix(automatic_only=True)`` (the first check after a sync
   builds ``MEMORY.md``), timed apart, so the timed runs below see a clean vault;
1. **baseline**: a bare ``os.walk`` + ``os.stat`` of every file of the vault, and
   ``ccb.scan.scan_vault`` (the walk the checker uses), median of ``--repeat`` runs;
2. **nothing drifted**: ``App.consistency().check()``, median of ``--repeat`` runs, against the
   stat walk (target: within 3×), with ``report.read`` (files read again: should be 0), whether
   it was clean, and — counted independently by an audit hook on ``open`` — how many vault
   files the check opened (``MEMORY.md`` is read once to compare its hash). The parts of the
   snapshot (index read, version table, archive listing …) are timed one by one as well;
3. **100 stale entries**: a line is appended to ``--stale`` memory files (their size changes),
   then ``check()`` (expect that many ``stale``), ``fix(report, automatic_only=True)`` (re-reads,
   re-embeds and records a version of each; chunks embedded and versions added are counted)
   and a final ``check()`` that should be clean, timed ``--repeat`` times against the
   unchanged check (the version table's data files are counted before and after the fix:
   each append is a fragment every later check reads).

Prints a table and writes JSON to ``bench/results/check_bench.json``. Never fails on timings
(and not on drift either: what was found is reported).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness_loader import isolated_base

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPORA = ROOT.parent / "shared" / "corpora"
RESULTS = ROOT / "bench" / "results" / "check_bench.json"
MARKER = "check-bench-built.json"
MEMORY_FOLDER = "Memory"
TYPES = ("user", "feedback", "project", "reference")

# Vocabulary for generated memories: every memory gets its own mix, so names, descriptions
# and bodies are distinct texts (and distinct chunks to embed).
TOPICS = [
    "kiln controller", "release train", "glaze recipes", "database migrations", "code review",
    "deploy pipeline", "test fixtures", "on-call rota", "API pagination", "log retention",
    "backup restore", "feature flags", "error budgets", "dependency updates", "search index",
    "vault sync", "meeting notes", "travel bookings", "garden watering", "tax paperwork",
]
VERBS = ["prefers", "always checks", "never skips", "documents", "automates", "reviews",
         "schedules", "measures", "archives", "double-checks"]
OBJECTS = ["the staging config", "the serial port timeout", "the weekly report",
           "the changelog", "the fixture data", "the retry budget", "the cache keys",
           "the shared calendar", "the rollback script", "the pinned versions"]
REASONS = ["a silent failure cost a day last spring", "the vendor changed the defaults",
           "two teams read the same file", "the numbers drifted twice", "it keeps reviews short",
           "the old way lost data once", "audits ask for it", "it saves a round trip"]


# ---------------------------------------------------------------------------- setup


def _resolve_corpus(value: str) -> Path:
    path = Path(value).expanduser()
    for candidate in (path, CORPORA / value):
        if candidate.is_dir():
            return candidate.resolve()
    raise SystemExit(f"--corpus {value}: no such folder (nor {CORPORA / value})")


def _ulid(rng: random.Random, when: datetime) -> str:
    from ulid import ULID

    millis = int(when.timestamp() * 1000)
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + rng.randbytes(10)))


def generate_memories(count: int, seed: int) -> list[tuple[str, bytes]]:
    """``count`` memory files ``(vault path, bytes)``, deterministic from ``seed``."""
    from ccb.memory_file import NewMemory, memory_path, render_memory

    rng = random.Random(seed)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    taken: set[str] = set()
    files: list[tuple[str, bytes]] = []
    for n in range(count):
        topic, verb, obj = rng.choice(TOPICS), rng.choice(VERBS), rng.choice(OBJECTS)
        reason, other = rng.choice(REASONS), rng.choice(TOPICS)
        kind = TYPES[n % len(TYPES)]
        created = start + timedelta(minutes=37 * n)
        name = f"{topic.capitalize()} {n}: {verb} {obj}"
        description = f"For {topic} ({kind} {n}) the user {verb} {obj}, because {reason}."
        body = (
            f"## What\n\nCase {n}: when working on {topic}, the user {verb} {obj} "
            f"before anything else, and keeps notes about {other}.\n\n"
            f"## Why\n\nBecause {reason}; figure {rng.randint(2, 9999)} was noted on "
            f"{created:%A %d %B %Y}.\n\n"
            f"## How to apply\n\nBefore touching {topic} (ticket {rng.randint(100, 99999)}), "
            f"look at {obj} first and mention {other} in the summary.\n"
        )
        path = memory_path(taken, MEMORY_FOLDER, name)
        taken.add(path)
        data = render_memory(NewMemory(
            name=name, description=description, type=kind,  # type: ignore[arg-type]
            id=_ulid(rng, created), created=created, updated=created, body=body,
            subject=f"bench.{topic.replace(' ', '-')}.{n}", source="import"))
        files.append((path, data))
    return files


def prepare(work: Path, corpus: Path, memories: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """The vault in ``work`` (copied and populated unless already there) and the marker of a
    finished build (``{}`` when the index has not been built yet)."""
    vault = work / "vault"
    wanted = {"corpus": str(corpus), "memories": memories, "seed": seed}
    marker_path = work / MARKER
    marker: dict[str, Any] = {}
    if marker_path.exists():
        marker = json.loads(marker_path.read_text(encoding="utf-8"))
        if {k: marker.get(k) for k in wanted} != wanted:
            raise SystemExit(
                f"--workdir {work} was built for {({k: marker.get(k) for k in wanted})}, not "
                f"{wanted}: pass another --workdir (or delete this one)")
    if not vault.exists():
        shutil.copytree(corpus, vault, symlinks=True)
        folder = vault / MEMORY_FOLDER
        folder.mkdir(exist_ok=True)
        for path, data in generate_memories(memories, seed):
            (vault / path).write_bytes(data)
    return vault, marker


def _point_env(work: Path, threads: int | None) -> None:
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(work / "data")
    os.environ["DREAMD_CONFIG"] = str(work / "config.toml")  # absent: defaults
    if threads is not None:
        os.environ["DREAMD_EMBEDDING__THREADS"] = str(threads)


# ---------------------------------------------------------------------------- measuring


class OpenCounter:
    """Counts the vault files opened while ``active`` (``sys.addaudithook``: every
    ``open()``/``os.open`` of Python code; LanceDB's own reads are native and not seen)."""

    def __init__(self, vault: Path) -> None:
        self.prefixes = tuple({str(vault) + os.sep, os.path.realpath(vault) + os.sep})
        self.active = False
        self.paths: list[str] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active or event != "open" or not args:
            return
        target = args[0]
        if isinstance(target, os.PathLike):
            target = os.fspath(target)
        if isinstance(target, bytes):
            target = os.fsdecode(target)
        if isinstance(target, str) and target.startswith(self.prefixes):
            self.paths.append(target)

    def run(self, call: Callable[[], Any]) -> tuple[Any, float, list[str]]:
        """``(result, seconds, vault files opened)`` of ``call()``."""
        self.paths = []
        self.active = True
        try:
            started = time.perf_counter()
            result = call()
            seconds = time.perf_counter() - started
        finally:
            self.active = False
        return result, seconds, sorted(set(self.paths))


def stat_walk(root: Path) -> tuple[float, int]:
    """Seconds and file count of a bare ``os.walk`` + ``os.stat`` of every file."""
    count = 0
    started = time.perf_counter()
    for folder, _dirs, files in os.walk(root):
        for name in files:  # plain os calls: pathlib would slow the baseline down
            os.stat(os.path.join(folder, name))  # noqa: PTH116, PTH118
            count += 1
    return time.perf_counter() - started, count


def median_of(repeat: int, call: Callable[[], Any]) -> tuple[float, list[float]]:
    return median_cpu_of(repeat, call)[:2]


def median_cpu_of(repeat: int, call: Callable[[], Any]) -> tuple[float, list[float], float]:
    """Median wall seconds, the runs' wall seconds and median CPU seconds of the process
    (``time.process_time``: every thread, LanceDB's included) of ``repeat`` calls: on a
    shared machine the wall time swings with the load, the CPU time much less."""
    runs, cpu = [], []
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        runs.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return statistics.median(runs), runs, statistics.median(cpu)


def _rel(vault: Path, paths: Sequence[str]) -> list[str]:
    real = os.path.realpath(vault)
    return [os.path.relpath(p, real if p.startswith(real) else str(vault)) for p in paths]


def _version_count(app: Any) -> int:
    return sum(len(v) for v in app.versions.all_versions().values())


def _table_files(app: Any, table: str) -> int:
    """Data files of one LanceDB table (each commit of an append adds one until compaction):
    the version table is read whole by every check, so its fragments cost every check."""
    data = Path(app.store_uri) / f"{table}.lance" / "data"
    return sum(1 for _ in data.iterdir()) if data.is_dir() else 0


def _summary(report: Any, opened: list[str], vault: Path) -> dict[str, Any]:
    return {"files": report.files, "read": report.read, "memories": report.memories,
            "clean": report.clean, "drift": report.counts(),
            "vault_files_opened": len(opened), "opened_sample": _rel(vault, opened[:5])}


# ---------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="obsidian-help",
                        help="folder, or path under ../shared/corpora (default: obsidian-help)")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--stale", type=int, default=100, help="memory files to make stale")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None,
                        help="embedding threads (default: dreamd's setting)")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep vault + data dir here; a rerun skips the sync")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--fake-embedder", action="store_true",
                        help="index with the tests' token-hash FAKE embedder "
                        "(tests/support/fakes.py): check compares content hashes, never "
                        "vectors, so its figures do not depend on the model; the cold index "
                        "of the 7,000-file vault takes minutes instead of ~10 min+")
    args = parser.parse_args()
    corpus = _resolve_corpus(args.corpus)

    if args.workdir is not None:  # what isolated_base does, in a folder that stays
        os.environ.setdefault("LANCEDB_LOG", "error")
        for key in [k for k in os.environ if k.startswith("DREAMD_")]:
            del os.environ[key]
        work = args.workdir.expanduser().resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = isolated_base("dreamd-check-bench-")
    _point_env(work, args.threads)
    print(f"work folder: {work}", flush=True)

    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "corpus": str(corpus), "memories": args.memories, "stale_target": args.stale,
        "repeat": args.repeat, "seed": args.seed, "load_avg_start": os.getloadavg(),
        "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
    }
    try:
        run(args, work, corpus, results)
    finally:
        if args.workdir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept: {work}")
    return 0


def run(args: argparse.Namespace, work: Path, corpus: Path, results: dict[str, Any]) -> None:
    from ccb.scan import scan_vault
    from daemon.app import App, load
    from daemon.logs import configure_logging

    configure_logging(level="warning")  # one info line per fixed entry otherwise

    vault, marker = prepare(work, corpus, args.memories, args.seed)
    fake = None
    if args.fake_embedder:
        sys.path.insert(0, str(ROOT / "tests" / "support"))
        from fakes import TokenHashEmbedder

        fake = TokenHashEmbedder()
    results["embedder"] = "token-hash fake" if fake is not None else "default model"
    app = App.create(load(None, None, {"vault.path": str(vault)}), embedder=fake)

    # Count what the embedder is asked to embed (the fix must embed only the changed chunks).
    embedder = app.embedder
    original_embed = embedder.embed
    embedded = [0]

    def counting_embed(texts: Sequence[str]) -> Any:
        embedded[0] += len(texts)
        return original_embed(texts)

    embedder.embed = counting_embed  # type: ignore[method-assign]

    # ---- the index
    if marker:
        print(f"index already built in {work} (sync of {marker['sync_s']:.0f} s skipped)",
              flush=True)
        results["sync"] = {"skipped": True, **marker}
        # Start where a fresh build starts: the earlier runs' fixes appended one fragment per
        # version recorded (and rows to the index) that nothing compacts.
        before = _table_files(app, "versions")
        app.store.maintain()
        app.versions.compact()
        results["sync"]["compacted_versions_data_files"] = before
        print(f"store compacted (version table: {before} data files -> "
              f"{_table_files(app, 'versions')})", flush=True)
    else:
        print(f"syncing {vault} with the {results['embedder']} (slow for a big corpus with "
              "the model) ...", flush=True)
        started = time.perf_counter()
        synced = app.sync()
        sync_s = time.perf_counter() - started
        marker = {"corpus": str(corpus), "memories": args.memories, "seed": args.seed,
                  "sync_s": sync_s, "files_total": synced.files_total,
                  "chunks_embedded": synced.chunks_embedded,
                  "chunks_per_s": synced.chunks_embedded / sync_s if sync_s else None,
                  "problems": len(synced.problems)}
        if args.workdir is not None:
            (work / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        results["sync"] = {"skipped": False, **marker}
    memory_files = sorted(p.relative_to(vault).as_posix()
                          for p in (vault / MEMORY_FOLDER).glob("*.md") if p.name != "MEMORY.md")
    counter = OpenCounter(vault)
    service = app.consistency()
    results["versions_table_data_files"] = {"start": _table_files(app, "versions")}

    # ---- 0. warm-up
    report, warm_check_s, _ = counter.run(service.check)
    fixed, warm_fix_s, _ = counter.run(lambda: service.fix(report, automatic_only=True))
    results["warm_up"] = {"check_s": warm_check_s, "drift": report.counts(),
                          "fix_s": warm_fix_s, "applied": len(fixed.applied),
                          "left": [f.kind for f in fixed.left]}

    # ---- 1. baselines
    walk_s, walk_runs, walk_cpu_s = median_cpu_of(args.repeat, lambda: stat_walk(vault))
    _, files_walked = stat_walk(vault)
    scan_s, _ = median_of(args.repeat, lambda: scan_vault(vault, app.vault_filter))
    results["stat_walk"] = {"median_s": walk_s, "runs_s": walk_runs, "cpu_median_s": walk_cpu_s,
                            "files": files_walked}
    results["scan_vault_s"] = scan_s

    # ---- 2. check, nothing drifted
    runs: list[float] = []
    cpu_runs: list[float] = []
    clean_report: Any = None
    opened: list[str] = []
    for _ in range(args.repeat):
        cpu_started = time.process_time()
        clean_report, seconds, opened = counter.run(service.check)
        cpu_runs.append(time.process_time() - cpu_started)
        runs.append(seconds)
    check_s, check_cpu_s = statistics.median(runs), statistics.median(cpu_runs)
    results["check_unchanged"] = {"median_s": check_s, "runs_s": runs,
                                  "cpu_median_s": check_cpu_s,
                                  "vs_stat_walk": check_s / walk_s,
                                  "cpu_vs_stat_walk": check_cpu_s / walk_cpu_s,
                                  "target_vs_stat_walk": 3.0,
                                  **_summary(clean_report, opened, vault)}
    parts: dict[str, Callable[[], Any]] = {
        "scan_vault": lambda: scan_vault(vault, app.vault_filter),
        "store.file_index": app.store.file_index,
        "store.memory_properties": app.store.memory_properties,
        "versions.all_versions": app.versions.all_versions,
        "versions.needs_repair": app.versions.needs_repair,
        "recorder.bases+pending": lambda: (app.recorder.bases(), app.recorder.pending()),
    }
    results["check_parts_s"] = {name: median_of(args.repeat, call)[0]
                                for name, call in parts.items()}

    # ---- 3. stale entries
    rng = random.Random(args.seed + 1)
    chosen = sorted(rng.sample(memory_files, min(args.stale, len(memory_files))))
    stamp = datetime.now(UTC).isoformat(timespec="microseconds")
    for i, path in enumerate(chosen):
        with (vault / path).open("a", encoding="utf-8") as handle:
            handle.write(f"\nBench edit {i} at {stamp}: look again before the next release.\n")
    stale_report, stale_check_s, opened = counter.run(service.check)
    versions_before, embedded[0] = _version_count(app), 0
    repaired, fix_s, fix_opened = counter.run(
        lambda: service.fix(stale_report, automatic_only=True))
    chunks_embedded = embedded[0]
    versions_added = _version_count(app) - versions_before
    results["versions_table_data_files"]["after_fix"] = _table_files(app, "versions")
    final_runs: list[float] = []
    final_report: Any = None
    final_opened: list[str] = []
    for i in range(args.repeat):
        report_i, seconds, opened_i = counter.run(service.check)
        final_runs.append(seconds)
        if i == 0:
            final_report, final_opened = report_i, opened_i
    final_s = statistics.median(final_runs)
    stale_found = stale_report.counts().get("stale", 0)
    results["stale"] = {
        "made_stale": len(chosen),
        "check_s": stale_check_s, "check": _summary(stale_report, opened, vault),
        "stale_found": stale_found,
        "fix_s": fix_s, "fix_ms_per_entry": fix_s / max(1, stale_found) * 1000,
        "fix_applied": len(repaired.applied), "fix_left": [f.kind for f in repaired.left],
        "fix_deferred": repaired.deferred, "fix_chunks_embedded": chunks_embedded,
        "fix_versions_added": versions_added, "fix_vault_files_opened": len(fix_opened),
        "final_check_median_s": final_s, "final_check_runs_s": final_runs,
        "final_vs_unchanged": final_s / check_s,
        "final": _summary(final_report, final_opened, vault),
    }
    results["files"] = {"vault_files": files_walked, "checked": clean_report.files,
                        "memory_files": len(memory_files)}

    results["load_avg_end"] = os.getloadavg()
    print_table(results)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    print(f"wrote {RESULTS}")


def print_table(r: dict[str, Any]) -> None:
    sync, warm, unchanged, stale = r["sync"], r["warm_up"], r["check_unchanged"], r["stale"]
    rows = [
        ("corpus", r["corpus"]),
        ("load average at start / end", f"{r['load_avg_start'][0]:.1f} / "
                                        f"{r['load_avg_end'][0]:.1f}"),
        ("vault files: walked / checked", f"{r['files']['vault_files']} / "
                                         f"{r['files']['checked']}"),
        ("memory files", r["files"]["memory_files"]),
        ("sync", "skipped (store already built)" if sync["skipped"] else
         f"{sync['sync_s']:.1f} s, {sync['chunks_embedded']} chunks, "
         f"{sync['chunks_per_s']:.0f} chunks/s"),
        ("warm-up check / fix", f"{warm['check_s'] * 1000:.0f} ms / {warm['fix_s'] * 1000:.0f} ms"
                                f"  drift {warm['drift'] or '-'}"),
        ("stat walk (median)", f"{r['stat_walk']['median_s'] * 1000:.1f} ms, CPU "
                               f"{r['stat_walk']['cpu_median_s'] * 1000:.1f} ms"),
        ("scan_vault (median)", f"{r['scan_vault_s'] * 1000:.1f} ms"),
        ("check, unchanged (median)", f"{unchanged['median_s'] * 1000:.1f} ms, CPU "
                                      f"{unchanged['cpu_median_s'] * 1000:.1f} ms"),
        ("  check / stat walk", f"{unchanged['vs_stat_walk']:.2f}x (target <= 3x), CPU "
                                f"{unchanged['cpu_vs_stat_walk']:.2f}x"),
        ("  clean / read / opened", f"{unchanged['clean']} / {unchanged['read']} / "
                                    f"{unchanged['vault_files_opened']} "
                                    f"{unchanged['opened_sample']}"),
        *((f"  part: {name}", f"{s * 1000:.1f} ms") for name, s in r["check_parts_s"].items()),
        ("made stale", stale["made_stale"]),
        ("check with drift", f"{stale['check_s'] * 1000:.1f} ms, stale found "
                             f"{stale['stale_found']}, drift {stale['check']['drift']}, read "
                             f"{stale['check']['read']}, opened "
                             f"{stale['check']['vault_files_opened']}"),
        ("fix (automatic)", f"{stale['fix_s']:.2f} s, {stale['fix_ms_per_entry']:.1f} ms/entry, "
                            f"applied {stale['fix_applied']}, left {stale['fix_left'] or '-'}"),
        ("  chunks embedded / versions", f"{stale['fix_chunks_embedded']} / "
                                         f"{stale['fix_versions_added']}"),
        ("final check (median)", f"{stale['final_check_median_s'] * 1000:.1f} ms "
                                 f"({stale['final_vs_unchanged']:.1f}x the unchanged check), "
                                 f"clean {stale['final']['clean']}, "
                                 f"drift {stale['final']['drift'] or '-'}, "
                                 f"read {stale['final']['read']}"),
        ("versions table data files", f"{r['versions_table_data_files']['start']} at start, "
                                      f"{r['versions_table_data_files']['after_fix']} after "
                                      "the fix"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    sys.exit(main())
