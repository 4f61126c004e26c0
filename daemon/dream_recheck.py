"""The dream's re-check of memories derived from a source that changed: the rule is
:mod:`consistency.derived_recheck`; here the memory files are read, and the outcome written.

- still supported: the changed sources leave the memory's ``derived_from`` and its
  ``forgotten_sources`` goes (one frontmatter edit, ``origin="dream"``);
- unsupported, with an LLM (``llm``): the memory is derived again from its remaining sources
  (:func:`consistency.synthesis.synthesis_prompt`), kept only when the answer drops no name,
  number, date or code span of them and adds none they do not hold
  (:func:`consistency.synthesis.dropped_facts`, both ways): its body is replaced, its
  version raised, its ``derived_from`` the remaining sources;
- otherwise archived (``archived_reason: source changed``, recoverable with ``dreamd
  restore``), and each remaining source it had archived into itself restored.

Each outcome is one diary line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import structlog

from ccb.frontmatter_edit import replace_body, set_properties
from ccb.model import DIARY_FILE, MEMORY_INDEX_FILE, Note, PropertyValue
from ccb.parse import parse_note
from ccb.writer import NoteWriter, sha256_hex
from config.errors import LlmError
from consistency.derived_recheck import (
    Recheck,
    derived_rechecks,
    fact_text,
    unsupported_facts,
)
from consistency.lifecycle import is_archived
from consistency.synthesis import (
    Candidate,
    Cluster,
    dropped_facts,
    parse_synthesis,
    synthesis_prompt,
)
from daemon.dream_deep import diary_link
from daemon.dream_edits import archived
from daemon.dream_restore import Restorer
from daemon.llm import ChatClient
from magma.lineage import lineage_graph, lineage_memory, link_stem

__all__ = ["RECHECK_REASON", "DerivedRecheck"]

log = structlog.get_logger("dreamd.dream")

#: The ``archived_reason`` of a memory its remaining sources no longer support.
RECHECK_REASON = "source changed"


def _text(note: Note) -> str:
    props = note.properties
    return "\n".join(str(props.get(k) or "") for k in ("name", "description")) + \
        "\n" + note.body


def _source(name: str) -> str:
    return name if name.startswith("[[") or name.startswith("(") else diary_link(name)


@dataclass(slots=True)
class DerivedRecheck:
    """Re-checks the memories of ``memory_folder`` derived from a changed source (module
    docstring); ``clock`` gives now, ``llm`` re-derives (``None``: off)."""

    writer: NoteWriter
    memory_folder: str
    restorer: Restorer
    clock: Callable[[], datetime]
    llm: ChatClient | None = None

    def _read(self) -> dict[str, tuple[bytes, Note]]:
        folder = self.writer.root / self.memory_folder
        found: dict[str, tuple[bytes, Note]] = {}
        for file in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            if file.name in (MEMORY_INDEX_FILE, DIARY_FILE) or file.is_symlink() \
                    or not file.is_file():  # a pipe named like a note would block the read
                continue
            path = file.relative_to(self.writer.root).as_posix()
            data = self.writer.read(path)
            if data is None:
                continue
            note = parse_note(path, data)
            if note.memory is not None:
                found[path] = (data, note)
        return found

    def _checks(self) -> tuple[dict[str, tuple[bytes, Note]], list[Recheck]]:
        """The memory files, and the re-check each derived one whose source changed needs;
        a memory restored by hand (``dreamd restore``) and not edited since is left out, as
        from every other dream action (:meth:`Restorer.restored`)."""
        files = self._read()
        graph = lineage_graph(lineage_memory(p, n.properties) for p, (_, n) in files.items())
        restored = {p for p, h in self.restorer.restored().items()
                    if p in files and sha256_hex(files[p][0]) == h}
        return files, [c for c in derived_rechecks(
            graph, {p: _text(n) for p, (_, n) in files.items()},
            {p: n.body for p, (_, n) in files.items()}) if c.path not in restored]

    def preview(self) -> list[str]:
        """The diary lines a dream's re-check would write for the memory files as they stand
        now (what ``dreamd dream --dry-run`` shows); writes nothing."""
        out = []
        for check in self._checks()[1]:
            changes, link = _told(check), diary_link(check.path)
            if check.supported:
                out.append(f"Would re-check {link}: its other sources still hold every fact of "
                           f"it ({changes}); kept, the changed sources taken out of its "
                           "derived_from")
            else:
                facts = ", ".join(f"`{f}`" for f in check.unsupported[:8])
                why = (f"its other sources do not hold {facts}" if check.remaining
                       else "no other source is left")
                out.append(f"Would {'derive again or ' if self.llm is not None else ''}"
                           f"archive {link}: {changes}, and {why}")
        return out

    def run(self, lines: list[str]) -> list[str]:
        """Re-check every such memory; append a diary line for each to ``lines``. Returns
        the paths written."""
        files, checks = self._checks()
        written: list[str] = []
        for check in checks:
            changes, link = _told(check), diary_link(check.path)
            if check.supported:
                lines.append(f"Re-checked {link} against its other sources, which still hold "
                             f"every fact of it ({changes}): kept, the changed sources taken "
                             "out of its derived_from")
                written += self._keep(check, files[check.path][0])
                continue
            if self.llm is not None:
                again = self._rederive(check, files, lines, changes)
                if again:
                    written += again
                    continue
            facts = ", ".join(f"`{f}`" for f in check.unsupported[:8])
            lines.append(f"Archived {link}: {changes}, and "
                         + (f"its other sources do not hold {facts}" if check.remaining
                            else "no other source is left"))
            written += self._archive(check, files)
        return written

    def _keep(self, check: Recheck, data: bytes) -> list[str]:
        stems = {link_stem(s) for s, _ in check.changed}
        edited = set_properties(data, _derived_from(data, check.path, stems),
                                remove=("forgotten_sources",), path=check.path)
        if edited == data:
            return []
        self.writer.write(check.path, edited, base=data, origin="dream",
                          change="dream: re-checked against its remaining sources")
        return [check.path]

    def _archive(self, check: Recheck, files: dict[str, tuple[bytes, Note]]) -> list[str]:
        data = files[check.path][0]
        today = self.clock().date()
        self.writer.write(check.path, archived({}, check.path, data, RECHECK_REASON, today),
                          base=data, origin="dream", change="dream: its source changed")
        written = [check.path]
        stem = Path(check.path).stem
        for source in check.remaining:
            note = files[source][1]
            into = {link_stem(str(note.properties.get(k) or ""))
                    for k in ("merged_into", "superseded_by")}
            if note.memory is not None and is_archived(note.memory.status) and stem in into:
                self.restorer.restore(source)
                written.append(source)
        return written

    def _rederive(self, check: Recheck, files: dict[str, tuple[bytes, Note]],
                  lines: list[str], changes: str) -> list[str]:
        assert self.llm is not None
        data, note = files[check.path]
        members = tuple(_candidate(p, files[p][1]) for p in check.remaining)
        link = diary_link(check.path)
        if not members or note.memory is None:
            return []
        sources = [f"{m.name}\n{m.body}" for m in members]
        try:
            answer = parse_synthesis(self.llm.chat(synthesis_prompt(
                Cluster(note.memory.subject or "", note.memory.type, members))))
        except (LlmError, ValueError) as error:
            lines.append(f"Could not derive {link} again ({error})")
            return []
        said = f"{answer.name}\n{answer.description}\n{answer.body}"
        dropped = dropped_facts([fact_text(t) for t in sources], said)
        added = unsupported_facts(said, sources)  # a fact no remaining source holds
        if dropped or added:
            lines.append(f"Rejected deriving {link} again: it "
                         + " and ".join(f"{verb} " + ", ".join(f"`{d}`" for d in facts[:8])
                                        for verb, facts in (("dropped", dropped),
                                                            ("added", added)) if facts))
            return []
        stems = {link_stem(s) for s, _ in check.changed}
        updates: dict[str, PropertyValue] = {
            **_derived_from(data, check.path, stems), "updated": self.clock(),
            "version": (note.memory.version or 1) + 1}
        edited = set_properties(data, updates, remove=("forgotten_sources",), path=check.path)
        self.writer.write(check.path, replace_body(edited, answer.body.rstrip() + "\n"),
                          base=data, origin="dream", change="dream: derived again")
        lines.append(f"Derived {link} again from "
                     + ", ".join(diary_link(p) for p in check.remaining) + f" ({changes})")
        return [check.path]


def _told(check: Recheck) -> str:
    """How the memory's sources changed, as the diary says it."""
    return "; ".join(f"{_source(s)} {c}" for s, c in check.changed)


def _candidate(path: str, note: Note) -> Candidate:
    meta = note.memory
    assert meta is not None
    return Candidate(id=meta.id or path, path=path, type=meta.type, name=meta.name or path,
                     subject=meta.subject, owner=None, body=note.body, updated=None)


def _derived_from(data: bytes, path: str, stems: set[str]) -> dict[str, PropertyValue]:
    """``derived_from`` of the memory file ``data`` without the links to ``stems``."""
    value = parse_note(path, data).properties.get("derived_from")
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, list) \
        else []
    kept: list[PropertyValue] = [str(v) for v in items if link_stem(str(v)) not in stems]
    return {"derived_from": kept}
