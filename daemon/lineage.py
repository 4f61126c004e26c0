"""``dreamd lineage``, ``dreamd dream --canvas`` and ``dreamd graph export``: the memory graph
shown, drawn and handed to other tools.

The relations come from the memories' frontmatter (:mod:`magma.lineage`), the versions from
the version archive; a picture is a JSON Canvas file (:mod:`magma.canvas`) written in the
memory folder through the one writer as a generated file
(:meth:`ccb.writer.NoteWriter.write_generated`). A file at the canvas's name that dreamd did
not draw, or that the user changed since (rearranged cards, a canvas of their own that
happens to bear the name), is the user's: it stays where it is, byte for byte, and dreamd
draws beside it under the next free name (``<name> 2.canvas``, :func:`free_canvas_path`) and
says so. Refusing would leave the user without the picture they asked for; moving their file
to a conflict copy would move a file they made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Console

from ccb.model import memory_key
from ccb.names import nfc_key
from ccb.write_transport import sha256_hex
from ccb.writer import NoteWriter, WriteOutcome
from consistency.dream import MergeDuplicate, SupersedeOld
from consistency.lifecycle import Archive, Demote, MarkBroken, Promote
from daemon.memory_pool import StoredMemory
from daemon.terminal_text import shown
from magma.canvas import Card, Link, canvas_bytes, in_our_layout
from magma.graph import node_id
from magma.graph_keeper import current_graph
from magma.lineage import (
    Chain,
    LineageMemory,
    chain_of,
    lineage_graph,
    lineage_memory,
    link_stem,
    relations_of,
)
from magma.store import MagmaStore
from magma.vault_graph import GraphFormat, graph_text
from magma.versions import VersionArchive, current

__all__ = [
    "Drawn",
    "LineageReport",
    "LineageService",
    "MemoryVersions",
    "draw_canvas",
    "dream_picture",
    "export_graph",
    "free_canvas_path",
    "lineage_json",
    "print_lineage",
    "scrub_canvases",
]

#: Edge labels on a canvas and in ``dreamd lineage``, by lineage edge kind.
LABELS = {"supersedes": "supersedes", "merged_into": "merged into",
          "derived_from": "derived from"}
#: JSON Canvas preset colours (spec: "1" red … "6" purple): the memory asked about, an
#: archived memory, a name no memory has.
_ROOT_COLOR, _ARCHIVED_COLOR, _MISSING_COLOR = "4", "5", "1"


@dataclass(frozen=True, slots=True)
class MemoryVersions:
    """What the version archive says of one memory: ``count`` versions recorded, the current
    one ``head_n``, recorded at ``head_at`` (UTC) by ``origin``."""

    count: int
    head_n: int
    head_at: datetime
    origin: str


@dataclass(frozen=True, slots=True)
class LineageReport:
    """A memory's lineage: ``root`` (its graph node id), its direct ``relations``
    (``{relation: [node id, …]}``, :data:`magma.lineage.RELATIONS`), the whole ``chain``, the
    facts of each memory of the chain by node id, and their versions by node id."""

    root: str
    relations: Mapping[str, list[str]]
    chain: Chain
    memories: Mapping[str, LineageMemory]
    versions: Mapping[str, MemoryVersions]


class LineageService:
    """Lineage of the memories ``memories()`` gives (every memory file, parsed); ``find``
    names one (``MemoryService.find``: raises ``MemoryNotFoundError``)."""

    def __init__(self, *, memories: Callable[[], Sequence[StoredMemory]],
                 find: Callable[[str], StoredMemory], versions: VersionArchive,
                 writer: NoteWriter, memory_folder: str) -> None:
        self._memories = memories
        self._find = find
        self.versions = versions
        self.writer = writer
        self.memory_folder = memory_folder

    def lineage(self, name: str) -> LineageReport:
        """The lineage of the memory ``name`` (id, name, file). Raises
        ``MemoryNotFoundError`` and ``StoreError``."""
        stored = self._find(name)
        every = self._memories()
        facts = {node_id("note", s.path): lineage_memory(s.path, s.note.properties)
                 for s in every}
        graph = lineage_graph(facts.values())
        root = node_id("note", stored.path)
        if root not in graph:  # found, but not a memory file of the folder
            facts[root] = lineage_memory(stored.path, stored.note.properties)
            graph = lineage_graph(facts.values())
        chain = chain_of(graph, root)
        keys = {node_id("note", s.path): memory_key(s.note.memory.id if s.note.memory else None,
                                                     s.path)
                for s in [*every, stored] if node_id("note", s.path) in chain.nodes}
        history = self.versions.all_versions(sorted(set(keys.values())))
        versions: dict[str, MemoryVersions] = {}
        for node, key in keys.items():
            head = current(history.get(key, []))
            if head is not None:
                versions[node] = MemoryVersions(len(history[key]), head.n, head.created_at,
                                                head.origin)
        return LineageReport(root, relations_of(graph, root), chain,
                             {n: facts[n] for n in chain.nodes if n in facts}, versions)

    def canvas_path(self, report: LineageReport) -> str:
        """Where the lineage canvas of ``report`` goes: ``<stem> lineage.canvas`` in the
        memory's own folder (the memory folder, or its subfolder: two memories of one file
        name in two subfolders get two canvases), beside it when that file is the user's
        (:func:`free_canvas_path`). A file name past :data:`NAME_MAX_BYTES` once named so is
        cut (at a character) and given a short hash of the memory's path (two cut names stay
        two files)."""
        path = report.memories[report.root].path
        folder, _, file = path.rpartition("/")
        if not f"{folder}/".startswith(f"{self.memory_folder}/"):
            folder = self.memory_folder
        return f"{folder}/{_canvas_stem(file.removesuffix('.md'), path)} lineage.canvas"

    def write_canvas(self, report: LineageReport) -> Drawn:
        """Draw ``report`` (:func:`lineage_picture`) into :meth:`canvas_path`, or beside it
        when the file there is the user's (:func:`draw_canvas`). Raises what
        :meth:`ccb.writer.NoteWriter.write_generated` raises."""
        cards, links = lineage_picture(report)
        return draw_canvas(self.writer, self.canvas_path(report), canvas_bytes(cards, links))

    def write_dream_canvas(self, consolidation: Sequence[object],
                           lifecycle: Sequence[object], now: datetime,
                           written: Sequence[str] = ()) -> Drawn | None:
        """Draw what a dream changed (:func:`dream_picture`) into ``<memory folder>/dream
        <YYYY-MM-DD HHMM>.canvas`` (``now``, the user's time; beside it when the file there
        is the user's, :func:`draw_canvas`); ``None`` when it changed nothing. ``written``
        are the files the dream wrote: a new memory among them that derives from others (a
        synthesis) is drawn with its sources. Raises what
        :meth:`ccb.writer.NoteWriter.write_generated` raises."""
        planned = {p for step in consolidation for p in _paths(step)}
        every = self._memories()
        by_stem = {link_stem(s.path): s.path for s in every}
        derived: dict[str, list[str]] = {}
        for stored in every:
            if stored.path in written and stored.path not in planned:
                facts = lineage_memory(stored.path, stored.note.properties)
                sources = [by_stem[link_stem(link)] for prop, link in facts.links
                           if prop == "derived_from" and link_stem(link) in by_stem]
                if sources:
                    derived[stored.path] = sources
        cards, links = dream_picture(consolidation, lifecycle, derived)
        if not cards:
            return None
        path = f"{self.memory_folder}/dream {now:%Y-%m-%d %H%M}.canvas"
        return draw_canvas(self.writer, path, canvas_bytes(cards, links))


@dataclass(frozen=True, slots=True)
class Drawn:
    """A canvas dreamd drew: the write's ``outcome`` and, when the file at the usual place
    was the user's and so left as it is, its vault path (``left``)."""

    outcome: WriteOutcome
    left: str | None = None

    @property
    def path(self) -> str:
        """Vault path of the canvas drawn."""
        return self.outcome.path

    @property
    def status(self) -> str:
        """What the write did (``created``, ``written``, ``unchanged``)."""
        return self.outcome.status

    def said(self) -> str:
        """The line that tells the user where it is."""
        line = f"drew {self.path} ({self.status}): open it in Obsidian"
        if self.left is not None:
            line += (f"; {self.left} is yours (not drawn by dreamd, or changed since), so it "
                     "is left as it is")
        return line


def _drawn_by_dreamd(writer: NoteWriter, path: str) -> bool | None:
    """Is ``path`` absent (``None``), a file dreamd drew and nobody changed since (True: its
    bytes, or the same canvas in another layout, :func:`magma.canvas.in_our_layout`), or
    someone else's (False: any other file, a link, a folder)?"""
    target = writer.root / path
    if not target.exists() and not target.is_symlink():
        return None
    if target.is_symlink() or not target.is_file():
        return False
    current = writer.read(path)
    if current is None:
        return False
    drawn = writer.generated_hash(path)
    if drawn == sha256_hex(current):
        return True
    # the same canvas saved again in another layout (Obsidian re-saves with tabs) is no edit
    again = in_our_layout(current) if drawn is not None else None
    return again is not None and drawn == sha256_hex(again)


#: The longest file name, in bytes, of the file systems a vault lives on (ext4, APFS, NTFS:
#: 255; NTFS counts UTF-16 units, which a name of at most 255 UTF-8 bytes never passes).
NAME_MAX_BYTES = 255
#: Room kept in a canvas's name for Obsidian's " 99" of a second file of one name.
_NUMBER_ROOM = len(" 99")


def _canvas_stem(stem: str, path: str) -> str:
    """``stem`` as a lineage canvas's name starts (``<stem> lineage 99.canvas`` fits
    :data:`NAME_MAX_BYTES`): whole, or cut at a character with ``~<6 hex of sha256(path)>``
    after it."""
    room = NAME_MAX_BYTES - _NUMBER_ROOM - len(b" lineage.canvas")
    if len(stem.encode("utf-8")) <= room:
        return stem
    mark = "~" + sha256_hex(path.encode("utf-8"))[:6]
    while len((stem + mark).encode("utf-8")) > room:
        stem = stem[:-1]
    return stem + mark


def free_canvas_path(writer: NoteWriter, path: str) -> str:
    """Where dreamd may draw the canvas meant for ``path`` (``….canvas``): ``path`` itself
    when it is free or a canvas dreamd drew there and nobody changed since, else the first
    such of ``<name> 2.canvas``, ``<name> 3.canvas`` … — Obsidian's own way of naming a
    second file of one name. A file of the user's is never moved, overwritten or kept as a
    conflict copy: a canvas is a picture, redrawn any time, and the user's file may be one
    they made and named themselves."""
    name = path.removesuffix(".canvas")
    candidate, n = path, 1
    while _drawn_by_dreamd(writer, candidate) is False:
        n += 1
        candidate = f"{name} {n}.canvas"
    return candidate


def draw_canvas(writer: NoteWriter, path: str, data: bytes) -> Drawn:
    """Write the canvas ``data`` at ``path``, or beside it (:func:`free_canvas_path`) when the
    file there is the user's. Raises what :meth:`ccb.writer.NoteWriter.write_generated`
    raises."""
    where = free_canvas_path(writer, path)
    current = writer.read(where) if (writer.root / where).is_file() else None
    if current is not None and writer.generated_hash(where) != sha256_hex(current):
        writer.adopt_generated(where, current)  # dreamd's canvas in another layout: no edit
    return Drawn(writer.write_generated(where, data), None if where == path else path)


def _card(report: LineageReport, node: str) -> Card:
    memory = report.memories.get(node)
    if memory is None:
        return Card(node, text=f"**{node.split(':', 1)[-1]}**\n\nno memory has this name "
                                "(forgotten or renamed)", color=_MISSING_COLOR)
    color = _ROOT_COLOR if node == report.root else \
        _ARCHIVED_COLOR if memory.status == "archived" else None
    return Card(node, file=memory.path, color=color)


def lineage_picture(report: LineageReport) -> tuple[list[Card], list[Link]]:
    """One card per memory of the chain (a file card linking to its file; a text card for a
    name no memory has), one labelled arrow per lineage edge."""
    cards = [_card(report, node) for node in report.chain.nodes]
    links = [Link(e.src, e.dst, LABELS[e.kind]) for e in report.chain.edges]
    return cards, links


def _paths(step: object) -> tuple[str, ...]:
    match step:
        case MergeDuplicate(keeper_path=keeper, duplicate_path=dup):
            return keeper, dup
        case SupersedeOld(old_path=old, new_path=new):
            return old, new
    return ()


def dream_picture(consolidation: Sequence[object], lifecycle: Sequence[object],
                  derived: Mapping[str, Sequence[str]] | None = None
                  ) -> tuple[list[Card], list[Link]]:
    """What a dream changed as cards and arrows: a file card per memory it touched, an
    arrow per merge (``merged into``) and supersession (``supersedes``), an arrow from each
    memory of ``derived`` (``{synthesis path: [source path, …]}``, the syntheses the dream
    wrote) to each source (``derived from``, as in ``dreamd lineage``), and a text card per
    archive, promotion, demotion or broken-link mark, pointing at its memory."""
    cards: dict[str, Card] = {}
    links: list[Link] = []

    def memory(path: str) -> str:
        cards.setdefault(path, Card(path, file=path))
        return path

    for new, sources in sorted((derived or {}).items()):
        for source in sources:
            links.append(Link(memory(new), memory(source), LABELS["derived_from"]))

    for step in consolidation:
        match step:
            case MergeDuplicate(keeper_path=keeper, duplicate_path=dup, kind=kind):
                links.append(Link(memory(dup), memory(keeper), f"merged into ({kind})"))
            case SupersedeOld(old_path=old, new_path=new, reason=reason):
                links.append(Link(memory(new), memory(old), f"supersedes: {reason}"))
    for step in lifecycle:
        color: str | None
        match step:
            case Archive(path=path, reason=reason):
                what, color = f"**archived**\n\n{reason}", _ARCHIVED_COLOR
            case Promote(path=path, reason=reason):
                what, color = f"**promoted** to the resident set\n\n{reason}", _ROOT_COLOR
            case Demote(path=path, reason=reason):
                what, color = f"**demoted** from the resident set\n\n{reason}", None
            case MarkBroken(path=path, links=broken):
                what = ("**broken links**\n\n" + ", ".join(f"`{b}`" for b in broken)
                        if broken else "**links work again**")
                color = _MISSING_COLOR if broken else None
            case _:
                continue
        key = f"{type(step).__name__}:{path}"
        cards[key] = Card(key, text=what, color=color)
        links.append(Link(key, memory(path), type(step).__name__.lower()))
    return list(cards.values()), links


def export_graph(store: MagmaStore, fmt: GraphFormat) -> str:
    """The vault graph of the index (its ``edges`` table when in step,
    :func:`magma.graph_keeper.current_graph`) as ``fmt`` text. Raises ``StoreError``."""
    return graph_text(current_graph(store), fmt)


# ---------------------------------------------------------------------------- rendering


def _label(report: LineageReport, node: str) -> str:
    memory = report.memories.get(node)
    if memory is None:
        return f"[[{node.split(':', 1)[-1]}]] (no such memory)"
    return f"{memory.path} ({memory.name})"


def _facts(report: LineageReport, node: str) -> str:
    memory = report.memories[node]
    superseded = any(prop == "superseded_by" for prop, _ in memory.links)
    parts = [memory.status or ("superseded" if superseded else "active")]
    if memory.archived_reason:
        parts[0] += f": {memory.archived_reason}"
    parts += [f"{key} {value[:10]}" for key, value in (
        ("created", memory.created), ("updated", memory.updated), ("valid to", memory.valid_to))
        if value]
    if memory.forgotten_sources:
        parts.append(f"{memory.forgotten_sources} of its sources forgotten")
    kept = report.versions.get(node)
    if kept is not None:
        parts.append(f"version {kept.head_n} of {kept.count} ({kept.origin}, "
                     f"{kept.head_at:%Y-%m-%d %H:%M} UTC)")
    elif memory.version:
        parts.append(f"version {memory.version} (frontmatter; none recorded yet)")
    return " · ".join(parts)


def print_lineage(console: Console, report: LineageReport, canvas: Drawn | None = None
                  ) -> None:
    """``dreamd lineage NAME``: the memory, its direct relations, then the whole chain."""
    console.print(shown(_label(report, report.root)), highlight=False)
    console.print(shown("  " + _facts(report, report.root)), highlight=False)
    if not report.relations:
        console.print("  no lineage: it supersedes nothing, nothing was merged into it, and "
                      "it derives from no memory")
    for relation, others in report.relations.items():
        for other in others:
            line = f"  {relation}: {_label(report, other)}"
            if other in report.memories:
                line += f" — {_facts(report, other)}"
            console.print(shown(line), highlight=False)
    direct = sum(len(others) for others in report.relations.values())
    if len(report.chain.edges) > direct:  # the chain goes on past the direct relations
        console.print(f"chain: {len(report.chain.nodes)} memories, "
                      f"{len(report.chain.edges)} links", highlight=False)
        for edge in report.chain.edges:
            console.print(shown(f"  {_label(report, edge.src)} {LABELS[edge.kind]} "
                                 f"{_label(report, edge.dst)}"), highlight=False)
    if canvas is not None:
        console.print(shown(canvas.said()), highlight=False)


def lineage_json(report: LineageReport, canvas: Drawn | None = None
                 ) -> dict[str, Any]:
    """``dreamd lineage --json``: the memory, its relations and chain by vault path
    (``[[stem]]`` for a name no memory has), with versions; ``canvas`` the canvas drawn and
    ``canvas_left`` the user's file at its usual place, left as it is (else ``None``)."""
    def name(node: str) -> str:
        memory = report.memories.get(node)
        return memory.path if memory is not None else f"[[{node.split(':', 1)[-1]}]]"

    memories = []
    for node in report.chain.nodes:
        memory = report.memories.get(node)
        if memory is None:
            continue
        kept = report.versions.get(node)
        memories.append({
            "path": memory.path, "name": memory.name, "id": memory.memory_id,
            "status": memory.status, "archived_reason": memory.archived_reason,
            "created": memory.created, "updated": memory.updated, "valid_to": memory.valid_to,
            "forgotten_sources": memory.forgotten_sources,
            "versions": None if kept is None else {
                "count": kept.count, "current": kept.head_n, "at": kept.head_at.isoformat(),
                "origin": kept.origin}})
    return {
        "memory": name(report.root),
        "relations": {k: [name(n) for n in v] for k, v in report.relations.items()},
        "chain": [{"from": name(e.src), "kind": e.kind, "to": name(e.dst),
                   "written_in": list(e.written_in)} for e in report.chain.edges],
        "memories": memories,
        "canvas": None if canvas is None else canvas.path,
        "canvas_left": None if canvas is None else canvas.left,
    }


# ---------------------------------------------------------------------------- forget


#: A memory's own lineage canvas: ``<stem> lineage.canvas``, or ``<stem> lineage 2.canvas``
#: … when the user's file held the name (:func:`free_canvas_path`).
_OWN_CANVAS = re.compile(r"(?P<stem>.+) lineage(?: \d+)?\.canvas")


def scrub_canvases(writer: NoteWriter, memory_folder: str, stem: str) -> list[str]:
    """Take a forgotten memory (file name ``stem``) out of the canvases of the memory
    folder and its subfolders (a lineage canvas is drawn beside its memory). A canvas
    dreamd drew and nobody edited since (its bytes are what dreamd last generated there,
    :meth:`ccb.writer.NoteWriter.generated_hash`): its own lineage canvas
    (``<stem> lineage.canvas``, or a numbered one beside the user's) is deleted; in the
    others, its card, the text cards naming it and the arrows that touched them go (a text
    card left with no arrow goes too: dreamd wrote it about the memory). A canvas the user
    made or edited keeps every text card and every other file: only the card of the
    memory's own file and its arrows go. Returns the vault paths changed. A canvas that is a
    link or not JSON is left. Raises as :meth:`ccb.writer.NoteWriter.write`."""
    wanted = link_stem(stem)
    folder = writer.root / memory_folder
    changed: list[str] = []
    if not folder.is_dir():
        return changed
    for file in sorted(folder.rglob("*.canvas")):
        inner = file.relative_to(folder)
        if file.is_symlink() or any(p.startswith(".") for p in inner.parts):
            continue  # a link (perhaps out of the vault) is not read, let alone written
        path = f"{memory_folder}/{inner.as_posix()}"
        current = writer.read(path)
        if current is None:
            continue
        drawn = writer.generated_hash(path) == sha256_hex(current)
        own = _OWN_CANVAS.fullmatch(file.name)
        if drawn and own is not None and link_stem(own["stem"]) == wanted:
            writer.delete(path, expect=current)
            changed.append(path)
            continue
        scrubbed = _without_memory(current, wanted, f"{memory_folder}/{stem}.md",
                                   drawn=drawn)
        if scrubbed is not None:
            writer.write(path, scrubbed, base=current,
                         change="a forgotten memory taken out of the canvas")
            changed.append(path)
    return changed


def _without_memory(data: bytes, wanted: str, file: str, *, drawn: bool) -> bytes | None:
    """The canvas ``data`` without the cards of memory ``wanted`` (a link stem; ``file``
    its vault path): in a canvas dreamd ``drawn``, every card naming it; in one the user
    made, only the card of ``file``. ``None`` when it has none or is not a canvas."""
    try:
        canvas = json.loads(data.decode("utf-8"))
        nodes, edges = list(canvas.get("nodes", [])), list(canvas.get("edges", []))
    except (UnicodeDecodeError, ValueError, AttributeError, TypeError):
        return None

    def names_it(node: Any) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "file":
            named = str(node.get("file", ""))
            return link_stem(named) == wanted if drawn else nfc_key(named) == nfc_key(file)
        return drawn and f"**{wanted}**" in nfc_key(str(node.get("text", ""))).casefold()

    gone = {n.get("id") for n in nodes if names_it(n)}
    if not gone:
        return None
    linked = {e.get(end) for e in edges if isinstance(e, dict) for end in ("fromNode", "toNode")}
    kept_edges = [e for e in edges if isinstance(e, dict)
                  and e.get("fromNode") not in gone and e.get("toNode") not in gone]
    still = {e.get(end) for e in kept_edges for end in ("fromNode", "toNode")}
    if drawn:  # (a text card the user wrote is theirs: it stays)
        gone |= {n.get("id") for n in nodes if isinstance(n, dict) and n.get("type") == "text"
                 and n.get("id") in linked and n.get("id") not in still}
    canvas["nodes"] = [n for n in nodes if not isinstance(n, dict) or n.get("id") not in gone]
    canvas["edges"] = kept_edges
    return _lines_taken_out(data, canvas) or \
        (json.dumps(canvas, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _lines_taken_out(data: bytes, canvas: Any) -> bytes | None:
    """``canvas`` as ``data`` with only the lines of its removed cards and edges taken out,
    when ``data`` holds one card or edge per line (Obsidian's layout: tabs, one object a
    line): the rest of the user's file stays byte for byte. ``None`` when the lines do not
    give exactly ``canvas`` (another layout: it is written whole)."""
    kept_ids = {item.get("id") for key in ("nodes", "edges") for item in canvas[key]
                if isinstance(item, dict)}
    lines = data.decode("utf-8").splitlines(keepends=True)
    out: list[str] = []
    for line in lines:
        body = line.strip().rstrip(",")
        if body.startswith("{") and body.endswith("}"):
            try:
                item = json.loads(body)
            except ValueError:
                item = None
            if isinstance(item, dict) and "id" in item and item["id"] not in kept_ids:
                continue
        out.append(line)
    # a comma left before a closing bracket, where the last card of a list was taken out
    text = re.sub(r",(\s*\n\s*\])", r"\1", "".join(out))
    try:
        same = json.loads(text) == canvas
    except ValueError:
        return None
    return text.encode("utf-8") if same else None
