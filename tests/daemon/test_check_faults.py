"""Fault injection for the version history: kill -9 during writes, rollbacks and repairs.

Each trial (``daemon_harness.run_versions_trial``) indexes a copy of the demo vault, starts
the daemon as a subprocess (token-hash FAKE embedder, periodic check every 1.2 s), applies
seeded operations on the memories — user edits saved atomically or written in place,
``remember``, ``rollback`` to a version that exists, ``check --fix`` — each API operation
through the real ``dreamd`` CLI in a child process (which may itself be SIGKILLed) or in this
process; SIGKILLs the daemon at a random moment, goes on while it is down, restarts it
(sometimes killing it again during its start-up repairs) and checks:

- after the restart ``check`` is clean, or every finding is one ``check --fix`` repairs and
  the check after the fix is clean;
- no version seen during the trial (before the kill too) is lost or has changed content;
- every content a memory file had while the daemon was settled is in that memory's history;
- no ``(memory, n)`` is in the version table twice, the plain-text archive files match the
  table (``needs_repair()`` is False), and the index equals the disk.

``bench/check_faults.py`` runs the same trial by the hundred.
"""

from __future__ import annotations

from pathlib import Path

import daemon_harness as h  # tests/support (pytest pythonpath)

# Seeds whose plans (``daemon_harness.describe_plan(seed, ops=10, cli_share=0.3)``) cover the
# kinds of kill: 20261217 SIGKILLs the daemon and the CLI during a CLI rollback, then the
# restarted daemon during its start-up check and repairs; 20261203 SIGKILLs the daemon
# during a CLI ``check --fix``. Both mix user edits, remembers, rollbacks and fixes made in
# this process. Few CLI runs and restarts: each new process costs seconds of imports.
SEEDS = (20261217, 20261203)


def test_kill9_during_writes_rollbacks_and_repairs_loses_no_version(tmp_path: Path) -> None:
    results = [h.run_versions_trial(seed, tmp_path / f"trial-{seed}", ops=10, cli_share=0.3)
               for seed in SEEDS]
    failed = [r for r in results if not r.ok]
    assert not failed, (
        f"{len(failed)} of {len(results)} version fault-injection trials failed:\n"
        + "\n".join(r.summary() for r in failed)
    )
    assert all(r.versions_seen and r.settled_contents for r in results)
