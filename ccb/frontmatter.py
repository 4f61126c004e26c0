"""Split a note's frontmatter block from its body and load it the way Obsidian reads it.

A frontmatter block runs from a first line that is exactly ``---`` to the next line that is
exactly ``---`` (or ``...``); the closing fence may be the last line without a newline. Line
endings ``\\n``, ``\\r\\n`` and ``\\r`` are all accepted. Without a closing fence there is no
block and the whole text is body (Obsidian shows no properties either).

The YAML is parsed through python-frontmatter's handler with a PyYAML ``SafeLoader`` subclass
whose implicit types follow YAML 1.2's core schema as Obsidian reads it (shared case 08,
01): only ``true``/``false`` (three spellings each) are booleans, so ``yes``, ``no``, ``on``,
``off``, ``y``, ``n``, ``NO`` stay text; integers have no leading zero, no ``_``, no
sexagesimal form (``007`` and ``12:30`` stay text); ``YYYY-MM-DD`` is a ``date`` and a full
timestamp a ``datetime`` keeping its UTC offset; ``2024-03-05 18:45`` (no seconds) stays text.
Nothing here ever writes YAML: see DESIGN.md, "Never round-trip a file through PyYAML".
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from ccb.model import Problem, PropertyValue

__all__ = [
    "TEMPLATE_PROBLEM",
    "FrontmatterSplit",
    "ObsidianYAMLHandler",
    "ObsidianYAMLLoader",
    "load_properties",
    "split_frontmatter",
]

_OPEN_FENCE = "---"
_CLOSE_FENCES = frozenset({"---", "..."})

# YAML 1.2 core schema, narrowed to what Obsidian shows (see module docstring).
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT_RE = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT_RE = re.compile(r"^[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
# PyYAML's own timestamp pattern (YAML 1.1 timestamp type): seconds are required for a time.
_TIMESTAMP_RE = re.compile(
    r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
    (?:[Tt]|[ \t]+)[0-9][0-9]?
    :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
    re.X,
)
_REPLACED_TAGS = frozenset(
    {
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
        # `key: =` resolves to the YAML 1.1 "value" type, which SafeLoader cannot construct.
        "tag:yaml.org,2002:value",
    }
)


# libyaml's parser (CSafeLoader) when PyYAML was built with it: ~5x faster on the Obsidian
# help vault (measured here, PyYAML 6.0.4); type resolution stays in Python either way.
_SafeLoaderBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ObsidianYAMLLoader(_SafeLoaderBase):  # type: ignore[valid-type,misc]
    """PyYAML safe loader with Obsidian's (YAML 1.2 core) implicit types; see the module doc."""

    def construct_yaml_timestamp(self, node: yaml.Node) -> Any:
        """Build a ``date``/``datetime``; an impossible date (``2024-02-30``) stays text."""
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, TypeError, AttributeError, OverflowError):
            return self.construct_scalar(node)


def _install_resolvers() -> None:
    resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}
    for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items():
        kept = [(tag, rx) for tag, rx in entries if tag not in _REPLACED_TAGS]
        if kept:
            resolvers[first] = kept
    ObsidianYAMLLoader.yaml_implicit_resolvers = resolvers
    ObsidianYAMLLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_RE, list("tTfF"))
    ObsidianYAMLLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT_RE, list("-+0123456789"))
    ObsidianYAMLLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float", _FLOAT_RE, list("-+.0123456789")
    )
    ObsidianYAMLLoader.add_implicit_resolver(
        "tag:yaml.org,2002:timestamp", _TIMESTAMP_RE, list("0123456789")
    )
    ObsidianYAMLLoader.add_constructor(
        "tag:yaml.org,2002:timestamp", ObsidianYAMLLoader.construct_yaml_timestamp
    )


_install_resolvers()


class ObsidianYAMLHandler(YAMLHandler):
    """python-frontmatter YAML handler that parses with :class:`ObsidianYAMLLoader`.

    Used for loading only; dreamd never calls ``export`` (it would re-sort keys and drop
    comments, DESIGN.md "Facts": python-frontmatter 1.3.0 + PyYAML 6).
    """

    def load(self, fm: str, **kwargs: object) -> Any:
        """Parse the YAML text ``fm``; raises ``yaml.YAMLError`` when it does not parse."""
        kwargs.setdefault("Loader", ObsidianYAMLLoader)
        return super().load(fm, **kwargs)


_HANDLER = ObsidianYAMLHandler()


@dataclass(frozen=True, slots=True)
class FrontmatterSplit:
    """A text split at its frontmatter fences.

    ``raw`` is the exact text between the fences (original line endings kept; ``""`` for
    ``---``/``---``) or ``None`` when the text has no block. ``body`` is everything after the
    closing fence line, untouched. ``body_line`` is the 0-based line of the text where the
    body starts (0 when there is no block).
    """

    raw: str | None
    body: str
    body_line: int


# str.splitlines(keepends=True) also splits on \x0b, \x1c, \u2028 ...; markdown does not.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _strip_end(line: str) -> str:
    return line.rstrip("\r\n")


def split_frontmatter(text: str) -> FrontmatterSplit:
    """Split ``text`` (decoded, a leading BOM is ignored) into frontmatter and body."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(_OPEN_FENCE):
        return FrontmatterSplit(raw=None, body=text, body_line=0)
    if text.startswith("---\n") and "\r" not in text:
        return _split_lf(text)
    lines = _LINE_RE.finditer(text)
    first = next(lines)
    if _strip_end(first.group()) != _OPEN_FENCE:
        return FrontmatterSplit(raw=None, body=text, body_line=0)
    start = first.end()
    for index, match in enumerate(lines, start=1):
        if _strip_end(match.group()) in _CLOSE_FENCES:
            raw = text[start : match.start()]
            return FrontmatterSplit(raw=raw, body=text[match.end() :], body_line=index + 1)
    return FrontmatterSplit(raw=None, body=text, body_line=0)


def _split_lf(text: str) -> FrontmatterSplit:
    """:func:`split_frontmatter` of a text that opens with ``---\\n`` and holds no ``\\r``
    (its only line break is ``\\n``): the closing fence found by searching the text, not
    line by line (a dream splits every memory file, and every file it edits, twice)."""
    found = [at for at in (text.find("\n---\n", 3), text.find("\n...\n", 3)) if at >= 0]
    if not found and text.endswith(("\n---", "\n...")) and len(text) >= 7:
        found = [len(text) - 4]
    if not found:
        return FrontmatterSplit(raw=None, body=text, body_line=0)
    fence = min(found) + 1  # where the closing line starts
    return FrontmatterSplit(raw=text[4:fence], body=text[fence + 4:],
                            body_line=text.count("\n", 0, fence) + 1)


#: What the YAML parser's messages (libyaml's and PyYAML's wording) mean for the person who
#: wrote the properties, and what to do about it; the first that appears in a message says
#: it. A message none matches is given as the parser wrote it.
_PLAIN_YAML = (
    ("found unhashable key", "braces ({...} or {{...}}) that YAML cannot read as a value "
     "or a name: put them in quotes"),
    ("mapping values are not allowed", "a colon and a space inside a value: put the value "
     "in quotes"),
    ("could not find expected ':'", "a line that is not 'name: value' nor a '- item' of a "
     "list"),
    ("expected ',' or ']'", "a list opened with [ and not closed"),
    ("expected ',' or '}'", "a { opened and not closed"),
    ("while scanning a quoted scalar", "a quote opened and not closed"),
    ("unknown escape character", "a backslash in double quotes: use single quotes"),
    ("did not find expected '-' indicator", "a line inside a list that is not a '- item'"),
    ("did not find expected key", "something where no property can start (a stray "
     "character, or a line indented unlike the others)"),
    ("expected <block end>", "something where no property can start (a stray character, "
     "or a line indented unlike the others)"),
    ("found undefined alias", "a value starting with * (an alias of nothing): put it in "
     "quotes"),
    ("found duplicate anchor", "two values marked with the same &name"),
    ("cannot start any token", "a character YAML reserves (@, `, a tab) at the start of a "
     "value or a line: put the value in quotes, indent with spaces"),
)


def _plain_message(message: str) -> str:
    """The parser's ``message`` said for a person (:data:`_PLAIN_YAML`), else as it is."""
    return next((plain for found, plain in _PLAIN_YAML if found in message), message)


def _template_reason(exc: BaseException) -> str:
    """Why a template's block (``created: {{date}}``) is read with its placeholders as text,
    with the file line the parser stopped at (block line + fence)."""
    mark = (exc.problem_mark or exc.context_mark) if isinstance(exc, yaml.MarkedYAMLError) \
        else None
    where = f" (line {mark.line + 2})" if mark is not None else ""
    return (f"a template: its properties hold placeholders ({{{{date}}}} …){where} that are "
            "YAML only once a note is made from it; read with the placeholders as text")


def _yaml_reason(exc: BaseException) -> str:
    """One line: what is wrong, in plain words where the parser's message is known
    (:data:`_PLAIN_YAML`), plus the 1-based line of the file (block line + fence)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(part for part in (exc.context, exc.problem) if part) or str(exc)
        message = _plain_message(message)
        if mark is not None:
            where = f"line {mark.line + 2}, column {mark.column + 1}"
            return f"frontmatter is not valid YAML ({where}): {message}"
        return f"frontmatter is not valid YAML: {message}"
    if isinstance(exc, RecursionError):
        return "frontmatter is not valid YAML: nested too deeply"
    first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"frontmatter is not valid YAML: {first_line}"


_CYCLE = object()
#: Types :func:`_normalise` returns as they are (their subclasses go through its tests).
_SCALAR_TYPES = frozenset({bool, int, float, str, dt.date, dt.datetime})


def _normalise(value: object, memo: dict[int, Any]) -> PropertyValue:
    """Turn a loaded YAML value into a :data:`PropertyValue` (str keys, lists, no tuples).

    Shared anchors stay shared (``memo``), so alias bombs stay linear; a recursive alias
    becomes ``None`` where it closes the loop.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.datetime | dt.date):
        return value
    key = id(value)
    if key in memo:
        seen = memo[key]
        return None if seen is _CYCLE else seen
    memo[key] = _CYCLE
    result: PropertyValue
    if isinstance(value, Mapping):
        mapping: dict[str, PropertyValue] = {}
        for k, v in value.items():  # (a text key or a scalar value as is, without a call)
            mapping[k if type(k) is str else _key_text(k)] = \
                v if v is None or type(v) in _SCALAR_TYPES else _normalise(v, memo)
        result = mapping
    elif isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        result = [_normalise(item, memo) for item in items]
    elif isinstance(value, bytes):
        result = value.decode("utf-8", errors="replace")
    else:
        result = str(value)
    memo[key] = result
    return result


def _key_text(key: object) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, dt.date):
        return key.isoformat()
    if isinstance(key, str):
        return key
    return str(key)


#: Most values one frontmatter block may expand to. YAML aliases let a few hundred bytes
#: stand for billions of values ("billion laughs"); the largest real block seen in the
#: shared corpora has well under 1,000. Our choice, far above any real note.
MAX_PROPERTY_VALUES = 100_000


def _expanded_size(value: object, memo: dict[int, int]) -> int:
    """How many values ``value`` stands for once aliases are expanded (shared nodes once)."""
    key = id(value)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a cycle (``x: &r [1, *r]``) counts once; _normalise cuts it to None
    if isinstance(value, Mapping):  # (a scalar value counts 1, without a call)
        size = 1 + len(value) + sum(1 if v is None or type(v) in _SCALAR_TYPES
                                    else _expanded_size(v, memo) for v in value.values())
    elif isinstance(value, list):
        size = 1 + sum(_expanded_size(v, memo) for v in value)
    else:
        size = 1
    memo[key] = size
    return size


#: :attr:`ccb.model.Problem.kind` of a template whose frontmatter loads only with its
#: placeholders read as text (:func:`load_properties`).
TEMPLATE_PROBLEM = "template"
#: A template's placeholder in a property value: Obsidian's core Templates (``{{date}}``)
#: and Templater (``<% tp.date.now() %>``). Unquoted, ``created: {{date}}`` is a YAML
#: mapping with a mapping for its key, which does not load.
_PLACEHOLDER_VALUE = re.compile(r"^(\s*(?:-\s+|[^:#\n]+:\s+))((?:.*?)(?:\{\{|<%).*?)\s*$")


def _template_properties(raw: str) -> Any:
    """The properties of a template whose placeholders (``{{date}}``, ``<% … %>``) keep its
    frontmatter from loading, each placeholder value read as the text it is; ``None`` when
    there is none or the block does not load even so."""
    if "{{" not in raw and "<%" not in raw:
        return None
    lines = []
    for line in raw.splitlines():
        found = _PLACEHOLDER_VALUE.match(line)
        if found and not found.group(2).startswith(("'", '"')):
            line = found.group(1) + "'" + found.group(2).replace("'", "''") + "'"
        lines.append(line)
    try:
        return _HANDLER.load("\n".join(lines))
    except Exception:  # still not YAML: reported as it was
        return None


#: Frontmatter blocks up to this many characters have their YAML reading kept
#: (:func:`_yaml_of`); a memory's block is some 300–600 (the planted set of
#: ``bench/dream_bench.py``: 365). Our choice: 16,384 kept blocks of at most 2,048
#: characters hold a few tens of MB.
KEPT_BLOCK_CHARS = 2048


@functools.lru_cache(maxsize=16384)
def _kept_yaml(raw: str) -> Any:
    found = plain_block(raw)
    return _HANDLER.load(raw) if found is None else found


def _yaml_of(raw: str) -> Any:
    """``raw`` parsed by :data:`_HANDLER` (raises as it does), kept for the last 16,384
    short blocks: a dream reads each memory's block, then edits its properties, which reads
    the block again before the edit (``ccb.frontmatter_edit.set_properties``: 75% of the
    time of planning the edits, measured with cProfile on the planted 2,000-memory set).
    Never changed by its callers: :func:`load_properties` builds new containers from it
    (:func:`_normalise`), so a kept reading is the reading. A block of ``key: value`` lines
    alone is read by :func:`plain_block` (the same reading, without the YAML parser)."""
    if len(raw) <= KEPT_BLOCK_CHARS:
        return _kept_yaml(raw)
    found = plain_block(raw)
    return _HANDLER.load(raw) if found is None else found


# --------------------------------------------------------------------------- plain blocks

#: Characters that keep a block from :func:`plain_block`: anything but printable ASCII, line
#: breaks and the printable non-ASCII characters of YAML's reader (YAML 1.1 §5.1, as libyaml
#: and PyYAML check them), less NEL, the line and paragraph separators (YAML 1.1 line
#: breaks) and the BOM; a tab (indentation rules) too.
_NOT_PLAIN_CHAR = re.compile("[^\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe"
                             "\uff00-\ufffd\U00010000-\U0010ffff]")
#: One line :func:`plain_block` reads: a key of letters, digits, ``_`` and ``-`` at column 0,
#: its colon, then nothing or spaces and a value (group 2; :func:`_plain_line`).
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*?))? *")
#: What a value read plainly never starts with: a YAML indicator (YAML 1.2 §5.3, stricter
#: than YAML: ``-1``, ``?x`` and ``:x`` are left to the parser too).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_STR_TAG = "tag:yaml.org,2002:str"
#: The tags a plain value may resolve to here; any other (``<<``, ``!``) is left to YAML.
_SCALAR_TAGS = frozenset({_STR_TAG, *(f"tag:yaml.org,2002:{t}" for t in
                                      ("null", "bool", "int", "float", "timestamp"))})
_NOT_PLAIN = object()
#: A loader made once, for its resolver and scalar constructors alone (never parses).
_SCALARS = ObsidianYAMLLoader("")


def _scalar(text: str) -> Any:
    """The value YAML reads for the plain scalar ``text`` — :class:`ObsidianYAMLLoader`'s
    own resolver and constructor — or :data:`_NOT_PLAIN` for a tag left to YAML. A text
    whose first character starts no implicit resolver is text, as the resolver answers
    (it looks only at the resolvers of that character, and at those of any character,
    which this loader has none of): a name or a sentence is not looked at further (the
    57,000 values of the planted 10,000 memories of ``bench/dream_bench.py``)."""
    resolvers = _SCALARS.yaml_implicit_resolvers
    if text and text[0] not in resolvers and None not in resolvers \
            and not _SCALARS.yaml_path_resolvers:
        return text
    tag = _SCALARS.resolve(yaml.ScalarNode, text, (True, False))
    if tag == _STR_TAG:
        return text
    if tag not in _SCALAR_TAGS:
        return _NOT_PLAIN
    return _SCALARS.yaml_constructors[tag](_SCALARS, yaml.ScalarNode(tag, text))


def _value(text: str) -> Any:
    """The value after ``key:`` on one line (spaces around it gone): plain (starts with no
    indicator, holds no ``": "`` nor ``" #"``, does not end in ``:``), or quoted without
    escapes (``"…"`` with no ``\\`` or ``"`` inside, ``'…'`` with no ``'`` inside: the text
    between the quotes, never resolved); :data:`_NOT_PLAIN` for anything else."""
    if not text:
        return None  # YAML's empty value: null
    first = text[0]
    if first == '"' or first == "'":
        inner = text[1:-1]
        if len(text) > 1 and text[-1] == first and first not in inner \
                and (first == "'" or "\\" not in inner):
            return inner
        return _NOT_PLAIN
    if first in _INDICATORS or ": " in text or " #" in text or text[-1] == ":":
        return _NOT_PLAIN
    return _scalar(text)


@functools.lru_cache(maxsize=4096)
def _text_key(key: str) -> bool:
    """Does YAML read the plain key ``key`` as text (not ``true``, ``null``, ``1``)?"""
    return _scalar(key) is key


@functools.lru_cache(maxsize=65536)
def _plain_line(line: str) -> tuple[str, Any] | None:
    """``(key, value)`` of one ``key: value`` line :func:`plain_block` reads, else ``None``.
    Kept for 65,536 lines: a vault's lines repeat (``type: project``, ``pinned: false``,
    ``valid_to:``), and the values are immutable."""
    found = _PLAIN_LINE.fullmatch(line)
    if found is None:
        return None
    key, text = found.groups()
    if not _text_key(key):
        return None
    value = _value(text or "")
    return None if value is _NOT_PLAIN else (key, value)


def plain_block(raw: str) -> dict[str, Any] | None:
    """What :data:`_HANDLER` loads from the frontmatter text ``raw`` when every line of it
    is blank or a ``key: value`` line of :data:`_PLAIN_LINE` (each key once); ``None`` for
    any other block, which is left to the YAML parser. The same mapping the parser builds
    (keys in order, values through the loader's resolver and constructors), several times
    faster: the parser calls Python for each node and its marks (1.6 s of the 10,000
    planted memories of ``bench/dream_bench.py``)."""
    if _NOT_PLAIN_CHAR.search(raw) is not None:
        return None
    out: dict[str, Any] = {}
    for line in raw.splitlines():
        if not line:
            continue
        found = _plain_line(line)
        if found is None or found[0] in out:
            return None
        out[found[0]] = found[1]
    return out or None


def load_properties(
    raw: str | None, path: str, *, strict: bool = False
) -> tuple[dict[str, PropertyValue], tuple[Problem, ...]]:
    """Load the frontmatter text ``raw`` of the note at ``path`` into properties.

    Returns ``(properties, problems)``. ``None``, empty, blank or comment-only blocks give
    ``({}, ())``. A list or scalar block gives ``({}, (Problem(kind="properties"),))``; YAML
    that does not parse gives ``({}, (Problem(kind="yaml"),))`` whose reason carries the
    parser's message and the 1-based file line. A template's placeholders (``created:
    {{date}}``) are read as text unless ``strict`` (the editor's reading: it never writes
    into a block that is not YAML as it stands); the block is still no YAML, so those
    properties come with a ``Problem(kind=TEMPLATE_PROBLEM)`` carrying the parser's reason:
    a problem file, listed by ``dreamd check`` and touched by no writer, whose properties
    are indexed all the same. Never raises.
    """
    if raw is None or not raw.strip():
        return {}, ()
    template: tuple[Problem, ...] = ()
    try:
        loaded = _yaml_of(raw)
    except Exception as exc:  # PyYAML raises more than YAMLError on hostile input.
        loaded = None if strict else _template_properties(raw)
        if loaded is None:
            return {}, (Problem(path=path, kind="yaml", reason=_yaml_reason(exc)),)
        reason = _template_reason(exc)
        template = (Problem(path=path, kind=TEMPLATE_PROBLEM, reason=reason),)
    if loaded is None:
        return {}, ()
    if not isinstance(loaded, Mapping):
        shape = "a list" if isinstance(loaded, list) else "a single value"
        reason = f"frontmatter is {shape}, not a mapping of properties; properties ignored"
        return {}, (Problem(path=path, kind="properties", reason=reason),)
    try:
        size = _expanded_size(loaded, {})
    except RecursionError:
        return {}, (Problem(path=path, kind="yaml", reason=_yaml_reason(RecursionError())),)
    if size > MAX_PROPERTY_VALUES:
        reason = (f"frontmatter expands to {size:,} values through YAML aliases (limit "
                  f"{MAX_PROPERTY_VALUES:,}: a 'billion laughs' block); properties ignored")
        return {}, (Problem(path=path, kind="yaml", reason=reason),)
    try:
        normalised = _normalise(loaded, {})
    except RecursionError:
        return {}, (Problem(path=path, kind="yaml", reason=_yaml_reason(RecursionError())),)
    assert isinstance(normalised, dict)
    return normalised, template
