"""Precedence of the config sources, pair by pair: each case asserts the value AND its source."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import LoadedSettings, default_config_path, load_settings

KEY = "embedding.batch_size"
ENV = {"DREAMD_EMBEDDING__BATCH_SIZE": "32"}
ENV_LABEL = "env:DREAMD_EMBEDDING__BATCH_SIZE"
WITH_PROFILE = """
[default]
embedding.batch_size = 16

[production]
embedding.batch_size = 8
"""
DEFAULT_ONLY = """
[default.embedding]
batch_size = 16
"""


def _load(
    tmp_path: Path,
    file_text: str | None,
    *,
    profile: str | None = None,
    environ: dict[str, str] | None = None,
    overrides: dict[str, object] | None = None,
) -> tuple[LoadedSettings, Path]:
    path = tmp_path / "config.toml"
    if file_text is None:  # no file: the default location, which does not exist
        return load_settings(environ=environ or {}, overrides=overrides), default_config_path()
    path.write_text(file_text, encoding="utf-8")
    loaded = load_settings(
        config_path=path, env_name=profile, environ=environ or {}, overrides=overrides
    )
    return loaded, path


@pytest.mark.parametrize(
    ("file_text", "profile", "environ", "overrides", "value", "label"),
    [
        pytest.param(DEFAULT_ONLY, None, {}, {}, 16, "file:{p} [default]",
                     id="default<file-default-table"),
        pytest.param(WITH_PROFILE, "production", {}, {}, 8, "file:{p} [production]",
                     id="file-default<file-profile"),
        pytest.param(DEFAULT_ONLY, None, ENV, {}, 32, ENV_LABEL, id="file<env"),
        pytest.param(None, None, ENV, {KEY: 48}, 48, "cli", id="env<cli"),
        pytest.param(None, None, ENV, {}, 32, ENV_LABEL, id="default<env"),
        pytest.param(None, None, {}, {KEY: "48"}, 48, "cli", id="default<cli"),
        pytest.param(DEFAULT_ONLY, None, {}, {KEY: 48}, 48, "cli", id="file<cli"),
        pytest.param(WITH_PROFILE, "production", ENV, {}, 32, ENV_LABEL, id="profile<env"),
        pytest.param(WITH_PROFILE, "production", ENV, {KEY: 48}, 48, "cli", id="profile<cli"),
        pytest.param(None, None, {}, {}, 64, "default", id="defaults-alone"),
    ],
)
def test_precedence_pair(
    tmp_path: Path,
    file_text: str | None,
    profile: str | None,
    environ: dict[str, str],
    overrides: dict[str, object],
    value: int,
    label: str,
) -> None:
    loaded, path = _load(tmp_path, file_text, profile=profile, environ=environ,
                         overrides=overrides)
    assert loaded.settings.embedding.batch_size == value
    assert loaded.sources[KEY] == label.format(p=path)
    assert loaded.sources["embedding.threads"] == "default"  # untouched keys stay default


def test_profile_merges_deeply_with_default_table(tmp_path: Path) -> None:
    text = """
[default.auto_dream.time_gate]
min_hours_between_dream = 12
max_hours_between_dream = 100

[development.auto_dream.time_gate]
min_hours_between_dream = 1
"""
    loaded, path = _load(tmp_path, text, profile="development")
    gate = loaded.settings.auto_dream.time_gate
    assert (gate.min_hours_between_dream, gate.max_hours_between_dream) == (1, 100)
    key = "auto_dream.time_gate."
    assert loaded.sources[key + "min_hours_between_dream"] == f"file:{path} [development]"
    assert loaded.sources[key + "max_hours_between_dream"] == f"file:{path} [default]"


def test_env_and_cli_override_single_nested_fields(tmp_path: Path) -> None:
    loaded, _ = _load(
        tmp_path, None,
        environ={"DREAMD_AUTO_DREAM__TIME_GATE__MIN_HOURS_BETWEEN_DREAM": "2"},
        overrides={"auto_dream.time_gate.max_hours_between_dream": 50},
    )
    gate = loaded.settings.auto_dream.time_gate
    assert (gate.min_hours_between_dream, gate.max_hours_between_dream) == (2, 50)
    assert loaded.sources["auto_dream.time_gate.min_hours_between_dream"] == (
        "env:DREAMD_AUTO_DREAM__TIME_GATE__MIN_HOURS_BETWEEN_DREAM"
    )
    assert loaded.sources["auto_dream.time_gate.max_hours_between_dream"] == "cli"
    assert loaded.sources["auto_dream.enabled"] == "default"


def test_dreamd_env_selects_profile_and_argument_wins(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(WITH_PROFILE + "\n[staging]\nembedding.batch_size = 4\n", encoding="utf-8")
    by_var = load_settings(config_path=path, environ={"DREAMD_ENV": "production"})
    assert (by_var.profile, by_var.settings.embedding.batch_size) == ("production", 8)
    by_arg = load_settings(config_path=path, env_name="staging",
                           environ={"DREAMD_ENV": "production"})
    assert (by_arg.profile, by_arg.settings.embedding.batch_size) == ("staging", 4)
    neither = load_settings(config_path=path, environ={})
    assert (neither.profile, neither.settings.embedding.batch_size) == (None, 16)


def test_dreamd_config_names_the_file_and_argument_wins(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("[default]\nembedding.batch_size = 1\n", encoding="utf-8")
    b.write_text("[default]\nembedding.batch_size = 2\n", encoding="utf-8")
    by_var = load_settings(environ={"DREAMD_CONFIG": str(a)})
    assert (by_var.config_path, by_var.settings.embedding.batch_size) == (a, 1)
    by_arg = load_settings(config_path=b, environ={"DREAMD_CONFIG": str(a)})
    assert (by_arg.config_path, by_arg.settings.embedding.batch_size) == (b, 2)


def test_missing_default_file_means_defaults(tmp_path: Path) -> None:
    loaded = load_settings(environ={})
    assert loaded.config_path == default_config_path()
    assert loaded.config_path.name == "config.toml"
    assert loaded.config_path.parent.name == "dreamd"
    assert not loaded.config_exists
    assert set(loaded.sources.values()) == {"default"}


def test_default_file_location_is_read_when_present(tmp_path: Path) -> None:
    path = default_config_path()
    path.parent.mkdir(parents=True)
    path.write_text("[default]\ncache.enabled = false\n", encoding="utf-8")
    loaded = load_settings(environ={})
    assert loaded.config_exists
    assert loaded.settings.cache.enabled is False
    assert loaded.sources["cache.enabled"] == f"file:{path} [default]"


def test_loader_variables_are_not_settings(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(WITH_PROFILE, encoding="utf-8")
    loaded = load_settings(
        environ={"DREAMD_ENV": "production", "DREAMD_CONFIG": str(path), "DREAMD_TYPO": "1",
                 "DREAMD_EMBEDDING_BATCH_SIZE": "3", "HOME": "/nowhere"},
    )
    assert loaded.settings.embedding.batch_size == 8
    assert loaded.ignored_env_vars == ("DREAMD_EMBEDDING_BATCH_SIZE", "DREAMD_TYPO")


def test_env_json_value_for_a_whole_section_and_a_list(tmp_path: Path) -> None:
    loaded, _ = _load(
        tmp_path, None,
        environ={"DREAMD_CACHE": '{"enabled": false, "ttl_hours": 2}',
                 "DREAMD_VAULT__INCLUDE": '["Projects/**", "Daily/*.md"]'},
    )
    assert loaded.settings.cache.enabled is False
    assert loaded.settings.cache.ttl_hours == 2
    assert loaded.sources["cache.ttl_hours"] == "env:DREAMD_CACHE"
    assert loaded.settings.vault.include == ["Projects/**", "Daily/*.md"]
    assert loaded.sources["vault.include"] == "env:DREAMD_VAULT__INCLUDE"


def test_env_names_are_case_insensitive_and_accept_seed_aliases(tmp_path: Path) -> None:
    loaded, _ = _load(tmp_path, None, environ={"dreamd_obsidian__cli__timeout": "900"})
    assert loaded.settings.obsidian.cli.timeout_ms == 900
    assert loaded.sources["obsidian.cli.timeout_ms"] == "env:dreamd_obsidian__cli__timeout"


def test_cli_overrides_accept_strings_json_lists_and_ignore_none(tmp_path: Path) -> None:
    loaded, _ = _load(
        tmp_path, None,
        overrides={"vault.path": "/x/vault", "vault.include": '["a/**"]', "cache.enabled": None,
                   "autoDream.timeGate.minHoursBetweenDream": "3"},
    )
    assert loaded.settings.vault.path == Path("/x/vault")
    assert loaded.settings.vault.include == ["a/**"]
    assert loaded.sources["cache.enabled"] == "default"
    assert loaded.settings.auto_dream.time_gate.min_hours_between_dream == 3
    assert loaded.sources["auto_dream.time_gate.min_hours_between_dream"] == "cli"


def test_environ_none_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMD_EMBEDDING__BATCH_SIZE", "12")
    loaded = load_settings()
    assert loaded.settings.embedding.batch_size == 12
    assert loaded.sources[KEY] == ENV_LABEL


def _every_setting_name() -> set[str]:
    """Every field name and alias at every level of Settings (``vault``, ``autoDream``,
    ``batch_size``, ``batchSize``, ``timeout`` …)."""
    from pydantic import BaseModel

    from config.settings import Settings

    names: set[str] = set()
    todo: list[type[BaseModel]] = [Settings]
    while todo:
        model = todo.pop()
        for name, info in model.model_fields.items():
            names.update(n for n in (name, info.alias) if n)
            choices = getattr(info.validation_alias, "choices", None) or ()
            names.update(c for c in choices if isinstance(c, str))
            for inner in (*getattr(info.annotation, "__args__", ()), info.annotation):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    todo.append(inner)
    return names


def test_a_shell_full_of_unprefixed_names_changes_nothing(tmp_path: Path) -> None:
    """Only DREAMD_* is configuration: a shell's VAULT, SYNC, LOGGING, PATH-like names, in
    any case, with junk, JSON or nested values, neither fail nor change a setting."""
    clean = load_settings(environ={}, config_path=None)
    shell: dict[str, str] = {}
    for name in sorted(_every_setting_name()):
        for spelled in (name, name.upper(), name.capitalize()):
            shell[spelled] = "{not json"
            shell[f"{spelled}__path"] = str(tmp_path / "elsewhere")
            shell[f"{spelled}__enabled"] = "maybe"
    shell["VAULT"] = '{"path": "' + str(tmp_path / "hijacked") + '"}'
    shell["vault__path"] = str(tmp_path / "hijacked")
    loaded = load_settings(environ=shell)
    assert loaded.settings == clean.settings
    assert set(loaded.sources.values()) == {"default"}
    assert loaded.ignored_env_vars == ()


def test_a_bare_settings_reads_only_prefixed_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from config.settings import Settings

    monkeypatch.setenv("VAULT", "x")
    monkeypatch.setenv("EMBEDDING__BATCH_SIZE", "9")
    monkeypatch.setenv("DREAMD_EMBEDDING__BATCH_SIZE", "7")
    assert Settings().embedding.batch_size == 7
