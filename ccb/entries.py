"""Entry files: many facts in one markdown file, one list item each, metadata inline.

One design keeps its memories as the lines of a markdown list, the metadata of each in an
HTML comment at the end of the line (hidden in Obsidian's reading view, plain in ``cat`` and
``git diff``)::

    - 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->
    - 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90;hc=0;sup=3f2a9c1d-->

Fields (:data:`FIELD_KEYS`): ``subj`` subject, ``vf`` / ``vt`` valid from / to (ISO dates),
``conf`` confidence (0–1), ``hc`` hit count, ``sup`` the key of the entry it supersedes.
Other ``key=value`` pairs are kept as written. A list item without the comment is an entry
with empty fields.

**Which files are entry files** (:func:`is_entry_file`): a markdown note that is not a memory
file (no ``type: user|feedback|project|reference``), not ``MEMORY.md`` or ``DREAMS.md``, and
either has ``type: entries`` in its frontmatter (anywhere in the vault), or lies in the memory
folder or an attached root and has at least one list item ending in an ``<!--m:`` comment.
Plain notes are never read as entries.

**Line keys** (:func:`entry_key`): an entry is addressed as ``file.md#key``. The key is the
first 8 hex digits of SHA-256 over the entry's text (NFC, runs of whitespace as one space),
so it stays the same when lines are added or removed above it and when its comment changes
(superseding adds ``vt``); the n-th repeat of the same key in a file gets ``-n``
(``3f2a9c1d-2``). Editing the text of an entry gives it a new key: it is a new fact.

**Parsing never raises** and never loses a byte: :func:`parse_entry_file` keeps every line
as written, :func:`format_entry_file` joins them back (byte-identical, tested with
hypothesis). A field that does not read (``vf=tomorrow``, ``conf=high``, a pair without
``=``) stays as written and is reported as a :class:`~ccb.model.Problem` (``kind="entry"``).

**Edits are minimal** (:func:`set_entry_fields`, :func:`supersede_entry`): a field's value
is replaced where it stands or appended before ``-->``; a line without a comment gets one;
nothing else on the line or in the file changes.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from ccb.frontmatter import split_frontmatter
from ccb.model import GENERATED_FILES, MEMORY_TYPES, Problem, PropertyValue
from config.errors import EntryEditError

__all__ = [
    "ENTRIES_TYPE",
    "ENTRY_KEY_HEX",
    "FIELD_KEYS",
    "Entry",
    "EntryFields",
    "EntryFile",
    "append_entry",
    "decode_field",
    "encode_field",
    "entry_key",
    "format_entry_file",
    "has_entry_comments",
    "is_entry_file",
    "parse_entry_file",
    "parse_fields",
    "remove_entry_fields",
    "render_comment",
    "reparse",
    "set_entry_fields",
    "supersede_entry",
]

#: Frontmatter ``type`` that makes a note an entry file wherever it lies.
ENTRIES_TYPE = "entries"
#: The fields of the design, in the order dreamd writes them.
FIELD_KEYS = ("subj", "vf", "vt", "conf", "hc", "sup")
#: Hex digits of a line key: 32 bits; two different texts of one file share a key with
#: probability ≈ n²/2³³ (1 in 8,600 for 1,000 entries, 1 in 86 for 10,000), and then the
#: later gets ``-2``.
ENTRY_KEY_HEX = 8

Encoding = Literal["utf-8", "utf-16-le", "utf-16-be"]
_BOMS: tuple[tuple[bytes, Encoding], ...] = (
    (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))

#: A list item: indent, marker (``-``, ``*``, ``+``, ``1.``, ``1)``), a space, the rest.
_ITEM_RE = re.compile(r"^(?P<lead>[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)(?P<rest>.*)$")
#: The metadata comment at the end of a line (``<!-- m: … -->`` is read too).
_COMMENT_RE = re.compile(
    r"(?P<gap>[ \t]*)<!--[ \t]*m:(?P<body>(?:(?!-->|<!--).)*)-->(?P<tail>[ \t]*)$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_WHITESPACE_RE = re.compile(r"\s+")
#: Characters a field value cannot hold as written, and their escapes (percent codes).
_ESCAPES = (("%", "%25"), (";", "%3B"), ("\n", "%0A"), ("\r", "%0D"), ("<", "%3C"),
            (">", "%3E"))
_UNESCAPE_RE = re.compile("%(25|3B|0A|0D|3C|3E)", re.IGNORECASE)


def encode_field(value: str) -> str:
    """``value`` as it can stand in a comment: ``%`` ``;`` newline, CR, ``<`` and ``>`` as
    percent codes (so no value ends the pair, the comment or the line, or opens a comment)."""
    for char, code in _ESCAPES:
        value = value.replace(char, code)
    return value


def decode_field(raw: str) -> str:
    """The value of a pair as written (:func:`encode_field` undone; other ``%`` stay)."""
    return _UNESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), raw)


@dataclass(frozen=True, slots=True)
class EntryFields:
    """The fields of one entry, read leniently.

    ``pairs`` holds every ``key=value`` of the comment as written (decoded), in order;
    the typed attributes are ``None`` when the field is absent or does not read. ``conf``
    is a float (the design writes ``0.90``), ``hc`` a count, ``vf``/``vt`` dates.
    """

    pairs: tuple[tuple[str, str], ...] = ()
    subj: str | None = None
    vf: date | None = None
    vt: date | None = None
    conf: float | None = None
    hc: int | None = None
    sup: str | None = None

    def get(self, key: str) -> str | None:
        """The last value written for ``key``, as written (decoded), or None."""
        found = None
        for name, value in self.pairs:
            if name == key:
                found = value
        return found


@dataclass(frozen=True, slots=True)
class Entry:
    """One list item of an entry file.

    ``key`` is its line key (module docstring), ``line`` its 0-based line in the file
    (frontmatter lines counted), ``text`` the item's text without marker and comment,
    ``comment`` the body of its ``<!--m:…-->`` comment as written (None without one).
    """

    key: str
    line: int
    text: str
    fields: EntryFields
    comment: str | None = None

    @property
    def has_comment(self) -> bool:
        """Whether the line carries an ``<!--m:`` comment."""
        return self.comment is not None

    def is_superseded(self, today: date, superseded_keys: Iterable[str] = ()) -> bool:
        """True when ``vt`` is on or before ``today`` or another entry names it in ``sup``."""
        return (self.fields.vt is not None and self.fields.vt <= today) or (
            self.key in set(superseded_keys))


@dataclass(frozen=True, slots=True)
class EntryFile:
    """An entry file as read: every line as written (with its line ending), the entries
    among them, and what did not read. ``bom`` is the byte-order mark as found (``b""``
    without one); ``encoding`` the file's."""

    path: str
    lines: tuple[str, ...]
    entries: tuple[Entry, ...] = ()
    problems: tuple[Problem, ...] = ()
    bom: bytes = b""
    encoding: Encoding = "utf-8"
    properties: Mapping[str, PropertyValue] = field(default_factory=dict)

    def entry(self, key: str) -> Entry | None:
        """The entry with line key ``key``, or None."""
        return next((e for e in self.entries if e.key == key), None)

    def superseded_keys(self) -> frozenset[str]:
        """Keys other entries of this file name in ``sup``."""
        return frozenset(e.fields.sup for e in self.entries if e.fields.sup)


def entry_key(text: str) -> str:
    """The key of an entry with ``text``: SHA-256 of its NFC text with runs of whitespace
    as one space, first :data:`ENTRY_KEY_HEX` hex digits (repeats are numbered by the file)."""
    norm = _WHITESPACE_RE.sub(" ", unicodedata.normalize("NFC", text)).strip()
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:ENTRY_KEY_HEX]


def _read_date(raw: str) -> date:
    text = raw.strip()
    if _DATE_RE.match(text):
        return date.fromisoformat(text)
    return datetime.fromisoformat(text).date()


def _typed(key: str, value: str) -> tuple[str, Any]:
    """The typed value of field ``key``; raises ValueError with a reason."""
    if key in ("vf", "vt"):
        return key, _read_date(value)
    if key == "conf":
        number = float(value)
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"must be between 0 and 1, got {value}")
        return key, number
    if key == "hc":
        count = int(value)
        if count < 0:
            raise ValueError(f"must be 0 or more, got {value}")
        return key, count
    return key, value.strip() or None


def parse_fields(body: str, where: str) -> tuple[EntryFields, tuple[Problem, ...]]:
    """The fields of a comment body (``subj=…;vf=…``) and what did not read; never raises."""
    pairs: list[tuple[str, str]] = []
    typed: dict[str, Any] = {}
    problems: list[Problem] = []
    for part in body.split(";"):
        if not part.strip():
            continue
        name, eq, raw = part.partition("=")
        name = name.strip()
        if not eq or not name:
            problems.append(Problem(where, "entry", f"metadata {part.strip()!r} is not key=value"))
            continue
        value = decode_field(raw.strip())
        pairs.append((name, value))
        if name in FIELD_KEYS:
            try:
                key, result = _typed(name, value)
                typed[key] = result
            except ValueError as exc:
                problems.append(Problem(where, "entry", f"metadata {name}={raw.strip()!r}: {exc}"))
    return EntryFields(pairs=tuple(pairs), **typed), tuple(problems)


def _decode(data: bytes) -> tuple[str, bytes, Encoding] | None:
    encoding: Encoding = "utf-8"
    bom, payload = b"", data
    for mark, name in _BOMS:
        if data.startswith(mark):
            bom, encoding, payload = mark, name, data[len(mark):]
            break
    try:
        return payload.decode(encoding), bom, encoding
    except UnicodeDecodeError:
        return None


def _split_lines(text: str) -> tuple[str, ...]:
    """Lines with their ``\\n`` kept (``\\r`` stays in the line); only ``\\n`` ends one."""
    return tuple(m.group() for m in re.finditer(r"[^\n]*\n|[^\n]+$", text))


def _content(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def _strip_cr(text: str) -> tuple[str, str]:
    return (text[:-1], "\r") if text.endswith("\r") else (text, "")


def _read_item(content: str) -> tuple[str, str | None] | None:
    """``(text, comment body or None)`` of a list item line, or None when it is none."""
    match = _ITEM_RE.match(_strip_cr(content)[0])
    if match is None:
        return None
    rest = match.group("rest")
    comment = _COMMENT_RE.search(rest)
    text = (rest[: comment.start()] if comment else rest).strip()
    if not text:
        return None
    return text, comment.group("body") if comment else None


def _body_start(text: str) -> int:
    """Index of the first body line (0 without frontmatter)."""
    return split_frontmatter(text).body_line


def parse_entry_file(path: str, data: bytes,
                     properties: Mapping[str, PropertyValue] | None = None) -> EntryFile:
    """Read ``data`` (the file at vault path ``path``) as an entry file -> :class:`EntryFile`.

    Every list item outside frontmatter and fenced code is an entry. Never raises: bytes
    that do not decode give an entry file with no entries and a ``Problem(kind="decode")``
    (the lines then hold the bytes decoded with replacements, so do not write it back).
    """
    decoded = _decode(data)
    if decoded is None:
        text = data.decode("utf-8", errors="replace")
        return EntryFile(path, _split_lines(text), problems=(
            Problem(path, "decode", "not valid UTF-8: not read as entries"),), bom=b"",
            properties=dict(properties or {}))
    text, bom, encoding = decoded
    lines = _split_lines(text)
    entries: list[Entry] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    fence: str | None = None
    for number in range(_body_start(text), len(lines)):
        content = _content(lines[number])
        opened = _FENCE_RE.match(content)
        if opened is not None and (fence is None or opened.group(1).startswith(fence)):
            fence = None if fence is not None else opened.group(1)[0] * 3
            continue
        item = None if fence is not None else _read_item(content)
        if item is None:
            continue
        item_text, body = item
        fields, bad = parse_fields(body, f"{path}:{number + 1}") if body is not None else (
            EntryFields(), ())
        problems.extend(bad)
        key = entry_key(item_text)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key}-{seen[key]}"
        entries.append(Entry(key, number, item_text, fields, body))
    return EntryFile(path, lines, tuple(entries), tuple(problems), bom, encoding,
                     dict(properties or {}))


def format_entry_file(entry_file: EntryFile) -> bytes:
    """The bytes of ``entry_file``: its lines joined and encoded as read (BOM kept)."""
    return entry_file.bom + "".join(entry_file.lines).encode(entry_file.encoding)


def has_entry_comments(body: str) -> bool:
    """True when a line of ``body`` (text after frontmatter) is a list item ending in an
    ``<!--m:`` comment (fenced code is not looked at)."""
    if "<!--" not in body:
        return False
    fence: str | None = None
    for line in body.split("\n"):
        opened = _FENCE_RE.match(line)
        if opened is not None and (fence is None or opened.group(1).startswith(fence)):
            fence = None if fence is not None else opened.group(1)[0] * 3
            continue
        if fence is None:
            item = _read_item(line)
            if item is not None and item[1] is not None:
                return True
    return False


def is_entry_file(path: str, properties: Mapping[str, PropertyValue], body: str, *,
                  in_scope: bool) -> bool:
    """Whether the note at ``path`` is read as an entry file (the rule in the module
    docstring). ``in_scope`` says the note lies in the memory folder or an attached root."""
    if path.rsplit("/", 1)[-1] in GENERATED_FILES:
        return False
    kind = properties.get("type")
    if isinstance(kind, str):
        if kind.strip().casefold() == ENTRIES_TYPE:
            return True
        if kind.strip().casefold() in MEMORY_TYPES:
            return False
    return in_scope and has_entry_comments(body)


def render_comment(pairs: Iterable[tuple[str, str]]) -> str:
    """``<!--m:k=v;…-->`` for ``pairs`` (values escaped with :func:`encode_field`)."""
    return "<!--m:" + ";".join(f"{k}={encode_field(v)}" for k, v in pairs) + "-->"


def _check_key(name: str) -> None:
    if not name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
        raise EntryEditError(f"ccb: entry field name {name!r} is not a plain word")


def set_entry_fields(line: str, updates: Mapping[str, str]) -> str:
    """``line`` (one list item, with its line ending) with the fields of ``updates`` set.

    A field already in the comment has its value replaced where it stands (the last pair of
    that name when written twice); a new one is appended before ``-->``; a line without a
    comment gets `` <!--m:…-->`` at its end. Everything else is kept byte for byte.
    Raises :class:`EntryEditError` when ``line`` is not a list item or a name is not a word.
    """
    for name in updates:
        _check_key(name)
    ending = "\n" if line.endswith("\n") else ""
    content, cr = _strip_cr(_content(line))
    if _read_item(content) is None:
        raise EntryEditError(f"ccb: {content[:60]!r} is not a list item; not edited")
    match = _COMMENT_RE.search(content)
    if match is None:
        return content.rstrip(" \t") + " " + render_comment(updates.items()) + content[
            len(content.rstrip(" \t")):] + cr + ending
    parts = match.group("body").split(";")
    todo = dict(updates)
    for index in range(len(parts) - 1, -1, -1):
        name, eq, raw = parts[index].partition("=")
        if eq and name.strip() in todo:
            lead = raw[: len(raw) - len(raw.lstrip())]
            trail = raw[len(raw.rstrip()):]
            parts[index] = f"{name}={lead}{encode_field(todo.pop(name.strip()))}{trail}"
    added = [f"{k}={encode_field(v)}" for k, v in todo.items()]
    if added:
        while parts and not parts[-1].strip():
            parts.pop()  # a trailing ";" or an empty comment: no empty pair before the new
        parts.extend(added)
    start, end = match.span("body")
    return content[:start] + ";".join(parts) + content[end:] + cr + ending


def remove_entry_fields(line: str, names: Iterable[str]) -> str:
    """``line`` (one list item, with its line ending) without the pairs named ``names`` in
    its comment; everything else is kept byte for byte (a line without a comment, or
    without those pairs, is returned as it is). Raises :class:`EntryEditError` when
    ``line`` is not a list item."""
    ending = "\n" if line.endswith("\n") else ""
    content, cr = _strip_cr(_content(line))
    if _read_item(content) is None:
        raise EntryEditError(f"ccb: {content[:60]!r} is not a list item; not edited")
    match = _COMMENT_RE.search(content)
    gone = set(names)
    if match is None:
        return line
    parts = match.group("body").split(";")
    kept = [p for p in parts if p.partition("=")[0].strip() not in gone or not p.partition("=")[1]]
    if len(kept) == len(parts):
        return line
    start, end = match.span("body")
    return content[:start] + ";".join(kept) + content[end:] + cr + ending


def _line_ending(entry_file: EntryFile) -> str:
    crlf = sum(1 for line in entry_file.lines if line.endswith("\r\n"))
    lf = sum(1 for line in entry_file.lines if line.endswith("\n")) - crlf
    return "\r\n" if crlf > lf else "\n"


def append_entry(entry_file: EntryFile, text: str, pairs: Iterable[tuple[str, str]] = ()
                 ) -> EntryFile:
    """``entry_file`` with ``- text <!--m:…-->`` appended as its last line (no comment when
    ``pairs`` is empty); a last line without an ending gets one first (the only change to
    an existing line). Raises :class:`EntryEditError` when ``text`` is empty or holds a line
    break, or when the new line would not read back as that entry (the file ends inside an
    unclosed code fence; the text ends in a ``<!--m:`` comment of its own)."""
    clean = text.strip()
    if not clean or "\n" in clean or "\r" in clean:
        raise EntryEditError(f"ccb: {entry_file.path}: an entry is one non-empty line of text")
    pairs = tuple(pairs)
    for name, _ in pairs:
        _check_key(name)
    ending = _line_ending(entry_file)
    lines = list(entry_file.lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += ending
    lines.append(f"- {clean}" + (" " + render_comment(pairs) if pairs else "") + ending)
    changed = reparse(entry_file, lines)
    last = changed.entries[-1] if changed.entries else None
    if last is None or last.line != len(lines) - 1 or last.text != clean:
        raise EntryEditError(f"ccb: {entry_file.path}: {clean[:40]!r} would not read back as "
                             "an entry there (an unclosed code fence, or a <!--m: comment in "
                             "the text); not edited")
    return changed


def reparse(entry_file: EntryFile, lines: Iterable[str]) -> EntryFile:
    """``entry_file`` with ``lines`` in place of its own, read again."""
    changed = EntryFile(entry_file.path, tuple(lines), bom=entry_file.bom,
                        encoding=entry_file.encoding)
    return parse_entry_file(entry_file.path, format_entry_file(changed),
                            entry_file.properties)


def supersede_entry(entry_file: EntryFile, key: str, text: str, *, on: date,
                    pairs: Iterable[tuple[str, str]] = (), repeat: bool = False
                    ) -> tuple[EntryFile, Entry]:
    """Supersede entry ``key`` with a new entry ``text``, valid from ``on``.

    The old line gets ``vt=<on>`` in its comment (nothing else on it changes); the new line
    is appended with ``vf=<on>``, the old entry's ``subj`` and ``conf`` unless ``pairs``
    sets them, and ``sup=<key>``. Returns the new file and the new entry. Raises
    :class:`EntryEditError` when no entry has ``key`` or the new text is that of an entry
    already in the file (it would not be a new fact) — unless ``repeat``: the caller knows
    every such line is history (a fact that holds again), and the new line's key is the
    text's numbered repeat (``3f2a9c1d-2``).
    """
    old = entry_file.entry(key)
    if old is None:
        raise EntryEditError(f"ccb: {entry_file.path}: no entry #{key}")
    if not repeat and any(entry_key(e.text) == entry_key(text) for e in entry_file.entries):
        raise EntryEditError(f"ccb: {entry_file.path}: {text.strip()[:40]!r} is already an entry")
    fields: dict[str, str] = {}
    if old.fields.subj:
        fields["subj"] = old.fields.subj
    fields["vf"] = on.isoformat()
    if old.fields.get("conf") is not None:
        fields["conf"] = old.fields.get("conf") or ""
    fields.update(dict(pairs))
    fields["sup"] = key
    lines = list(entry_file.lines)
    lines[old.line] = set_entry_fields(lines[old.line], {"vt": on.isoformat()})
    changed = append_entry(reparse(entry_file, lines), text, fields.items())
    return changed, changed.entries[-1]
