"""What a dream's actions do to the files: new bytes for each, and the diary line.

Every action is "make it so" from the bytes as they are now (``dreamd dream`` replays an
interrupted journal through the same functions): a merge adds only the sentences the keeper
lacks, an archive sets values already set. Nothing is deleted: a merged or superseded memory
gets ``status: archived`` (its previous status in ``status_before``) and stays on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ccb.frontmatter_edit import replace_body, set_properties
from ccb.model import PropertyValue
from ccb.parse import parse_note
from ccb.writer import sha256_hex
from consistency.dream import Consolidation, LinkPossible, MergeDuplicate, SupersedeOld
from consistency.duplicates import merge_bodies
from consistency.lifecycle import (
    ARCHIVED,
    Archive,
    Demote,
    MarkBroken,
    Promote,
    Transition,
    has_rule_force,
    is_archived,
)
from daemon.dream_deep import Synthesise, diary_link
from daemon.pair_links import linked_kind, settled_apart, with_link
from magma.lineage import link_stem, link_values

if TYPE_CHECKING:
    from daemon.dream_records import MemoryRecord

__all__ = ["DIARY_HEADER", "Step", "archived", "diary_entry", "step_edits", "still_allowed",
           "wikilink"]

#: First lines of a new ``DREAMS.md``.
DIARY_HEADER = (
    "# Dream diary\n"
    "\n"
    "Written by dreamd after each dream that changed something: what it merged, superseded,\n"
    "archived or promoted, with links. Nothing is ever deleted; `dreamd restore NAME` brings\n"
    "an archived memory back, `dreamd history NAME` shows every version.\n"
)

#: Everything a dream carries out.
Step: TypeAlias = Consolidation | Transition | Synthesise


def wikilink(path: str) -> str:
    """``[[stem]]`` for a frontmatter property (``merged_into``, ``supersedes`` …), where
    links are read back by file stem."""
    return f"[[{Path(path).stem}]]"


def _day(value: date | datetime | None) -> date | None:
    """The day of a frontmatter date or timestamp."""
    return value.date() if isinstance(value, datetime) else value


def step_edits(step: Step, read: Callable[[str], bytes | None],
               known: Mapping[str, MemoryRecord], now: datetime) -> list[tuple[str, bytes, str]]:
    """``(path, new bytes, diary line)`` for one action, from the bytes ``read`` gives
    (``None``: the file is gone, the action is skipped); ``known`` are the records the
    plan was made from (a file's status is read from its record while its hash holds)."""
    today = now.date()  # the user's day: the clock carries time.zone
    match step:
        case MergeDuplicate():
            return _merge_edits(step, read, known, now)
        case SupersedeOld():
            return _supersede_edits(step, read, known, today)
        case LinkPossible():
            return _link_edits(step, read)
        case Synthesise(new_path=new_path, data=text, sources=sources):
            out: list[tuple[str, bytes, str]] = [(new_path, text.encode("utf-8"), "")]
            for source in sources:
                data = read(source)
                if data is not None:
                    out.append((source, archived(known,
                        source, data, "synthesised", today,
                        {"merged_into": wikilink(new_path)}, close=True), ""))
            return out
    return _property_edits(step, read, known, today)


def _merge_edits(step: MergeDuplicate, read: Callable[[str], bytes | None],
                 known: Mapping[str, MemoryRecord], now: datetime
                 ) -> list[tuple[str, bytes, str]]:
    """A duplicate merged: a near duplicate's sentences join the keeper (unless it holds
    code), the sources it was derived from join the keeper's ``derived_from`` (its lineage
    is the keeper's now), and the duplicate is archived with ``merged_into``."""
    keeper, dup, kind = step.keeper_path, step.duplicate_path, step.kind
    keeper_data, dup_data = read(keeper), read(dup)
    if keeper_data is None or dup_data is None:
        return []
    out: list[tuple[str, bytes, str]] = []
    # (tags, links, headings are never looked at by an edit: not read, markdown=False)
    keeper_note = parse_note(keeper, keeper_data, markdown=False)
    dup_note = parse_note(dup, dup_data, markdown=False)
    sources = list(link_values(keeper_note.properties.get("derived_from")))
    gained = [s for s in link_values(dup_note.properties.get("derived_from"))
              if s not in sources and link_stem(s) != link_stem(keeper)]
    eol = "\r\n" if b"\r\n" in keeper_data else "\n"
    merged = keeper_note.body
    if kind == "near" and "```" not in dup_note.body and "~~~" not in dup_note.body:
        # (code is not spliced by sentence: the duplicate keeps it, archived beside the
        # keeper with merged_into)
        merged = merge_bodies(keeper_note.body.rstrip("\n"), dup_note.body.strip())
        if eol == "\r\n":
            merged = merged.replace("\r\n", "\n").replace("\n", "\r\n")
    new_body = merged.rstrip("\r\n") != keeper_note.body.rstrip("\n").replace("\n", eol)
    if new_body or gained:
        version = keeper_note.memory.version if keeper_note.memory else None
        updates: dict[str, PropertyValue] = {"updated": now, "version": (version or 1) + 1}
        if gained:
            updates["derived_from"] = [*sources, *gained]
        edited = set_properties(keeper_data, updates, path=keeper)
        if new_body:
            edited = replace_body(edited, merged.rstrip("\r\n") + eol)
        out.append((keeper, edited,
                    f"Merged the sentences of {diary_link(dup)} into "
                    f"{diary_link(keeper)} (near-duplicate)" if new_body else
                    f"{diary_link(keeper)} derives from the sources of {diary_link(dup)} too"))
    code = "exact duplicate" if kind == "exact" else "near-duplicate"
    out.append((dup, archived(known, dup, dup_data, code, now.date(),
                              {"merged_into": wikilink(keeper)}),
                f"Archived {diary_link(dup)}: {code} of {diary_link(keeper)}"))
    return out


def _supersede_edits(step: SupersedeOld, read: Callable[[str], bytes | None],
                     known: Mapping[str, MemoryRecord], today: date
                     ) -> list[tuple[str, bytes, str]]:
    """A memory superseded: the newer one names it in ``supersedes``, the older is archived
    with ``superseded_by`` and ``valid_to`` the day the newer began."""
    old, new, reason = step.old_path, step.new_path, step.reason
    new_data, old_data = read(new), read(old)
    if new_data is None or old_data is None:
        return []
    out: list[tuple[str, bytes, str]] = []
    new_note = parse_note(new, new_data, markdown=False)
    targets = list(new_note.memory.supersedes) if new_note.memory else []
    if Path(old).stem not in {link_stem(t) for t in targets}:
        values: list[PropertyValue] = [f"[[{t}]]" for t in targets]
        values.append(wikilink(old))
        out.append((new, set_properties(
            new_data, {"supersedes": values[0] if len(values) == 1 else values},
            path=new), ""))
    # the old fact held until the new one began, not until this dream
    began = _day(new_note.memory.valid_from or new_note.memory.created) \
        if new_note.memory else None
    out.append((old, archived(known, old, old_data, "superseded", today,
                              {"superseded_by": wikilink(new)}, close=True,
                              closed=min(began, today) if began else None),
                f"{diary_link(old)} superseded by {diary_link(new)}: {reason}; "
                "archived"))
    return out


def _link_edits(step: LinkPossible, read: Callable[[str], bytes | None]
                ) -> list[tuple[str, bytes, str]]:
    """A pair the rules were unsure of: each memory names the other under
    ``possible_<kind>`` (:func:`daemon.pair_links.with_link`, as ``remember`` links such a
    pair), both stay live. A pair linked already under either kind keeps that kind (only a
    missing side is written); one the user settled as two facts is left as it is."""
    old, new = step.old_path, step.new_path
    old_data, new_data = read(old), read(new)
    if old_data is None or new_data is None:
        return []
    old_props = parse_note(old, old_data, markdown=False).properties
    new_props = parse_note(new, new_data, markdown=False).properties
    if settled_apart(old_props, new) or settled_apart(new_props, old):
        return []
    key = linked_kind(old_props, new) or linked_kind(new_props, old) or f"possible_{step.kind}"
    out: list[tuple[str, bytes, str]] = []
    line = (f"Linked {diary_link(new)} and {diary_link(old)} as a "
            f"{key.replace('_', ' ')}" + (f": {step.evidence}" if step.evidence else "")
            + "; both kept (`dreamd conflicts resolve` settles it)")
    for path, data, props, other in ((new, new_data, new_props, old),
                                     (old, old_data, old_props, new)):
        edited = with_link(data, props, key, other, path=path)
        if edited != data:
            out.append((path, edited, "" if out else line))
    return out


def _property_edits(step: Step, read: Callable[[str], bytes | None],
                    known: Mapping[str, MemoryRecord], today: date
                    ) -> list[tuple[str, bytes, str]]:
    """Archive, mark broken links, promote, demote: one property edit of one file."""
    out: list[tuple[str, bytes, str]] = []
    match step:
        case Archive(path=path, reason=reason, code=code):
            data = read(path)
            if data is not None:
                out.append((path, archived(known, path, data, code, today),
                            f"Archived {diary_link(path)}: {reason}"))
        case MarkBroken(path=path, links=links):
            data = read(path)
            if data is not None:
                if links:
                    new_data = set_properties(data, {"broken_links": list(links)}, path=path)
                    line = f"Marked links of {diary_link(path)} broken: " + ", ".join(
                        f"`{link}`" for link in links)
                else:
                    new_data = set_properties(data, {}, remove=("broken_links",), path=path)
                    line = f"The links of {diary_link(path)} work again"
                out.append((path, new_data, line))
        case Promote(path=path, reason=reason):
            data = read(path)
            if data is not None:
                out.append((path, set_properties(data, {"resident": True}, path=path),
                            f"Promoted {diary_link(path)} to the resident set: {reason}"))
        case Demote(path=path, reason=reason):
            data = read(path)
            if data is not None:
                out.append((path, set_properties(data, {}, remove=("resident",), path=path),
                            f"Demoted {diary_link(path)} from the resident set: {reason}"))
    return out


def archived(known: Mapping[str, MemoryRecord], path: str, data: bytes, code: str, today: date,
              links: Mapping[str, str] | None = None, *, close: bool = False,
              closed: date | None = None) -> bytes:
    """``data`` with ``status: archived`` (the previous status kept in ``status_before``),
    the date, a short ``archived_reason`` (``code``) and ``links`` (``merged_into``,
    ``superseded_by``); ``close`` also sets ``valid_to`` when unset (to ``closed``, else
    ``today``). Unchanged when already archived. One frontmatter edit
    (``ccb.frontmatter_edit.set_properties``). The status comes from the file's record in
    ``known`` when ``data`` is the file as read."""
    record = known.get(path)
    if record is not None and record.hash == sha256_hex(data):
        status, has_valid_to = record.status, record.valid_to is not None
    else:
        note = parse_note(path, data, markdown=False)
        status = note.memory.status if note.memory else None
        has_valid_to = bool(note.properties.get("valid_to"))
    if is_archived(status):
        return data
    updates: dict[str, PropertyValue] = {"status": ARCHIVED, "archived": today,
                                         "archived_reason": code, **(links or {})}
    if close and not has_valid_to:
        updates["valid_to"] = closed or today
    if status:
        updates["status_before"] = status
    return set_properties(data, updates, path=path)


def still_allowed(step: Step, path: str, current: bytes) -> bool:
    """May a journaled step still archive the file at ``path``? Not when the memory was
    pinned, made a ``user`` memory or a rule since the plan (a replay after a crash)."""
    closes = ((isinstance(step, MergeDuplicate) and path == step.duplicate_path)
              or (isinstance(step, SupersedeOld) and path == step.old_path)
              or (isinstance(step, Archive | Synthesise) and path != getattr(
                  step, "new_path", None)))
    if not closes:
        return True
    note = parse_note(path, current, markdown=False)
    meta = note.memory
    if meta is None:
        return False
    if meta.pinned:
        return False
    if isinstance(step, Archive):
        rule = meta.type == "feedback" and has_rule_force(f"{meta.description}\n{note.body}")
        return meta.type != "user" and not rule
    return True


def diary_entry(current: bytes | None, dream_id: str, counts: Mapping[str, int],
                lines: Sequence[str], index_summary: str | None, now: datetime) -> bytes | None:
    """``DREAMS.md`` with one entry appended for the dream ``dream_id`` (its date, the counts
    of its first plan, every change); ``None`` when ``current`` has that entry already (once
    per dream id: an interrupted dream's entry is written by the dream that finishes it)."""
    marker = f"<!-- dream {dream_id} -->"
    if current is not None and marker.encode() in current:
        return None
    c = counts
    entry = [f"\n## {now:%Y-%m-%d %H:%M} UTC\n\n{marker}\n",
             f"Read {c.get('memories', 0):,} memories: {c.get('skipped', 0):,} unchanged "
             f"since the last dream (skipped), {c.get('updated', 0):,} updated, "
             f"{c.get('added', 0):,} added.\n\n"]
    entry.extend(f"- {line}\n" for line in lines)
    if index_summary:
        entry.append(f"- {index_summary}\n")
    return (current if current is not None else DIARY_HEADER.encode()) + "".join(entry).encode()
