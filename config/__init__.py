"""dreamd configuration: the settings model, its loading, and the ``config.toml`` template.

Every package may import ``config`` (the settings types and the error tree of
:mod:`config.errors`); only the composition root in ``daemon`` calls :func:`load_settings`.
"""

from config.errors import ConfigError, DreamdError, ProfileNotFoundError
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
