"""Roots: the vault plus the memory folders people already have, indexed side by side.

The vault is the root with prefix ``""``; its paths are vault-relative (``Notes/a.md``).
An extra root — a Claude Code memory folder ``~/.claude/projects/<slug>/memory/``, an
OpenClaw workspace, a hidden ``.claude/memory`` inside the vault — gets a name, and its files
are indexed as ``<name>:<path inside the root>`` (``claude-myapp:feedback_tests.md``). Obsidian
refuses ``:`` in file names, so such a path never names a vault note written in Obsidian; a
vault file whose first path segment happens to start with a root's ``name:`` is left to that
root (the longest prefix wins). Extra roots are read only: dreamd writes memories only into
the vault's memory folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ccb.scan import VaultFilter

__all__ = ["ROOT_SEPARATOR", "Root", "derive_root_name", "owning_root"]

#: Separates an extra root's name from the path inside it.
ROOT_SEPARATOR = ":"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
#: Folder names that say nothing on their own; the parent's name is used with them.
_GENERIC = {"memory", "memories", "notes", "workspace", "knowledge"}


@dataclass(frozen=True, slots=True)
class Root:
    """One indexed folder: ``prefix`` (``""`` for the vault, ``"name:"`` otherwise), its
    folder, and the ignore rules its walk uses."""

    prefix: str
    path: Path
    vfilter: VaultFilter

    @property
    def is_vault(self) -> bool:
        return self.prefix == ""

    def index_path(self, rel: str) -> str:
        """The index path of ``rel`` (POSIX, relative to this root)."""
        return self.prefix + rel

    def relative(self, index_path: str) -> str:
        """The path inside this root of an index path this root owns."""
        return index_path[len(self.prefix):]

    def owns(self, index_path: str, others: Sequence[Root] = ()) -> bool:
        """True when ``index_path`` belongs to this root and to none of ``others`` with a
        longer prefix (the vault owns every path no extra root claims)."""
        if not index_path.startswith(self.prefix):
            return False
        return not any(
            len(o.prefix) > len(self.prefix) and index_path.startswith(o.prefix) for o in others
        )


def derive_root_name(path: Path, taken: Iterable[str] = ()) -> str:
    """A readable name for an extra root folder, unique among ``taken``.

    ``~/.claude/projects/-home-me-code-myapp/memory`` → ``claude-home-me-code-myapp``;
    ``…/workspace/memory`` → ``workspace-memory``; ``~/notes/agent-log`` → ``agent-log``.
    A taken name gets ``-2``, ``-3`` … Pure (no file system access).
    """
    parts = [p for p in Path(path).parts if p not in {"/", ""}]
    if len(parts) >= 4 and parts[-1] == "memory" and parts[-3] == "projects" \
            and parts[-4] == ".claude":
        base = "claude-" + parts[-2]
    elif len(parts) >= 2 and parts[-1].casefold() in _GENERIC:
        base = f"{parts[-2]}-{parts[-1]}"
    else:
        base = parts[-1] if parts else "root"
    base = _UNSAFE.sub("-", base).strip("-.") or "root"
    base = re.sub(r"-{2,}", "-", base)[:56]
    used = set(taken)
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base}-{n}"
    return name


def owning_root(index_path: str, roots: Sequence[Root]) -> Root | None:
    """The root an index path belongs to: the one with the longest matching prefix."""
    best: Root | None = None
    for root in roots:
        if index_path.startswith(root.prefix) and (best is None
                                                   or len(root.prefix) > len(best.prefix)):
            best = root
    return best
