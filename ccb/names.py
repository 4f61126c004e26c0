"""The one form in which dreamd compares file names, paths, note names and link targets.

A vault synced from a Mac holds its file names in Unicode NFD (``e`` + U+0301 for ``é``: what
HFS+ stored and what iCloud, Syncthing and git on macOS hand on), while the links, names and
paths people type are NFC (one U+00E9). The two spellings show the same on screen and name the
same note in Obsidian, but they are different strings. Every comparison of a path, a file name,
a note name or a link target goes through :func:`nfc_key`; the path as the file system spells it
is kept for all I/O (a user's file is never renamed).
"""

from __future__ import annotations

import unicodedata

__all__ = ["nfc_key"]


def nfc_key(text: str) -> str:
    """``text`` in Unicode NFC (``"Cafe\\u0301"`` → ``"Caf\\u00e9"``): the key paths, names
    and link targets are compared by. Case is left as it is (callers fold it when the
    comparison ignores case). Already-NFC text (nearly all) costs a quick check, no copy."""
    return unicodedata.normalize("NFC", text)
