"""Which notes of a vault are templates: blank forms, not notes of a day.

Obsidian's core *Templates* plugin keeps its folder in ``<config folder>/templates.json``
(``{"folder": "Templates"}``), the *Templater* community plugin in
``plugins/templater-obsidian/data.json`` (``{"templates_folder": "Meta/Forms"}``); the core
*Daily notes* plugin names its template in
``daily-notes.json`` (``"template": "Tpl/Day"``, :mod:`ccb.daily_notes`). A template holds
placeholders (``{{date}}``, ``{{title}}``, Templater's ``<% … %>``) that are filled in when a
note is made from it; its own file dates say when the form was last edited, never what day
it is about.

Everything here is pure except :func:`template_locations` (three small file reads).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path

from ccb.daily_notes import read_daily_note_settings, template_path

__all__ = [
    "TEMPLATER_FILE",
    "TEMPLATES_FILE",
    "has_placeholder",
    "in_locations",
    "read_templates_folder",
    "template_locations",
]

#: Obsidian's settings file of the core Templates plugin, inside the config folder.
TEMPLATES_FILE = "templates.json"
#: The Templater plugin's settings file, inside the config folder, and its folder's key.
TEMPLATER_FILE = "plugins/templater-obsidian/data.json"
#: A placeholder of the core Templates plugin (``{{date}}``, ``{{date:YYYY-MM-DD}}``,
#: ``{{time}}``, ``{{title}}``, Obsidian's documented variables) or a Templater command
#: (``<% tp.date.now() %>``).
_PLACEHOLDER = re.compile(r"\{\{\s*(?:date|time|title)\s*(?::[^}]*)?\}\}|<%[-_*]?\s",
                          re.IGNORECASE)


def read_templates_folder(vault_root: Path, config_folder: str = ".obsidian") -> str | None:
    """The folder of ``<vault>/<config_folder>/templates.json`` (vault-relative POSIX, no
    slashes around it), or ``None`` when the file is missing, unreadable, not a JSON object,
    names no folder, or names one outside the vault (``..``, absolute)."""
    return _folder_in(vault_root / config_folder / TEMPLATES_FILE, "folder")


def _folder_in(settings: Path, key: str) -> str | None:
    """The folder a plugin's JSON ``settings`` file names under ``key`` (see
    :func:`read_templates_folder`)."""
    try:
        data = json.loads(settings.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None
    folder = data.get(key) if isinstance(data, dict) else None
    if not isinstance(folder, str):
        return None
    folder = folder.strip().replace("\\", "/").strip("/")
    if not folder or ".." in folder.split("/") or folder.startswith("~"):
        return None
    return folder


def template_locations(vault_root: Path, config_folder: str = ".obsidian") -> frozenset[str]:
    """The vault's configured template places -> vault paths: the Templates and Templater
    plugins' folders (``"Tpl/"``, with a trailing slash) and the Daily notes template file
    (``"Tpl/Day.md"``). Empty when none is configured."""
    places: set[str] = set()
    for folder in (read_templates_folder(vault_root, config_folder),
                   _folder_in(vault_root / config_folder / TEMPLATER_FILE, "templates_folder")):
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
