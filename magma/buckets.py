"""Many-valued dict entries held small: a key's one value as itself, a ``set`` only once it
has several (pure).

An index from a key to the things under it (a link key to the notes linking such a target, a
name to the files of that name) mostly has one thing under each key: a ``set`` of one is
216 bytes by ``sys.getsizeof``, the thing itself nothing more than the dict's slot. The
values must not be sets themselves (a ``str``, a path, is what these indexes hold).
"""

from __future__ import annotations

from collections.abc import Hashable, MutableMapping
from typing import TypeVar

__all__ = ["bucket_add", "bucket_discard", "members"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)


def bucket_add(index: MutableMapping[K, V | set[V]], key: K, value: V) -> None:
    """Put ``value`` under ``key`` (nothing when it is there already)."""
    found = index.get(key)
    if found is None:
        index[key] = value
    elif isinstance(found, set):
        found.add(value)
    elif found != value:
        index[key] = {found, value}


def bucket_discard(index: MutableMapping[K, V | set[V]], key: K, value: V) -> None:
    """Take ``value`` from under ``key`` (no error when it is not there); a key left with
    nothing goes."""
    found = index.get(key)
    if found is None:
        return
    if isinstance(found, set):
        found.discard(value)
        if len(found) == 1:
            index[key] = next(iter(found))
        elif not found:
            del index[key]
    elif found == value:
        del index[key]


def members(found: V | set[V] | None) -> tuple[V, ...] | set[V]:
    """The values of one bucket (``None``: none), to iterate or test."""
    if found is None:
        return ()
    return found if isinstance(found, set) else (found,)
