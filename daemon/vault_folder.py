"""The vault folder a command works on: its settings loaded, the folder resolved
(``vault.path``, else :mod:`daemon.vault_choice`'s rule) and checked, before LanceDB, numpy
or the model is imported. A path that is not a vault folder is refused once the settings are
read, not after importing the application: ``dreamd search kiln --vault /nope`` took 2.2-2.8 s
instead of 8.4-9.4 s on a 2-core machine at load 13 (three runs each).
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path

from config import LoadedSettings, load_settings
from config.errors import ConfigError, VaultError
from daemon.vault_choice import (
    VaultChoice,
    choose_vault,
    indexed_vaults,
    no_vault_chosen,
    obsidian_vault,
    working_folder,
)

__all__ = ["load", "require_vault_folder", "resolve_vault", "vault_choice"]


def load(
    config_path: Path | None, env_name: str | None, overrides: Mapping[str, object]
) -> LoadedSettings:
    """Load settings from every source (defaults < file < ``DREAMD_*`` < ``overrides``)."""
    cleaned = {
        key: str(Path(value).expanduser().resolve()) if isinstance(value, Path) else value
        for key, value in overrides.items()
    }
    return load_settings(config_path=config_path, env_name=env_name, overrides=cleaned)


def require_vault_folder(root: Path, action: str) -> None:
    """Raise ``VaultError`` (one line: ``<action> <root>: …`` and what to do) unless ``root``
    is a folder this process can look into. Reads nothing but the folder's own status."""
    try:
        status = root.stat()
    except FileNotFoundError:
        raise VaultError(f"{action} {root}: vault folder is missing (no such folder); give the "
                         "folder that holds your notes, or mount the drive it is on; nothing "
                         "was created") from None
    except OSError as error:
        raise VaultError(f"{action} {root}: the vault folder cannot be read "
                         f"({error.strerror or error}); give your user access to it") from None
    if not stat.S_ISDIR(status.st_mode):
        raise VaultError(f"{action} {root}: not a folder; give the vault's folder (the one that "
                         "holds your notes), not a file in it; nothing was created")


def vault_choice(loaded: LoadedSettings) -> VaultChoice | None:
    """How :meth:`daemon.app.App.create` chooses the vault of ``loaded`` when the settings name none
    (``None`` when they name it). Raises like :func:`resolve_vault`."""
    return resolve_vault(loaded)[1]


def resolve_vault(loaded: LoadedSettings) -> tuple[Path, VaultChoice | None]:
    """The vault folder of ``loaded`` and, when the settings name none, how it was chosen
    (:func:`daemon.vault_choice.choose_vault`: the vault holding the working folder, indexed
    or holding ``.obsidian/``, else the only one indexed). Raises ``ConfigError`` listing the
    indexed vaults when neither holds."""
    path = loaded.settings.vault.path
    if path is not None:
        source = loaded.sources.get("vault.path", "")
        if not path.is_absolute() and source.startswith("file:"):
            path = loaded.config_path.parent / path
        return path.expanduser().resolve(), None
    vaults = indexed_vaults(loaded.settings.storage.data_dir)
    cwd = working_folder()
    choice = choose_vault(vaults, cwd, obsidian_vault(cwd))
    if choice is not None:
        return choice.vault, choice
    raise ConfigError(no_vault_chosen(vaults, cwd, loaded.config_path))
