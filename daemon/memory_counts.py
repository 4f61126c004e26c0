"""What ``dreamd status`` counts as memories: what a user means by the word.

A user counts the memories an assistant is given: the live memory files of the memory folder,
one a line of ``MEMORY.md`` (:func:`daemon.memory_index_keeper.index_entries`: not
superseded, archived or expired; those left out of the file to fit Claude Code's limits
count too). The index holds more rows with a memory type, and ``memories`` counted them all
(the demo vault: 5 where ``MEMORY.md`` lists 4): a memory superseded or archived, kept for
its history; a note outside the memory folder whose ``type`` property is a memory type
(``edge-cases/…/memory/feedback_split.md``: searched by its type, never listed); and the
entries of the memory folder's entry files (``facts.md#key``, one memory a line). Each is
counted apart, under its own name, so the numbers add up to the index's rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from ccb.entry_notes import is_entry_path
from consistency.lifecycle import MemoryState, is_current

__all__ = ["memory_counts"]


def memory_counts(properties: Mapping[str, Mapping[str, Any]], memory_folder: str,
                  today: date) -> dict[str, int]:
    """``{"memories", "memories_superseded_or_archived", "memory_entries",
    "memory_typed_notes_elsewhere"}`` from every memory row of the index (``properties``:
    :meth:`magma.store.MagmaStore.memory_properties`, ``{path: properties}``), the memory
    folder's files current on ``today`` first (module docstring). Pure."""
    folder = memory_folder.strip("/") + "/" if memory_folder.strip("/") else ""
    live = kept = entries = elsewhere = 0
    for path, props in properties.items():
        if is_entry_path(path):
            entries += is_current(MemoryState.of(props, past=False), today)
        elif not path.startswith(folder):
            elsewhere += 1
        elif is_current(MemoryState.of(props, past=False), today):
            live += 1
        else:
            kept += 1
    return {"memories": live, "memories_superseded_or_archived": kept,
            "memory_entries": entries, "memory_typed_notes_elsewhere": elsewhere}
