"""Light sleep's cut: a daily note (or a transcript's statements) as snippets.

A note is cut by its markdown structure (issue 21, "Light sleep"):

- the heading path below the note's title is the snippet's context, written before it
  ("PR review: tests must use a real database"); a new heading starts a new snippet;
- list items and paragraph lines are grouped by kind; a new snippet starts at a change of kind
  (list or paragraph, and the statement kind of :mod:`consistency.statements`: rule,
  preference, decision or none), after :data:`MAX_LINES` lines or :data:`MAX_CHARS`
  characters, at a blank line, and at each timed diary line (``- 14:03 …``: every entry was
  written on its own, so it stands on its own);
- fenced code and frontmatter are never cut;
- a snippet whose text (or heading) holds a credential (:func:`consistency.secrets.find_secrets`)
  is left out: a line typed by hand with a password in it is never staged, embedded, scored
  or shown in ``DREAMS.md``.

What a snippet is (key, evidence, tags, starting score) is :mod:`magma.snippets`. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from ccb.diary import parse_entry
from ccb.frontmatter import split_frontmatter
from consistency.secrets import find_secrets
from consistency.statements import StatementKind, standing_statements
from magma.snippets import Snippet, SnippetOrigin, concept_tags, snippet_key

__all__ = ["MAX_CHARS", "MAX_LINES", "cut_snippets", "cut_statements"]

#: A snippet ends after this many lines or characters (issue 21, "Light sleep").
MAX_LINES = 4
MAX_CHARS = 280
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(slots=True)
class _Open:
    start: int
    end: int
    heading: str
    block: str
    kind: StatementKind | None
    texts: list[str]

    def fits(self, block: str, kind: StatementKind | None, text: str) -> bool:
        size = sum(len(t) + 1 for t in self.texts) + len(text)
        return (block, kind) == (self.block, self.kind) and len(self.texts) < MAX_LINES \
            and size <= MAX_CHARS


def _line_kind(text: str) -> StatementKind | None:
    found = standing_statements(text)
    return found[0].kind if found else None


def _finish(open_: _Open | None, path: str, day: date, origin: SnippetOrigin,
            out: list[Snippet]) -> None:
    if open_ is None or not open_.texts:
        return
    body = "\n".join(open_.texts)
    heading = open_.heading
    if find_secrets(f"{heading}\n{body}"):  # a line with a credential is never staged
        return
    if not _says_something(body):
        return  # an embed, a link or a template's placeholder alone ("![[Daily.base]]")
    context = f"{heading}: {' '.join(open_.texts)}" if heading else " ".join(open_.texts)
    out.append(Snippet(
        key=snippet_key(path, heading, body), path=path, day=day, lines=(open_.start, open_.end),
        heading=heading, body=body, tags=concept_tags(context), kind=open_.kind, origin=origin))


#: What says nothing on its own in a diary line: embeds and links, template placeholders,
#: list and task markers, markup.
_NO_WORDS = re.compile(r"!?\[\[[^\]]*\]\]|\{\{[^}]*\}\}|\[[ xX]\]|https?://\S+|[-*+>#`_~|:]")


def _says_something(body: str) -> bool:
    """Does ``body`` hold at least a word of its own (three letters, or two Han characters)
    besides embeds, links and placeholders?"""
    rest = _NO_WORDS.sub(" ", body)
    return re.search(r"[^\W\d_]{3}|[\u4e00-\u9fff]{2}", rest) is not None


def _heading_path(stack: list[tuple[int, str]]) -> str:
    """The heading path below the note's title (level 1 is the note's name, not context)."""
    return " > ".join(text for level, text in stack if level > 1)


def cut_snippets(path: str, text: str, day: date, origin: SnippetOrigin = "diary"
                 ) -> list[Snippet]:
    """The snippets of one note's text, in file order (module docstring). A snippet whose
    key another one already has in this note (the same line written twice) is left out."""
    split = split_frontmatter(text)
    out: list[Snippet] = []
    stack: list[tuple[int, str]] = []
    current: _Open | None = None
    fence: str | None = None
    for index, line in enumerate(split.body.split("\n")):
        number = split.body_line + index + 1
        if fence is not None or _FENCE.match(line):
            marker = _FENCE.match(line)
            if marker and (fence is None or marker.group(1).startswith(fence)):
                fence = None if fence is not None else marker.group(1)[:3]
            _finish(current, path, day, origin, out)
            current = None
            continue
        heading = _HEADING.match(line)
        if heading or not line.strip():
            _finish(current, path, day, origin, out)
            current = None
            if heading:
                level = len(heading.group(1))
                stack = [(lv, t) for lv, t in stack if lv < level] + [(level, heading.group(2))]
            continue
        current = _add_line(current, line, number, _heading_path(stack), path, day, origin, out)
    _finish(current, path, day, origin, out)
    unique: dict[str, Snippet] = {}
    for snippet in out:
        unique.setdefault(snippet.key, snippet)
    return list(unique.values())


def _add_line(current: _Open | None, line: str, number: int, heading: str, path: str,
              day: date, origin: SnippetOrigin, out: list[Snippet]) -> _Open:
    """``line`` added to the open snippet, or to a new one (the open one finished)."""
    block = "list" if _LIST.match(line) else "paragraph"
    entry = parse_entry(line) if block == "list" else None
    content = " ".join((entry.text if entry else _LIST.sub("", line)).split())
    kind = _line_kind(content)
    timed = entry is not None and entry.at is not None
    if current is not None and not timed and current.fits(block, kind, content):
        current.texts.append(content)
        current.end = number
        return current
    _finish(current, path, day, origin, out)
    return _Open(number, number, heading, "timed" if timed else block, kind, [content])


def cut_statements(path: str, day: date, statements: Iterable[tuple[int, str]]
                   ) -> list[Snippet]:
    """Snippets of a transcript: one per statement of the user's (``(JSONL line, text)``),
    with no heading. Pure."""
    out: list[Snippet] = []
    for number, statement in statements:
        body = " ".join(statement.split())
        if body and not find_secrets(body):
            out.append(Snippet(
                key=snippet_key(path, "", body), path=path, day=day, lines=(number, number),
                heading="", body=body, tags=concept_tags(body), kind=_line_kind(body),
                origin="transcript"))
    return out

