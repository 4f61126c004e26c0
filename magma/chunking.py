"""Heading-aware chunking of notes into embeddable pieces.

A note body is cut at its headings (``Note.headings``, 0-based body lines) into sections;
tiny neighbouring sections are merged under their common parent heading, long sections are
split at paragraph boundaries (a fenced code block counts as one paragraph), then at sentence
ends, then at whitespace, and only as a last resort mid-word. A chat-like section (a session
log or transcript: paragraphs that open with a speaker's label, ``**User:** …``,
``Assistant: …``, ``用户：…``) longer than ``max_chars`` is cut by round: a new chunk starts
where the asking side (the user, else whoever spoke first) speaks again, so one question and
its answer are not diluted by the turns around them. Every chunk's ``embed_text`` starts
with the note title and heading path (``"Sourdough > Feeding > Ratio"``) so a chunk is
meaningful on its own; memory notes also carry their name and description.

Guarantees (tested with hypothesis): deterministic; chunk texts in order, with whitespace
removed, equal the body with whitespace removed (nothing lost, nothing repeated);
``len(chunk.text) <= max_chars``; ``content_hash`` depends only on ``embed_text``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from ccb.model import Note
from ccb.templates import has_placeholder

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MIN_CHARS",
    "HEADING_MAX_CHARS",
    "HEADING_SEPARATOR",
    "Chunk",
    "asking_turns",
    "chunk_hash",
    "chunk_note",
    "property_words",
]

#: Largest chunk body in characters. ≈1,500 chars is ≈300–400 English tokens, inside the
#: range where sentence encoders such as USE still produce a focused vector (our choice,
#: matching common RAG practice of 256–512 tokens per chunk).
DEFAULT_MAX_CHARS = 1500
#: Sections shorter than this are merged with their neighbour (a heading with one line of
#: text is too little context to embed alone). Our choice: ≈2–3 sentences.
DEFAULT_MIN_CHARS = 200
#: Joins the title and heading path in a chunk prefix and in the store's ``heading_path``.
HEADING_SEPARATOR = " > "
#: Longest heading, in characters, that names a section in the heading path (our choice:
#: a heading is a line's title; Obsidian's own help vault has none over 60). An agent that
#: wrote a day's log with literal ``\n`` escapes made its first section one heading line of
#: 1,000 characters (``memory-samples/openclaw``, 2026-02-04): every chunk of the note
#: carried that section's text as its heading, in its prefix and in its hits. The heading
#: path is cut at the first literal ``\n`` and to this length; the line itself stays in the
#: section's text.
HEADING_MAX_CHARS = 120
#: Properties a note's first chunk does not carry as words: the ones the summary names
#: already (aliases, tags, description) and Obsidian's display settings, which say nothing of
#: the note (``cssclasses``, ``publish``, ``permalink``; ``position`` is a parser's).
PROPERTIES_NOT_WORDS = frozenset({
    "aliases", "alias", "tags", "tag", "description", "cssclasses", "cssclass", "publish",
    "permalink", "position",
})
#: Longest value of one property, and longest list of properties, a first chunk carries
#: (characters; our choice: a reference note's ``author``, ``loc`` and ``type`` fit many
#: times over, and a pasted paragraph in a property does not crowd out the note's own text).
PROPERTY_VALUE_MAX_CHARS = 120
PROPERTIES_MAX_CHARS = 600
#: A link in a property value, shown as Obsidian shows it: the text after ``|``, else the
#: linked note's name (``[[Trips/Kyoto#Food|Kyoto]]``, ``[[Kyoto]]`` -> Kyoto), and a markdown
#: link's text.
_VALUE_LINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]"
                         r"|!?\[([^\]]*)\]\([^)]*\)")
_NUMBER_LIKE = re.compile(r"[\d\s.,:+\-/]*")
#: One word holding a digit (an id, a hash, a version, ``sharegpt_rHbSTOz_101``), or a URL:
#: neither is words a question would hold.
_NOT_WORDS = re.compile(r"\S*\d\S*|\S*://\S*")

_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
#: A speaker's label opening a paragraph: ``**User:**``, ``**Assistant**:``, ``> Alice:``,
#: ``- Q:``, ``用户：`` (one to four words of letters, or up to six Han characters, then a
#: colon; emphasis around either).
_SPEAKER_RE = re.compile(
    r"^[ \t]{0,3}(?:[>*+-][ \t]+)?(?:\*\*|__)?"
    r"(?P<who>[^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*){0,3}?|[\u4e00-\u9fff]{1,6})"
    r"(?:\*\*|__)?[ \t]*(?::(?:\*\*|__)?(?:[ \t]|$)|：)")
_HAN_RE = re.compile("[\u4e00-\u9fff]")
#: Labelled paragraphs a section needs to be read as a conversation, and distinct speakers
#: (our choice: two exchanges; a note with a "Note:" paragraph or two is no conversation).
CHAT_MIN_TURNS = 4
CHAT_MIN_SPEAKERS = 2
#: Longest label of Han characters that names a speaker ("用户", "张老师"; our choice).
CHAT_MAX_HAN_SPEAKER = 6
#: Labels that name the person asking: a round opens where they speak, even when the
#: other side spoke first ("**Assistant:** Hello! How can I help?").
ASKING_SPEAKERS = frozenset({"user", "human", "me", "i", "you", "q", "question", "用户", "我",
                             "问"})
#: Labels that head a part of a note rather than name a speaker (our choice: the common
#: ones of notes, logs and templates, English and Chinese).
NOT_SPEAKERS = frozenset({
    "action item", "action items", "afternoon", "answer", "attendees", "cons", "date",
    "debug", "decision", "error", "evening", "example", "how", "how to apply", "info",
    "input", "linux", "macos", "morning", "note", "notes", "output", "participants",
    "problem", "pros", "result", "results", "solution", "status", "summary", "tip", "todo",
    "warning", "why", "windows", "优点", "缺点", "注意", "说明", "结论", "总结", "步骤", "备注",
})
# Split after sentence terminators (Latin and CJK); CJK ones need no following space.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One embeddable piece of a note.

    ``text`` is the body segment (exact lines of the body, outer blank lines trimmed; empty
    only for a note whose body is blank). ``embed_text`` is what gets embedded and full-text
    indexed: the prefix (title and heading path, plus a memory's name/description, plus a
    property summary for a blank body) and then ``text``. ``content_hash`` is the first 32
    hex digits of SHA-256 over ``embed_text`` (UTF-8): equal hashes mean reusable vectors.
    """

    path: str
    ordinal: int
    heading_path: tuple[str, ...]
    text: str
    embed_text: str
    content_hash: str


def chunk_hash(embed_text: str) -> str:
    """SHA-256 of ``embed_text`` (UTF-8), first 32 hex digits (128 bits: collision-safe)."""
    return hashlib.sha256(embed_text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class _Section:
    heading_path: tuple[str, ...]
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return _trim_blank_lines(self.lines)


def chunk_note(
    note: Note, *, max_chars: int = DEFAULT_MAX_CHARS, min_chars: int = DEFAULT_MIN_CHARS
) -> list[Chunk]:
    """Cut ``note`` into chunks -> ``list[Chunk]`` with ordinals ``0..n-1`` (never empty).

    ``max_chars`` bounds ``len(chunk.text)`` (the prefix is extra); ``min_chars`` is the size
    under which a section is merged with its neighbour when both fit in ``max_chars``.
    A blank body yields one chunk whose ``embed_text`` is the title plus a property summary
    (name, description, aliases, tags) so the note is still findable.
    Raises ``ValueError`` when ``max_chars < 1``.
    """
    if max_chars < 1:
        raise ValueError(f"magma: chunk {note.path}: max_chars must be >= 1, got {max_chars}")
    properties = property_words(note)
    if not note.body.strip():
        prefix = _prefix(note, ())
        summary = "\n".join(filter(None, (_property_summary(note), properties)))
        embed_text = prefix + ("\n" + summary if summary else "")
        return [Chunk(note.path, 0, (), "", embed_text, chunk_hash(embed_text))]

    pieces: list[tuple[tuple[str, ...], str]] = []
    for section in _merge_small(_sections(note), max_chars, min_chars):
        text = section.text
        if not text.strip():
            continue
        for part in _split_text(text, max_chars, min_chars):
            pieces.append((section.heading_path, part))

    chunks: list[Chunk] = []
    for ordinal, (heading_path, text) in enumerate(pieces):
        head = _prefix(note, heading_path)
        if ordinal == 0 and properties:  # the note's properties head its first chunk
            head += "\n" + properties
        embed_text = head + "\n" + text
        chunks.append(
            Chunk(note.path, ordinal, heading_path, text, embed_text, chunk_hash(embed_text))
        )
    return chunks


def _prefix(note: Note, heading_path: tuple[str, ...]) -> str:
    head = HEADING_SEPARATOR.join((note.title, *heading_path))
    memory = note.memory
    if memory is None:
        return head
    extra = [part for part in (memory.name, memory.description) if part and part != note.title]
    return head + ("\n" + " — ".join(extra) if extra else "")


def _property_summary(note: Note) -> str:
    lines: list[str] = []
    memory = note.memory
    if memory is not None:
        lines.append(f"type: {memory.type}")
    description = note.properties.get("description")
    if memory is None and isinstance(description, str) and description.strip():
        lines.append(description.strip())
    if note.aliases:
        lines.append("aliases: " + ", ".join(note.aliases))
    if note.tags:
        lines.append("tags: " + " ".join("#" + tag for tag in note.tags))
    return "\n".join(lines)


def property_words(note: Note) -> str:
    """The words of ``note``'s properties as its first chunk carries them, one
    ``key: value, value`` line each in the file's order -> ``""`` for a memory (its name and
    description head every chunk) or a note without such properties.

    Obsidian keeps much of a note in its properties (``loc: [[Kyoto]]``, ``author: [[Ursula
    K. Le Guin]]``, ``type: [[Shrines]]``), and a reference note is often nothing else: those
    words are searched for and embedded with the note, as Obsidian's own search finds them.
    Left out: :data:`PROPERTIES_NOT_WORDS`, dates, numbers, booleans, number-like text
    (coordinates, times), a single word holding a digit (an id, a hash), a URL and a
    template's placeholder; a value is cut at :data:`PROPERTY_VALUE_MAX_CHARS` and the lines
    at :data:`PROPERTIES_MAX_CHARS`. The note is the one the index holds: credentials are
    withheld from its properties before it is chunked."""
    if note.memory is not None:
        return ""
    lines: list[str] = []
    size = 0
    for key, value in note.properties.items():
        if key.casefold() in PROPERTIES_NOT_WORDS:
            continue
        words = [w for w in _value_words(value) if w]
        if not words:
            continue
        line = f"{key}: {', '.join(words)}"
        if size + len(line) > PROPERTIES_MAX_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _value_words(value: object) -> Iterator[str]:
    """The text of one property value, links shown by their names; lists flattened; nested
    mappings, dates, numbers, booleans and number-like strings give nothing."""
    if isinstance(value, list):
        for item in value:
            yield from _value_words(item)
    elif isinstance(value, str):
        if has_placeholder(value):  # a template's {{date}}
            return
        text = " ".join(_VALUE_LINK.sub(_link_name, value).split())
        if text and not _NUMBER_LIKE.fullmatch(text) and not _NOT_WORDS.fullmatch(text):
            yield text[:PROPERTY_VALUE_MAX_CHARS]


def _link_name(match: re.Match[str]) -> str:
    target, shown, markdown = match.group(1), match.group(2), match.group(3)
    if markdown is not None:
        return markdown
    if shown:
        return shown
    return (target or "").rsplit("/", 1)[-1].removesuffix(".md")


def _sections(note: Note) -> list[_Section]:
    """Cut the body at heading lines; each section starts with its heading line."""
    lines = note.body.split("\n")
    headings = sorted((h for h in note.headings if 0 <= h.line < len(lines)), key=lambda h: h.line)
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    start = 0
    path: tuple[str, ...] = ()
    for heading in headings:
        if stack and heading.line <= start:
            continue  # two headings claiming one line: keep the first
        if heading.line > start:
            sections.append(_Section(path, tuple(lines[start : heading.line])))
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, _heading_label(heading.text)))
        path = tuple(text for _, text in stack)
        start = heading.line
    sections.append(_Section(path, tuple(lines[start:])))
    return sections


def _heading_label(text: str) -> str:
    """A heading as the heading path names it: up to the first literal ``\\n`` escape,
    at most :data:`HEADING_MAX_CHARS` characters (cut at a space when there is one, then
    ``…``)."""
    label = text.split("\\n", 1)[0].strip()
    if len(label) <= HEADING_MAX_CHARS:
        return label
    cut = label[:HEADING_MAX_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > HEADING_MAX_CHARS // 2 else cut).rstrip() + "…"


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _merge_small(sections: list[_Section], max_chars: int, min_chars: int) -> list[_Section]:
    """Merge a tiny section into its neighbour under the common parent heading.

    A section is merged with the next when it is itself tiny, or when the next one is tiny and
    nested under it (so the bigger section keeps its heading path); only if both fit, and only
    under a shared heading (two top-level sections are never merged into a headless chunk).
    """
    merged: list[_Section] = []
    for section in sections:
        if not section.text.strip():
            continue  # only whitespace: nothing to keep
        if merged:
            prev = merged[-1]
            prev_len, next_len = len(prev.text), len(section.text)
            nested = section.heading_path[: len(prev.heading_path)] == prev.heading_path
            path = _common_prefix(prev.heading_path, section.heading_path)
            small = prev_len < min_chars or (next_len < min_chars and nested)
            if small and (nested or path) and prev_len + 1 + next_len <= max_chars:
                merged[-1] = _Section(path, prev.lines + section.lines)
                continue
        merged.append(section)
    return merged


def _trim_blank_lines(lines: tuple[str, ...] | list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def _blocks(text: str) -> list[str]:
    """Paragraphs of ``text``: runs of non-blank lines; a code fence is one block."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE_RE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)[0] * len(match.group(1))
                current.append(line)
            elif line.strip():
                current.append(line)
            elif current:
                blocks.append("\n".join(current))
                current = []
        else:
            current.append(line)
            closing = match.group(1) if match else ""
            if closing.startswith(fence) and line.strip() == closing:
                fence = None
    if current:
        blocks.append("\n".join(current))
    return blocks


def _split_text(text: str, max_chars: int, min_chars: int = DEFAULT_MIN_CHARS) -> list[str]:
    """Split ``text`` into pieces of at most ``max_chars`` at the best boundary available;
    a longer conversation (:func:`_rounds`) also at the start of each round once the piece
    so far holds ``min_chars``."""
    if len(text) <= max_chars:
        return [text]
    blocks = _blocks(text)
    opens = _rounds(blocks)
    units: list[str] = []
    starts: set[int] = set()
    for n, block in enumerate(blocks):
        if n in opens:
            starts.add(len(units))
        units.extend(_split_block(block, max_chars))
    return _pack(units, max_chars, "\n\n", starts, min_chars)


def _speaker(block: str) -> str | None:
    """The speaker whose label opens ``block`` (case-folded), or ``None``."""
    match = _SPEAKER_RE.match(block)
    if match is None:
        return None
    who = match.group("who").casefold()
    if who in NOT_SPEAKERS or (_HAN_RE.search(who) and len(who) > CHAT_MAX_HAN_SPEAKER):
        return None
    return who


def asking_turns(text: str) -> str:
    """The paragraphs of ``text`` the asking side said (:data:`ASKING_SPEAKERS`: a
    paragraph labelled ``**User:**``, and the unlabelled ones after it up to the next
    label), joined by blank lines; ``""`` when no paragraph is labelled so."""
    said: list[str] = []
    asking = False
    for block in _blocks(text):
        who = _speaker(block)
        if who is not None:
            asking = who in ASKING_SPEAKERS
        if asking:
            said.append(block)
    return "\n\n".join(said)


def _rounds(blocks: list[str]) -> set[int]:
    """Indexes of the blocks that open a round of a conversation: labelled by the asking
    speaker (:data:`ASKING_SPEAKERS`, else whoever spoke first), after another speaker.
    Empty unless the blocks hold at least :data:`CHAT_MIN_TURNS` labelled paragraphs of
    :data:`CHAT_MIN_SPEAKERS` speakers."""
    speakers = [_speaker(block) for block in blocks]
    labelled = [who for who in speakers if who is not None]
    if len(labelled) < CHAT_MIN_TURNS or len(set(labelled)) < CHAT_MIN_SPEAKERS:
        return set()
    first = next((who for who in labelled if who in ASKING_SPEAKERS), labelled[0])
    opens: set[int] = set()
    last: str | None = None
    for n, who in enumerate(speakers):
        if who is None:
            continue
        if who == first and last is not None and last != first:
            opens.add(n)
        last = who
    return opens


def _split_block(block: str, max_chars: int) -> list[str]:
    if len(block) <= max_chars:
        return [block]
    units: list[str] = []
    for line in block.split("\n"):
        if len(line) <= max_chars:
            units.append(line)
            continue
        for sentence in _SENTENCE_END_RE.split(line):
            if sentence and sentence.strip():
                units.extend(_hard_split(sentence, max_chars))
    return _pack(units, max_chars, "\n")


def _hard_split(text: str, max_chars: int) -> list[str]:
    """Cut at the last whitespace inside each window, else exactly at ``max_chars``."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > max_chars:
        cut = rest.rfind(" ", 1, max_chars + 1)
        if cut <= 0:
            cut = max_chars
        piece, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        if piece:
            pieces.append(piece)
    if rest:
        pieces.append(rest)
    return pieces


def _pack(units: list[str], max_chars: int, joiner: str, starts: Collection[int] = (),
          min_chars: int = 0) -> list[str]:
    """Greedily join consecutive ``units`` with ``joiner`` while the result fits; a unit in
    ``starts`` begins a new piece once the current one holds ``min_chars``."""
    packed: list[str] = []
    current = ""
    for n, unit in enumerate(units):
        if not current:
            current = unit
        elif n in starts and len(current) >= min_chars:
            packed.append(current)
            current = unit
        elif len(current) + len(joiner) + len(unit) <= max_chars:
            current = current + joiner + unit
        else:
            packed.append(current)
            current = unit
    if current:
        packed.append(current)
    return packed
