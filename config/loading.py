"""Loading settings: defaults < config file (``[default]`` < profile) < ``DREAMD_*`` < CLI flags.

Only the composition root (``daemon``) calls :func:`load_settings`. It returns the validated
:class:`~config.settings.Settings` together with where every leaf value came from, so
``dreamd config show`` can say ``embedding.batch_size = 32 (env:DREAMD_EMBEDDING__BATCH_SIZE)``.

What pydantic-settings (2.16) does here, and what this module adds:

- The files are read by ``TomlConfigSettingsSource`` / ``JsonConfigSettingsSource``. The layers
  are merged (deeply, higher over lower) and validated by ``BaseSettings`` itself: the library's
  public hook ``Settings.settings_customise_sources`` hands it the prepared layers, highest
  first (:data:`config.settings.PREPARED_SOURCES`).
- The environment is read here, not by the library's ``EnvSettingsSource``: only ``DREAMD_*``
  variables (``__`` for nesting, JSON for lists and tables), from the ``environ`` mapping given.
  With an ``alias_generator`` the library's env source reads every field's alias *without* the
  prefix (its documentation: "env_prefix does not apply to fields with alias"), so a shell's
  ``VAULT``, ``SYNC`` or ``LOGGING`` would have been taken as configuration.
- Added as small pure functions: choosing the profile table (:func:`split_profiles`; the library's
  ``toml_table_header`` raises a bare ``KeyError`` for a missing table and reads one table only),
  expanding the seed's dotted keys (:func:`expand_dotted`), normalising camelCase and seed aliases
  to field names (:func:`normalise_keys`, so provenance keys are uniform), and attributing each
  leaf and each validation error to its source.

Every failure is a :class:`~config.errors.ConfigError` whose message names the dotted key, the
value, the reason and the source (file and table, environment variable, or CLI override).
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias, Union, get_args, get_origin

import platformdirs
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    JsonConfigSettingsSource,
    PydanticBaseSettingsSource,
    TomlConfigSettingsSource,
)

from config.errors import ConfigError, ProfileNotFoundError
from config.settings import (
    APP_NAME,
    ENV_PREFIX,
    PREPARED_SOURCES,
    Settings,
    shown_storage_options,
)

__all__ = [
    "CLI_LABEL",
    "CONFIG_PATH_VAR",
    "DEFAULT_LABEL",
    "DEFAULT_TABLE",
    "PROFILE_VAR",
    "LoadedSettings",
    "UnknownKey",
    "default_config_path",
    "describe",
    "expand_dotted",
    "flatten",
    "leaf_keys",
    "load_settings",
    "normalise_keys",
    "split_profiles",
]

#: Environment variable naming the profile (``--env`` wins over it). Not a setting.
PROFILE_VAR = "DREAMD_ENV"
#: Environment variable naming the config file (``--config`` wins over it). Not a setting.
CONFIG_PATH_VAR = "DREAMD_CONFIG"
#: Table of a config file that holds the values of every profile.
DEFAULT_TABLE = "default"
#: Key of the seed's JSON layout that holds the profiles (``{"environments": {"production": …}}``).
SEED_PROFILES_KEY = "environments"
#: Source label of a value nobody set.
DEFAULT_LABEL = "default"
#: Source label of a value set by a CLI flag (``overrides``).
CLI_LABEL = "cli"

_LOADER_VARS = frozenset({PROFILE_VAR, CONFIG_PATH_VAR})

Tree: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class LoadedSettings:
    """Validated settings plus provenance.

    ``sources`` maps every dotted snake_case leaf key (``embedding.batch_size``) to
    its source label: ``"default"``, ``"file:<path> [default]"``, ``"file:<path> [<profile>]"``,
    ``"env:DREAMD_X__Y"`` or ``"cli"``. ``ignored_env_vars`` lists ``DREAMD_*`` variables that
    name no setting (e.g. a typo in the section name), for ``dreamd config validate`` to warn.
    """

    settings: Settings
    sources: Mapping[str, str]
    config_path: Path
    config_exists: bool
    profile: str | None
    ignored_env_vars: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class UnknownKey:
    """A key that names no setting: its dotted path and the names valid at that level."""

    key: str
    known: tuple[str, ...]

    def hint(self) -> str:
        """`` (did you mean 'x'?)`` when a known name is close, else ``""``."""
        last = self.key.rsplit(".", 1)[-1]
        close = difflib.get_close_matches(last, self.known, n=1)
        return f" (did you mean '{close[0]}'?)" if close else ""


@dataclass(frozen=True)
class _Layer:
    """One source's data (normalised, nested) and the label of each of its leaves."""

    data: Tree
    labels: Mapping[str, str]


class _LayerSource(PydanticBaseSettingsSource):
    """A settings source that hands pydantic-settings one already-prepared layer."""

    def __init__(self, settings_cls: type[BaseSettings], data: Tree) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns the whole layer

    def __call__(self) -> dict[str, Any]:
        return self._data


# --------------------------------------------------------------------------- pure helpers


def default_config_path() -> Path:
    """``platformdirs.user_config_dir("dreamd") / "config.toml"``."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def _deep_merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> Tree:
    merged = dict(base)
    for key, value in update.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = _deep_merge(old, value)
        else:
            merged[key] = value
    return merged


def expand_dotted(data: Mapping[str, Any]) -> Tree:
    """``{"a.b": 1, "a": {"c.d": 2}}`` -> ``{"a": {"b": 1, "c": {"d": 2}}}`` (nested maps too).

    Later keys win on a collision; maps are merged, not replaced.
    """
    result: Tree = {}
    for key, value in data.items():
        expanded = expand_dotted(value) if isinstance(value, Mapping) else value
        parts = str(key).split(".")
        for part in reversed(parts[1:]):
            expanded = {part: expanded}
        result = _deep_merge(result, {parts[0]: expanded})
    return result


def split_profiles(raw: Mapping[str, Any]) -> tuple[Tree, dict[str, Tree]]:
    """Split a config file's data into its default layer and its profiles (not yet expanded).

    Two layouts: ``{"default": {...}, "<profile>": {...}, ...}`` (the TOML layout; every
    top-level key other than ``default`` is a profile), or plain top-level sections with an
    optional ``"environments": {"<profile>": {...}}`` (the seed's JSON layout; without it there
    are no profiles). Raises ConfigError (without a file name; the caller adds it) when a table
    that must be a map is not one.
    """
    if DEFAULT_TABLE in raw:
        default, profiles = raw[DEFAULT_TABLE], {k: v for k, v in raw.items() if k != DEFAULT_TABLE}
    else:
        default = {k: v for k, v in raw.items() if k != SEED_PROFILES_KEY}
        profiles = raw.get(SEED_PROFILES_KEY, {})
        if not isinstance(profiles, Mapping):
            raise ConfigError(f"'{SEED_PROFILES_KEY}' must be a table of profiles")
    if not isinstance(default, Mapping):
        raise ConfigError(f"[{DEFAULT_TABLE}] must be a table")
    for name, table in profiles.items():
        if not isinstance(table, Mapping):
            hint = (
                f" (a profile table; with a [{DEFAULT_TABLE}] table every other top-level key "
                "is a profile)"
            )
            raise ConfigError(f"[{name}] must be a table{hint}")
    return dict(default), {str(name): dict(table) for name, table in profiles.items()}


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(model class, is a list of it) for ``Model``, ``Model | None`` or ``list[Model]``."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        return _model_of(args[0]) if len(args) == 1 else (None, False)
    if origin is list:
        inner, _ = _model_of(get_args(annotation)[0])
        return inner, inner is not None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    return None, False


def _accepted_names(name: str, info: FieldInfo) -> list[str]:
    names = [name]
    if info.alias:
        names.append(info.alias)
    choices = getattr(info.validation_alias, "choices", None)
    if isinstance(info.validation_alias, str):
        names.append(info.validation_alias)
    elif choices:
        names.extend(choice for choice in choices if isinstance(choice, str))
    return names


def _resolve_field(
    model: type[BaseModel], key: str, case_sensitive: bool
) -> tuple[str, FieldInfo] | None:
    wanted = key if case_sensitive else key.lower()
    for name, info in model.model_fields.items():
        for accepted in _accepted_names(name, info):
            if (accepted if case_sensitive else accepted.lower()) == wanted:
                return name, info
    return None


def _is_list_field(info: FieldInfo) -> bool:
    annotation = info.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        return any(get_origin(arg) is list for arg in get_args(annotation))
    return get_origin(annotation) is list


def normalise_keys(
    model: type[BaseModel],
    data: Mapping[str, Any],
    *,
    case_sensitive: bool = True,
    decode_json_lists: bool = False,
    _prefix: str = "",
) -> tuple[Tree, list[UnknownKey]]:
    """Rename every key of nested ``data`` to its field name in ``model``; collect unknown keys.

    Accepts field names, camelCase aliases and seed spellings (``timeout`` for ``timeout_ms``),
    recursing into sub-models and lists of sub-models. Keys naming no field are dropped from the
    result and returned as :class:`UnknownKey` (dotted, snake_case path). With
    ``decode_json_lists`` a string given for a list field is decoded as JSON when it looks like
    a JSON array (CLI ``--set vault.include='["a/**"]'``).
    """
    result: Tree = {}
    unknown: list[UnknownKey] = []
    for key, value in data.items():
        resolved = _resolve_field(model, str(key), case_sensitive)
        if resolved is None:
            unknown.append(UnknownKey(f"{_prefix}{key}", tuple(model.model_fields)))
            continue
        name, info = resolved
        sub_model, is_list = _model_of(info.annotation)
        path = f"{_prefix}{name}"
        if (
            decode_json_lists
            and isinstance(value, str)
            and _is_list_field(info)
            and value.lstrip().startswith("[")
            and _is_json(value)
        ):
            value = json.loads(value)  # else validation reports the string as given
        if sub_model is not None and not is_list and isinstance(value, Mapping):
            value, nested = normalise_keys(
                sub_model, value, case_sensitive=case_sensitive,
                decode_json_lists=decode_json_lists, _prefix=f"{path}.",
            )
            unknown.extend(nested)
        elif sub_model is not None and is_list and isinstance(value, list):
            items: list[Any] = []
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    item, nested = normalise_keys(
                        sub_model, item, case_sensitive=case_sensitive,
                        decode_json_lists=decode_json_lists, _prefix=f"{path}.{index}.",
                    )
                    unknown.extend(nested)
                items.append(item)
            value = items
        old = result.get(name)
        both_maps = isinstance(old, Mapping) and isinstance(value, Mapping)
        result[name] = _deep_merge(old, value) if both_maps else value  # type: ignore[arg-type]
    return result, unknown


def flatten(data: Mapping[str, Any], _prefix: str = "") -> dict[str, Any]:
    """Nested maps -> ``{"dotted.key": leaf}``; lists and scalars are leaves, empty maps vanish."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{_prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, f"{prefix}{name}.")
        elif isinstance(value, list) and any(isinstance(item, BaseModel) for item in value):
            yield f"{prefix}{name}", [
                item.model_dump() if isinstance(item, BaseModel) else item for item in value
            ]
        else:
            yield f"{prefix}{name}", value


def leaf_keys(model: type[BaseModel] = Settings) -> list[str]:
    """Every dotted leaf key of ``model``, in model order (lists of sub-models are one leaf)."""
    keys: list[str] = []
    for name, info in model.model_fields.items():
        sub_model, is_list = _model_of(info.annotation)
        if sub_model is not None and not is_list:
            keys.extend(f"{name}.{key}" for key in leaf_keys(sub_model))
        else:
            keys.append(name)
    return keys


def _source_of(key: str, labels: Mapping[str, str]) -> str:
    """Label of the longest set key that is ``key`` or one of its parents; for a table of
    free keys (``storage.options``) the labels of the keys set inside it; else ``default``."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        label = labels.get(".".join(parts[:end]))
        if label is not None:
            return label
    inside = dict.fromkeys(label for name, label in labels.items()
                           if name.startswith(key + "."))
    return " + ".join(inside) or DEFAULT_LABEL


# --------------------------------------------------------------------------- messages


def _where(label: str) -> str:
    if label.startswith("file:"):
        return label.removeprefix("file:")
    if label.startswith("env:"):
        return f"environment variable {label.removeprefix('env:')}"
    if label == CLI_LABEL:
        return "command-line override"
    return label


def _unknown_error(unknown: Sequence[UnknownKey], label_of: Mapping[str, str]) -> ConfigError:
    parts = [
        f"{_where(label_of.get(item.key, DEFAULT_LABEL))}: unknown key '{item.key}'{item.hint()}"
        for item in unknown
    ]
    return ConfigError("config: " + "; ".join(parts))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _validation_error(error: ValidationError, labels: Mapping[str, str]) -> ConfigError:
    parts: list[str] = []
    for item in error.errors(include_url=False):
        key = ".".join(str(part) for part in item["loc"])
        reason = str(item["msg"]).removeprefix("Value error, ")
        if not key:  # a rule across sections: its message names the keys and their sources
            parts.append(reason)
            continue
        under = sorted({label for k, label in labels.items() if k.startswith(f"{key}.")})
        label = _source_of(key, labels)
        if label == DEFAULT_LABEL and under:
            where = " and ".join(_where(one) for one in under)
        else:
            where = _where(label)
        if item["type"] == "extra_forbidden":
            parts.append(f"{where}: unknown key '{key}'")
        elif isinstance(item["input"], Mapping):
            parts.append(f"{where}: {key}: {reason}")
        else:
            parts.append(f"{where}: {key} = {_short(item['input'])}: {reason}")
    return ConfigError("config: " + "; ".join(parts))


# --------------------------------------------------------------------------- the layers


def _read_file(path: Path) -> Tree:
    """The raw data of a TOML or JSON config file. Raises ConfigError (with line) on failure."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return dict(TomlConfigSettingsSource(Settings, toml_file=path).toml_data)
        if suffix == ".json":
            data = JsonConfigSettingsSource(Settings, json_file=path).json_data
            return dict(data)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config: {path}: invalid TOML: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"config: {path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config: {path}: cannot read: {exc}") from exc
    except (TypeError, AttributeError) as exc:  # JSON whose top level is not an object
        raise ConfigError(f"config: {path}: the top level must be an object of sections") from exc
    raise ConfigError(f"config: {path}: unsupported format '{path.suffix}' (use .toml or .json)")


def _file_layers(path: Path, profile: str | None) -> list[_Layer]:
    """Default layer, then the profile's layer. Raises ConfigError, ProfileNotFoundError."""
    raw = _read_file(path)
    try:
        default_raw, profiles_raw = split_profiles(raw)
    except ConfigError as exc:
        raise ConfigError(f"config: {path}: {exc}") from exc
    tables = {DEFAULT_TABLE: default_raw, **profiles_raw}
    normalised: dict[str, Tree] = {}
    unknown: list[UnknownKey] = []
    label_of: dict[str, str] = {}
    for table, data in tables.items():  # every table, requested or not: typos never pass
        tree, bad = normalise_keys(Settings, expand_dotted(data))
        normalised[table] = tree
        unknown.extend(bad)
        label_of.update({item.key: f"file:{path} [{table}]" for item in bad})
    if unknown:
        raise _unknown_error(unknown, label_of)
    if profile is not None and profile != DEFAULT_TABLE and profile not in profiles_raw:
        available = ", ".join(sorted(profiles_raw)) or "none"
        raise ProfileNotFoundError(
            f"config: profile '{profile}' not found in {path} (available profiles: {available})"
        )
    chosen = [DEFAULT_TABLE] + ([profile] if profile and profile != DEFAULT_TABLE else [])
    return [
        _Layer(
            normalised[table],
            dict.fromkeys(flatten(normalised[table]), f"file:{path} [{table}]"),
        )
        for table in chosen
    ]


def _env_var_paths(environ: Mapping[str, str]) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """``DREAMD_*`` variables -> their normalised key path; and those naming no setting."""
    paths: dict[str, tuple[str, ...]] = {}
    ignored: list[str] = []
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX) or name.upper() in _LOADER_VARS:
            continue
        segments = name[len(ENV_PREFIX) :].split("__")
        model: type[BaseModel] | None = Settings
        path: list[str] = []
        for segment in segments:
            resolved = _resolve_field(model, segment, False) if model is not None else None
            if resolved is None:
                path.append(segment.lower())
                model = None
                continue
            path.append(resolved[0])
            sub_model, is_list = _model_of(resolved[1].annotation)
            model = None if is_list else sub_model
        paths[name] = tuple(path)
        if _resolve_field(Settings, segments[0], False) is None:
            ignored.append(name)
    return paths, ignored


def _env_tree(environ: Mapping[str, str], paths: Mapping[str, tuple[str, ...]],
              ignored: Sequence[str]) -> Tree:
    """The ``DREAMD_*`` variables naming a setting, nested by ``__`` (raw, lower-cased
    segments; :func:`normalise_keys` resolves them). A value given for a list or a table is
    JSON, as pydantic-settings reads it. Raises ConfigError naming the variable for JSON that
    does not parse."""
    tree: Tree = {}
    for name in paths:
        if name in ignored:
            continue
        segments = [segment.lower() for segment in name[len(ENV_PREFIX):].split("__")]
        value: Any = environ[name]
        if _takes_json(segments) and value.lstrip()[:1] in ("[", "{"):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"config: environment variable {name}: invalid JSON ({exc})") from exc
        for segment in reversed(segments):
            value = {segment: value}
        tree = _deep_merge(tree, value)
    return tree


def _takes_json(segments: Sequence[str]) -> bool:
    """Does the setting these ``DREAMD_`` segments name hold a list or a table?"""
    model: type[BaseModel] | None = Settings
    info: FieldInfo | None = None
    for segment in segments:
        resolved = _resolve_field(model, segment, False) if model is not None else None
        if resolved is None:
            return False
        info = resolved[1]
        sub_model, is_list = _model_of(info.annotation)
        model = None if is_list else sub_model
    if info is None:
        return False
    sub_model, _ = _model_of(info.annotation)
    origin = get_origin(info.annotation)
    return sub_model is not None or _is_list_field(info) or origin is dict or (
        origin in (Union, types.UnionType)
        and any(get_origin(arg) is dict for arg in get_args(info.annotation)))


def _env_layer(environ: Mapping[str, str]) -> tuple[_Layer, list[str]]:
    """The ``DREAMD_*`` layer (module docstring). Raises ConfigError."""
    paths, ignored = _env_var_paths(environ)
    data, unknown = normalise_keys(Settings, _env_tree(environ, paths, ignored),
                                   case_sensitive=False)

    def label(key: str) -> str:
        parts = tuple(key.split("."))
        best = max(
            (name for name, path in paths.items() if parts[: len(path)] == path),
            key=lambda name: len(paths[name]),
            default=ENV_PREFIX + "__".join(parts).upper(),
        )
        return f"env:{best}"

    if unknown:
        raise _unknown_error(unknown, {item.key: label(item.key) for item in unknown})
    return _Layer(data, {key: label(key) for key in flatten(data)}), ignored


def environment_source(environ: Mapping[str, str]) -> PydanticBaseSettingsSource:
    """The ``DREAMD_*`` variables of ``environ`` as a settings source (what a bare
    ``Settings()`` reads). Raises ConfigError."""
    return _LayerSource(Settings, _env_layer(environ)[0].data)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _cli_layer(overrides: Mapping[str, object]) -> _Layer:
    """CLI flags as dotted keys (``{"vault.path": "/x"}``); ``None`` means "flag not given"."""
    given = {key: value for key, value in overrides.items() if value is not None}
    data, unknown = normalise_keys(Settings, expand_dotted(given), decode_json_lists=True)
    if unknown:
        raise _unknown_error(unknown, dict.fromkeys((item.key for item in unknown), CLI_LABEL))
    return _Layer(data, dict.fromkeys(flatten(data), CLI_LABEL))


# --------------------------------------------------------------------------- entry points


def _nonempty(value: str | None) -> str | None:
    return value if value else None


def load_settings(
    *,
    config_path: Path | None = None,
    env_name: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> LoadedSettings:
    """Load settings from defaults < config file < ``DREAMD_*`` variables < ``overrides``.

    ``config_path`` wins over ``$DREAMD_CONFIG``, which wins over :func:`default_config_path`.
    A ``config_path`` that does not exist is an error; ``$DREAMD_CONFIG`` and the default only
    say where the file lives (``dreamd init`` writes it there), so a missing one means defaults.
    ``env_name`` wins over ``$DREAMD_ENV``; with neither, only the file's default table applies.
    ``environ`` defaults to ``os.environ``. ``overrides`` are dotted keys
    (``{"embedding.batch_size": 32}``); ``None`` values are ignored (flag not given).

    Raises ProfileNotFoundError when the profile is not in the file (or there is no file), and
    ConfigError for an unreadable file, bad syntax (with line), an unknown key, or a value that
    fails validation (naming key, value, reason and source).
    """
    if environ is None:
        environ = os.environ
    located = _nonempty(environ.get(CONFIG_PATH_VAR))
    if config_path is not None:
        path = Path(config_path).expanduser()
    elif located is not None:
        path = Path(located).expanduser()
    else:
        path = default_config_path()
    exists = path.is_file()
    if (config_path is not None and not exists) or (path.exists() and not exists):
        what = "is not a file" if path.exists() else "does not exist"
        raise ConfigError(f"config: {path}: config file {what}")
    profile = env_name if env_name else _nonempty(environ.get(PROFILE_VAR))

    layers: list[_Layer] = []
    if exists:
        layers.extend(_file_layers(path, profile))
    elif profile is not None and profile != DEFAULT_TABLE:
        raise ProfileNotFoundError(
            f"config: profile '{profile}' not found: no config file at {path} "
            "(available profiles: none)"
        )
    env, ignored = _env_layer(environ)
    layers.append(env)
    layers.append(_cli_layer(overrides or {}))

    labels: dict[str, str] = {}
    for layer in layers:  # lowest first, so higher layers overwrite
        labels.update(layer.labels)
    sources = tuple(_LayerSource(Settings, layer.data) for layer in reversed(layers))
    prepared = PREPARED_SOURCES.set(sources)
    try:
        settings = Settings()
    except ValidationError as exc:
        raise _validation_error(exc, labels) from exc
    finally:
        PREPARED_SOURCES.reset(prepared)

    all_sources = {key: _source_of(key, labels) for key in leaf_keys(Settings)}
    return LoadedSettings(
        settings=settings,
        sources=types.MappingProxyType(all_sources),
        config_path=path,
        config_exists=exists,
        profile=profile,
        ignored_env_vars=tuple(ignored),
    )


def describe(loaded: LoadedSettings) -> list[tuple[str, object, str]]:
    """``[(dotted key, value, source label), ...]`` for every leaf, in model order.

    Lists of sub-models (``retrieval.progressive_search.stages``) are one leaf whose value is a
    list of plain dicts. ``storage.options`` is shown with its credentials hidden
    (:func:`config.settings.shown_storage_options`): this is what ``config show`` prints.
    """
    return [
        (key, shown_storage_options(value) if key == "storage.options" else value,
         loaded.sources.get(key, DEFAULT_LABEL))
        for key, value in _leaves(loaded.settings)
    ]
