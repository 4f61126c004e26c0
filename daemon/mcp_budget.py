"""MCP tool results that fit: each answer of ``dreamd mcp`` within ``mcp.max_result_tokens``.

Claude Code drops a tool result over 25,000 tokens (``MAX_MCP_OUTPUT_TOKENS``), so a 233 KB
memory, its history or a diff of it never reaches the assistant whole. Every tool answer is
measured here as the MCP library sends it (a ``dict`` as JSON with an indent of 2, each item
of a list as its own text, a ``str`` as it is) and kept within the budget: a memory, a
history and a diff come in pages (the answer's ``next_offset`` is the ``offset`` of the next
call, and its ``note`` says where it was cut); search hits past the budget are left out and
counted; a context is built to fit and, when the user's rules alone exceed it, cut by lines
with a closing line that says so.

Token estimate, on the high side (our choice; no tokenizer is loaded): one token per
:data:`ASCII_CHARS_PER_TOKEN` ASCII characters (English prose averages about 4 with common
BPE tokenizers; 3 leaves room for JSON punctuation, code and paths) and
:data:`TOKENS_PER_OTHER_CHAR` for every other character (a CJK character is about one to one
and a half tokens, accented letters and Cyrillic about one). The result's structured copy (the
same data, without indentation) is not counted: a client shows the model one of the two.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pydantic_core
from mcp.server.mcpserver.exceptions import ToolError

from daemon.context import FENCE_TAG

__all__ = [
    "ASCII_CHARS_PER_TOKEN",
    "MAX_ERROR_CHARS",
    "TOKENS_PER_OTHER_CHAR",
    "answer_tokens",
    "clip_message",
    "fit_context",
    "fit_hits",
    "history_page",
    "result_tokens",
    "text_page",
]

#: ASCII characters per token in the estimate (English averages about 4; see the module).
ASCII_CHARS_PER_TOKEN = 3
#: Tokens per non-ASCII character in the estimate (CJK is about 1–1.5; see the module).
TOKENS_PER_OTHER_CHAR = 2
#: Longest error message a tool returns, in characters (our choice: a few lines; an error
#: that quotes what the client sent never echoes a whole document back).
MAX_ERROR_CHARS = 2000


def result_tokens(text: str) -> int:
    """Estimated tokens of ``text`` as a model reads it, on the high side (module docstring)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return (math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN)
            + TOKENS_PER_OTHER_CHAR * (len(text) - ascii_chars))


def answer_tokens(answer: object) -> int:
    """Estimated tokens of a tool's return value as the MCP library sends it: a ``str`` as it
    is, a list item by item, anything else as JSON with an indent of 2."""
    if isinstance(answer, str):
        return result_tokens(answer)
    if isinstance(answer, list | tuple):
        return sum(answer_tokens(item) for item in answer)
    return result_tokens(pydantic_core.to_json(answer, fallback=str, indent=2).decode())


def clip_message(text: str) -> str:
    """An error message cut to :data:`MAX_ERROR_CHARS` (marked with "…")."""
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 1] + "…"


def _longest(make: Callable[[int], object], most: int, budget: int) -> int:
    """The largest ``n`` in ``0..most`` whose ``make(n)`` fits ``budget`` tokens (``make``
    grows with ``n``); 0 when even ``make(0)`` does not."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if answer_tokens(make(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _check_offset(offset: int, total: int, what: str) -> None:
    if not 0 <= offset <= total:
        raise ToolError(f"offset must be between 0 and {total} (the {what}), not {offset}")


def _cut_note(tool: str, what: str, start: int, end: int, total: int, budget: int) -> str:
    return (f"cut at {what} {end:,} of {total:,} (this page: {start:,}–{end:,}) to fit the "
            f"result budget (mcp.max_result_tokens = {budget:,} tokens); call {tool} again "
            f"with offset={end} for the rest")


def text_page(text: str, offset: int, budget: int, *, tool: str,
              answer: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """One page of ``text`` from character ``offset``: ``answer(chunk)`` with the longest
    chunk that fits ``budget`` tokens (cut after a line end when one is in its second half),
    plus ``offset``, ``next_offset`` (``None`` on the last page), ``total_chars`` and, when
    cut, a ``note`` naming the offset to call ``tool`` with next.

    Raises ToolError for an offset outside ``0..len(text)``, or when not one character fits
    (a budget far below what any answer needs)."""
    total = len(text)
    _check_offset(offset, total, "characters")

    def make(n: int) -> dict[str, Any]:
        end = offset + n
        page = {**answer(text[offset:end]), "offset": offset,
                "next_offset": end if end < total else None, "total_chars": total}
        if end < total:
            page["note"] = _cut_note(tool, "character", offset, end, total, budget)
        return page

    size = _longest(make, total - offset, budget)
    if size == 0 and offset < total:
        raise ToolError(f"{tool}: mcp.max_result_tokens ({budget}) holds no text at all")
    line_end = text.rfind("\n", offset, offset + size)
    if offset + size < total and line_end >= offset + size // 2:
        size = line_end + 1 - offset
    return make(size)


def history_page(head: dict[str, Any], versions: Sequence[dict[str, Any]],
                 diff: str | None, offset: int, budget: int) -> dict[str, Any]:
    """``memory_history``'s answer within ``budget`` tokens.

    Without ``diff``: ``head`` and the versions from position ``offset`` (0: the oldest) that
    fit, ``next_offset`` the position of the first one not listed (``None``: none left).
    With ``diff``: the newest versions that fit in half the budget (``versions_left_out``
    counts the older ones) and the diff from character ``offset``, paged as
    :func:`text_page`. Raises ToolError for an offset out of range."""
    total = len(versions)
    if diff is not None:
        kept = _longest(lambda k: {**head, "versions": list(versions[total - k:])}, total,
                        budget // 2)
        part = {**head, "versions": list(versions[total - kept:])}
        if kept < total:
            part["versions_left_out"] = total - kept
            part["versions_note"] = (f"the {total - kept} oldest versions are left out here; "
                                     "call memory_history without diff_from to list them")
        return text_page(diff, offset, budget, tool="memory_history",
                         answer=lambda chunk: {**part, "diff": chunk})
    _check_offset(offset, total, "versions")

    def make(n: int) -> dict[str, Any]:
        end = offset + n
        page = {**head, "versions": list(versions[offset:end]), "offset": offset,
                "next_offset": end if end < total else None, "total_versions": total}
        if end < total:
            page["note"] = (f"versions {offset + 1}–{end} of {total} listed (cut to fit the "
                            f"result budget, mcp.max_result_tokens = {budget:,} tokens); call "
                            f"memory_history again with offset={end} for the rest")
        return page

    size = _longest(make, total - offset, budget)
    if size == 0 and offset < total:
        raise ToolError(f"memory_history: mcp.max_result_tokens ({budget}) holds no version")
    return make(size)


def fit_hits(hits: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """``memory_search``'s hits, best first, as many as fit ``budget`` tokens; when some are
    left out, a last item ``{"note": …}`` says how many."""
    if answer_tokens(hits) <= budget:
        return hits

    def make(n: int) -> list[dict[str, Any]]:
        return [*hits[:n], {"note": (
            f"{len(hits) - n} more hits left out to fit the result budget "
            f"(mcp.max_result_tokens = {budget:,} tokens); ask for fewer (limit) or a "
            "narrower query")}]

    return make(_longest(make, len(hits), budget))


def fit_context(build: Callable[[int, bool], str], asked: int, budget: int) -> str:
    """``build_context``'s text within ``budget`` tokens: ``build(context_budget, again)``
    with the budget asked for, at most half the result budget (a context's own estimate
    counts a token per 4 ASCII characters and one per CJK character, this module's up to
    twice as many), built ``again`` smaller when it still does not fit (a rebuild must not
    count its hits as recalls twice); when the user's rules alone exceed it, its last entry
    lines are cut and a closing line says how many and where to find the rest."""
    wanted = max(100, min(asked, budget // 2))
    text = build(wanted, False)
    measured = result_tokens(text)
    if measured <= budget:
        return text
    text = build(max(100, wanted * budget * 9 // (10 * measured)), True)
    if result_tokens(text) <= budget:
        return text
    close = f"</{FENCE_TAG}>"
    body = text.removesuffix(close).rstrip("\n").split("\n")

    def make(n: int) -> str:
        return "\n".join([*body[:n], _context_cut_line(len(body) - n, budget), close])

    return make(_longest(make, len(body), budget))


def _context_cut_line(count: int, budget: int) -> str:
    return (f"({count} more lines cut to fit the result budget (mcp.max_result_tokens = "
            f"{budget:,} tokens): the user's rules alone exceed it; memory_search with type "
            f"\"feedback\" finds the rest by topic)")

