"""Nothing a user wrote is lost when a dreamd command is killed with SIGKILL mid-operation.

Each trial (``soak_trial.run_soak_trial``) copies the demo vault, syncs it, runs one operation
as a real ``dreamd`` process — here a superseding ``remember``, ``forget`` of a memory the
trial made, ``rollback``, ``dream --force`` and ``dreamd run`` with file operations and a
served ``remember`` — and SIGKILLs it at a seeded moment while the user writes marker lines
by hand (appended, rewritten in place, saved atomically). Then ``dreamd sync`` and ``dreamd
check`` (``check --fix`` once on drift) run in another process, and the trial checks that
every marker is in its file or a conflict copy, every acknowledged ``remember`` is in a memory
file, every ``.md`` file parses whole, one ``check --fix`` leaves no drift, the index equals
the disk, and an acknowledged ``forget`` left no byte of the memory's text in the vault or the
state folder.

The commands run with the token-hash FAKE embedder (see ``daemon_harness``): these trials are
about files, not meaning. ``bench/soak.py`` runs the same trials by the hundred.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import soak_trial  # tests/support (pytest pythonpath)

pytestmark = pytest.mark.scenario

# (seed, operation): seeds whose kill lands mid-operation after it began writing (checked
# with ``bench/soak.py --seed S --trials 1 --operations OP``), so the test covers the
# half-done states, not only a kill before or after the command.
TRIALS = (
    (20261205, "remember-supersede"),
    (20261205, "forget"),
    (20261211, "rollback"),
    (20261206, "dream"),
    (20261205, "run"),
)


def test_kill9_mid_operation_loses_nothing_the_user_wrote(tmp_path: Path) -> None:
    pool = soak_trial.SessionPool(tmp_path / "workers")
    try:
        results = [soak_trial.run_soak_trial(seed, tmp_path / f"{operation}-{seed}", pool,
                                             operation=operation)
                   for seed, operation in TRIALS]
    finally:
        pool.close()
    failed = [r for r in results if not r.ok]
    assert not failed, (
        f"{len(failed)} of {len(results)} soak trials failed:\n"
        + "\n".join(r.summary() for r in failed)
    )
    assert all(r.markers for r in results)
    assert all(m.found != "LOST" for r in results for m in r.markers)
