"""dreamd configuration: the settings model, its loading, and the ``config.toml`` template.

Every package may import ``config`` (the settings types and the error tree of
:mod:`config.errors`); only the composition root in ``daemon`` calls :func:`load_settings`.

The names below are loaded on first use (PEP 562): ``config.errors`` alone, which the
command line needs for every command, does not import pydantic (a few hundred ms).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from config.errors import ConfigError, DreamdError, ProfileNotFoundError

if TYPE_CHECKING:
    from config.loading import LoadedSettings, default_config_path, describe, load_settings
    from config.settings import Settings, state_dir, store_uri, vault_id
    from config.template import render_config

__all__ = [
    "ConfigError",
    "DreamdError",
    "LoadedSettings",
    "ProfileNotFoundError",
    "Settings",
    "default_config_path",
    "describe",
    "load_settings",
    "render_config",
    "state_dir",
    "store_uri",
    "vault_id",
]

_HOMES = {
    "LoadedSettings": "config.loading", "default_config_path": "config.loading",
    "describe": "config.loading", "load_settings": "config.loading",
    "Settings": "config.settings", "state_dir": "config.settings",
    "store_uri": "config.settings", "vault_id": "config.settings",
    "render_config": "config.template",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'config' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
