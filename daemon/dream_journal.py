"""The dream's journal: its planned actions, written before the first write.

``<state>/dream-journal.json`` holds the dream's id, when it started, its diary lines, the
counts of its first plan and every action as JSON. Each action is "make it so" from the files
as they are, so a dream interrupted by a crash is finished by the next one (it replays the
journal first, then plans afresh); the journal goes when the dream has recorded its state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from ccb.atomic import read_json_object, write_json_atomic
from consistency.dream import LinkPossible, MergeDuplicate, SupersedeOld
from consistency.lifecycle import Archive, Demote, MarkBroken, Promote
from daemon.dream_deep import Synthesise
from daemon.dream_edits import Step

__all__ = ["JOURNAL_FILE", "DreamJournal", "steps_of"]

#: State file of the dream under way.
JOURNAL_FILE = "dream-journal.json"


class DreamJournal:
    """The journal file of one state folder (module docstring)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / JOURNAL_FILE

    def read(self) -> dict[str, Any] | None:
        """The journal of an unfinished dream, or ``None``."""
        data = read_json_object(self.path)
        return data if isinstance(data.get("id"), str) else None

    def write(self, dream_id: str, started: datetime, lines: Sequence[str],
              counts: Mapping[str, int], steps: Sequence[Step]) -> None:
        """Start the journal of a dream with its planned ``steps``."""
        write_json_atomic(self.path, {
            "id": dream_id, "started": started.isoformat(timespec="seconds"),
            "lines": list(lines), "counts": dict(counts),
            "actions": [_action_json(a) for a in steps],
        })

    def add(self, dream_id: str, counts: Mapping[str, int], lines: Sequence[str],
            step: Step) -> None:
        """Add one action decided during the dream (a synthesis of the deep phase)."""
        journal = self.read() or {"id": dream_id, "actions": []}
        write_json_atomic(self.path, {
            **journal, "lines": list(lines), "counts": journal.get("counts", dict(counts)),
            "actions": [*journal.get("actions", []), _action_json(step)],
        })

    def clear(self) -> None:
        """The dream finished: its journal goes."""
        self.path.unlink(missing_ok=True)


def steps_of(journal: Mapping[str, Any]) -> list[Step]:
    """The actions of a journal that still read as actions (others are skipped)."""
    return [s for s in (_action_from_json(a) for a in journal.get("actions", []))
            if s is not None]


_ACTION_TYPES: dict[str, type] = {cls.__name__: cls for cls in (
    MergeDuplicate, SupersedeOld, LinkPossible, Archive, MarkBroken, Promote, Demote,
    Synthesise)}


def _action_json(step: Step) -> dict[str, Any]:
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(step).items()}
    return {"kind": type(step).__name__, **fields}


def _action_from_json(data: object) -> Step | None:
    if not isinstance(data, dict):
        return None
    cls = _ACTION_TYPES.get(str(data.get("kind")))
    if cls is None:
        return None
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "kind"}
    try:
        return cls(**fields)
    except TypeError:
        return None
