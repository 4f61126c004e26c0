"""The checks behind ``dreamd doctor``: each returns one :class:`Check`, none raises for what it
finds (only programming errors propagate).

Every check reads the file system at most; none writes, starts or stops anything. (The write
mode check also reads the process list and, only while the Obsidian app already runs, asks its
CLI ``version`` and ``vault info=path``, which launch nothing.)
:func:`run_checks` composes them from a settings loader, in the order a user would fix things:
configuration, vault, watch limit, disk, store, credentials written by hand, daemon, write
mode, service.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

from ccb.obsidian_cli import WriteRouter
from config.errors import ConfigError, DreamdError
from config.settings import Settings, state_dir, store_uri
from daemon.credential_ledger import read_credentials
from daemon.lock import current_holder
from daemon.service import ServicePlan, macos_privacy_note, plan_service

__all__ = [
    "CREDENTIALS_SHOWN",
    "INOTIFY_FAIL_SHARE",
    "INOTIFY_WARN_SHARE",
    "MAX_USER_WATCHES_PATH",
    "MIN_FREE_MIB",
    "SKIPPED_FOLDER_NAMES",
    "Check",
    "CheckStatus",
    "FolderCount",
    "check_config",
    "check_credentials",
    "check_daemon",
    "check_disk_space",
    "check_inotify_limit",
    "check_service",
    "check_store",
    "check_vault_readable",
    "check_write_mode",
    "count_watched_folders",
    "run_checks",
]

CheckStatus = Literal["ok", "warn", "fail"]

#: Linux's per-user inotify watch limit (one watch per watched folder).
MAX_USER_WATCHES_PATH = Path("/proc/sys/fs/inotify/max_user_watches")
#: Share of the watch limit above which doctor warns / fails. The limit is per user and
#: shared with editors, IDEs and sync tools, so half of it for one vault is already a lot.
INOTIFY_WARN_SHARE = 0.5
INOTIFY_FAIL_SHARE = 0.9
#: The value suggested when raising the limit: what VS Code and JetBrains document (2^19),
#: or four times the folder count when that is larger.
_SUGGESTED_WATCHES = 524_288
#: Folder names never watched at any depth (case 14 of the shared cases: .trash, node_modules;
#: dot-folders such as .git are skipped by their leading dot).
SKIPPED_FOLDER_NAMES = frozenset({".trash", "node_modules"})
#: Free space below which doctor fails: the brief's default, room for a LanceDB compaction
#: that rewrites a large table's fragments before the old ones are cleaned up.
MIN_FREE_MIB = 500
_MIB = 1024 * 1024
#: Files with a credential named in the doctor's line (our choice: one line stays readable;
#: ``dreamd check`` lists them all).
CREDENTIALS_SHOWN = 3


@dataclass(frozen=True)
class Check:
    """One doctor finding: ``name`` (short, stable), ``status``, ``detail`` (what was found)
    and ``hint`` (what to do about it; ``None`` when nothing is to be done)."""

    name: str
    status: CheckStatus
    detail: str
    hint: str | None = None


# --------------------------------------------------------------------------- config


def _load(load_settings: Callable[[], Settings]) -> tuple[Check, Settings | None]:
    try:
        settings = load_settings()
    except ConfigError as error:
        return Check("config", "fail", str(error),
                     "fix the file or variable named above; `dreamd config show` lists all "
                     "settings with their sources"), None
    where = settings.vault.path or "(vault.path not set)"
    return Check("config", "ok", f"valid; vault {where}"), settings


def check_config(load_settings: Callable[[], Settings]) -> Check:
    """Call ``load_settings``; a ConfigError becomes a ``fail`` with its message. Other errors
    propagate."""
    return _load(load_settings)[0]


# --------------------------------------------------------------------------- vault


def check_vault_readable(vault: Path, *, config_folder: str = ".obsidian") -> Check:
    """The vault exists, is a folder, can be listed, and holds ``config_folder`` (a missing one
    is a ``warn``: dreamd indexes any markdown folder)."""
    name = "vault"
    if not vault.exists():
        return Check(name, "fail", f"{vault} does not exist",
                     "check vault.path (`dreamd config show`) or mount the drive holding it")
    if not vault.is_dir():
        return Check(name, "fail", f"{vault} is not a folder", "vault.path must be a folder")
    try:
        with os.scandir(vault) as entries:
            count = sum(1 for _ in entries)
    except PermissionError as error:
        return Check(name, "fail", f"{vault} cannot be listed: {error.strerror}",
                     "give your user read access to the vault folder")
    except OSError as error:
        return Check(name, "fail", f"{vault} cannot be listed: {error.strerror or error}")
    if not (vault / config_folder).is_dir():
        return Check(name, "warn", f"{vault} has no {config_folder}/: not an Obsidian vault?",
                     "open the folder once as a vault in Obsidian, or ignore this if it is "
                     "a plain markdown folder")
    return Check(name, "ok", f"{vault}: {count} entries, {config_folder}/ present")


# --------------------------------------------------------------------------- inotify


@dataclass(frozen=True)
class FolderCount:
    """Folders under a vault (the vault included), symlinks not followed: ``watched`` ones and
    ``skipped`` ones (dot-folders, SKIPPED_FOLDER_NAMES, the config folder, and everything
    inside them)."""

    watched: int
    skipped: int


def count_watched_folders(vault: Path, *, config_folder: str = ".obsidian") -> FolderCount:
    """Count the folders dreamd watches (one inotify watch each) and those it skips.

    Measured with watchfiles 1.3.0: a recursive watch of the vault root puts a watch on
    *every* folder, skipped ones included, whatever ``watch_filter`` says (108 watches for 6
    note folders plus 102 under ``.git``/``node_modules``). Unreadable folders count as
    watched, their content as unknown.
    """
    config = vault / config_folder
    watched = skipped = 0
    stack: list[tuple[Path, bool]] = [(vault, False)]
    while stack:
        folder, is_skipped = stack.pop()
        if is_skipped:
            skipped += 1
        else:
            watched += 1
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    path = Path(entry.path)
                    skip = (is_skipped or entry.name.startswith(".")
                            or entry.name in SKIPPED_FOLDER_NAMES or path == config)
                    stack.append((path, skip))
        except OSError:
            continue
    return FolderCount(watched, skipped)


def _raise_limit_hint(folders: int) -> str:
    target = max(_SUGGESTED_WATCHES, 4 * folders)
    return (
        f"raise it: sudo sysctl fs.inotify.max_user_watches={target} ; to keep it after a "
        f"reboot: echo fs.inotify.max_user_watches={target} | sudo tee "
        f"/etc/sysctl.d/90-dreamd-inotify.conf && sudo sysctl --system"
    )


def check_inotify_limit(
    vault: Path,
    *,
    config_folder: str = ".obsidian",
    max_user_watches_path: Path = MAX_USER_WATCHES_PATH,
    platform: str | None = None,
    include_skipped: bool = False,
) -> Check:
    """Folders to watch against Linux's ``fs.inotify.max_user_watches``.

    ``warn`` above INOTIFY_WARN_SHARE of the limit, ``fail`` above INOTIFY_FAIL_SHARE, both
    with the sysctl command to raise it; ``ok (not Linux)`` on other platforms (``platform``
    defaults to ``sys.platform``); ``warn`` when the limit file cannot be read.
    ``include_skipped=True`` counts skipped folders too: set it when the watcher watches the
    vault root recursively (see :func:`count_watched_folders`).
    """
    name = "inotify"
    if not (platform or sys.platform).startswith("linux"):
        return Check(name, "ok", "ok (not Linux)")
    try:
        limit = int(max_user_watches_path.read_text(encoding="ascii").strip())
    except (OSError, ValueError) as error:
        return Check(name, "warn", f"cannot read {max_user_watches_path}: {error}",
                     "dreamd falls back to periodic rescans if watching fails")
    counted = count_watched_folders(vault, config_folder=config_folder)
    folders = counted.watched + (counted.skipped if include_skipped else 0)
    share = folders / limit if limit > 0 else float("inf")
    detail = (f"{folders} folders to watch, limit fs.inotify.max_user_watches={limit} "
              f"({share:.0%}, shared with every other program of this user)")
    if counted.skipped:
        verb = "counted" if include_skipped else "not counted"
        detail += f"; {counted.skipped} folders under .git, .trash, node_modules etc. {verb}"
    if share > INOTIFY_FAIL_SHARE:
        return Check(name, "fail", detail, _raise_limit_hint(folders))
    if share > INOTIFY_WARN_SHARE:
        return Check(name, "warn", detail, _raise_limit_hint(folders))
    return Check(name, "ok", detail)


# --------------------------------------------------------------------------- disk


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return path


def check_disk_space(path: Path, *, min_free_mib: int = MIN_FREE_MIB) -> Check:
    """Free space where ``path`` lives (its nearest existing ancestor if it does not exist yet):
    ``fail`` below ``min_free_mib`` MiB, ``ok`` otherwise."""
    name = "disk"
    where = _nearest_existing(path)
    try:
        free_mib = shutil.disk_usage(where).free // _MIB
    except OSError as error:
        return Check(name, "warn", f"cannot measure free space at {where}: {error}")
    detail = f"{free_mib} MiB free at {where}"
    if free_mib < min_free_mib:
        return Check(name, "fail", f"{detail} (need {min_free_mib} MiB)",
                     "free some space or move storage.data_dir to a larger disk")
    return Check(name, "ok", detail)


# --------------------------------------------------------------------------- store


def _local_store_path(uri: str) -> Path | None:
    """The folder of a local LanceDB URI (plain path or ``file://``); ``None`` when remote."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if len(parsed.scheme) > 1:  # s3://, gs://, az://, db:// …; one letter is a Windows drive
        return None
    return Path(uri).expanduser()


def check_store(uri: str, expected_vault: str,
                options: Mapping[str, str] | None = None) -> Check:
    """The store folder of ``uri`` is a readable and writable folder (``warn`` when it does not
    exist yet and can be created); a remote store (``s3://`` …) is asked for its table list
    with LanceDB's storage ``options`` (``storage.options``): ``ok`` when it answers, else
    ``fail`` naming the problem — endpoint, bucket, credentials — in one line, never a
    credential (:mod:`magma.remote_store`). ``expected_vault`` only names the vault in the
    messages: whether the store was built for it is checked by opening it
    (StoreMismatchError), which doctor does not do.
    """
    name = "store"
    path = _local_store_path(uri)
    if path is None:
        from magma.remote_store import probe_store  # (LanceDB: only for a remote store)

        found = probe_store(uri, options or {})
        if found is None:
            return Check(name, "ok", f"remote store {uri} answers (index of {expected_vault})")
        return Check(name, "fail", f"remote store {uri}: {found[0]}", found[1])
    if not path.exists():
        parent = _nearest_existing(path.parent)
        if parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
            return Check(name, "warn", f"{path} does not exist yet (no index for "
                         f"{expected_vault})", "`dreamd sync` or `dreamd run` builds it")
        return Check(name, "fail", f"{path} does not exist and {parent} is not writable",
                     "set storage.data_dir (or storage.uri) to a folder you can write")
    if not path.is_dir():
        return Check(name, "fail", f"{path} is not a folder", "point storage.uri at a folder")
    missing = [label for label, mode in (("readable", os.R_OK | os.X_OK), ("writable", os.W_OK))
               if not os.access(path, mode)]
    if missing:
        return Check(name, "fail", f"{path} is not {' or '.join(missing)}",
                     "fix the folder's permissions or move storage.data_dir")
    return Check(name, "ok", f"{path} (index of {expected_vault})")


# --------------------------------------------------------------------------- credentials


def check_credentials(state_folder: Path) -> Check:
    """Credentials the user wrote by hand into notes or memories, as the indexer recorded
    them when it withheld them from the index (:mod:`daemon.credential_ledger`; neither the
    vault nor the store is read): ``warn`` naming the files, lines and redacted previews —
    never a secret — and what to do; ``ok`` when there are none."""
    name = "credentials"
    records = sorted(read_credentials(state_folder).items())
    if not records:
        return Check(name, "ok", "none written into the indexed notes and memories")
    shown = "; ".join(f"{path} {record.describe()}"
                      for path, record in records[:CREDENTIALS_SHOWN])
    more = f"; and {len(records) - CREDENTIALS_SHOWN} more files" \
        if len(records) > CREDENTIALS_SHOWN else ""
    files = "1 file has" if len(records) == 1 else f"{len(records)} files have"
    return Check(name, "warn", f"{files} a credential written by hand: {shown}{more}",
                 "move them to a secret manager and remove them from the files; dreamd keeps "
                 "them out of its index, search and context meanwhile (`dreamd check` lists "
                 "them all)")


# --------------------------------------------------------------------------- write mode


def check_write_mode(router: WriteRouter) -> Check:
    """Which way dreamd writes its memory files (``obsidian.mode``) and why, looked up afresh
    (:meth:`ccb.obsidian_cli.WriteRouter.probe`: never launches Obsidian). ``warn`` when the
    CLI was asked for (``cli``, or ``auto`` with the app running) but cannot be used, with
    what to do; ``ok`` otherwise — writing directly is a valid choice."""
    mode = router.probe()
    return Check("write mode", "warn" if mode.hint else "ok", str(mode), mode.hint)


# --------------------------------------------------------------------------- daemon, service


def check_daemon(state_folder: Path) -> Check:
    """Whether a dreamd daemon holds this vault's lock (always ``ok``: both are normal)."""
    holder = current_holder(state_folder)
    if holder is None:
        return Check("daemon", "ok", "not running", "start it with `dreamd run` or as a service")
    who = f"pid {holder.pid}, started {holder.started_at}" if holder.pid else "pid unknown"
    return Check("daemon", "ok", f"running ({who})")


def check_service(plan: ServicePlan) -> Check:
    """Whether the unit/plist of ``plan`` is installed and matches what ``dreamd service
    install`` would write now; on macOS also the Full Disk Access caveat for protected
    folders. Not installed is ``ok``: running in a terminal is a valid choice."""
    name = "service"
    try:
        on_disk = plan.path.read_bytes()
    except FileNotFoundError:
        return Check(name, "ok", f"not installed ({plan.path})",
                     "to run in the background: dreamd service install")
    except OSError as error:
        return Check(name, "warn", f"cannot read {plan.path}: {error}")
    if on_disk != plan.content:
        return Check(name, "warn", f"{plan.path} differs from the current settings or "
                     f"interpreter", "reinstall: dreamd service install")
    if plan.kind == "launchd":
        note = macos_privacy_note(plan.vault, home=plan.home, python=plan.python)
        if note:
            return Check(name, "warn", f"installed: {plan.path}", note)
    return Check(name, "ok", f"installed: {plan.path}")


# --------------------------------------------------------------------------- all


def run_checks(
    load_settings: Callable[[], Settings],
    *,
    config_path: Path | None = None,
    env_name: str | None = None,
    platform: str | None = None,
    max_user_watches_path: Path = MAX_USER_WATCHES_PATH,
    include_skipped_folders: bool = False,
    write_router: Callable[[Settings], WriteRouter] | None = None,
) -> list[Check]:
    """Every check, in fixing order. ``config_path``/``env_name`` are the ones the service
    would be installed with (to tell whether an installed unit is current); ``platform``
    defaults to ``sys.platform``; ``include_skipped_folders``: see :func:`check_inotify_limit`;
    ``write_router`` builds the vault's write router from the settings (the composition
    root's), for the write mode check (:func:`check_write_mode`; left out without it).
    When the config or the vault path fails, the checks that
    need them are left out (the failing check says why)."""
    platform = platform or sys.platform
    config_check, settings = _load(load_settings)
    checks = [config_check]
    if settings is None:
        return checks
    vault = settings.vault.path
    if vault is None:
        checks.append(Check("vault", "fail", "vault.path is not set",
                            "run `dreamd init <vault>` or set DREAMD_VAULT__PATH"))
        return checks
    folder = settings.vault.config_folder
    vault_check = check_vault_readable(vault, config_folder=folder)
    checks.append(vault_check)
    if vault_check.status != "fail":
        checks.append(check_inotify_limit(vault, config_folder=folder, platform=platform,
                                          max_user_watches_path=max_user_watches_path,
                                          include_skipped=include_skipped_folders))
    state = state_dir(settings)
    checks.append(check_disk_space(state))
    checks.append(check_store(store_uri(settings), str(vault), settings.storage.options))
    checks.append(check_credentials(state))
    checks.append(check_daemon(state))
    if write_router is not None and vault_check.status != "fail":
        checks.append(check_write_mode(write_router(settings)))
    try:
        plan = plan_service(vault, config_path=config_path, env_name=env_name,
                            platform=platform)
    except DreamdError as error:
        checks.append(Check("service", "ok", str(error)))
    else:
        checks.append(check_service(plan))
    return checks
