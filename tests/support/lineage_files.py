"""Memory files with lineage links, written for real into a test's vault, and read back.

Test support, importable by name (``tests/support`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ccb.parse import parse_note
from magma.lineage import LineageMemory, lineage_memory

__all__ = ["JSON_CANVAS_SCHEMA", "checked_canvas", "read_lineage", "report_memory",
           "write_memory"]


def report_memory(vault: Path, file: str, name: str, *extra: str,
                  body: str | None = None) -> None:
    """``Memory/<file>`` as a break-it report's ``mem`` helper writes a memory: ``name``,
    ``description: <name> described``, ``type: project``, the ``extra`` frontmatter lines
    as given, then ``body`` (default ``Body of <name>.``)."""
    lines = ["---", f"name: {name}", f"description: {name} described", "type: project",
             *extra, "---", body if body is not None else f"Body of {name}."]
    target = vault / "Memory" / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _links(value: str | list[str]) -> str:
    items = [value] if isinstance(value, str) else value
    return "".join(f'\n  - "[[{item}]]"' for item in items)


def write_memory(root: Path, stem: str, name: str, *, folder: str = "Memory",
                 created: str = "2026-11-20T10:00:00Z", status: str | None = None,
                 archived_reason: str | None = None, mtype: str = "project",
                 **links: str | list[str]) -> str:
    """Write ``<folder>/<stem>.md`` under ``root`` as dreamd writes a memory, with each of
    ``links`` (``supersedes=…``, ``superseded_by=…``, ``merged_into=…``, ``derived_from=…``)
    as a list of wikilinks; the vault-relative path."""
    lines = [f"name: {json.dumps(name, ensure_ascii=False)}",
             f"description: {json.dumps(name, ensure_ascii=False)}", f"type: {mtype}",
             f"created: {created}", f"updated: {created}", "version: 1"]
    if status:
        lines.append(f"status: {status}")
    if archived_reason:
        lines.append(f"archived_reason: {archived_reason}")
    lines += [f"{key}:{_links(value)}" for key, value in links.items()]
    path = f"{folder}/{stem}.md"
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("---\n" + "\n".join(lines) + f"\n---\n{name}.\n", encoding="utf-8")
    return path


def read_lineage(root: Path, folder: str = "Memory") -> list[LineageMemory]:
    """Every memory file of ``root/folder`` parsed (:func:`ccb.parse.parse_note`) into its
    lineage facts, by path."""
    found = []
    for file in sorted((root / folder).glob("*.md")):
        path = file.relative_to(root).as_posix()
        note = parse_note(path, file.read_bytes())
        if note.memory is not None:
            found.append(lineage_memory(path, note.properties))
    return found


#: JSON Canvas 1.0 as a JSON Schema, written from the spec (https://jsoncanvas.org/spec/1.0/):
#: the node and edge fields, their types and the closed value sets.
_COLOR: dict[str, Any] = {"type": "string",
                          "pattern": "^([1-6]|#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6})$"}
_SIDE: dict[str, Any] = {"enum": ["top", "right", "bottom", "left"]}
_END: dict[str, Any] = {"enum": ["none", "arrow"]}
_GENERIC = {"id": {"type": "string"}, "x": {"type": "integer"}, "y": {"type": "integer"},
            "width": {"type": "integer"}, "height": {"type": "integer"}, "color": _COLOR}
_REQUIRED = ["id", "type", "x", "y", "width", "height"]
JSON_CANVAS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "nodes": {"type": "array", "items": {"oneOf": [
            {"type": "object", "required": [*_REQUIRED, "text"], "additionalProperties": False,
             "properties": {
                **_GENERIC, "type": {"const": "text"}, "text": {"type": "string"}}},
            {"type": "object", "required": [*_REQUIRED, "file"], "additionalProperties": False,
             "properties": {
                **_GENERIC, "type": {"const": "file"}, "file": {"type": "string"},
                "subpath": {"type": "string", "pattern": "^#"}}},
            {"type": "object", "required": [*_REQUIRED, "url"], "additionalProperties": False,
             "properties": {
                **_GENERIC, "type": {"const": "link"}, "url": {"type": "string"}}},
            {"type": "object", "required": _REQUIRED, "additionalProperties": False,
             "properties": {
                **_GENERIC, "type": {"const": "group"}, "label": {"type": "string"},
                "background": {"type": "string"},
                "backgroundStyle": {"enum": ["cover", "ratio", "repeat"]}}},
        ]}},
        "edges": {"type": "array", "items": {
            "type": "object", "required": ["id", "fromNode", "toNode"],
            "additionalProperties": False,
            "properties": {"id": {"type": "string"}, "fromNode": {"type": "string"},
                           "fromSide": _SIDE, "fromEnd": _END, "toNode": {"type": "string"},
                           "toSide": _SIDE, "toEnd": _END, "color": _COLOR,
                           "label": {"type": "string"}}}},
    },
    "additionalProperties": False,
}


def checked_canvas(root: Path, path: str) -> dict[str, Any]:
    """The canvas at ``root/path``, checked: valid JSON Canvas 1.0 (:data:`JSON_CANVAS_SCHEMA`),
    ids unique, every edge between two of its nodes, every file card's file in the vault."""
    jsonschema = __import__("jsonschema")
    data: dict[str, Any] = json.loads((root / path).read_text(encoding="utf-8"))
    jsonschema.validate(data, JSON_CANVAS_SCHEMA)
    ids = [n["id"] for n in data["nodes"]] + [e["id"] for e in data["edges"]]
    assert len(ids) == len(set(ids)), "ids are unique"
    nodes = {n["id"] for n in data["nodes"]}
    for edge in data["edges"]:
        assert edge["fromNode"] in nodes and edge["toNode"] in nodes
    for node in data["nodes"]:
        if node["type"] == "file":
            assert (root / node["file"]).is_file(), node["file"]
    return data
