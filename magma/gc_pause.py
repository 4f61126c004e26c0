"""Python's cyclic garbage collector paused while many long-lived objects are made at once,
and the C heap's free pages given back once a big build let its scaffolding go
(:func:`trim_heap`).

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

import ctypes
import ctypes.util
import gc
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["MMAP_THRESHOLD_BYTES", "bound_heap", "collector_paused", "settle_loaded",
           "trim_heap"]


def _glibc() -> Any:
    """The C library when it is glibc (it has ``malloc_trim``), else ``None``."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


#: glibc, for :func:`trim_heap` (``None`` on other C libraries).
_LIBC = _glibc()
#: ``mallopt``'s parameter of the size from which glibc gives a block its own mapping
#: (``M_MMAP_THRESHOLD``, <malloc.h>).
_M_MMAP_THRESHOLD = -3
#: Bytes from which a long-lived process's C allocations get a mapping of their own, given
#: back to the system when freed (:func:`bound_heap`). glibc starts at 128 KiB but raises
#: the threshold to each mapped block freed (up to 32 MiB), so a search's big read buffers
#: and score arrays soon come from its arenas, where they stay once freed, among live
#: blocks. On the 100,000-note bench index (``bench/warm_memory.py --searches 50``, one
#: thread per LanceDB worker and arena), RssAnon once warm and after 50 searches, trimmed:
#: 1,395 / 1,567 MB with glibc's sliding threshold, 1,346 / 1,435 MB with it fixed at 128 KiB,
#: 1,355 / 1,451 MB with two arenas (``MALLOC_ARENA_MAX=2``) instead; untrimmed after 100
#: searches 1,878, 1,493 and 1,731 MB.
MMAP_THRESHOLD_BYTES = 128 * 2**10


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


def bound_heap(mmap_threshold_bytes: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Fix glibc's mapping threshold at ``mmap_threshold_bytes`` for the rest of the process
    (:data:`MMAP_THRESHOLD_BYTES`; ``mallopt(M_MMAP_THRESHOLD)``, which also stops glibc from
    raising it) -> whether it was set (``False`` on other C libraries)."""
    return _LIBC is not None and bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, mmap_threshold_bytes))


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere), and the free pages of Arrow's memory pool (``release_unused``). Reading every
    chunk leaves LanceDB's freed read buffers in the heap, among the live strings of the
    chunk lists, where the allocator keeps them: after streaming the 700,000 chunks of a
    100,000-note vault and keeping nothing, RSS stayed at 652 MB, 312 MB once trimmed (a
    probe of ``to_batches`` on ``bench/vector_daemon_bench.py``'s table). Arrow's pool
    (mimalloc) keeps what a read let go the same way: the files and links of that vault
    read for its graph and let go left +165 MB, +69 MB once released
    (``bench/graph_memory.py``)."""
    import pyarrow  # (here: the collector's helpers are imported where Arrow is not needed)

    if _LIBC is not None:
        _LIBC.malloc_trim(0)
    pyarrow.default_memory_pool().release_unused()
