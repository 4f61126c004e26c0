"""Which notes of a vault are templates: blank forms, not notes of a day.

Obsidian's core *Templates* plugin keeps its folder in ``<config folder>/templates.json``
(``{"folder": "Templates"}``); the core *Daily notes* plugin names its template in
``daily-notes.json`` (``"template": "Tpl/Day"``, :mod:`ccb.daily_notes`). A template holds
placeholders (``{{date}}``, ``{{title}}``, Templater's ``<% … %>``) that are filled in when a
note is made from it; its own file dates say when the form was last edited, never what day
it is about.

Everything here is pure except :func:`template_locations` (two small file reads).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path

from ccb.daily_notes import read_daily_note_settings, template_path

__all__ = [
    "TEMPLATES_FILE",
    "has_placeholder",
    "in_locations",
    "read_templates_folder",
    "template_locations",
]

#: Obsidian's settings file of the core Templates plugin, inside the config folder.
TEMPLATES_FILE = "templates.json"
#: A placeholder of the core Templates plugin (``{{date}}``, ``{{date:YYYY-MM-DD}}``,
#: ``{{time}}``, ``{{title}}``, Obsidian's documented variables) or a Templater command
#: (``<% tp.date.now() %>``).
_PLACEHOLDER = re.compile(r"\{\{\s*(?:date|time|title)\s*(?::[^}]*)?\}\}|<%[-_*]?\s",
                          re.IGNORECASE)


def read_templates_folder(vault_root: Path, config_folder: str = ".obsidian") -> str | None:
    """The folder of ``<vault>/<config_folder>/templates.json`` (vault-relative POSIX, no
    slashes around it), or ``None`` when the file is missing, unreadable, not a JSON object,
    names no folder, or names one outside the vault (``..``, absolute)."""
    try:
        data = json.loads((vault_root / config_folder / TEMPLATES_FILE)
                          .read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None
    folder = data.get("folder") if isinstance(data, dict) else None
    if not isinstance(folder, str):
        return None
    folder = folder.strip().replace("\\", "/").strip("/")
    if not folder or ".." in folder.split("/") or folder.startswith("~"):
        return None
    return folder


def template_locations(vault_root: Path, config_folder: str = ".obsidian") -> frozenset[str]:
    """The vault's configured template places -> vault paths: the Templates plugin's folder
    (``"Tpl/"``, with a trailing slash) and the Daily notes template file (``"Tpl/Day.md"``).
    Empty when neither is configured."""
    places: set[str] = set()
    folder = read_templates_folder(vault_root, config_folder)
    if folder:
        places.add(folder + "/")
    daily = template_path(read_daily_note_settings(vault_root, config_folder))
    if daily:
        places.add(daily)
    return frozenset(places)


def in_locations(path: str, locations: Collection[str]) -> bool:
    """Is the vault path ``path`` one of ``locations`` or inside one of its folders (those
    ending in ``/``)? Compared case-insensitively, as Obsidian resolves paths on macOS and
    Windows."""
    folded = path.casefold()
    for place in locations:
        want = place.casefold()
        if folded == want or (want.endswith("/") and folded.startswith(want)):
            return True
    return False


def has_placeholder(text: str) -> bool:
    """Does ``text`` hold a template placeholder (``{{date}}``, ``{{title}}``, ``<% … %>``)?"""
    return _PLACEHOLDER.search(text) is not None
