"""Which vault a command line means when neither it nor the settings name one.

The rule (README, "Which vault a command works on"): the vault that holds the working
folder, indexed or a folder Obsidian keeps as a vault (it holds ``.obsidian/``) and not
indexed yet (the innermost, when one vault lies inside another); else the only vault
indexed so far, said on stderr; else none, and the error lists the indexed vaults. Pure
apart from :func:`indexed_vaults`, which reads the state folders' ``vault.json``, and
:func:`obsidian_vault`, which looks for ``.obsidian/`` from the working folder up.

Standard library only: :mod:`daemon.client` checks a daemon's answer against this rule
before anything heavy is imported.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["OBSIDIAN_FOLDER", "VAULT_FILE", "VaultChoice", "choose_vault", "home_folder",
           "indexed_vaults", "no_vault_chosen", "obsidian_vault", "working_folder"]

#: The file in each state folder naming the vault it belongs to.
VAULT_FILE = "vault.json"
#: Obsidian's settings folder: the folder that holds it is a vault, indexed or not.
OBSIDIAN_FOLDER = ".obsidian"


@dataclass(frozen=True, slots=True)
class VaultChoice:
    """The vault chosen, and why: ``"cwd"`` (it holds the working folder: an indexed vault,
    or a folder holding ``.obsidian/``) or ``"only"`` (the only vault indexed, the working
    folder outside it and in no folder holding ``.obsidian/``)."""

    vault: Path
    why: Literal["cwd", "only"]

    @property
    def note(self) -> str | None:
        """One line for stderr when the choice may surprise (``"only"``), else ``None``."""
        if self.why == "cwd":
            return None
        return (f"dreamd: no vault given: using {self.vault}, the only vault indexed "
                "(--vault VAULT or vault.path chooses another)")


def working_folder() -> Path | None:
    """The working folder, ``None`` when it has none (deleted since the shell entered it)."""
    try:
        return Path.cwd()
    except OSError:
        return None


def home_folder() -> Path | None:
    """The user's home folder, resolved (``HOME``; the working folder is a resolved path),
    ``None`` when there is none."""
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


def obsidian_vault(cwd: Path | None, home: Path | None = None) -> Path | None:
    """The nearest of ``cwd`` and its parents that holds a folder :data:`OBSIDIAN_FOLDER`
    (a vault Obsidian opened, indexed or not), else ``None``. The home folder (``home``,
    :func:`home_folder` when not given) and the root are passed over: they hold every
    folder, so a ``.obsidian/`` there would take every command run anywhere below, where
    the only vault indexed was meant (``dreamd sync ~`` or ``--vault ~`` still chooses it)."""
    outer = {home if home is not None else home_folder()}
    for folder in () if cwd is None else (cwd, *cwd.parents):
        if folder in outer or folder.parent == folder:
            continue
        try:
            if (folder / OBSIDIAN_FOLDER).is_dir():
                return folder
        except OSError:
            continue
    return None


def choose_vault(indexed: Sequence[Path], cwd: Path | None,
                 opened: Path | None = None) -> VaultChoice | None:
    """The folder among ``indexed`` (absolute, resolved vault folders) and ``opened`` (a
    folder holding ``.obsidian/``, :func:`obsidian_vault`) that holds ``cwd`` (the
    innermost; ``None``: no working folder, :func:`working_folder`), else the only one
    indexed, else ``None``. Pure."""
    candidates = [*indexed, *([] if opened is None else [opened])]
    holding = [] if cwd is None else [
        vault for vault in candidates if vault == cwd or vault in cwd.parents]
    if holding:
        return VaultChoice(max(holding, key=lambda vault: len(vault.parts)), "cwd")
    if len(indexed) == 1:
        return VaultChoice(indexed[0], "only")
    return None


def no_vault_chosen(indexed: Sequence[Path], cwd: Path | None, config_path: Path) -> str:
    """The error when :func:`choose_vault` chose none: the indexed vaults as the options that
    name them (``--vault /home/me/Notes or --vault '/home/me/My Work'``), else how to give
    the first. Pure."""
    if not indexed:
        return ("no vault given, and none is indexed yet: give the vault's folder (dreamd sync "
                "VAULT, or --vault VAULT with any command), run the command inside a folder "
                f"Obsidian keeps as a vault, or set vault.path in {config_path} (dreamd init "
                "VAULT writes one)")
    where = ("the working folder no longer exists" if cwd is None
             else f"{cwd} is in no indexed vault")
    options = " or ".join(f"--vault {shlex.quote(str(vault))}" for vault in indexed)
    return (f"no vault given, and {where}: choose one of the indexed vaults "
            f"with {options}, run the command inside its folder, or set vault.path in "
            f"{config_path} (dreamd init VAULT writes one)")


def indexed_vaults(data_dir: Path) -> list[Path]:
    """Vault folders that have a state dir under ``<data_dir>/vaults/`` (in the order of the
    state folders' names); an unreadable record is skipped."""
    vaults: list[Path] = []
    root = data_dir / "vaults"
    try:
        states = sorted(root.iterdir()) if root.is_dir() else []
    except OSError:
        return vaults
    for state in states:
        try:
            data = json.loads((state / VAULT_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("path"), str):
            vaults.append(Path(data["path"]))
    return vaults
