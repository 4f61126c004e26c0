"""Minimal edits of a note's frontmatter: change only the lines of the keys that change.

DESIGN.md, "Reading notes without hurting them": a user's frontmatter is never round-tripped
through a YAML dump. :func:`set_properties` patches the text of the block line by line. The
keys are located with a YAML *compose* of the block (positions only; nothing is ever dumped:
libyaml's, else ruamel.yaml's); everything else — other keys, their order, comments, quoting,
flow lists, blank lines, the BOM, the encoding, every untouched line's own line ending, the
fences and the body — stays byte for byte (shared cases 03, 04, 05, 10; the Obsidian help
vault in the tests).

How a change is written:

- a changed key keeps its original key text (quotes, spacing before ``:``) and a trailing
  ``# comment`` of a one-line value; the value after ``: `` is rewritten. A value spanning
  several lines (block list, block scalar) is replaced as a whole, trailing comment lines and
  blank lines after it are kept;
- a new key is appended at the end of the block, in the file's dominant line ending and at
  the indentation of the block's keys;
- ``None`` writes ``key:`` (an empty value, as Obsidian writes a cleared property);
- ``remove`` deletes a key's lines (every occurrence of a duplicated key);
- a value equal to the current one (same type and value) leaves its lines untouched;
- a file without a block gets ``---``/``---`` lines at the top (after a BOM).

Values are written the way Obsidian writes them: scalars plain when that reads back as the
same string under the YAML 1.2 reader of :mod:`ccb.frontmatter`, PyYAML's YAML 1.1
``SafeLoader`` and ruamel.yaml (so ``yes``, ``007``, ``12:30``, ``2024-01-15``, ``"[[X]]"``,
``a: b`` get double quotes); dates ``2026-06-15``; date-times ``2026-06-15T03:01:00Z``;
lists as block lists (``  - item``), ``[]`` when empty; mappings as nested block mappings,
``{}`` when empty; lists or mappings nested inside a list in flow style.

Every edit is checked before it is returned: the new block is read back with
:func:`ccb.frontmatter.load_properties` and must give the old properties with exactly the
requested changes, else :class:`config.errors.FrontmatterEditError` is raised and nothing is
written.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, ScalarNode

from ccb.frontmatter import (
    ObsidianYAMLLoader,
    load_properties,
    plain_block,
    split_frontmatter,
)
from ccb.model import PropertyValue
from ccb.parse import decode_note_bytes
from config.errors import FrontmatterEditError

__all__ = [
    "dominant_line_ending",
    "render_scalar",
    "replace_body",
    "set_properties",
]

_FENCE = "---"
_CLOSE_FENCES = frozenset({"---", "..."})
_BOMS = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}

# Same line model as ccb.frontmatter: \r\n, \r or \n; no other Unicode line breaks.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

# Characters that are escaped inside a double-quoted YAML scalar: the YAML "non-printable"
# set (YAML 1.1/1.2 spec, c-printable), NEL and the Unicode line/paragraph separators (YAML
# 1.1 line breaks), the BOM, and tab (allowed, but escaped so a value stays on one visible line).
_ESCAPE_RE = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\\\\"]')
_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}

# YAML indicator characters that cannot start a plain scalar (YAML 1.2 spec, c-indicator).
_INDICATORS = "-?:,[]{}#&*!|>'\"%@`"

_RUAMEL = YAML(typ="rt")


def _line_end(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def dominant_line_ending(text: str) -> str:
    crlf = text.count("\r\n")
    lone_lf = text.count("\n") - crlf
    return "\r\n" if crlf > lone_lf else "\n"


# --------------------------------------------------------------------------- rendering


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _double_quoted(text: str) -> str:
    return '"' + _ESCAPE_RE.sub(_escape, text) + '"'


def _reads_back_as(fragment: str, expected: object) -> bool:
    """True when ``fragment`` loads to ``expected`` under all three YAML readers we trust."""
    for loader in (ObsidianYAMLLoader, yaml.SafeLoader):
        try:
            if yaml.load(fragment, Loader=loader) != expected:
                return False
        except Exception:  # any reader error means: do not write it plain
            return False
    try:
        loaded = _RUAMEL.load(fragment)
    except Exception:
        return False
    return isinstance(loaded, dict) and dict(loaded) == expected


@functools.lru_cache(maxsize=4096)
def _plain_ok(text: str) -> bool:
    if not text or text != text.strip() or _ESCAPE_RE.search(text.replace("\\", "")):
        return False
    if text[0] in _INDICATORS or ": " in text or " #" in text or text.endswith(":"):
        return False
    return _reads_back_as(f"k: {text}\n", {"k": text})


@functools.lru_cache(maxsize=4096)
def _key_text(key: str) -> str:
    plain = (
        key == key.strip()
        and not _ESCAPE_RE.search(key.replace("\\", ""))
        and key[0] not in _INDICATORS
        and _reads_back_as(f"{key}: x\n", {key: "x"})
    )
    return key if plain else _double_quoted(key)


def _datetime_text(value: dt.datetime) -> str:
    offset = value.utcoffset()
    if offset is not None and offset == dt.timedelta(0):
        return value.replace(tzinfo=None).isoformat() + "Z"
    return value.isoformat()


def render_scalar(value: str | int | float | bool | dt.date | None) -> str:
    """The YAML text of one scalar as dreamd writes it into frontmatter (see module doc).

    ``None`` → ``""`` (the caller writes ``key:``); ``True`` → ``true``; ``1.5`` → ``1.5``;
    ``date(2026, 6, 15)`` → ``2026-06-15``; an aware UTC ``datetime`` → ``2026-06-15T03:01:00Z``
    (other offsets ``+02:00``; a naive one without offset); strings plain when that reads
    back unchanged, else double-quoted with escapes. Raises ``ValueError`` for NaN/infinity
    (Obsidian has no number for them) and ``TypeError`` for other types.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value!r} as a property value")
        return repr(value)
    if isinstance(value, dt.datetime):
        return _datetime_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return value if _plain_ok(value) else _double_quoted(value)
    raise TypeError(f"cannot write a {type(value).__name__} as a property value")


def _flow(value: PropertyValue) -> str:
    """Flow-style YAML for a value nested inside a list (strings always double-quoted)."""
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{_double_quoted(str(k))}: {_flow(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if value is None:
        return "null"
    if isinstance(value, str):
        return _double_quoted(value)
    return render_scalar(value)


def _render(prefix: str, value: PropertyValue, indent: str, eol: str) -> list[str]:
    """Lines for ``<prefix> value`` where ``prefix`` ends with the key's ``:``."""
    if isinstance(value, list):
        if not value:
            return [f"{prefix} []{eol}"]
        lines = [f"{prefix}{eol}"]
        for item in value:
            text = _flow(item) if isinstance(item, list | dict) else render_scalar(item)
            lines.append(f"{indent}  -{' ' + text if text else ''}{eol}")
        return lines
    if isinstance(value, dict):
        if not value:
            return [f"{prefix} {{}}{eol}"]
        lines = [f"{prefix}{eol}"]
        for key, item in value.items():
            child = indent + "  "
            lines.extend(_render(f"{child}{_key_text(str(key))}:", item, child, eol))
        return lines
    text = render_scalar(value)
    return [f"{prefix} {text}{eol}" if text else f"{prefix}{eol}"]


# --------------------------------------------------------------------------- locating keys


@dataclass(frozen=True, slots=True)
class _KeySpan:
    """Where one top-level key sits in the block: lines ``[start, end)``, 0-based in the block.

    ``prefix`` is the key's line up to and including its ``:`` (``None`` when the key cannot
    be edited as lines, e.g. ``? explicit`` keys); ``tail`` a trailing ``  # comment`` of a
    one-line value, kept on rewrite.
    """

    key: str
    start: int
    end: int
    prefix: str | None
    tail: str


def _is_comment_or_blank(line: str, key_col: int) -> bool:
    stripped = _content(line).strip()
    if not stripped:
        return True
    indent = len(line) - len(line.lstrip(" \t"))
    return stripped.startswith("#") and indent <= key_col


def _compose(raw: str) -> Any:
    """The node tree of a frontmatter block, for the positions of its keys: libyaml's C
    composer when PyYAML has it (≈35× faster than ruamel.yaml's pure-Python one; key positions
    do not depend on the YAML version's scalar rules), ruamel.yaml's when libyaml refuses the
    text. ``tests/ccb/test_frontmatter_edit.py`` checks both give the same key spans on the
    corpora."""
    if _C_LOADER is not None:
        try:
            return yaml.compose(raw, Loader=_C_LOADER)
        except yaml.YAMLError:
            pass
    return _RUAMEL.compose(raw)


_C_LOADER: Any = getattr(yaml, "CSafeLoader", None)


def _mapping_root(path: str, raw: str) -> Any:
    """The composed top-level mapping node of a frontmatter block (``None``: empty). Raises
    :class:`FrontmatterEditError` when it does not parse, is no mapping, or is a flow
    mapping (``{...}``): such frontmatter is never rewritten."""
    try:
        root = _compose(raw)
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FrontmatterEditError(
            f"ccb: edit {path}: frontmatter does not parse: {first}"
        ) from exc
    if root is None:
        return None
    if not isinstance(root, MappingNode | yaml.nodes.MappingNode):
        raise FrontmatterEditError(f"ccb: edit {path}: frontmatter is not a mapping; not rewritten")
    if root.flow_style:
        raise FrontmatterEditError(
            f"ccb: edit {path}: frontmatter is a flow mapping ({{...}}); not rewritten"
        )
    return root


def _locate_keys(path: str, block_lines: Sequence[str]) -> tuple[list[_KeySpan], int]:
    """Spans of the block's top-level keys and the column of the keys (0 for an empty block):
    :func:`_plain_keys` of a plain block, else :func:`_composed_keys`."""
    plain = _plain_keys(block_lines)
    return (plain, 0) if plain is not None else _composed_keys(path, block_lines)


def _plain_keys(block_lines: Sequence[str]) -> list[_KeySpan] | None:
    """The key spans of a block of ``key: value`` lines alone
    (:func:`ccb.frontmatter.plain_block`; ``None`` for any other block): each key is its own
    line at column 0, up to its colon, without a comment — what :func:`_composed_keys` finds
    there (``tests/ccb/test_frontmatter_edit.py`` compares them on the corpora), without
    composing the block (a third of the time of a dream's edits)."""
    if plain_block("".join(block_lines)) is None:
        return None
    spans = []
    for index, line in enumerate(block_lines):
        content = _content(line)
        if content:
            key = content[: content.index(":")]
            spans.append(_KeySpan(key=key, start=index, end=index + 1, prefix=key + ":",
                                  tail=""))
    return spans


def _composed_keys(path: str, block_lines: Sequence[str]) -> tuple[list[_KeySpan], int]:
    """:func:`_locate_keys` from the block's YAML node tree (:func:`_mapping_root`)."""
    root = _mapping_root(path, "".join(block_lines))
    if root is None:
        return [], 0
    pairs = list(root.value)
    starts = [key.start_mark.line for key, _ in pairs]
    key_col = pairs[0][0].start_mark.column if pairs else 0
    spans: list[_KeySpan] = []
    for index, (key_node, value_node) in enumerate(pairs):
        start = starts[index]
        end = starts[index + 1] if index + 1 < len(pairs) else len(block_lines)
        floor = start + 1
        if (
            isinstance(value_node, ScalarNode | yaml.nodes.ScalarNode)
            and value_node.style in ('"', "'")
            and value_node.start_mark.line >= start
        ):
            floor = max(floor, value_node.end_mark.line + 1)
        while end > floor and _is_comment_or_blank(block_lines[end - 1], key_col):
            end -= 1
        key = key_node.value if isinstance(key_node, ScalarNode | yaml.nodes.ScalarNode) \
            else None
        if key is None:
            continue
        prefix, tail = None, ""
        if key_node.end_mark.line == start and not (index > 0 and starts[index - 1] == start):
            prefix, tail = _key_prefix(_content(block_lines[start]), key_node, value_node,
                                       start, one_line=end == start + 1)
        spans.append(_KeySpan(key=str(key), start=start, end=end, prefix=prefix, tail=tail))
    return spans, key_col


def _key_prefix(line: str, key_node: Any, value_node: Any, start: int, *, one_line: bool
                ) -> tuple[str | None, str]:
    """The text of a key's line up to its colon, and a comment after its value on that line
    (``""``: none), kept byte for byte when the value is replaced. ``None``: no plain
    ``key:`` on the line."""
    colon = line.find(":", key_node.end_mark.column)
    if colon < 0 or line[key_node.end_mark.column : colon].strip():
        return None, ""
    tail = ""
    if value_node.end_mark.line == start and value_node.start_mark.line == start:
        rest = line[value_node.end_mark.column :]
        if rest.strip().startswith("#"):
            tail = rest
    elif value_node.start_mark.line > start and one_line:
        rest = line[colon + 1 :]
        if rest.strip().startswith("#"):
            tail = rest
    return line[: colon + 1], tail


# --------------------------------------------------------------------------- the edit


def _same(a: object, b: object) -> bool:
    """Equal and of the same types all the way down (``1 != True`` here, ``1 != 1.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise ValueError(f"property names must be non-empty text, got {key!r}")
    return key


def set_properties(
    data: bytes,
    updates: Mapping[str, PropertyValue | None],
    *,
    remove: Collection[str] = (),
    path: str = "<note>",
) -> bytes:
    """Return the bytes of the note ``data`` with ``updates`` set and ``remove`` deleted.

    ``updates`` maps property names to values (``None`` writes ``key:``); new keys are
    appended in the mapping's order. Only the lines of keys whose value changes differ from
    ``data``; see the module docstring for the exact rules. Returns ``data`` itself when
    nothing changes. ``path`` (vault-relative) only names the note in error messages.

    Raises :class:`config.errors.FrontmatterEditError` (``ccb: edit <path>: <why>``) when the
    note is not valid UTF-8/UTF-16, its block is not valid YAML or is a list, a scalar or a
    flow mapping, a key to change cannot be edited as lines (``? explicit`` key), or the
    read-back check fails — the caller must not write then. Raises ``ValueError`` when a
    name is empty or appears both in ``updates`` and ``remove``, or a float is NaN/infinite.
    """
    for key in updates:
        _check_key(key)
    removed = {_check_key(key) for key in remove}
    both = removed & set(updates)
    if both:
        raise ValueError(f"properties both set and removed: {sorted(both)}")

    text, has_bom, encoding, problems = decode_note_bytes(data, path)
    if problems:
        raise FrontmatterEditError(f"ccb: edit {path}: {problems[0].reason}; not rewritten")
    split = split_frontmatter(text)
    old_props, load_problems = load_properties(split.raw, path, strict=True)
    if load_problems:
        reason = load_problems[0].reason.split(";")[0]
        raise FrontmatterEditError(f"ccb: edit {path}: {reason}; not rewritten")

    expected: dict[str, PropertyValue] = dict(old_props)
    for key, value in updates.items():
        expected[key] = value
    for key in removed:
        expected.pop(key, None)
    if _same(expected, dict(old_props)) and not (removed & set(old_props)):
        return data

    eol = dominant_line_ending(text) if ("\n" in text or "\r" in text) else "\n"
    lines = [match.group() for match in _LINE_RE.finditer(text)]
    if split.raw is None:
        new_lines = [f"{_FENCE}{eol}"]
        for key, value in updates.items():
            new_lines.extend(_render(f"{_key_text(key)}:", value, "", eol))
        new_text = "".join(new_lines) + f"{_FENCE}{eol}" + text
    else:
        close = split.body_line - 1
        block = lines[1:close]
        if "".join(block) != split.raw or _content(lines[close]) not in _CLOSE_FENCES:
            raise FrontmatterEditError(f"ccb: edit {path}: cannot find the frontmatter lines")
        new_block = _edit_block(path, block, old_props, updates, removed, eol)
        new_text = lines[0] + "".join(new_block) + "".join(lines[close:])

    new_raw = split_frontmatter(new_text).raw
    new_props, new_problems = load_properties(new_raw, path, strict=True)
    if new_problems or not _same(new_props, expected):
        raise FrontmatterEditError(
            f"ccb: edit {path}: the edited frontmatter does not read back as intended; not written"
        )
    return (_BOMS[encoding] if has_bom else b"") + new_text.encode(encoding)


def _edit_block(
    path: str,
    block: list[str],
    old_props: Mapping[str, PropertyValue],
    updates: Mapping[str, PropertyValue | None],
    removed: set[str],
    eol: str,
) -> list[str]:
    spans, key_col = _locate_keys(path, block)
    indent = " " * key_col
    if spans:
        first = block[spans[0].start]
        indent = first[: len(first) - len(first.lstrip(" \t"))]
    last_by_key = {span.key: span for span in spans}
    replace: dict[int, tuple[int, list[str]]] = {}
    for span in spans:
        if span.key in removed:
            replace[span.start] = (span.end, [])
    appended: list[str] = []
    for key, value in updates.items():
        found = last_by_key.get(key)
        if found is None:
            appended.extend(_render(f"{indent}{_key_text(key)}:", value, indent, eol))
            continue
        if key in old_props and _same(old_props[key], value):
            continue
        span = found
        if span.prefix is None:
            raise FrontmatterEditError(
                f"ccb: edit {path}: property {key!r} is not written as 'key: value'; not rewritten"
            )
        own_eol = _line_end(block[span.start]) or eol
        new = _render(span.prefix, value, indent, own_eol)
        if span.tail and len(new) == 1:
            new = [_content(new[0]) + span.tail + own_eol]
        replace[span.start] = (span.end, new)
    result: list[str] = []
    index = 0
    while index < len(block):
        if index in replace:
            end, new = replace[index]
            result.extend(new)
            index = end
        else:
            result.append(block[index])
            index += 1
    return result + appended


def replace_body(data: bytes, body: str) -> bytes:
    """The note's bytes with everything after the frontmatter block replaced by ``body``.

    The BOM and the frontmatter block (fences included) stay byte for byte; ``body`` is
    written as given (the caller picks its line endings). UTF-8 notes only: raises
    ``FrontmatterEditError`` for any other encoding.
    """
    has_bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FrontmatterEditError(f"ccb: edit body: not UTF-8 ({exc.reason})") from exc
    split = split_frontmatter(text)
    head = text[: len(text) - len(split.body)] if split.raw is not None else ""
    out = (head + body).encode("utf-8")
    return b"\xef\xbb\xbf" + out if has_bom else out
