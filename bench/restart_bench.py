"""A restart with nothing changed (a new ``App`` and ``sync()``) against a bare stat walk, in
process, with where its time goes.

    .venv/bin/python bench/restart_bench.py VAULT --data-dir DIR [--fake-embedder] [--repeat 7]

``VAULT`` must be indexed in ``--data-dir`` already (``DREAMD_STORAGE__DATA_DIR``; the user's
dreamd is never touched); a first sync is run (and not timed) when it is not, and one warm-up
restart follows (the first restart after a sync seals the index, :mod:`magma.store_seal`).
``--fake-embedder``: the tests' token-hash FAKE (``tests/support/fakes.py``) for an index
built with it (a restart with nothing changed embeds nothing, so the figures do not depend on
the model; an index built with the real model needs the real one, or the store refuses the
model id). Every restart is checked to have found nothing to add, change or embed.

Prints, median of ``--repeat`` runs alternating walk and restart: wall and CPU time
(``time.process_time``, every thread of the process) of each, their ratio (issue 24's target:
≤ 3×), and the wall and CPU time of the parts of a restart (each part wrapped for the run).
On a machine shared with other work the wall times wander; the CPU times hold better.
Never fails on timings.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scale_bench import stat_walk  # the same bare walk as the scale bench's baseline

REPO = Path(__file__).resolve().parents[1]
#: The parts timed: ``(module, attribute path)``, wrapped where the restart looks them up.
PARTS = (
    ("daemon.sync", "scan_vault"), ("magma.store", "MagmaStore.file_index"),
    ("daemon.sync", "plan_sync"), ("magma.store", "MagmaStore.orphaned_paths"),
    ("magma.graph_keeper", "GraphKeeper.follow"), ("magma.store_tables", "StoreTables.open"),
    ("magma.store", "MagmaStore.refresh"), ("daemon.indexing", "Indexing.record_sync"),
    ("daemon.indexing", "Indexing.make_syncer"), ("daemon.lock", "DaemonLock.__enter__"),
    ("daemon.sync", "Syncer._run"),
)


def timed_parts() -> dict[str, list[float]]:
    """Wrap :data:`PARTS` -> ``{part: [wall s, CPU s, calls]}``, summed while they run."""
    spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for module_name, qualified in PARTS:
        owner: Any = importlib.import_module(module_name)
        *outer, name = qualified.split(".")
        for part in outer:
            owner = getattr(owner, part)
        original = getattr(owner, name)

        def wrapper(*args: Any, _f: Callable[..., Any] = original, _q: str = qualified,
                    **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                entry = spent[_q]
                entry[0] += time.perf_counter() - wall
                entry[1] += time.process_time() - cpu
                entry[2] += 1

        setattr(owner, name, functools.wraps(original)(wrapper))
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--fake-embedder", action="store_true")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(args.data_dir.resolve())
    os.environ["DREAMD_CONFIG"] = str(args.data_dir.resolve() / "no-config.toml")
    sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]
    from daemon.app import App, load
    from daemon.logs import configure_logging

    configure_logging(level="warning")
    vault = args.vault.resolve()

    def embedder() -> Any:
        if not args.fake_embedder:
            return None
        from fakes import TokenHashEmbedder

        return TokenHashEmbedder()

    def restart() -> None:
        app = App.create(load(None, None, {"vault.path": str(vault)}), embedder=embedder())
        report = app.sync()
        app.close()
        if report.added or report.modified or report.deleted or report.chunks_embedded:
            raise SystemExit(f"the vault changed during the run: {report}")

    first = App.create(load(None, None, {"vault.path": str(vault)}), embedder=embedder())
    if not first.indexing.is_indexed():
        print(f"indexing {vault} first (not timed) ...", flush=True)
    first.sync()
    first.close()
    restart()  # seals the index after a first sync (magma.store_seal)
    spent = timed_parts()
    walks: list[tuple[float, float]] = []
    restarts: list[tuple[float, float]] = []
    for _ in range(args.repeat):
        for runs, call in ((walks, lambda: stat_walk(vault)), (restarts, restart)):
            wall, cpu = time.perf_counter(), time.process_time()
            call()
            runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    files = stat_walk(vault)
    walk = [statistics.median(r[i] for r in walks) for i in (0, 1)]
    again = [statistics.median(r[i] for r in restarts) for i in (0, 1)]
    print(f"{vault}: {files:,} files, {args.repeat} runs, dreamd from "
          f"{Path(sys.modules['daemon'].__file__ or '?').parent.parent}")
    print(f"  stat walk       wall {walk[0] * 1000:7.1f} ms   CPU {walk[1] * 1000:7.1f} ms")
    print(f"  restart         wall {again[0] * 1000:7.1f} ms   CPU {again[1] * 1000:7.1f} ms")
    print(f"  restart / walk  wall {again[0] / walk[0]:.2f}x     CPU {again[1] / walk[1]:.2f}x"
          "   (target ≤ 3x)")
    print("  parts (per restart):")
    for part, (wall_s, cpu_s, calls) in sorted(spent.items(), key=lambda kv: -kv[1][1]):
        print(f"    {part:<32} wall {wall_s / args.repeat * 1000:7.1f} ms   CPU "
              f"{cpu_s / args.repeat * 1000:7.1f} ms   calls {calls / args.repeat:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
