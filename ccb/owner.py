"""Owners of memories: ``(user, agent)``, written ``user/agent`` in a memory's ``owner`` key.

One vault can serve several people and several assistants. A memory written for
``alice/claude-code`` belongs to Alice as seen by that assistant; ``alice`` alone belongs to
Alice whichever assistant asks; a note or memory with no ``owner`` is the vault's own and is
shared with everyone. Who may see what (:meth:`Owner.sees`):

- a reader ``alice/cc`` sees shared memories, ``alice`` and ``alice/cc`` — never
  ``alice/other-agent`` or anyone else's;
- a reader ``alice`` sees shared memories and every memory of Alice's, whichever agent;
- no reader (the CLI without ``--owner``: the vault's owner at their own machine) sees all.

Owners are compared case-insensitively (stored casefolded); ``/`` separates user and agent,
so neither part may contain it. Parts are 1–64 characters of letters, digits, ``.``, ``_``,
``-`` and ``@``, starting with a letter, digit, ``_`` or ``@`` (an e-mail address works as a
user name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from config.errors import InvalidOwnerError

__all__ = ["Owner", "parse_owner"]

_PART = re.compile(r"[\w@][\w.@-]{0,63}")


@dataclass(frozen=True, slots=True)
class Owner:
    """``user`` and optionally ``agent``, both casefolded."""

    user: str
    agent: str | None = None

    def __str__(self) -> str:
        return f"{self.user}/{self.agent}" if self.agent else self.user

    def sees(self, owner: str | None) -> bool:
        """True when a memory with ``owner`` (as written in its file, or ``None``) is visible
        to this reader. An owner that does not parse is visible to nobody but the vault."""
        if owner is None or not owner.strip():
            return True
        try:
            theirs = parse_owner(owner)
        except InvalidOwnerError:
            return False
        if theirs.user != self.user:
            return False
        return theirs.agent is None or self.agent is None or theirs.agent == self.agent

    def visible_values(self) -> tuple[str, ...] | None:
        """The stored owner values this reader sees besides "no owner": ``(user, user/agent)``
        for a user and agent; ``None`` for a user alone (any agent of that user: match by
        prefix ``user/`` as well)."""
        if self.agent is None:
            return None
        return (self.user, f"{self.user}/{self.agent}")


def parse_owner(text: str) -> Owner:
    """``"alice/claude-code"`` → ``Owner("alice", "claude-code")``; ``"Alice"`` →
    ``Owner("alice")``. Raises :class:`InvalidOwnerError` for anything else."""
    parts = text.strip().casefold().split("/")
    if len(parts) > 2 or not all(_PART.fullmatch(p) for p in parts):
        raise InvalidOwnerError(
            f"owner {text!r}: expected user or user/agent (letters, digits, . _ - @; "
            "at most 64 characters each)"
        )
    return Owner(parts[0], parts[1] if len(parts) == 2 else None)
