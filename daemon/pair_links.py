"""The frontmatter links of a pair of memories kept apart on a guess, one rule for every
writer: ``remember`` (:mod:`daemon.memories`) and the dream (:mod:`daemon.dream_edits`).

An unsure pair (:class:`consistency.duplicates.Possible`) keeps both memories; each names the
other under ``possible_duplicate`` or ``possible_contradiction`` (a list of ``"[[stem]]"``),
``dreamd check`` lists the pair and ``dreamd conflicts resolve`` settles it. A pair the user
settled as two facts (``--as different``) names each other under ``distinct_from``: a later
dream that is unsure of them again links them no more. Every edit is a minimal frontmatter
edit (:func:`ccb.frontmatter_edit.set_properties`): the rest of the file, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ccb.frontmatter_edit import set_properties
from magma.lineage import link_stem

__all__ = ["PAIR_KEYS", "SETTLED_APART_KEY", "linked_kind", "links_of", "settled_apart",
           "with_link"]

#: The properties that link a possible pair.
PAIR_KEYS = ("possible_duplicate", "possible_contradiction")
#: The property of a pair the user settled as two facts.
SETTLED_APART_KEY = "distinct_from"


def links_of(properties: Mapping[str, Any], key: str) -> list[str]:
    """The links of the property ``key`` (one value or a list), as written."""
    value = properties.get(key)
    return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]


def _names(properties: Mapping[str, Any], key: str, other: str) -> bool:
    stem = link_stem(other)
    return any(link_stem(link) == stem for link in links_of(properties, key))


def linked_kind(properties: Mapping[str, Any], other: str) -> str | None:
    """The pair property (:data:`PAIR_KEYS`) under which a memory names the memory at
    ``other`` (a vault path or a link), ``None`` when it names it under none."""
    return next((key for key in PAIR_KEYS if _names(properties, key, other)), None)


def settled_apart(properties: Mapping[str, Any], other: str) -> bool:
    """Did the user settle this memory and the one at ``other`` as two facts?"""
    return _names(properties, SETTLED_APART_KEY, other)


def with_link(data: bytes, properties: Mapping[str, Any], key: str, other: str, *,
              path: str) -> bytes:
    """``data`` (the memory at ``path``, whose parsed properties are ``properties``) with
    ``"[[stem of other]]"`` added to its list property ``key``; ``data`` itself when it
    names that memory there already. Raises ``FrontmatterEditError`` as
    :func:`ccb.frontmatter_edit.set_properties` does."""
    if _names(properties, key, other):
        return data
    link = f"[[{Path(other).stem}]]"
    return set_properties(data, {key: [*links_of(properties, key), link]}, path=path)
