"""When a note's file time says nothing of the note: the bursts of a bulk write.

A note without a date in its frontmatter or its name is dated by its file's modification
time (:func:`magma.catalogue.read_snapshot`), and recency ranks the newest first. A copy of
the vault (a ``git clone``, a sync service filling a new device, ``cp -r``, an import from
another app) writes every file at once: each note then looks written today, the notes that
carry a ``created:`` look years old, and recency puts the undated ones first whatever they
hold. So do the tools that rewrite many notes together (links updated after a rename, a
find-and-replace over the vault).

:func:`bulk_writes` finds those bursts in the file times of the notes read together: at
least :data:`BULK_MIN_NOTES` notes each written within :data:`BULK_GAP_NS` of the one before.
A note whose file time falls in one has no known day (no recency), as a note without any
date; a note edited since has a file time of its own again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["BULK_GAP_NS", "BULK_MIN_NOTES", "BulkWrites", "bulk_writes"]

#: Largest gap between two file times of one burst (nanoseconds): 2 s. A copy or a checkout
#: writes its files milliseconds apart; no one writes notes two seconds apart by hand (our
#: choice).
BULK_GAP_NS = 2_000_000_000
#: Fewest notes in a burst (our choice): a template that creates a handful of notes at once,
#: or a daily note and its links, stay dated by their files.
BULK_MIN_NOTES = 20


@dataclass(frozen=True, slots=True)
class BulkWrites:
    """The bursts found: ``starts`` and ``ends`` (``int64[k]``, nanoseconds, ascending,
    disjoint), each burst's first and last file time."""

    starts: np.ndarray
    ends: np.ndarray

    def holds(self, mtime_ns: int) -> bool:
        """Was a file written at ``mtime_ns`` written in one of the bursts?"""
        at = int(np.searchsorted(self.starts, mtime_ns, side="right")) - 1
        return at >= 0 and mtime_ns <= int(self.ends[at])

    def same(self, other: BulkWrites) -> bool:
        """Are these the bursts of ``other``?"""
        return bool(np.array_equal(self.starts, other.starts)
                    and np.array_equal(self.ends, other.ends))


NO_BURSTS = BulkWrites(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def bulk_writes(mtimes_ns: Iterable[int | None]) -> BulkWrites:
    """The bursts of at least :data:`BULK_MIN_NOTES` file times (nanoseconds since the
    epoch; ``None`` and 0, unknown, left out) each within :data:`BULK_GAP_NS` of the one
    before, sorted. O(n log n)."""
    times = np.sort(np.fromiter((t for t in mtimes_ns if t), dtype=np.int64))
    if len(times) < BULK_MIN_NOTES:
        return NO_BURSTS
    breaks = np.flatnonzero(np.diff(times) > BULK_GAP_NS) + 1
    firsts = np.concatenate([[0], breaks])
    lasts = np.concatenate([breaks, [len(times)]]) - 1
    big = lasts - firsts + 1 >= BULK_MIN_NOTES
    return BulkWrites(times[firsts[big]], times[lasts[big]])
