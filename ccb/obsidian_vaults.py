"""The vaults Obsidian knows: read from its ``obsidian.json``, most recently opened first.

Obsidian (an Electron app) keeps the list of vaults it has opened in ``obsidian.json``, in
Electron's ``userData`` folder::

    {"vaults": {"<16-hex id>": {"path": "/home/u/Notes", "ts": 1700000000000, "open": true}}}

``ts`` is when the vault was last opened, in milliseconds since the Unix epoch; ``open`` is
true for the vaults whose windows are open. Where that folder is, by platform:

- Linux and other XDG systems: ``$XDG_CONFIG_HOME/obsidian`` (an absolute value only, as the
  XDG spec says) else ``~/.config/obsidian``; both are searched, since a desktop session and a
  shell may disagree on ``$XDG_CONFIG_HOME``. Then the Flatpak install
  (``~/.var/app/md.obsidian.Obsidian/config/obsidian``) and the Snap install
  (``~/snap/obsidian/current/.config/obsidian``).
- macOS: ``~/Library/Application Support/obsidian``.
- Windows: ``%APPDATA%\\obsidian`` (the roaming AppData folder), else
  ``~\\AppData\\Roaming\\obsidian``.

These are Electron's rules (``app.getPath("appData")`` plus the app name), computed here
from ``home``, ``env`` and ``platform`` so that every layout can be tested on any machine.
``platformdirs.user_config_dir("obsidian", appauthor=False, roaming=True)`` gives the same
folder on Linux and Windows, but not on macOS when ``$XDG_CONFIG_HOME`` is set (platformdirs
4.x honours it there; Electron does not), and it cannot be asked about another platform.

:func:`parse_obsidian_json` is pure; :func:`read_obsidian_json` and :func:`discover_vaults`
read files. A missing, unreadable or malformed file is an outcome with a reason, never an
exception.
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import stat
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath, PureWindowsPath

import structlog

__all__ = [
    "MAX_OBSIDIAN_JSON_BYTES",
    "OBSIDIAN_JSON",
    "Discovery",
    "ObsidianJsonMissing",
    "ObsidianJsonRead",
    "ObsidianJsonResult",
    "ObsidianJsonUnreadable",
    "ObsidianVault",
    "discover_vaults",
    "obsidian_config_dirs",
    "parse_obsidian_json",
    "read_obsidian_json",
]

log = structlog.get_logger(__name__)

#: The file in Obsidian's config folder that lists the vaults.
OBSIDIAN_JSON = "obsidian.json"

#: Larger files are refused unread. A vault entry takes about 100 bytes, so 1 MiB holds some
#: ten thousand vaults; real files are a few hundred bytes.
MAX_OBSIDIAN_JSON_BYTES = 1 << 20

_FLATPAK_CONFIG = Path(".var", "app", "md.obsidian.Obsidian", "config", "obsidian")
_SNAP_CONFIG = Path("snap", "obsidian", "current", ".config", "obsidian")


@dataclass(frozen=True, slots=True)
class ObsidianVault:
    """One vault Obsidian knows.

    ``id`` is Obsidian's key for it (16 hex digits in files Obsidian writes); ``path`` is the
    folder as Obsidian wrote it; ``name`` is that folder's name (what Obsidian shows);
    ``last_opened`` is the UTC time from ``ts`` (``None`` when ``ts`` is missing or not a
    time); ``is_open`` is Obsidian's ``open`` flag; ``exists`` says whether the folder was
    there when the file was read; ``source`` is the ``obsidian.json`` that listed it.
    """

    id: str
    path: Path
    name: str
    last_opened: datetime | None
    is_open: bool
    exists: bool
    source: Path


@dataclass(frozen=True, slots=True)
class ObsidianJsonRead:
    """``file`` was read: its ``vaults`` (most recently opened first) and how many entries
    were ``skipped`` (no usable ``path``)."""

    file: Path
    vaults: tuple[ObsidianVault, ...]
    skipped: int


@dataclass(frozen=True, slots=True)
class ObsidianJsonMissing:
    """There is no ``file`` (Obsidian is not installed that way, or never ran)."""

    file: Path


@dataclass(frozen=True, slots=True)
class ObsidianJsonUnreadable:
    """``file`` exists but cannot be used; ``reason`` says why in a few words
    (``"not JSON (Expecting value at line 1 column 1)"``, ``"permission denied"``)."""

    file: Path
    reason: str


#: What looking at one ``obsidian.json`` gave.
ObsidianJsonResult = ObsidianJsonRead | ObsidianJsonMissing | ObsidianJsonUnreadable


@dataclass(frozen=True, slots=True)
class Discovery:
    """Every vault found (``vaults``: one per folder, most recently opened first) and what
    each place looked at gave (``files``, in search order)."""

    vaults: tuple[ObsidianVault, ...]
    files: tuple[ObsidianJsonResult, ...]

    @property
    def unreadable(self) -> tuple[ObsidianJsonUnreadable, ...]:
        """The files that exist but could not be used."""
        return tuple(f for f in self.files if isinstance(f, ObsidianJsonUnreadable))


def obsidian_config_dirs(*, home: Path, env: Mapping[str, str], platform: str) -> tuple[Path, ...]:
    """Obsidian's possible config folders on ``platform`` (a ``sys.platform`` value), most
    likely first, without duplicates. Pure: ``home`` and ``env`` stand for the user's home
    folder and environment; nothing is read."""
    if platform == "darwin":
        candidates = [home / "Library" / "Application Support" / "obsidian"]
    elif platform == "win32":
        appdata = env.get("APPDATA", "").strip()
        base = Path(appdata) if appdata else home / "AppData" / "Roaming"
        candidates = [base / "obsidian"]
    else:
        xdg = env.get("XDG_CONFIG_HOME", "")
        candidates = [Path(xdg) / "obsidian"] if posixpath.isabs(xdg) else []
        candidates += [home / ".config" / "obsidian", home / _FLATPAK_CONFIG, home / _SNAP_CONFIG]
    return tuple(dict.fromkeys(candidates))


def parse_obsidian_json(
    raw: bytes, *, source: Path, platform: str, folder_exists: Callable[[Path], bool]
) -> ObsidianJsonRead | ObsidianJsonUnreadable:
    """Parse the bytes of an ``obsidian.json`` read from ``source``.

    Returns the vaults, most recently opened first (never-opened ones last, then by name),
    or the reason the bytes are not a vault list: not JSON, not an object, ``vaults`` not an
    object. A file without ``vaults`` lists none. An entry that is not an object or has no
    non-empty string ``path`` is skipped and counted; a ``ts`` that is not a number of
    milliseconds gives ``last_opened=None``; an ``open`` that is not a boolean counts as
    false. ``platform`` (a ``sys.platform`` value) decides how a path is split into its
    name; ``folder_exists`` answers each vault's ``exists``. Raises nothing.
    """
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, UnicodeDecodeError
        detail = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        return ObsidianJsonUnreadable(source, f"not JSON ({detail})")
    if not isinstance(data, dict):
        return ObsidianJsonUnreadable(source, f"not a JSON object but {_json_kind(data)}")
    entries = data.get("vaults", {})
    if not isinstance(entries, dict):
        return ObsidianJsonUnreadable(
            source, f'"vaults" is {_json_kind(entries)}, not an object of vaults'
        )
    vaults: list[ObsidianVault] = []
    skipped = 0
    for vault_id, entry in entries.items():
        path_text = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path_text, str) or not path_text.strip():
            skipped += 1
            continue
        if not (PurePosixPath(path_text).is_absolute()
                or PureWindowsPath(path_text).is_absolute()):
            skipped += 1  # Obsidian writes absolute paths; a relative one would be read
            continue  # against wherever dreamd runs
        path = Path(path_text)
        is_open = entry.get("open")
        vaults.append(ObsidianVault(
            id=vault_id,
            path=path,
            name=_folder_name(path_text, platform),
            last_opened=_time_from_ms(entry.get("ts")),
            is_open=is_open if isinstance(is_open, bool) else False,
            exists=folder_exists(path),
            source=source,
        ))
    return ObsidianJsonRead(source, _most_recent_first(vaults), skipped)


def read_obsidian_json(
    file: Path, *, platform: str | None = None, max_bytes: int = MAX_OBSIDIAN_JSON_BYTES
) -> ObsidianJsonResult:
    """Read and parse ``file`` (an ``obsidian.json``); each vault's ``exists`` checks its
    folder. ``platform`` defaults to ``sys.platform``. A file over ``max_bytes`` bytes, a
    folder, a FIFO or an unreadable file gives :class:`ObsidianJsonUnreadable` (nothing
    blocks on a FIFO, nothing large is read). Raises nothing."""
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            return ObsidianJsonUnreadable(file, "not a regular file")
        if info.st_size > max_bytes:
            return ObsidianJsonUnreadable(
                file, f"{info.st_size} bytes, over the {max_bytes}-byte limit of a vault list"
            )
        with file.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except (FileNotFoundError, NotADirectoryError):
        return ObsidianJsonMissing(file)
    except OSError as error:
        return ObsidianJsonUnreadable(file, (error.strerror or type(error).__name__).lower())
    if len(raw) > max_bytes:  # grew between stat and read
        return ObsidianJsonUnreadable(
            file, f"over the {max_bytes}-byte limit of a vault list"
        )
    return parse_obsidian_json(
        raw, source=file, platform=platform or sys.platform, folder_exists=_is_dir
    )


def discover_vaults(
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> Discovery:
    """Find the vaults Obsidian knows on this machine (or on the one described by ``home``,
    ``env`` and ``platform``, which default to ``Path.home()``, ``os.environ`` and
    ``sys.platform``): read ``obsidian.json`` in each of :func:`obsidian_config_dirs`, merge
    the lists (a folder listed by two installs keeps its most recent entry), most recently
    opened first. Raises nothing; see :attr:`Discovery.files` for what each place gave."""
    platform = platform or sys.platform
    dirs = obsidian_config_dirs(
        home=home if home is not None else Path.home(),
        env=env if env is not None else os.environ,
        platform=platform,
    )
    files = tuple(read_obsidian_json(d / OBSIDIAN_JSON, platform=platform) for d in dirs)
    newest: dict[str, ObsidianVault] = {}
    for found in _most_recent_first(
        v for f in files if isinstance(f, ObsidianJsonRead) for v in f.vaults
    ):
        newest.setdefault(str(found.path), found)
    discovery = Discovery(_most_recent_first(newest.values()), files)
    log.debug(
        "obsidian.vaults_discovered", files=len(files), vaults=len(discovery.vaults),
        unreadable=len(discovery.unreadable),
    )
    return discovery


# --------------------------------------------------------------------------- helpers


def _most_recent_first(vaults: Iterable[ObsidianVault]) -> tuple[ObsidianVault, ...]:
    def key(vault: ObsidianVault) -> tuple[bool, float, str, str]:
        opened = vault.last_opened
        return (opened is None, -opened.timestamp() if opened else 0.0,
                vault.name.casefold(), str(vault.path))

    return tuple(sorted(vaults, key=key))


def _time_from_ms(value: object) -> datetime | None:
    """``ts`` (milliseconds since the epoch) as a UTC time; ``None`` for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        if not math.isfinite(value) or value < 0:
            return None
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):  # an integer too large for a float, too
        return None


def _folder_name(path_text: str, platform: str) -> str:
    pure = PureWindowsPath(path_text) if platform == "win32" else PurePosixPath(path_text)
    return pure.name or path_text


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long here, an embedded NUL
        return False


def _json_kind(value: object) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)
