"""Text from notes, file names and the store, made safe to print on a terminal; counts said
with their noun (:func:`counted`: ``1 note``, ``2 notes``).

A note or a file name is the user's (or a web page's, a shared vault's) text, and the CLI
prints it: an escape sequence in it (``\\x1b[2J`` clears the screen, ``\\x1b[31m`` recolours
what follows, others set the window title or write to the clipboard) would act on the
terminal, and a bidi override (U+202E) would show a file name or a line in another order
than it has (Unicode TR 9; the "Trojan Source" report, CVE-2021-42574). :func:`shown` writes
each such character as a visible escape (``\\x1b``, ``\\u202e``) and escapes rich markup
(``[red]``) after it, so the text is printed as it is, never acted on.
"""

from __future__ import annotations

import re

from rich.markup import escape

__all__ = ["counted", "shown", "visible"]

#: What a terminal acts on rather than shows: the C0 controls but newline and tab (rich itself
#: drops BEL, backspace, CR, VT and FF, not ESC), DEL, the C1 controls (U+009B is a one-byte
#: CSI), and the bidi marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
#: U+202A–U+202E, U+2066–U+2069).
_ACTIVE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_IN_TEXT = re.compile(f"[{_ACTIVE}]")
#: In a name or another one-line value, a newline and a tab too.
_IN_LINE = re.compile(f"[{_ACTIVE}\n\t]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str, *, one_line: bool = False) -> str:
    """``text`` to print through a rich console: control and bidi characters written as
    escapes (``\\x1b``, ``\\u202e``; with ``one_line`` newlines and tabs too: ``\\n``,
    ``\\t`` written as ``\\x0a``, ``\\x09``), then rich markup escaped."""
    return escape((_IN_LINE if one_line else _IN_TEXT).sub(_visible, text))


def visible(text: str) -> str:
    """``text`` with its control and bidi characters written as escapes, as :func:`shown`
    writes them, for a line written to the terminal without rich (no markup to escape)."""
    return _IN_TEXT.sub(_visible, text)


#: Endings whose plural adds ``es`` (``search`` -> ``searches``, ``box`` -> ``boxes``).
_ES_ENDINGS = ("s", "x", "z", "ch", "sh")


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` with ``noun`` agreeing: ``1 note``, ``0 notes``, ``2 notes``; ``1,200
    chunks`` (thousands grouped). ``plural`` for a noun English does not inflect by rule
    (``counted(2, "person", "people")``); by rule ``memory`` -> ``memories`` (a consonant
    before ``y``; ``day`` -> ``days``), ``search`` -> ``searches``. Only the last word of a
    ``noun`` of several words is inflected (``1 problem file``, ``2 problem files``)."""
    if number == 1 or number == -1:
        return f"{number:,} {noun}"
    if plural is None:
        if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
            plural = noun[:-1] + "ies"
        elif noun.endswith(_ES_ENDINGS):
            plural = noun + "es"
        else:
            plural = noun + "s"
    return f"{number:,} {plural}"
