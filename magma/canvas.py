"""A picture of a graph as a JSON Canvas file (``.canvas``), the open format Obsidian opens.

JSON Canvas 1.0 (https://jsoncanvas.org/spec/1.0/): a top-level object with ``nodes`` and
``edges``. A node has ``id``, ``type`` (``text``, ``file``, ``link``, ``group``) and integer
``x``, ``y``, ``width``, ``height`` in pixels; a ``file`` node names a vault-relative ``file``, a
``text`` node holds markdown ``text``. An edge has ``id``, ``fromNode``, ``toNode`` and may have
``label`` and ``toEnd`` (``arrow``, the default, or ``none``).

The layout is layered: an edge ``a → b`` (newer → older, derived → source) puts ``b`` one
column left of ``a``, so a chain reads left to right from its oldest memory; cards of one
column are stacked top to bottom in the order given. Ids are the first 16 hex digits of the
SHA-1 of the card's key, so the same picture is the same bytes (a rewrite of an unchanged
canvas changes nothing). Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CARD_HEIGHT", "CARD_WIDTH", "Card", "Link", "canvas_bytes", "columns",
           "in_our_layout"]

#: Card size in pixels: about what Obsidian gives a new file card (its default 400 × 400 is
#: a full page preview; a memory's first lines fit in 400 × 200).
CARD_WIDTH, CARD_HEIGHT = 400, 200
#: Space between columns and between stacked cards, in pixels.
_GAP_X, _GAP_Y = 160, 60


@dataclass(frozen=True, slots=True)
class Card:
    """One card: ``key`` names it among the cards (a graph node id); ``file`` a
    vault-relative path (a file card) or ``None`` (a text card showing ``text``)."""

    key: str
    file: str | None = None
    text: str = ""
    color: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """An arrow from card ``src`` to card ``dst`` (their keys), labelled."""

    src: str
    dst: str
    label: str


def _id(key: str) -> str:
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def columns(keys: Sequence[str], links: Sequence[Link]) -> dict[str, int]:
    """``{key: column}``: 0 for a card no arrow leaves towards another card, else one more
    than the column of the card it points at (the longest chain). A cycle cannot push a
    column past ``len(keys) - 1``: the relaxation runs at most ``len(keys)`` rounds."""
    column = dict.fromkeys(keys, 0)
    pairs = [(link.src, link.dst) for link in links
             if link.src in column and link.dst in column and link.src != link.dst]
    for _ in range(len(keys)):
        moved = False
        for src, dst in pairs:
            if column[src] < column[dst] + 1 and column[dst] + 1 < len(keys):
                column[src] = column[dst] + 1
                moved = True
        if not moved:
            break
    return column


def canvas_bytes(cards: Sequence[Card], links: Sequence[Link]) -> bytes:
    """The JSON Canvas 1.0 file of ``cards`` and ``links`` (UTF-8, two-space indent, a final
    newline). Links naming a card not in ``cards`` are left out. Raises ``ValueError`` when
    two cards share a key."""
    keys = [card.key for card in cards]
    if len(set(keys)) != len(keys):
        raise ValueError("canvas: two cards share a key")
    column = columns(keys, links)
    rows: dict[int, int] = {}
    nodes: list[dict[str, object]] = []
    for card in cards:
        col = column[card.key]
        row = rows.get(col, 0)
        rows[col] = row + 1
        node: dict[str, object] = {
            "id": _id(card.key), "type": "file" if card.file is not None else "text",
            "x": col * (CARD_WIDTH + _GAP_X), "y": row * (CARD_HEIGHT + _GAP_Y),
            "width": CARD_WIDTH, "height": CARD_HEIGHT,
        }
        if card.file is not None:
            node["file"] = card.file
        else:
            node["text"] = card.text
        if card.color is not None:
            node["color"] = card.color
        nodes.append(node)
    known = set(keys)
    edges = [{"id": _id(f"{link.src}\n{link.dst}\n{link.label}"), "fromNode": _id(link.src),
              "fromSide": "left", "toNode": _id(link.dst), "toSide": "right", "toEnd": "arrow",
              "label": link.label}
             for link in links if link.src in known and link.dst in known]
    data = {"nodes": nodes, "edges": edges}
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


#: The order :func:`canvas_bytes` writes the keys of the file, of a card and of an arrow in.
_KEY_ORDER = ("nodes", "edges", "id", "type", "x", "y", "width", "height", "file", "text",
              "color", "fromNode", "fromSide", "toNode", "toSide", "toEnd", "label")


def _ordered(value: object) -> object:
    if isinstance(value, dict):
        rank = {key: n for n, key in enumerate(_KEY_ORDER)}
        return {k: _ordered(value[k]) for k in sorted(
            value, key=lambda k: (rank.get(k, len(rank)), k))}
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


def in_our_layout(data: bytes) -> bytes | None:
    """The canvas file ``data`` written as :func:`canvas_bytes` writes one (its keys in
    :func:`canvas_bytes`' order, two-space indent, a final newline): the same canvas saved
    again in another layout (Obsidian indents with tabs and orders keys its own way) gives
    back the bytes dreamd drew. ``None`` when ``data`` is no JSON."""
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return (json.dumps(_ordered(parsed), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
