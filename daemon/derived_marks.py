"""Search's mark on a memory derived from a changed source.

A hit that is a live memory derived (``derived_from``, directly or through other derived
memories) from a source that changed since — superseded, merged away, archived, gone or
forgotten (:class:`consistency.graph_checks.ChangedSource`, what ``dreamd check`` lists) —
carries one more ``why``: ``derived from a changed source: <chain> (<change>)``, until a
dream re-checks it (:mod:`daemon.dream_recheck`) or the user edits it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from consistency.graph_checks import ChangedSource, graph_drifts
from daemon.memory_pool import StoredMemory
from magma.lineage import lineage_graph, lineage_memory
from magma.search import SearchHit

__all__ = ["MARK", "ChangedSourceMarks", "marked"]

#: How a mark's ``why`` begins.
MARK = "derived from a changed source"


class ChangedSourceMarks:
    """``{memory path: why}`` of the memories derived from a changed source, from the
    memory files ``memories()`` gives (:meth:`daemon.memory_pool.MemoryPool.memories`);
    worked out again only when a memory file changed."""

    def __init__(self, memories: Callable[[], Sequence[StoredMemory]]) -> None:
        self._memories = memories
        self._key: tuple[tuple[str, int], ...] | None = None
        self._marks: dict[str, str] = {}

    def __call__(self) -> dict[str, str]:
        stored = self._memories()
        key = tuple((m.path, hash(m.data)) for m in stored)
        if key != self._key:
            graph = lineage_graph(lineage_memory(m.path, m.note.properties) for m in stored
                                  if m.note.memory is not None)
            marks: dict[str, str] = {}
            for drift in graph_drifts(graph):
                if isinstance(drift, ChangedSource) and drift.path not in marks:
                    marks[drift.path] = (f"{MARK}: {' → '.join(drift.chain[1:])} "
                                         f"({drift.change})")
            self._key, self._marks = key, marks
        return self._marks


def marked(hits: Sequence[SearchHit], marks: Mapping[str, str]) -> list[SearchHit]:
    """``hits`` with the mark of each memory hit in ``marks`` added to its ``why``. Pure."""
    return [replace(h, why=(*h.why, marks[h.path])) if h.memory_type and h.path in marks
            else h for h in hits]
