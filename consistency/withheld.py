"""Credentials a user wrote by hand into a note or memory: found, placed, and withheld from
everything dreamd copies out of the file (DESIGN.md "Safety").

dreamd refuses to *write* a credential (:func:`consistency.secrets.refuse_secrets`), but it
never rewrites a user's file either, so a password typed into ``Memory/staging-login.md`` stays
there. :func:`withhold_credentials` gives the note as the index may hold it: every credential
:func:`consistency.secrets.find_secrets` finds in the body or the frontmatter replaced by
:data:`consistency.secrets.REDACTED` (the mark ``MEMORY.md`` and the context use) — in the body,
the headings, the links, the properties, the aliases and tags and the memory's name,
description and subject — and where each one is (:class:`FoundCredential`: the file's line and a
preview that never holds the secret), for ``dreamd check`` and ``dreamd doctor``.

A note without a credential is returned as it is (the same object), so its chunks, their
hashes and vectors are exactly what they were. Line counts are kept (a multi-line private key
becomes the mark followed by as many newlines), so heading and link line numbers stay true.
Not withheld: the file's name (the note's title and path are its key in every table).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from ccb.model import Heading, Link, MemoryMeta, Note, PropertyValue
from consistency.secrets import REDACTED, SecretFinding, SecretKind, find_secrets, redact_secrets

__all__ = ["FoundCredential", "Withheld", "withhold_credentials"]


@dataclass(frozen=True, slots=True)
class FoundCredential:
    """One credential in a file: its 1-based ``line`` in the file (frontmatter fence
    included, as an editor numbers it), its ``kind`` and a ``preview`` safe to print
    (``password=…``, ``sk-proj-…a1B2``; :class:`consistency.secrets.SecretFinding`)."""

    line: int
    kind: SecretKind
    preview: str

    def describe(self) -> str:
        """``"line 7 (password=…)"``."""
        return f"line {self.line} ({self.preview})"


@dataclass(frozen=True, slots=True)
class Withheld:
    """A note as the index may hold it, and the credentials taken out of it (file order;
    empty when there were none, and then ``note`` is the note given)."""

    note: Note
    found: tuple[FoundCredential, ...]


def withhold_credentials(note: Note) -> Withheld:
    """``note`` with every credential withheld (module docstring) -> :class:`Withheld`.

    One :func:`consistency.secrets.find_secrets` pass over the frontmatter block, one over
    the body and one over the properties read as ``key: value`` lines (a value YAML reads
    from an alias, a block list or a folded scalar, and a text equal to a withheld value
    anywhere in the properties, are withheld too); the other fields are looked at only when
    one of them found something. Pure; never raises.
    """
    head = note.frontmatter_raw or ""
    in_head = find_secrets(head) if head else []
    in_body = find_secrets(note.body)
    # A value as YAML reads it is not always the text written: an alias (``password: *p``),
    # a block list, a folded or literal scalar, a merge key, an escape. Read as ``key: value``
    # lines, the properties may hold a credential the block's text does not show.
    said = _said_credentials(note.properties) if note.properties else []
    if not in_head and not in_body and not said:
        return Withheld(note, ())
    # The block opens on file line 1 (the fence), so its line n (0-based) is file line n + 2;
    # the body starts after the closing fence.
    body_line = 0 if note.frontmatter_raw is None else head.count("\n") + 2
    shown = [FoundCredential(head.count("\n", 0, f.start) + 2, f.kind, f.preview)
             for f in in_head]
    lines = {credential.line for credential in shown}
    hidden = [FoundCredential(line, f.kind, f.preview)
              for line, f in ((_key_line(head, key), f) for key, _, f in said)
              if line not in lines]
    found = tuple(sorted(shown + hidden, key=lambda credential: credential.line)
        + [FoundCredential(body_line + note.body.count("\n", 0, f.start) + 1, f.kind, f.preview)
           for f in in_body])
    secrets = {value for _, value, _ in said}
    raw = _redact_keeping_lines(head, in_head)
    for value in secrets:  # the value's own lines, wherever the block holds them
        for piece in {line.strip() for line in value.split("\n")}:
            if len(piece) >= _MIN_PIECE_CHARS:
                raw = raw.replace(piece, REDACTED)
    withheld = replace(
        note,
        body=_redact_keeping_lines(note.body, in_body),
        frontmatter_raw=raw if note.frontmatter_raw is not None else None,
        properties={redact_secrets(key): _without(_property(key, value), secrets)
                    for key, value in note.properties.items()},
        tags=tuple(_text_without(redact_secrets(tag), secrets) for tag in note.tags),
        aliases=tuple(_text_without(redact_secrets(alias), secrets) for alias in note.aliases),
        links=tuple(_link(link) for link in note.links),
        headings=tuple(_heading(heading) for heading in note.headings),
        memory=_memory(note.memory),
    )
    return Withheld(withheld, found)


#: Shortest line of a withheld property value taken out of the frontmatter's text as well
#: (shorter ones, a ``-`` or ``ok``, would cut unrelated words; a credential is longer).
_MIN_PIECE_CHARS = 4


def _said_credentials(
    properties: Mapping[str, PropertyValue],
) -> list[tuple[str, str, SecretFinding]]:
    """``(key, value, finding)`` for each text value of ``properties`` (nested ones under
    their own key, list items under their list's) that holds a credential read as ``key:
    value``; one :func:`find_secrets` pass over all the lines in the common case of none."""
    leaves = list(_leaves(properties))
    if not leaves:
        return []
    lines = [f"{key}: {value}" for key, value in leaves]
    if not find_secrets("\n".join(lines)):
        return []
    return [(key, value, finding) for (key, value), line in zip(leaves, lines, strict=True)
            for finding in find_secrets(line)[:1]]


def _leaves(properties: Mapping[str, PropertyValue]) -> Iterator[tuple[str, str]]:
    for key, value in properties.items():
        yield from _leaf(key, value)


def _leaf(key: str, value: PropertyValue) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, list):
        for item in value:
            yield from _leaf(key, item)
    elif isinstance(value, dict):
        yield from _leaves(value)


def _without(value: PropertyValue, secrets: set[str]) -> PropertyValue:
    """``value`` with each text equal to a withheld one withheld too (``x: &p …`` aliased by
    ``password: *p``: the anchor's own key names no credential)."""
    if isinstance(value, str):
        return REDACTED if value in secrets else value
    if isinstance(value, list):
        return [_without(item, secrets) for item in value]
    if isinstance(value, dict):
        return {k: _without(v, secrets) for k, v in value.items()}
    return value


def _text_without(text: str, secrets: set[str]) -> str:
    return REDACTED if text in secrets else text


def _key_line(head: str, key: str) -> int:
    """The file line of the first line of the frontmatter block that sets ``key`` (the
    fence's, 1, when none does as written)."""
    for number, line in enumerate(head.split("\n")):
        if line.lstrip(" -").strip("'\"").startswith(key) and ":" in line:
            return number + 2
    return 1


def _redact_keeping_lines(text: str, findings: list[SecretFinding]) -> str:
    if not findings:
        return text
    out: list[str] = []
    last = 0
    for finding in findings:
        secret = text[finding.start:finding.end]
        out.extend((text[last:finding.start], REDACTED, "\n" * secret.count("\n")))
        last = finding.end
    out.append(text[last:])
    return "".join(out)


def _property(key: str, value: PropertyValue) -> PropertyValue:
    """A property's value with credentials withheld, read as the user wrote it (``key:
    value``), so ``password: S3cr3t-…`` is found although the value alone is no credential."""
    if isinstance(value, str):
        said = f"{key}: {value}"
        redacted = redact_secrets(said)
        if redacted == said:
            return value
        return redacted.removeprefix(f"{key}: ") if redacted.startswith(f"{key}: ") \
            else REDACTED
    if isinstance(value, list):
        return [_property(key, item) for item in value]
    if isinstance(value, dict):  # (a key may be the credential: ``ghp_…: deploy``)
        return {redact_secrets(k): _property(k, v) for k, v in value.items()}
    return value


def _link(link: Link) -> Link:
    target, display = redact_secrets(link.target), _maybe(link.display)
    subpath = _maybe(link.subpath)
    if (target, display, subpath) == (link.target, link.display, link.subpath):
        return link
    return replace(link, target=target, display=display, subpath=subpath)


def _heading(heading: Heading) -> Heading:
    text = redact_secrets(heading.text)
    return heading if text == heading.text else replace(heading, text=text)


def _memory(memory: MemoryMeta | None) -> MemoryMeta | None:
    if memory is None:
        return None
    return replace(memory, name=redact_secrets(memory.name),
                   description=redact_secrets(memory.description),
                   subject=_maybe(memory.subject))


def _maybe(text: str | None) -> str | None:
    return None if text is None else redact_secrets(text)
