"""The bursts of a bulk write (magma/file_dates.py): a copy, a checkout or a sync writes the
vault's files milliseconds apart, and their file times say nothing of the notes."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from magma.file_dates import BULK_GAP_NS, BULK_MIN_NOTES, bulk_writes

SECOND = 1_000_000_000
DAY = 86_400 * SECOND
T0 = 1_764_000_000 * SECOND  # late 2025


def test_a_copy_of_the_vault_is_one_burst_and_notes_written_by_hand_are_not() -> None:
    copied = [T0 + i * 3_000_000 for i in range(400)]  # 3 ms apart
    by_hand = [T0 - k * DAY + k * 7 * SECOND for k in range(1, 60)]  # a note a day
    edited = T0 + 3 * DAY  # a note edited after the copy
    times = [*by_hand, *copied, edited]
    random.Random(7).shuffle(times)
    bulk = bulk_writes(times)
    assert all(bulk.holds(t) for t in copied)
    assert not any(bulk.holds(t) for t in [*by_hand, edited])
    assert not bulk.holds(T0 - 1) and not bulk.holds(copied[-1] + 1)


def test_a_handful_written_at_once_keep_their_file_dates() -> None:
    few = [T0 + i * SECOND // 10 for i in range(BULK_MIN_NOTES - 1)]
    assert not any(bulk_writes(few).holds(t) for t in few)


def test_a_slow_sync_chains_its_files_and_a_pause_ends_the_burst() -> None:
    slow = [T0 + i * (BULK_GAP_NS - 1) for i in range(BULK_MIN_NOTES)]  # just under the gap
    paused = [slow[-1] + BULK_GAP_NS + 1 + i for i in range(BULK_MIN_NOTES - 1)]
    bulk = bulk_writes([*slow, *paused])
    assert all(bulk.holds(t) for t in slow)
    assert not any(bulk.holds(t) for t in paused)


def test_unknown_file_times_are_left_out() -> None:
    assert not bulk_writes([None, 0] * 50).holds(0)


@given(st.lists(st.integers(min_value=1, max_value=40 * SECOND), max_size=120))
def test_a_time_is_held_exactly_when_its_chain_of_close_times_is_long_enough(
        times: list[int]) -> None:
    bulk = bulk_writes(times)
    ordered = sorted(times)
    for t in times:
        # the chain through t: neighbours within the gap, on both sides
        i = j = ordered.index(t)
        while i > 0 and ordered[i] - ordered[i - 1] <= BULK_GAP_NS:
            i -= 1
        while j + 1 < len(ordered) and ordered[j + 1] - ordered[j] <= BULK_GAP_NS:
            j += 1
        assert bulk.holds(t) == (j - i + 1 >= BULK_MIN_NOTES)
    again = bulk_writes(list(reversed(times)))  # the order read in does not matter
    assert again.starts.tolist() == bulk.starts.tolist()
    assert again.ends.tolist() == bulk.ends.tolist()
