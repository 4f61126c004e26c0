"""Reliability of ``dreamd run`` under ``kill -9``: the index heals to equal the disk.

Each trial (``daemon_harness.run_trial``) starts the daemon as a subprocess on a copy of the
demo vault, applies seeded random file operations (create, modify, delete, rename, move into
a new folder, folder rename, atomic save), SIGKILLs the daemon at a random moment while it
works, applies the rest while it is down, restarts it, waits (bounded) for the index to equal
the disk, stops it with SIGTERM and checks every row: each note's stored content hash is the
SHA-256 of its file, no orphans, no missing files, no duplicate ``files.path`` /
``chunks.chunk_id`` / ``links.link_id``, and each note's chunks are what the file gives now.

The daemon runs with the token-hash FAKE embedder (see ``daemon_harness``): this test is about
rows and files, not meaning. ``bench/daemon_reliability.py`` runs the same trials by the
hundred.
"""

from __future__ import annotations

from pathlib import Path

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest

pytestmark = pytest.mark.scenario

TRIALS = 3
SEED = 20261130


def test_kill9_while_applying_then_restart_heals_the_index(tmp_path: Path) -> None:
    results = [h.run_trial(SEED + n, tmp_path / f"trial-{n}") for n in range(TRIALS)]
    failed = [r for r in results if not r.ok]
    assert not failed, (
        f"{len(failed)} of {len(results)} kill -9 trials failed:\n"
        + "\n".join(r.summary() for r in failed)
    )
