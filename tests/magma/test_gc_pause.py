"""glibc's mapping threshold fixed for a long-lived process (magma.gc_pause.bound_heap): big
blocks freed go back to the system instead of staying in the arena among live ones."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from magma.gc_pause import MMAP_THRESHOLD_BYTES, bound_heap

glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")

# A search's shape in C: a big block mapped and freed (glibc then raises its threshold to
# that size), then many 1 MiB buffers written between 100 KiB blocks that stay alive, and the
# buffers freed. RssAnon (MiB) before the buffers, with them, and once they are freed.
_PROBE = """
import ctypes, sys
from magma.gc_pause import bound_heap
if sys.argv[1] == "bound":
    assert bound_heap()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def anon():
    line = next(l for l in open("/proc/self/status") if l.startswith("RssAnon"))
    return int(line.split()[1]) // 1024
big = libc.malloc(8 << 20)
ctypes.memset(big, 1, 8 << 20)
libc.free(big)
before = anon()
buffers, pins = [], []
for _ in range(64):
    block = libc.malloc(1 << 20)
    ctypes.memset(block, 1, 1 << 20)
    buffers.append(block)
    pins.append(libc.malloc(100 << 10))
held = anon()
for block in buffers:
    libc.free(block)
print(before, held, anon())
"""


def _probe(mode: str) -> tuple[int, int, int]:
    done = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True,
                          text=True, check=True, timeout=60)
    before, held, freed = (int(v) for v in done.stdout.split())
    return before, held, freed


@glibc
def test_freed_big_blocks_go_back_once_the_threshold_is_fixed() -> None:
    before, held, freed = _probe("bound")
    assert held - before >= 60  # the 64 MiB were written
    assert freed - before <= 4  # ... and given back at free
    before, held, freed = _probe("glibc")  # glibc's sliding threshold keeps them
    assert held - before >= 60
    assert freed - before >= 60


@glibc
def test_bound_heap_says_it_was_set() -> None:
    assert MMAP_THRESHOLD_BYTES == 128 * 1024
    assert bound_heap() is True
