"""Python's cyclic garbage collector held off while one read-only pass builds its values.

A ``dreamd check`` builds a snapshot of the vault, the index and the history (a few hundred
thousand small objects at 7,000 files), compares it and drops it. While it is being built,
the collector's young generations keep filling with objects that are still in use, and every
few checks a full collection walks every object of the process (177,000 in a daemon with the
index open): 127 ms each, 34 ms of CPU per check on average, measured with ``gc.callbacks``
over 15 checks of the 7,000-file vault of ``bench/check_bench.py``. The objects of one pass
hold no reference cycles and are freed by reference counting when it returns, so holding the
collector off for the pass frees the same memory without walking the rest of the process.

A dream's consolidation plan reads a claim of every memory it compares and keeps them while
it decides (10,000 memories: 1.1 s of CPU in full collections, measured the same way over
one dream of ``bench/dream_bench.py``'s planted set).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` block and enable it again after (only
    when it was enabled before: a caller that turned it off keeps it off). Reference
    counting frees memory as usual meanwhile; nothing is raised."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
