"""Three-way merge of one note, for compare-before-write (DESIGN.md, CONVENTIONS.md rule 7).

dreamd edits a note starting from ``base`` (the bytes it read) and wants to write ``ours``;
meanwhile the file on disk became ``theirs`` (the user edited it in Obsidian, or a sync tool
delivered another device's copy). :func:`merge_note` combines both when they touched different
properties and different sections of the body, and returns ``None`` when they touched the
same one differently — the caller then keeps ``theirs`` and writes ``ours`` as a conflict copy.
Never last-writer-wins.

Units of change:

- a frontmatter property (key), compared as parsed values (a memory's ``updated`` and
  ``version`` bumped on both sides are settled: the later time, the higher version + 1);
- a body section: the text from one ATX heading line (outside code fences) to the next,
  keyed by ``(heading line, occurrence)``; the text before the first heading is one section.
  When both sides changed one section but only by inserting lines (the user adds a bullet in
  Obsidian while an assistant adds another), the insertions are merged line by line, theirs
  first; any removed or rewritten line there is a conflict.

The result starts from ``theirs``' bytes: our property changes are applied with the minimal
frontmatter edit (so their quoting, comments, BOM and line endings stay), and our changed
sections replace theirs (converted to their dominant line ending).
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Mapping
from typing import Final

from ccb.frontmatter import load_properties, split_frontmatter
from ccb.frontmatter_edit import dominant_line_ending, replace_body, set_properties
from ccb.model import PropertyValue

__all__ = ["merge_note"]

_MISSING: Final = object()
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")

Section = tuple[tuple[str, int], str]


def merge_note(
    base: bytes, ours: bytes, theirs: bytes, *, now: datetime.datetime | None = None
) -> bytes | None:
    """Merge ``ours`` and ``theirs``, both edited from ``base``; ``None`` when they conflict.

    ``now`` (aware) is the ``updated`` stamp of a merge where both sides changed ``updated``
    (default: the later of the two) — a merge is a new edit, and a fresh stamp lets the writer
    tell it apart from both sides later. Pure. Returns ``theirs`` or ``ours`` unchanged when
    only one side changed. Raises nothing: an undecodable side, or a frontmatter block that
    does not parse as a mapping, is a conflict (``None``) — never guessed at.
    """
    if ours in (theirs, base):
        return theirs
    if theirs == base:
        return ours
    try:
        texts = [data.decode("utf-8-sig") for data in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None
    splits = [split_frontmatter(text) for text in texts]
    props: list[Mapping[str, PropertyValue]] = []
    for split in splits:
        values, problems = load_properties(split.raw, "merge") if split.raw else ({}, ())
        if problems:
            return None
        props.append(values)
    base_p, ours_p, theirs_p = props
    ours_keys = _changed_keys(base_p, ours_p)
    theirs_keys = _changed_keys(base_p, theirs_p)
    settled: dict[str, PropertyValue] = {}
    for key in ours_keys & theirs_keys:
        if ours_p.get(key, _MISSING) != theirs_p.get(key, _MISSING) or key == "version":
            value = _bookkeeping(key, ours_p.get(key), theirs_p.get(key), now)
            if value is None:
                return None
            settled[key] = value

    base_b, ours_b, theirs_b = (split.body for split in splits)
    if ours_b in (base_b, theirs_b):
        body = theirs_b
    elif theirs_b == base_b:
        body = ours_b
    else:
        merged = _merge_sections(_sections(base_b), _sections(ours_b), _sections(theirs_b))
        if merged is None:
            return None
        body = merged

    result = theirs
    updates = {k: ours_p[k] for k in ours_keys - theirs_keys if k in ours_p} | settled
    removals = [k for k in ours_keys - theirs_keys if k not in ours_p]
    if updates or removals:
        result = set_properties(result, updates, remove=removals)
    if body != theirs_b:
        ending = dominant_line_ending(theirs_b)
        result = replace_body(result, "".join(
            line.rstrip("\r\n") + ending if line.endswith(("\n", "\r")) else line
            for line in body.splitlines(keepends=True)
        ))
    return result


def _bookkeeping(
    key: str, ours: PropertyValue | None, theirs: PropertyValue | None,
    now: datetime.datetime | None,
) -> PropertyValue | None:
    """A memory's ``updated`` and ``version`` changed on both sides are not a conflict: the
    merge is a new edit of both, so it gets ``now`` (else the later ``updated``) and the
    higher ``version`` plus one. ``None`` for any other key, or values of another type."""
    if key == "updated" and isinstance(ours, datetime.date) \
            and isinstance(theirs, datetime.date) and type(ours) is type(theirs):
        if now is not None and isinstance(ours, datetime.datetime):
            return now
        try:
            return max(ours, theirs)
        except TypeError:  # naive against aware
            return None
    if key == "version" and type(ours) is int and type(theirs) is int:
        return max(ours, theirs) + 1
    return None


def _changed_keys(base: Mapping[str, PropertyValue], side: Mapping[str, PropertyValue]) -> set[str]:
    return {
        key for key in base.keys() | side.keys()
        if base.get(key, _MISSING) != side.get(key, _MISSING)
    }


def _sections(body: str) -> list[Section]:
    """Split a body at ATX headings outside code fences, keyed by (heading line, occurrence)."""
    sections: list[Section] = []
    seen: dict[str, int] = {}
    key, fence = "", None
    chunk: list[str] = []
    for line in body.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        opener = _FENCE_RE.match(stripped)
        if opener and (fence is None or opener.group(1)[0] == fence[0]):
            fence = None if fence is not None else opener.group(1)
        elif fence is None and _HEADING_RE.match(stripped):
            sections.append(((key, seen.get(key, 0)), "".join(chunk)))
            seen[key] = seen.get(key, 0) + 1
            key, chunk = stripped.strip(), []
        chunk.append(line)
    sections.append(((key, seen.get(key, 0)), "".join(chunk)))
    return sections


def _merge_sections(
    base: list[Section], ours: list[Section], theirs: list[Section]
) -> str | None:
    base_d, ours_d = dict(base), dict(ours)
    result = list(theirs)
    index = {key: i for i, (key, _) in enumerate(result)}
    for position, (key, text) in enumerate(ours):
        old = base_d.get(key)
        if old is not None and _same(old, text):
            continue
        if key in index:
            current = result[index[key]][1]
            if _same(current, text):
                continue
            if old is not None and not _same(current, old):
                # both sides changed this section: fine when they changed different lines
                lines = _merge_lines(old, text, current)
                if lines is None:
                    return None
                result[index[key]] = (key, lines)
                continue
            if old is None:
                return None  # both sides added this section, differently
            result[index[key]] = (key, text)
            continue
        if old is not None:
            return None  # we changed a section they removed
        # a section we added: after the section that precedes it in ours, else at the end
        anchor = ours[position - 1][0] if position else None
        at = index[anchor] + 1 if anchor in index else len(result)
        if at and not result[at - 1][1].endswith("\n\n"):
            ending = "\r\n" if result[at - 1][1].endswith("\r\n") else "\n"
            result[at - 1] = (result[at - 1][0], result[at - 1][1].rstrip("\r\n") + ending * 2)
        result.insert(at, (key, text))
        index = {k: i for i, (k, _) in enumerate(result)}
    for key, old in base:
        if key not in ours_d and key in index:
            if not _same(result[index[key]][1], old):
                return None  # we removed a section they changed
            del result[index[key]]
            index = {k: i for i, (k, _) in enumerate(result)}
    return "".join(text for _, text in result)


def _merge_lines(base: str, ours: str, theirs: str) -> str | None:
    """Line-level three-way merge of one section both sides changed: each side's changes
    (lines inserted, removed or rewritten) are applied when no line of ``base`` was changed by
    both (two people appending to the same list, or one fixing a line while the other adds
    one). Where both inserted at one point, their lines come first, then ours that they do
    not already have; the same change made on both sides counts once. ``None`` when both
    sides changed the same lines of ``base``."""
    tail = theirs[len(theirs.rstrip()):]
    base_l, ours_l, theirs_l = (x.rstrip().splitlines() for x in (base, ours, theirs))
    hunks: list[tuple[int, int, tuple[str, ...], int]] = []
    for tag, side in ((0, theirs_l), (1, ours_l)):
        matcher = difflib.SequenceMatcher(a=base_l, b=side, autojunk=False)
        hunks.extend((i1, i2, tuple(side[j1:j2]), tag)
                     for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal")
    unique: list[tuple[int, int, tuple[str, ...], int]] = []
    for hunk in hunks:
        if not any(h[:3] == hunk[:3] for h in unique):
            unique.append(hunk)
    for a in unique:
        for b in unique:
            if a[3] == b[3]:
                continue
            if a[0] < a[1] and b[0] < b[1] and max(a[0], b[0]) < min(a[1], b[1]):
                return None  # both sides changed these lines
            if a[0] == a[1] and b[0] < a[0] < b[1]:
                return None  # one side inserted inside lines the other changed
    unique.sort(key=lambda h: (h[0], h[0] != h[1], h[3]))
    out: list[str] = []
    pos = 0
    inserted_here: dict[int, list[str]] = {}
    for i1, i2, lines, _tag in unique:
        if i1 > pos:
            out.extend(base_l[pos:i1])
            pos = i1
        if i1 == i2:
            already = inserted_here.setdefault(i1, [])
            fresh = [line for line in lines if line not in already]
            already.extend(fresh)
            out.extend(fresh)
        else:
            # a line the other side inserted right here, or inserts right after, is the
            # same change once ("- L" replaced by "- M" / "- M" appended after "- L")
            fresh = [line for line in lines if line not in inserted_here.get(i1, ())]
            out.extend(fresh)
            inserted_here.setdefault(i2, []).extend(fresh)
            pos = max(pos, i2)
    out.extend(base_l[pos:])
    return "\n".join(out).rstrip() + (tail or "")


def _same(a: str, b: str) -> bool:
    """Sections equal but for blank lines and spaces at their end (where the next begins)."""
    return a.rstrip() == b.rstrip()
