"""Taking deleted rows off the storage of a table that other devices write at the same time.

A LanceDB delete only marks rows deleted: their bytes stay in the data files, and compaction
rewrites a file only once enough of it is deleted (``optimize``). ``dreamd forget`` must leave
no byte of a memory behind, so a table is rewritten after the delete. A table only this
device writes (its index tables) may be rewritten whole (``mode="overwrite"``); a table every
device of a shared store writes (``versions``, ``recalls``) may not: an overwrite is built
from what this device read, and Lance commits it over any rows another device appended in
between, which are then lost — measured against an S3 server, 30 appends of one device while
the other overwrote: all 30 gone.

:func:`rewrite_live_rows` rewrites instead with one Lance *update* of every live row. An update
is checked at commit like any write (a conditional put of the next manifest on S3, an atomic
rename on disk): rows another device appended meanwhile are new data files the update never
touched, so they stay; an update or delete of the same data files by another device makes one
of the two commits retry or fail (an error, never a lost row). Every old data file then holds
only deleted rows, and the cleanup of old table versions removes it.
"""

from __future__ import annotations

import warnings
from datetime import timedelta
from typing import Any

__all__ = ["rewrite_live_rows"]


def rewrite_live_rows(table: Any, column: str) -> None:
    """Rewrite every live row of the LanceDB ``table`` into new data files (an update that
    sets ``column`` to itself) and drop every older table version, so rows deleted before
    leave the storage. Safe while other devices append; see the module docstring.

    Raises what LanceDB raises (the caller wraps it in its ``StoreError``).
    """
    table.checkout_latest()
    # also on an empty table: the update is then the commit after the delete, so the cleanup
    # drops the delete's own record, whose filter names what was deleted
    table.update(values_sql={column: column})
    with warnings.catch_warnings():
        # lancedb warns that cleanup_older_than=0 breaks readers of an older table version;
        # every read of these tables starts with checkout_latest.
        warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than")
        table.optimize(cleanup_older_than=timedelta(0))
