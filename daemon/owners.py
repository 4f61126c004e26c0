"""An owner named by a person (``dreamd … --owner``, the owner an MCP client connects as),
checked before it is used: it is written, casefolded, into every memory it keeps and every
diary line it adds, so it is refused when it carries a credential, like every other field
of a memory (:func:`consistency.secrets.refuse_secrets`)."""

from __future__ import annotations

from ccb.owner import Owner, parse_owner
from consistency.secrets import refuse_secrets

__all__ = ["checked_owner", "refuse_secrets_in_owner"]


def refuse_secrets_in_owner(text: str, *, where: str) -> None:
    """Raise ``SecretRefusedError`` when ``text`` or one of its ``/`` parts (``user``,
    ``agent``) holds a credential: a token after ``alice/`` is looked at on its own, since a
    key glued to a ``/`` is not found inside a longer run (``consistency.secrets``)."""
    for part in dict.fromkeys([text, *text.split("/")]):
        refuse_secrets(part, where=where)


def checked_owner(text: str) -> Owner:
    """``text`` parsed by :func:`ccb.owner.parse_owner`, looked at as given (before it is
    casefolded: ``AKIA…`` keys are found in capitals only). Raises ``SecretRefusedError``
    (nothing is kept), then ``InvalidOwnerError``."""
    refuse_secrets_in_owner(text, where="owner")
    return parse_owner(text)
