"""Several writer processes and a simulated Obsidian edit the same memories at once.

Every write carries a unique marker; afterwards each marker is in the memory or in a conflict
copy (zero lost), no reader ever saw a half-written file, and the daemon's index equals the
disk. The simulated Obsidian is a stand-in for the desktop app (see ``daemon_harness``); the
daemon runs with the token-hash fake embedder (this is about files, not meaning). The second
case widens the simulated Obsidian's gap between its check of the disk and its save (up to
5 ms), so that it saves over writers' edits and the lost-update repair (``ccb.writer``) must
bring them back. The larger run is ``bench/write_reliability.py``.
"""

from __future__ import annotations

from pathlib import Path

import daemon_harness as harness  # type: ignore[import-not-found]
import pytest

pytestmark = pytest.mark.scenario


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "save_gap_s"), [(1, 0.0), (2, 0.005)])
def test_writers_and_obsidian_lose_nothing(tmp_path: Path, seed: int, save_gap_s: float) -> None:
    result = harness.run_writers_trial(seed, tmp_path, writers=3, edits=12, obsidian_edits=12,
                                       save_gap_s=save_gap_s)
    assert result.reads > 0
    assert result.ok, (result.lost, result.torn_reads, result.index_problems)
    assert result.markers == 3 * 12 + 12
