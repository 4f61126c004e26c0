"""How many BLAS threads numpy's work uses for a while (OpenBLAS, as numpy's wheels ship it).

OpenBLAS splits a matrix product over as many threads as the machine has cores, whatever the
size, and its threads wait for each other by spinning. For the forward pass of one short text
(a ``remember``'s draft, a search query) on a 2-core machine that something else keeps busy,
that costs more than it gains: one sentence took p50 23-94 ms and p90 63-240 ms on two
threads against p50 5-10 ms and p90 9-17 ms on one (our measure: load average 5.8, USE
multilingual v3, :mod:`magma.embedder`). :func:`blas_threads` sets the count
(``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later: it only sets the number the
next products read, and returns the one before) and puts it back after the block. The count
is the process's: the blocks of all threads take one lock, so each puts back what it found,
and BLAS work of other threads meanwhile runs on that count too. Where numpy's BLAS is not
an OpenBLAS that has the function, nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["blas_threads"]

#: The OpenBLAS function that sets the count (0: the one OpenBLAS chose at start).
_LOCAL_SETTER = "openblas_set_num_threads_local"
#: Held for a block of :func:`blas_threads` (by one thread at a time; re-entrant).
_HELD = threading.RLock()


@contextmanager
def blas_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` (≥ 1) BLAS threads, then put back the count it found
    (one block at a time in the process; a thread may nest them). A no-op where numpy's
    BLAS cannot be told (not OpenBLAS, or one older than 0.3.27)."""
    setter = _local_setter()
    if setter is None:
        yield
        return
    with _HELD:
        before = setter(count)
        try:
            yield
        finally:
            setter(before)


@functools.cache
def _local_setter() -> Callable[[int], int] | None:
    for path in _openblas_paths():
        try:
            setter = getattr(ctypes.CDLL(str(path)), _LOCAL_SETTER)
        except (OSError, AttributeError):
            continue
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
        return setter
    return None


def _openblas_paths() -> list[Path]:
    """The OpenBLAS libraries this process has loaded (Linux: its memory map), else those
    numpy's wheel ships beside it (``numpy.libs``, ``numpy/.dylibs``)."""
    found: list[Path] = []
    if sys.platform.startswith("linux"):
        try:
            maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
        except OSError:
            maps = ""
        for line in maps.splitlines():
            name = line.rsplit(" ", 1)[-1]
            if "openblas" in name.rsplit("/", 1)[-1].lower() and Path(name) not in found:
                found.append(Path(name))
    package = Path(np.__file__).parent
    for folder in (package.parent / "numpy.libs", package / ".dylibs"):
        if folder.is_dir():
            found.extend(p for p in sorted(folder.iterdir())
                         if "openblas" in p.name.lower() and p not in found)
    return found
