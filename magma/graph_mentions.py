"""Which notes a memory mentions, kept in step one file at a time (pure).

A memory *mentions* a note when its text (description and body) holds the note's title, one
of its aliases or its memory name as a run of whole words, compared in the name index's form
(:func:`magma.catalogue.norm`: NFC, case-folded, one space apart); the graph step walks
these edges (:func:`magma.graph_step.step_graph`). Names shorter than
:data:`magma.graph_step.MIN_MENTION_CHARS` characters or longer than :data:`MAX_NAME_WORDS`
words are not looked for.

:class:`MentionIndex` answers, after each change, which memories' mentions may have changed,
so the vault graph rewrites the ``mentions`` edges of those alone: a memory whose text
changed is read again (O(words × :data:`MAX_NAME_WORDS`)); a name a note gains is looked for
in every memory's text (one substring test per memory); a name a note loses touches only the
memories that held it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from magma.buckets import bucket_add, bucket_discard, members
from magma.catalogue import norm
from magma.graph_step import MIN_MENTION_CHARS

__all__ = ["MAX_NAME_WORDS", "MentionIndex"]

#: Most words of a name looked for in a memory's text (the graph step's own bound: longer
#: titles are rare).
MAX_NAME_WORDS = 8


def _looked_for(name: str) -> bool:
    return len(name) >= MIN_MENTION_CHARS and name.count(" ") < MAX_NAME_WORDS


class MentionIndex:
    """Names of the vault's files and the text of its memories (module docstring).

    Held compact for a daemon's life: a name of one file holds that file, not a set of it,
    and a file of one name that name, not a set of it (:mod:`magma.buckets`; at 100,000
    notes, 46 → 27 MB by sys.getsizeof)."""

    def __init__(self) -> None:
        self._paths: dict[str, str | set[str]] = {}  # name -> files of that name
        self._names_of: dict[str, str | frozenset[str]] = {}  # file -> its names
        self._texts: dict[str, str] = {}  # memory -> " its words "
        self._found: dict[str, set[str]] = {}  # memory -> names its text holds
        self._holders: dict[str, set[str]] = {}  # name -> memories whose text holds it

    @staticmethod
    def names(labels: Iterable[str | None]) -> frozenset[str]:
        """The names of a file's ``labels`` (title, aliases, memory name) that are looked
        for, in the index's form; interned: files of one name hold one string of it."""
        return frozenset(sys.intern(n) for label in labels
                         if label and _looked_for(n := norm(label)))

    def set_names(self, path: str, names: frozenset[str]) -> set[str]:
        """``path`` now has ``names`` (empty: it is gone) -> the memories whose mentions may
        have changed."""
        held = self._names_of.pop(path, None)
        old = frozenset() if held is None else \
            frozenset((held,)) if isinstance(held, str) else held
        if names:
            self._names_of[path] = next(iter(names)) if len(names) == 1 else names
        affected: set[str] = set()
        for name in old - names:
            bucket_discard(self._paths, name, path)
            affected |= self._holders.get(name, set())
            if name not in self._paths:
                for memory in self._holders.pop(name, set()):
                    self._found[memory].discard(name)
        for name in names - old:
            first = name not in self._paths
            bucket_add(self._paths, name, path)
            if first:
                padded = f" {name} "
                for memory, text in self._texts.items():
                    if padded in text:
                        self._found[memory].add(name)
                        self._holders.setdefault(name, set()).add(memory)
            affected |= self._holders.get(name, set())
        return affected

    def set_text(self, memory: str, text: str | None) -> None:
        """``memory``'s text is now ``text`` (``None``: it is no memory, or gone)."""
        for name in self._found.pop(memory, set()):
            holders = self._holders.get(name)
            if holders is not None:
                holders.discard(memory)
                if not holders:
                    del self._holders[name]
        self._texts.pop(memory, None)
        if text is None:
            return
        words = norm(text).split(" ")
        self._texts[memory] = f" {' '.join(words)} "
        found: set[str] = set()
        for i in range(len(words)):
            for size in range(1, MAX_NAME_WORDS + 1):
                if i + size > len(words):
                    break
                name = " ".join(words[i:i + size])
                if name in self._paths:
                    found.add(name)
        self._found[memory] = found
        for name in found:
            self._holders.setdefault(name, set()).add(memory)

    def targets(self, memory: str) -> list[str]:
        """The files ``memory`` mentions (itself left out), sorted."""
        return sorted({p for name in self._found.get(memory, ())
                       for p in members(self._paths[name])} - {memory})
