"""Python's cyclic garbage collector paused while many long-lived objects are made at once.

A whole vault graph and the rows it is built from are hundreds of thousands of dicts, sets,
tuples and records, none of them garbage; every 700 of them set off a young collection, and
the older collections that follow scan all of them again. On the 8,049-file vault of
``bench/graph_bench.py`` (66,087 edges) those collections cost about 0.35 s of CPU of the cold
read and build (measured by running each part with the collector on, then off: the 63,438
link records 0.23 s → 0.08 s of CPU, the build 0.55 s → 0.35 s). Reference counting still
frees what is let go meanwhile.

The same holds for a ``dreamd check`` building its snapshot (7,000 files: 34 ms of CPU per
check in full collections walking the daemon's 177,000 objects, measured with
``gc.callbacks`` over 15 checks of ``bench/check_bench.py``'s vault) and for a dream
(10,000 memories of ``bench/dream_bench.py``'s planted set: 1.1 s of CPU in full
collections while planning the consolidation; with that paused, 0.6 s more in five full
collections while reading the files and writing the records, ``MEMORY.md`` and the state).

A process that holds an index for its life (the daemon, once warm) moves what it loaded out
of the collector's sight (:func:`settle_loaded`): a full collection then walks only what was
made since. Measured on a 14,017-note vault (127,283 chunks) with ``gc.callbacks``: a full
collection took ≈465 ms, twice in six saves of a note, each save otherwise ≈0.2–0.5 s; it
grows with the objects held (≈7× at 100,000 notes).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "settle_loaded"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the ``with`` block, turned back on after when it was on
    (nested blocks leave it as the outer one found it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def settle_loaded() -> None:
    """Collect once, then move every object alive now to the collector's permanent
    generation (``gc.freeze``): the snapshot, the graph and the indexes a warm process
    loaded are no longer walked by each full collection. Reference counting still frees
    them when they are let go (a snapshot replaced); a cycle among them is kept."""
    gc.collect()
    gc.freeze()
