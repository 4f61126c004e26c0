"""The cold index's per-note work before embedding, profiled: the "reading" phase of a sync.

    .venv/bin/python bench/read_profile.py [--vault DIR] [--notes 2000] [--work DIR]
        [--profile] [--dump FILE]

Copies the first ``--notes`` notes (path order) of ``--vault`` (``bench/big_vault.py``'s)
into ``--work``, points dreamd's data folder there (the user's dreamd is not touched), and
times (wall and CPU: the machine may be shared) :meth:`daemon.sync.Syncer._read_plan` on the
whole copy as a cold sync does: every note read, parsed, its credentials withheld, queued
(nothing is embedded or written).
``--profile`` prints cProfile's top functions by cumulative time; ``--dump`` writes every
queued note's chunks (path, chunk text, content hash) as JSON lines, to compare two
checkouts' output byte for byte. Prints notes/s of the phase and of ``parse_note`` alone
on the same files (the floor). Never fails on timings.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), *(p for p in os.environ.get("PYTHONPATH", "").split(
    os.pathsep) if p), str(REPO)]

import scale_bench  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vault", type=Path, default=Path("/tmp/big24/vault"))
    parser.add_argument("--notes", type=int, default=2_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/read_profile"))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--dump", type=Path)
    args = parser.parse_args(argv)
    indexed = args.work / f"indexed-{args.notes}"
    copied = scale_bench.indexed_copy(args.vault, indexed, args.notes)
    scale_bench.point_env(args.work, None, cache_mb=0)

    from ccb.parse import parse_note
    from daemon.sync import _NoProgress, plan_sync
    from magma.chunking import chunk_note

    app = scale_bench.make_app(indexed)
    outer = app.make_syncer()
    syncer = outer.syncers[0] if hasattr(outer, "syncers") else outer
    scan = syncer._scan()
    index = syncer._index()
    plan = plan_sync(scan.entries, index)
    profile = cProfile.Profile() if args.profile else None
    started, cpu = time.perf_counter(), time.process_time()
    if profile is not None:
        profile.enable()
    work, _renames = syncer._read_plan(plan, index, _NoProgress())
    if profile is not None:
        profile.disable()
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    files = [e.path for e in (*plan.new, *plan.changed)]
    started = time.process_time()
    for rel in files:
        parse_note(rel, (indexed / rel).read_bytes())
    parse_cpu = time.process_time() - started
    print(f"{copied:,} notes copied; reading phase: {len(files):,} files in {took:.2f} s "
          f"wall, {cpu:.2f} s CPU ({len(files) / cpu:.0f} files per CPU second; "
          f"{len(work.notes):,} notes queued, "
          f"{sum(1 for r in work.credentials.values() if r):,} with credentials withheld); "
          f"parse_note alone {parse_cpu:.2f} s CPU ({len(files) / parse_cpu:.0f} files/s)",
          flush=True)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumtime").print_stats(30)
    if args.dump is not None:
        with args.dump.open("w", encoding="utf-8") as out:
            for entry, note, _note_id in work.notes:
                for c in chunk_note(note, max_chars=syncer.chunk_max_chars):
                    out.write(json.dumps([entry.path, c.embed_text, c.content_hash],
                                         ensure_ascii=False) + "\n")
    app.close()


if __name__ == "__main__":
    main()
