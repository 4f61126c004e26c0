"""Where the diary lives: the vault's daily notes and an OpenClaw workspace's ``memory/`` days.

Obsidian's core *Daily notes* plugin keeps its settings in ``<config folder>/daily-notes.json``:
``folder`` (vault-relative, ``""`` for the vault's top), ``format`` (a moment.js date format,
default ``YYYY-MM-DD``; a ``/`` in it makes sub-folders) and ``template`` (a vault path, with or
without ``.md``). A vault without that file keeps its daily notes in :data:`DEFAULT_FOLDER`.
An OpenClaw workspace writes one note per day as ``memory/YYYY-MM-DD.md``.

Everything here is pure except :func:`read_daily_note_settings` (one small file read) and
:func:`diary_notes` (which files exist): the raw layer of the dream's light sleep is
``diary_notes(settings, roots, days)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path, PurePosixPath
from typing import Literal

from ccb.roots import Root

__all__ = [
    "DAILY_NOTES_FILE",
    "DEFAULT_FOLDER",
    "DEFAULT_FORMAT",
    "OPENCLAW_DIARY_FOLDER",
    "DailyNoteSettings",
    "DiaryNote",
    "daily_note_path",
    "diary_notes",
    "format_moment",
    "read_daily_note_settings",
    "render_template",
    "template_path",
]

#: Obsidian's settings file of the core Daily notes plugin, inside the config folder.
DAILY_NOTES_FILE = "daily-notes.json"
#: Where daily notes go when the vault has no Daily notes settings (dreamd's choice; the
#: folder name most vaults use, kepano's among them).
DEFAULT_FOLDER = "Daily"
#: The plugin's default date format (Obsidian's own default).
DEFAULT_FORMAT = "YYYY-MM-DD"
#: The folder of an OpenClaw workspace that holds one note per day (``memory/2026-06-15.md``).
OPENCLAW_DIARY_FOLDER = "memory"


@dataclass(frozen=True, slots=True)
class DailyNoteSettings:
    """The vault's Daily notes settings: ``folder`` (vault-relative POSIX, ``""`` for the
    top), ``format`` (moment.js) and ``template`` (vault-relative, ``None`` for none)."""

    folder: str = DEFAULT_FOLDER
    format: str = DEFAULT_FORMAT
    template: str | None = None


def _text_setting(data: dict[str, object], key: str) -> str | None:
    value = data.get(key)
    if not isinstance(value, str):
        return None
    value = value.strip().replace("\\", "/").strip("/")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return None  # a control character (NUL …) names no file
    return value if ".." not in PurePosixPath(value).parts else None


def read_daily_note_settings(vault_root: Path, config_folder: str = ".obsidian"
                             ) -> DailyNoteSettings:
    """The settings in ``<vault>/<config_folder>/daily-notes.json``; the defaults
    (:data:`DEFAULT_FOLDER`, :data:`DEFAULT_FORMAT`, no template) when the file is missing,
    unreadable or not a JSON object. An empty ``format`` is the default format, as in
    Obsidian; a value that would leave the vault (``..``) or holds a control character is
    ignored."""
    try:
        data = json.loads((vault_root / config_folder / DAILY_NOTES_FILE)
                          .read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return DailyNoteSettings()
    if not isinstance(data, dict):
        return DailyNoteSettings()
    folder = _text_setting(data, "folder")
    return DailyNoteSettings(
        folder=folder if folder is not None else "",
        format=_text_setting(data, "format") or DEFAULT_FORMAT,
        template=_text_setting(data, "template") or None,
    )


# --------------------------------------------------------------------------- moment.js format

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: moment.js tokens (English locale), longest first so ``YYYY`` wins over ``YY``.
_TOKEN = re.compile(
    r"\[[^\]]*\]|YYYY|YY|Q|MMMM|MMM|MM|M|DDDD|DDD|Do|DD|D|dddd|ddd|dd|d|E|e|GGGG|gggg"
    r"|WW|W|ww|w|HH|H|hh|h|mm|m|ss|s|A|a"
)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _token_value(token: str, moment: datetime) -> str:
    day = moment.date()
    iso_year, iso_week, iso_weekday = day.isocalendar()
    hour12 = moment.hour % 12 or 12
    values = {
        "YYYY": f"{day.year:04d}", "YY": f"{day.year % 100:02d}", "Q": str((day.month + 2) // 3),
        "MMMM": _MONTHS[day.month - 1], "MMM": _MONTHS[day.month - 1][:3],
        "MM": f"{day.month:02d}", "M": str(day.month),
        "DDDD": f"{day.timetuple().tm_yday:03d}", "DDD": str(day.timetuple().tm_yday),
        "Do": _ordinal(day.day), "DD": f"{day.day:02d}", "D": str(day.day),
        "dddd": _DAYS[day.weekday()], "ddd": _DAYS[day.weekday()][:3],
        "dd": _DAYS[day.weekday()][:2], "d": str(iso_weekday % 7), "E": str(iso_weekday),
        "e": str(iso_weekday % 7), "GGGG": f"{iso_year:04d}", "gggg": f"{iso_year:04d}",
        "WW": f"{iso_week:02d}", "W": str(iso_week), "ww": f"{iso_week:02d}", "w": str(iso_week),
        "HH": f"{moment.hour:02d}", "H": str(moment.hour), "hh": f"{hour12:02d}",
        "h": str(hour12), "mm": f"{moment.minute:02d}", "m": str(moment.minute),
        "ss": f"{moment.second:02d}", "s": str(moment.second),
        "A": "AM" if moment.hour < 12 else "PM", "a": "am" if moment.hour < 12 else "pm",
    }
    return values[token]


def format_moment(moment: datetime | date, fmt: str) -> str:
    """``moment`` written in the moment.js format ``fmt`` (English names; ``[text]`` is
    literal; other characters stay as they are): ``format_moment(date(2026, 12, 2),
    "YYYY/MM/dddd, MMMM Do")`` → ``"2026/12/Wednesday, December 2nd"``. A ``date`` is its
    midnight. Week tokens (``w``, ``ww``, ``gggg``) are the ISO week's, as moment's ISO
    tokens (``W``, ``GGGG``); the locale weeks of other locales differ by a day at most."""
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time())

    def token(match: re.Match[str]) -> str:
        found = match.group()
        return found[1:-1] if found.startswith("[") else _token_value(found, moment)

    return _TOKEN.sub(token, fmt)


def daily_note_path(settings: DailyNoteSettings, moment: datetime | date) -> str:
    """The vault path of the daily note of ``moment``'s day: ``Daily/2026-12-02.md``
    (``folder`` / ``format`` + ``.md``, as Obsidian names a new daily note)."""
    name = format_moment(moment, settings.format or DEFAULT_FORMAT).strip().strip("/")
    parts = [p for p in f"{settings.folder}/{name}".split("/") if p not in ("", ".", "..")]
    return "/".join(parts) + ".md"


def template_path(settings: DailyNoteSettings) -> str | None:
    """The vault path of the daily-note template (``.md`` added when the setting has no
    suffix, as Obsidian reads it), or ``None``."""
    if not settings.template:
        return None
    return settings.template if settings.template.lower().endswith(".md") \
        else settings.template + ".md"


_TEMPLATE_VAR = re.compile(r"\{\{\s*(date|time|title)\s*(?::([^}]*))?\}\}", re.IGNORECASE)


def render_template(template: str, moment: datetime, *, title: str,
                    date_format: str = DEFAULT_FORMAT) -> str:
    """A daily-note template with Obsidian's variables filled in: ``{{title}}`` (the note's
    name), ``{{date}}`` (in ``date_format``), ``{{time}}`` (``HH:mm``), and ``{{date:FMT}}`` /
    ``{{time:FMT}}`` in a moment.js format of their own. Other text is kept as written."""

    def fill(match: re.Match[str]) -> str:
        name, fmt = match.group(1).lower(), match.group(2)
        if name == "title":
            return title
        default = date_format if name == "date" else "HH:mm"
        return format_moment(moment, fmt.strip() if fmt and fmt.strip() else default)

    return _TEMPLATE_VAR.sub(fill, template)


# --------------------------------------------------------------------------- the raw layer

DiaryKind = Literal["daily-note", "openclaw"]


@dataclass(frozen=True, slots=True)
class DiaryNote:
    """One day's diary file: its index path (``Daily/2026-12-02.md``,
    ``workspace:memory/2026-12-02.md``), its day, and whose it is (``daily-note``: the
    vault's; ``openclaw``: an attached OpenClaw workspace's, read only)."""

    path: str
    day: date
    kind: DiaryKind


def _openclaw_candidates(root: Root, day: date) -> list[str]:
    """Where an attached root keeps ``day``'s note: ``memory/<day>.md`` of a workspace, or
    ``<day>.md`` when the root is the workspace's ``memory`` folder itself."""
    name = f"{day.isoformat()}.md"
    if root.path.name.casefold() == OPENCLAW_DIARY_FOLDER:
        return [name]
    return [f"{OPENCLAW_DIARY_FOLDER}/{name}"]


def diary_notes(settings: DailyNoteSettings, roots: Sequence[Root],
                days: Iterable[date]) -> list[DiaryNote]:
    """The diary files that exist for ``days``: the vault's daily note of each day
    (:func:`daily_note_path`; the vault is the root with prefix ``""``) and each attached
    root's OpenClaw day note. Ordered by day, then as ``roots`` are. Reads only whether
    files exist."""
    found: list[DiaryNote] = []
    for day in sorted(set(days)):
        for root in roots:
            if root.is_vault:
                rel = daily_note_path(settings, day)
                if (root.path / rel).is_file():
                    found.append(DiaryNote(rel, day, "daily-note"))
                continue
            for rel in _openclaw_candidates(root, day):
                if (root.path / rel).is_file():
                    found.append(DiaryNote(root.index_path(rel), day, "openclaw"))
    return found
