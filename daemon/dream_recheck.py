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

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from stat import S_ISREG

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
from consistency.synthesis import (
    Candidate,
    Cluster,
    dropped_facts,
    parse_synthesis,
    synthesis_prompt,
)
from daemon.dream_deep import diary_link
from daemon.dream_edits import archived
from daemon.dream_records import names_lineage
from daemon.dream_restore import Restorer, unarchived
from daemon.llm import ChatClient
from magma.lineage import (
    LineageResolver,
    lineage_graph,
    lineage_memory,
    link_stem,
    link_values,
)

__all__ = ["RECHECK_REASON", "DerivedRecheck", "RecheckPlan"]

log = structlog.get_logger("dreamd.dream")

#: The ``archived_reason`` of a memory its remaining sources no longer support.
RECHECK_REASON = "source changed"


def memory_files(root: Path, memory_folder: str) -> list[tuple[str, os.stat_result]]:
    """``(vault path, lstat)`` of the memory files the re-check reads: every regular
    ``*.md`` file under ``memory_folder`` (subfolders too; not through a link to a folder),
    but ``MEMORY.md`` and ``DREAMS.md`` at its top, links, and files in or named as dot
    folders or files (a pipe named like a note would block the read). Ordered as the sorted
    paths of ``Path.rglob("*.md")`` (by their parts; the platform's case rule), one
    ``lstat`` a file: 10,000 files of a dream's memory folder cost 0.4 s through
    ``pathlib`` (an ``lstat``, a ``stat`` and two relative paths each) and a tenth of it so."""
    folder = root / memory_folder
    if not folder.is_dir():
        return []
    found: list[tuple[tuple[str, ...], str, os.stat_result]] = []
    prefix = folder.relative_to(root).parts
    for current, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        inner = Path(current).relative_to(folder).parts
        for name in files:
            if name.startswith(".") or not os.path.normcase(name).endswith(".md") \
                    or (not inner and name in (MEMORY_INDEX_FILE, DIARY_FILE)):
                continue
            try:
                stat = os.lstat(os.path.join(current, name))  # noqa: PTH118
            except OSError:
                continue
            if S_ISREG(stat.st_mode):
                parts = (*prefix, *inner, name)
                found.append((tuple(os.path.normcase(p) for p in parts), "/".join(parts), stat))
    found.sort(key=lambda item: item[0])
    return [(path, stat) for _key, path, stat in found]


def _text(note: Note) -> str:
    props = note.properties
    return "\n".join(str(props.get(k) or "") for k in ("name", "description")) + \
        "\n" + note.body


def _source(name: str) -> str:
    return name if name.startswith("[[") or name.startswith("(") else diary_link(name)


@dataclass(slots=True)
class RecheckPlan:
    """What the re-check does (or would do): diary ``lines`` (a dry run's), ``edits``
    ``{path: (bytes before, after, change)}`` and how many memories it ``archived``."""

    lines: list[str] = field(default_factory=list)
    edits: dict[str, tuple[bytes, bytes, str]] = field(default_factory=dict)
    archived: int = 0


@dataclass(slots=True)
class DerivedRecheck:
    """Re-checks the memories of ``memory_folder`` derived from a changed source (module
    docstring); ``clock`` gives now, ``llm`` re-derives (``None``: off)."""

    writer: NoteWriter
    memory_folder: str
    restorer: Restorer
    clock: Callable[[], datetime]
    llm: ChatClient | None = None
    #: Files the dream read (:data:`daemon.dream_records.Seen`): one unchanged since, that
    #: names no lineage, is read only when another file does.
    seen: Mapping[str, tuple[int, int, bool]] = field(default_factory=dict)

    def _read(self, overlay: Mapping[str, bytes]) -> dict[str, tuple[bytes, Note]]:
        """The memory files (subfolders of the memory folder too), parsed; none when no file
        names a ``derived_from`` or counts ``forgotten_sources`` (nothing to re-check: the
        frontmatter of thousands of memories is not parsed for nothing, and a file the
        dream read, unchanged since, that names neither is not read again to learn it)."""
        paths: list[str] = []
        raw: dict[str, bytes | None] = {}
        for path, stat in memory_files(self.writer.root, self.memory_folder):
            paths.append(path)
            if path in overlay or not self._unchanged_without_lineage(path, stat):
                raw[path] = overlay[path] if path in overlay else self.writer.read(path)
        if not any(data is not None and names_lineage(data) for data in raw.values()):
            return {}
        found: dict[str, tuple[bytes, Note]] = {}
        for path in paths:
            data = raw[path] if path in raw else self.writer.read(path)
            if data is None:
                continue
            note = parse_note(path, data)
            if note.memory is not None:
                found[path] = (data, note)
        return found

    def _unchanged_without_lineage(self, path: str, stat: os.stat_result) -> bool:
        """Was ``path`` read by the dream, naming no lineage, and is it unchanged since (its
        size and modification time, ``stat``)?"""
        known = self.seen.get(path)
        if known is None or known[2]:
            return False
        return (stat.st_size, stat.st_mtime_ns) == known[:2]

    def _checks(self, overlay: Mapping[str, bytes]
                ) -> tuple[dict[str, tuple[bytes, Note]], list[Recheck]]:
        """The memory files (``overlay``'s bytes first: the edits a plan would make), and
        the re-check each derived one whose source changed needs; a memory restored by hand
        (``dreamd restore``) and not edited since is left out, as from every other dream
        action (:meth:`Restorer.restored`)."""
        files = self._read(overlay)
        graph = lineage_graph(lineage_memory(p, n.properties) for p, (_, n) in files.items())
        restored = {p for p, h in self.restorer.restored().items()
                    if p in files and sha256_hex(files[p][0]) == h}
        return files, [c for c in derived_rechecks(
            graph, {p: _text(n) for p, (_, n) in files.items()},
            {p: n.body for p, (_, n) in files.items()}) if c.path not in restored]

    def preview(self, overlay: Mapping[str, bytes] | None = None) -> RecheckPlan:
        """What a dream's re-check would do to the memory files as they stand after
        ``overlay`` (``{path: bytes}``: the edits the dream's plan makes before it): its
        diary lines, edits and archives (what ``dreamd dream --dry-run`` shows and counts;
        with ``llm`` on, an unsupported memory is counted as archived, the outcome when the
        model's answer fails the fact check). Writes nothing."""
        out, seen = RecheckPlan(), set[str]()
        after_plan = dict(overlay or {})
        while found := self._round(after_plan, seen):
            files, checks = found
            for check in checks:
                changes, link = _told(check), diary_link(check.path)
                if check.supported:
                    out.lines.append(f"Would re-check {link}: its other sources still hold "
                                     f"every fact of it ({changes}); kept, the changed sources "
                                     f"taken out of its derived_from{_followed(check)}")
                    edits = self._kept(check, files)
                else:
                    out.lines.append(
                        f"Would {'derive again or ' if self.llm is not None else ''}"
                        f"archive {link}: {changes}, and {_why(check)}")
                    edits = self._archived(check, files)
                    out.archived += 1
                for path, after, change in edits:
                    first = out.edits.get(path, (files[path][0], after, change))[0]
                    out.edits[path] = (first, after, change)  # bytes before the dream
                    after_plan[path] = after
        return out

    def _round(self, overlay: Mapping[str, bytes], seen: set[str]
               ) -> tuple[dict[str, tuple[bytes, Note]], list[Recheck]] | None:
        """One round of the re-check: the memory files and the re-checks of the memories not
        re-checked yet this dream (``seen``, updated), ``None`` when none is left. A memory
        derived from one the previous round archived is in the next round, so a chain of
        derivations is settled in one dream; each memory once, so the rounds end."""
        files, checks = self._checks(overlay)
        checks = [c for c in checks if c.path not in seen]
        seen.update(c.path for c in checks)
        return (files, checks) if checks else None

    def run(self, lines: list[str]) -> RecheckPlan:
        """Re-check every such memory; append a diary line for each to ``lines``. Returns
        what it did (``edits``: the files written, ``archived``: the memories archived)."""
        done, seen = RecheckPlan(), set[str]()
        while found := self._round({}, seen):
            self._settle(*found, lines, done)
        return done

    def _settle(self, files: dict[str, tuple[bytes, Note]], checks: list[Recheck],
                lines: list[str], done: RecheckPlan) -> None:
        """Keep, derive again or archive each memory of ``checks`` (one round of :meth:`run`)."""
        for check in checks:
            changes, link = _told(check), diary_link(check.path)
            if check.supported:
                lines.append(f"Re-checked {link} against its other sources, which still hold "
                             f"every fact of it ({changes}): kept, the changed sources taken "
                             f"out of its derived_from{_followed(check)}")
                self._write(self._kept(check, files), files, done)
                continue
            if self.llm is not None:
                again = self._rederive(check, files, lines, changes)
                if again:
                    done.edits.update({p: (files[p][0], files[p][0], "dream: derived again")
                                       for p in again})
                    continue
            lines.append(f"Archived {link}: {changes}, and {_why(check)}")
            edits = self._archived(check, files)
            self._write(edits[:1], files, done)
            for source, after, change in edits[1:]:  # recorded as restored, as by hand
                if self.restorer.restore(source):
                    done.edits[source] = (files[source][0], after, change)
            done.archived += 1

    def _write(self, edits: list[tuple[str, bytes, str]],
               files: Mapping[str, tuple[bytes, Note]], done: RecheckPlan) -> None:
        for path, after, change in edits:
            self.writer.write(path, after, base=files[path][0], origin="dream", change=change)
            done.edits[path] = (files[path][0], after, change)

    def _kept(self, check: Recheck, files: Mapping[str, tuple[bytes, Note]]
              ) -> list[tuple[str, bytes, str]]:
        """The edit that keeps ``check``'s memory: the changed sources out of its
        ``derived_from``, ``forgotten_sources`` gone (none when nothing changes)."""
        data = files[check.path][0]
        edited = set_properties(data, _derived_from(data, check, files),
                                remove=("forgotten_sources",), path=check.path)
        return [] if edited == data else [
            (check.path, edited, "dream: re-checked against its remaining sources")]

    def _archived(self, check: Recheck, files: Mapping[str, tuple[bytes, Note]]
                  ) -> list[tuple[str, bytes, str]]:
        """The edits that archive ``check``'s memory (first) and bring back each remaining
        source it had archived into itself."""
        data = files[check.path][0]
        edits = [(check.path, archived({}, check.path, data, RECHECK_REASON,
                                       self.clock().date()), "dream: its source changed")]
        stem = Path(check.path).stem
        for source in check.remaining:
            source_data, note = files[source]
            into = {link_stem(str(note.properties.get(k) or ""))
                    for k in ("merged_into", "superseded_by")}
            back = unarchived(source, source_data) if stem in into else None
            if back is not None:
                edits.append((source, back, "restored from the archive"))
        return edits

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
        updates: dict[str, PropertyValue] = {
            **_derived_from(data, check, files), "updated": self.clock(),
            "version": (note.memory.version or 1) + 1}
        edited = set_properties(data, updates, remove=("forgotten_sources",), path=check.path)
        self.writer.write(check.path, replace_body(edited, answer.body.rstrip() + "\n"),
                          base=data, origin="dream", change="dream: derived again")
        lines.append(f"Derived {link} again from "
                     + ", ".join(diary_link(p) for p in check.remaining) + f" ({changes})")
        return [check.path]


def _why(check: Recheck) -> str:
    """Why the remaining sources do not support the memory, as the diary says it."""
    facts = ", ".join(f"`{f}`" for f in check.unsupported[:8])
    return f"its other sources do not hold {facts}" if check.remaining \
        else "no other source is left"


def _followed(check: Recheck) -> str:
    """The keepers a re-checked memory's ``derived_from`` now names, as the diary says it."""
    return (" and the keepers they were merged into put in: "
            + ", ".join(diary_link(p) for p in check.followed)) if check.followed else ""


def _told(check: Recheck) -> str:
    """How the memory's sources changed, as the diary says it."""
    return "; ".join(f"{_source(s)} {c}" for s, c in check.changed)


def _candidate(path: str, note: Note) -> Candidate:
    meta = note.memory
    assert meta is not None
    return Candidate(id=meta.id or path, path=path, type=meta.type, name=meta.name or path,
                     subject=meta.subject, owner=None, body=note.body, updated=None)


def _derived_from(data: bytes, check: Recheck, files: Mapping[str, tuple[bytes, Note]]
                  ) -> dict[str, PropertyValue]:
    """``derived_from`` of ``check``'s memory file ``data`` without the links to its changed
    sources (each link read by the lineage's one rule, :class:`magma.lineage.LineageResolver`:
    ``[[work/lunch]]`` is not ``[[home/lunch]]``), with a link to each keeper of
    ``check.followed`` it does not name yet (by file stem, as the dream writes links; by
    its path in the memory folder when another memory shares that stem)."""
    resolve = LineageResolver.of((p, n.memory.name if n.memory and n.memory.name
                                  else Path(p).stem) for p, (_, n) in files.items())
    changed = {s for s, _ in check.changed}
    value = parse_note(check.path, data).properties.get("derived_from")
    kept: list[PropertyValue] = [v for v in link_values(value) if resolve(v) not in changed]
    named = {resolve(str(v)) for v in kept}
    for keeper in check.followed:
        if keeper not in named:
            link = f"[[{Path(keeper).stem}]]"
            kept.append(link if resolve(link) == keeper
                        else f"[[{keeper.split('/', 1)[-1].removesuffix('.md')}]]")
    return {"derived_from": kept}
