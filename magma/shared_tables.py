"""Maintaining a table that every device of a shared store writes (``versions``, ``recalls``).

Each device keeps its own index tables, but the version history and the recall counts are one
table for all. Two things go wrong there that cannot on a table one process writes:

**An overwrite loses the other device's rows.** A LanceDB delete only marks rows deleted: their
bytes stay in the data files, and compaction rewrites a file only once enough of it is deleted
(``optimize``). ``dreamd forget`` must leave no byte of a memory behind, so a table is rewritten
after the delete. Rewritten whole (``mode="overwrite"``), the new table is what this device
read, and Lance commits it over any rows another device appended in between — measured
against an S3 server: 30 appends of one device while the other overwrote, all 30 gone.
:func:`rewrite_live_rows` rewrites instead with one Lance *update* of every live row. An update
is checked at commit like any write (a conditional put of the next manifest on S3, an atomic
rename on disk): rows another device appended meanwhile are in data files the update never
touched, so they stay. Every old data file then holds only deleted rows, and the cleanup of
old table versions removes it.

**Two maintenance commits collide.** Two devices compacting the table at once (each sync ends
with one): Lance commits the first and refuses the second ("Retryable commit conflict … This
Rewrite transaction …"), measured with two devices syncing at the same moment on S3.
:func:`with_retries` reads the latest table version and runs the step again, a few times.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

__all__ = ["COMMIT_ATTEMPTS", "optimize", "rewrite_live_rows", "with_retries"]

T = TypeVar("T")

#: Tries of one maintenance step before its error is raised; waits 0.1, 0.2, 0.4 s between
#: (a collision resolves once the other device's commit is in: one round trip).
COMMIT_ATTEMPTS = 4
_FIRST_WAIT_S = 0.1


def with_retries(table: Any, step: Callable[[], T]) -> T:
    """``step()`` on the latest version of ``table``, tried again on the then latest version
    when it fails (another device committed first); raises its last error after
    :data:`COMMIT_ATTEMPTS` tries. Only for steps that may simply run again (compaction,
    cleanup, a rewrite of the live rows)."""
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            table.checkout_latest()
            return step()
        except Exception:
            if attempt == COMMIT_ATTEMPTS - 1:
                raise
            time.sleep(_FIRST_WAIT_S * 2**attempt)
    raise AssertionError("unreachable")  # (the loop returns or raises)


def optimize(table: Any, cleanup_older_than: timedelta | None) -> None:
    """``table.optimize`` (compaction, then the cleanup of table versions older than
    ``cleanup_older_than``; ``None``: LanceDB's default), :func:`with_retries`."""
    def step() -> None:
        with warnings.catch_warnings():
            # lancedb warns that a short cleanup breaks readers of an older table version;
            # every read of these tables starts with checkout_latest.
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than")
            table.optimize(cleanup_older_than=cleanup_older_than)

    with_retries(table, step)


def rewrite_live_rows(table: Any, column: str) -> None:
    """Rewrite every live row of the LanceDB ``table`` into new data files (an update that
    sets ``column`` to itself) and drop every older table version, so rows deleted before
    leave the storage. Safe while other devices append; see the module docstring.

    Raises what LanceDB raises (the caller wraps it in its ``StoreError``).
    """
    # also on an empty table: the update is then the commit after the delete, so the cleanup
    # drops the delete's own record, whose filter names what was deleted
    with_retries(table, lambda: table.update(values_sql={column: column}))
    optimize(table, timedelta(0))
