"""Pure extraction of links, tags, headings and aliases from a note.

Bodies are expected with ``\\n`` line endings (``ccb.parse`` normalises them). Fenced code
blocks (```` ``` ```` and ``~~~``, CommonMark rules: up to 3 spaces of indent, a closing fence
of the same character at least as long; an unclosed fence runs to the end), inline code
spans and HTML comments ``<!-- -->`` are masked first, so nothing inside them is a link, tag
or heading. Obsidian comments ``%% %%`` (an unclosed ``%%`` hides the rest of the note, as in
Obsidian) are masked for headings only: Obsidian's metadata cache — what its backlinks,
outgoing links, graph view and unresolved links read — lists a link, an embed or a tag
written inside one, inline or as a block, as it lists none inside an HTML comment or code.
Source: the cached metadata Obsidian gave for such notes, kept as test data by Obsidian Tasks
(obsidian-tasks-group/obsidian-tasks, ``tests/Obsidian/__test_data__/
comments_markdown_style.json``: "commented-out link: %% [[comments_html_style]] %% - is
recognised by Obsidian's cachedMetadata", and a ``#task`` inside a ``%%`` block in its tags;
``comments_html_style.json``: the ``<!-- -->`` link "is ignored"). Masking replaces
characters with spaces and keeps every ``\\n``, so offsets and 0-based line numbers stay
those of the body. Indented (4-space) code blocks are not
masked: in real vaults 4-space indents are mostly nested list content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from urllib.parse import unquote

from ccb.model import Heading, Link, PropertyValue
from ccb.names import nfc_key

__all__ = [
    "extract_aliases",
    "extract_headings",
    "extract_links",
    "extract_property_links",
    "extract_tags",
    "frontmatter_tags",
    "inline_tags",
    "mask_code",
    "mask_code_and_comments",
    "mask_code_and_html_comments",
]

_FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Patterns start with a literal so the regex engine can skip ahead; a leading ``!`` (embed)
# or the character before ``#`` (tags) is checked in Python.
_WIKILINK_RE = re.compile(r"\[\[([^\[\]\n]*(?:(?:\[(?!\[)|\](?!\]))[^\[\]\n]*)*)\]\]")
_MD_LINK_RE = re.compile(
    r"""\[([^\[\]\n]*)\]\(
    [ \t]*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)
    (?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)""",
    re.X,
)
# A URL scheme (RFC 3986) or a Windows drive: ``https:``, ``mailto:``, ``obsidian:``, ``C:``.
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# Obsidian tags: ``#`` after start of line or whitespace, then letters/digits/_/-// (Unicode).
_TAG_RE = re.compile(r"#([\w\-/]+)")
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC_RE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BLOCK_START_RE = re.compile(r"^ {0,3}(?:[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|>|\||<)")
_SEPARATORS_RE = re.compile(r"[,\s]+")


# --------------------------------------------------------------------------- masking


def _blank(text: str) -> str:
    """Replace every character but ``\\n`` with a space."""
    return re.sub(r"[^\n]", " ", text)


def _mask_fences(body: str) -> str:
    out: list[str] = []
    fence: tuple[str, int] | None = None
    for line in body.split("\n"):
        if fence is None:
            match = _FENCE_OPEN_RE.match(line)
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = (match.group(1)[0], len(match.group(1)))
                out.append(" " * len(line))
            else:
                out.append(line)
            continue
        stripped = line.strip()
        char, size = fence
        if (
            len(line) - len(line.lstrip(" ")) <= 3
            and len(stripped) >= size
            and stripped == char * len(stripped)
        ):
            fence = None
        out.append(" " * len(line))
    return "\n".join(out)


_INLINE_OPEN_RE = re.compile(r"`+|<!--|%%")
#: What Obsidian reads no link or tag in: code spans and HTML comments (module docstring).
_LINK_OPEN_RE = re.compile(r"`+|<!--")
_CODE_OPEN_RE = re.compile(r"`+")


def _mask_inline(text: str, opener: re.Pattern[str] = _INLINE_OPEN_RE) -> str:
    """Mask code spans, ``<!-- -->`` and ``%% %%`` (those ``opener`` finds) in one
    left-to-right pass."""
    pieces: list[str] = []
    done = 0  # text[:done] is already in pieces
    pos = 0
    length = len(text)
    stops = _SpanStops(text)
    while pos < length:
        match = opener.search(text, pos)
        if match is None:
            break
        token = match.group()
        start = match.start()
        if token[0] == "`":
            close = _find_backtick_run(text, match.end(), len(token), stops)
            if close is None:
                pos = match.end()
                continue
            end = close + len(token)
        else:
            closer = "-->" if token == "<!--" else "%%"
            close_at = text.find(closer, match.end())
            end = length if close_at < 0 else close_at + len(closer)
        pieces.append(text[done:start])
        pieces.append(_blank(text[start:end]))
        done = pos = end
    pieces.append(text[done:])
    return "".join(pieces)


class _SpanStops:
    """Where a code span opened at a position must close by: the end of its paragraph (a
    blank line) or the next line that starts another block, whichever comes first. One pass
    asks for positions left to right, so each is found once and kept while the positions
    asked stay before it: a paragraph of many code spans (a pasted log of 50 MB, a command
    in backticks on each line and no blank line) is read once, not once per span (hours)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._paragraph = (-1, 0)  # (asked from, found at: -1 none) of the last search
        self._block = (-1, 0)  # (asked from, found at: -1 none)

    def limit(self, start: int) -> int:
        """The first offset at or after ``start`` a code span opened before it cannot
        cross (``len(text)``: none)."""
        paragraph = self._found(start, self._paragraph,
                                lambda at: self.text.find("\n\n", at))
        self._paragraph = (start, paragraph)
        block = self._found(start, self._block, self._block_start)
        self._block = (start, block)
        ends = [at for at in (paragraph, block) if at >= 0]
        return min(ends) if ends else len(self.text)

    @staticmethod
    def _found(start: int, last: tuple[int, int], search: Callable[[int], int]) -> int:
        """The first match at or after ``start``: the last one when it was asked from before
        ``start`` and found none, or one at or after ``start``; else searched again."""
        asked, found = last
        if 0 <= asked <= start and (found < 0 or found >= start):
            return found
        return search(start)

    def _block_start(self, at: int) -> int:
        match = _SPAN_STOP_RE.search(self.text, at)
        return -1 if match is None else match.start()


def _find_backtick_run(text: str, start: int, run: int, stops: _SpanStops | None = None
                       ) -> int | None:
    """Start of the next run of exactly ``run`` backticks, within the same paragraph: before a
    blank line, and before a line that starts another block (a list item, a heading, a quote)
    — CommonMark code spans never cross blocks. ``stops``: the text's, kept over one pass."""
    limit = (stops or _SpanStops(text)).limit(start)
    for match in _BACKTICKS_RE.finditer(text, start, limit):
        if len(match.group()) == run:
            return match.start()
    return None


_BACKTICKS_RE = re.compile(r"`+")
_SPAN_STOP_RE = re.compile(r"\n[ \t]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]|\n[ \t]{0,3}#{1,6}[ \t]"
                           r"|\n[ \t]{0,3}>")


def mask_code_and_comments(body: str) -> str:
    """Return ``body`` with code (fenced, inline) and comments replaced by spaces.

    The result has the same length and the same ``\\n`` positions as ``body``.
    """
    return _mask_inline(_mask_fences(body))


def mask_code_and_html_comments(body: str) -> str:
    """``body`` with code (fenced, inline) and HTML comments replaced by spaces, Obsidian
    comments ``%% %%`` kept: the text Obsidian reads links and tags in (module docstring).
    Same length and ``\\n`` positions as ``body``."""
    return _mask_inline(_mask_fences(body), _LINK_OPEN_RE)


def mask_code(body: str) -> str:
    """``body`` with code (fenced, inline) replaced by spaces, comments kept: the words a
    reader of the note sees or writes, without commands and examples. Same length and
    ``\\n`` positions as ``body``."""
    return _mask_inline(_mask_fences(body), _CODE_OPEN_RE)


# --------------------------------------------------------------------------- links


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _wikilink(embed: bool, inner: str, line: int) -> Link | None:
    target_part, bar, display = inner.partition("|")
    if target_part.endswith("\\"):  # ``[[Note\|alias]]`` inside a table
        target_part = target_part[:-1]
    target, hash_, subpath = target_part.partition("#")
    target = target.strip()
    subpath = subpath.strip()
    if not target and not subpath:
        return None
    return Link(
        target=target,
        kind="embed" if embed else "wikilink",
        subpath=subpath if hash_ and subpath else None,
        display=display.strip() if bar and display.strip() else None,
        line=line,
    )


def _markdown_link(embed: bool, text: str, raw_target: str, line: int) -> Link | None:
    target = raw_target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1].strip()
    if not target or _SCHEME_RE.match(target) or target.startswith("//"):
        return None
    path, hash_, subpath = target.partition("#")
    path = unquote(path).strip()
    subpath = unquote(subpath).strip()
    if not path and not subpath:
        return None
    if "|" in path or "]]" in path or "\n" in path:  # no vault file can be named so
        return None
    return Link(
        target=path,
        kind="markdown-embed" if embed else "markdown",
        subpath=subpath if hash_ and subpath else None,
        display=text.strip() or None,
        line=line,
    )


def _links_in(masked: str, *, with_lines: bool) -> Iterator[Link]:
    """Links of an already masked text, in reading order; line -1 unless ``with_lines``."""
    starts = _line_starts(masked) if with_lines else None

    def line_at(offset: int) -> int:
        return -1 if starts is None else _line_of(starts, offset)

    found: list[tuple[int, Link]] = []
    for match in _WIKILINK_RE.finditer(masked):
        start = match.start()
        embed = start > 0 and masked[start - 1] == "!"
        link = _wikilink(embed, match.group(1), line_at(start))
        if link is not None:
            found.append((start, link))
    without_wikilinks = _WIKILINK_RE.sub(lambda m: " " * len(m.group()), masked)
    for match in _MD_LINK_RE.finditer(without_wikilinks):
        start = match.start()
        embed = start > 0 and without_wikilinks[start - 1] == "!"
        link = _markdown_link(embed, match.group(1), match.group(2), line_at(start))
        if link is not None:
            found.append((start, link))
    found.sort(key=lambda item: item[0])
    return (link for _, link in found)


def extract_links(body: str, *, masked: str | None = None) -> tuple[Link, ...]:
    """Vault links of ``body`` in reading order: wikilinks, embeds and markdown links.

    ``Link.line`` is the 0-based body line. External URLs (any ``scheme:``, ``//host``) are
    not vault links and are skipped; markdown targets are URL-decoded (``%20``) and may be
    written in ``<angle brackets>``. ``![[x]]`` and ``![](x)`` are embeds. Links in code and
    HTML comments are none; links in Obsidian comments are (module docstring). ``masked`` is
    ``mask_code_and_html_comments(body)`` when the caller already has it.
    """
    if masked is None:
        masked = mask_code_and_html_comments(body)
    return tuple(_links_in(masked, with_lines=True))


def _strings_in(value: PropertyValue) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings_in(item)


def extract_property_links(properties: Mapping[str, PropertyValue]) -> tuple[Link, ...]:
    """Links written in property values (``related: "[[X]]"``, lists, nested maps); line -1."""
    links: list[Link] = []
    for value in properties.values():
        for text in _strings_in(value):
            if "[" in text:
                links.extend(_links_in(text, with_lines=False))
    return tuple(links)


# --------------------------------------------------------------------------- tags


def _is_tag(name: str) -> bool:
    """Obsidian: a tag needs at least one character that is not a digit (``#1984`` is not)."""
    return bool(name) and not all(ch.isdigit() or ch == "/" for ch in name)


def inline_tags(body: str, *, masked: str | None = None) -> tuple[str, ...]:
    """``#tags`` of ``body`` outside code and HTML comments (inside an Obsidian comment too,
    as Obsidian reads them: module docstring), without ``#``, in order, with repeats.

    A tag starts at the beginning of a line or after whitespace (so ``page#frag`` and
    ``[[Note#Heading]]`` are not tags), may contain letters and digits of any script,
    ``_``, ``-`` and ``/`` (nesting), and must not be all digits. A trailing ``/`` is dropped.
    """
    tags: list[str] = []
    if masked is None:
        masked = mask_code_and_html_comments(body)
    for match in _TAG_RE.finditer(masked):
        start = match.start()
        if start > 0 and not masked[start - 1].isspace():
            continue
        name = match.group(1).strip("/")
        if _is_tag(name):
            tags.append(name)
    return tuple(tags)


def _tag_items(value: PropertyValue) -> Iterator[str]:
    if value is None:
        return
    if isinstance(value, list):
        for item in value:
            yield from _tag_items(item)
        return
    if isinstance(value, dict):
        return
    if isinstance(value, str):
        yield from _SEPARATORS_RE.split(value)
        return
    if isinstance(value, bool):
        yield "true" if value else "false"
        return
    yield str(value)


def frontmatter_tags(properties: Mapping[str, PropertyValue]) -> tuple[str, ...]:
    """Tags of the ``tags`` property: a list, or a comma/space-separated string.

    Leading ``#`` is removed; ``None``/empty give ``()``. Order as written, with repeats.
    """
    tags: list[str] = []
    for item in _tag_items(properties.get("tags")):
        name = item.strip().lstrip("#").strip("/")
        if name:
            tags.append(name)
    return tuple(tags)


def _dedupe_casefold(items: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = nfc_key(item).casefold()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


def extract_tags(
    properties: Mapping[str, PropertyValue], body: str, *, masked: str | None = None
) -> tuple[str, ...]:
    """All tags of a note: frontmatter ``tags`` first, then inline ``#tags``.

    Without ``#``, deduplicated case-insensitively keeping the first spelling.
    """
    return _dedupe_casefold((*frontmatter_tags(properties), *inline_tags(body, masked=masked)))


def extract_aliases(properties: Mapping[str, PropertyValue]) -> tuple[str, ...]:
    """Aliases of the ``aliases`` property: a list, or one string (one alias); ``None`` → ``()``.

    Items are stripped, empty ones dropped, duplicates (case-insensitive) removed.
    """
    value = properties.get("aliases")
    items: list[PropertyValue] = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        if item is None or isinstance(item, list | dict):
            continue
        text = (("true" if item else "false") if isinstance(item, bool) else str(item)).strip()
        if text:
            names.append(text)
    return _dedupe_casefold(names)


# --------------------------------------------------------------------------- headings


def _atx_text(raw: str | None) -> str:
    if not raw:
        return ""
    return _ATX_CLOSE_RE.sub("", raw).strip()


def extract_headings(body: str, *, masked: str | None = None) -> tuple[Heading, ...]:
    """ATX (``#``..``######``) and setext (``===``/``---``) headings outside code/comments.

    ``Heading.line`` is the 0-based body line (for setext: the first line of the paragraph).
    A ``---`` after a blank line is a thematic break, not a heading; setext text is the
    paragraph's lines joined by a space.
    """
    if masked is None:
        masked = mask_code_and_comments(body)
    masked_lines = masked.split("\n")
    real_lines = body.split("\n")
    headings: list[Heading] = []
    paragraph: list[int] = []  # lines of the open paragraph (setext candidates)
    in_container = False  # inside a list item / quote / table / HTML block until a blank line
    for index, masked in enumerate(masked_lines):
        if not masked.strip():
            paragraph, in_container = [], False
            continue
        atx = _ATX_RE.match(masked)
        if atx:
            real = _ATX_RE.match(real_lines[index])
            text = _atx_text(real.group(2) if real else atx.group(2))
            headings.append(Heading(level=len(atx.group(1)), text=text, line=index))
            paragraph, in_container = [], False
            continue
        setext = _SETEXT_RE.match(masked)
        if setext and paragraph:
            level = 1 if setext.group(1)[0] == "=" else 2
            text = " ".join(real_lines[i].strip() for i in paragraph)
            headings.append(Heading(level=level, text=text, line=paragraph[0]))
            paragraph = []
            continue
        if _THEMATIC_RE.match(masked):
            paragraph, in_container = [], False
        elif paragraph:
            paragraph.append(index)
        elif _BLOCK_START_RE.match(masked):
            in_container = True
        elif not in_container and len(masked) - len(masked.lstrip(" ")) < 4:
            paragraph.append(index)
    return tuple(headings)
