"""Config files: TOML and the seed's JSON layout, profiles, and every way a file can be wrong."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from config import ConfigError, ProfileNotFoundError, Settings, load_settings

WriteConfig = Callable[..., Path]


# --------------------------------------------------------------------------- layouts


def test_plain_top_level_sections_are_the_default_table(write_config: WriteConfig) -> None:
    path = write_config("[embedding]\nbatch_size = 5\n\n[vault]\npath = '~/notes'\n")
    loaded = load_settings(config_path=path, environ={})
    assert loaded.settings.embedding.batch_size == 5
    assert loaded.settings.vault.path == Path("~/notes").expanduser()
    assert loaded.sources["embedding.batch_size"] == f"file:{path} [default]"


def test_requesting_the_default_table_by_name_is_allowed(write_config: WriteConfig) -> None:
    path = write_config("[default]\ncache.max_size = 3\n")
    loaded = load_settings(config_path=path, env_name="default", environ={})
    assert loaded.settings.cache.max_size == 3


def test_empty_file_gives_defaults(write_config: WriteConfig) -> None:
    loaded = load_settings(config_path=write_config(""), environ={})
    assert loaded.config_exists
    assert set(loaded.sources.values()) == {"default"}


def test_stages_as_array_of_tables(write_config: WriteConfig) -> None:
    path = write_config(
        """
[[default.retrieval.progressive_search.stages]]
name = "ccb-fast"
limit = 3
timeout_ms = 50

[[default.retrieval.progressive_search.stages]]
name = "full-fusion"
timeout = 900
"""
    )
    loaded = load_settings(config_path=path, environ={})
    stages = loaded.settings.retrieval.progressive_search.stages
    assert [(s.name, s.limit, s.timeout_ms) for s in stages] == [
        ("ccb-fast", 3, 50), ("full-fusion", None, 900)
    ]
    assert loaded.sources["retrieval.progressive_search.stages"] == f"file:{path} [default]"


# --------------------------------------------------------------------------- seed JSON


def test_seed_json_loads_as_is(seed_json: Path) -> None:
    loaded = load_settings(config_path=seed_json, environ={})
    s = loaded.settings
    assert s.cache.ttl_hours == 24 and s.cache.max_size == 10000
    assert s.obsidian.cli.timeout_ms == 5000
    assert s.obsidian.direct.atomic_writes is True
    assert s.auto_dream.session_gate.scan_interval_ms == 600000
    assert s.retrieval.intent_analysis.enable_llm is False
    assert s.retrieval.intent_analysis.cache_enabled is True  # set by the profiles only
    assert [stage.timeout_ms for stage in s.retrieval.progressive_search.stages] == [100, 300, 800]
    assert s.fusion.token_budget.max_tokens_per_memory == 500
    label = f"file:{seed_json} [default]"
    # Provenance keys are snake_case whatever the file spelled.
    for key in ("cache.ttl_hours", "obsidian.cli.timeout_ms", "fusion.token_budget.dynamic",
                "auto_dream.time_gate.min_hours_between_dream"):
        assert loaded.sources[key] == label
    assert loaded.sources["embedding.batch_size"] == "default"  # not in the seed


@pytest.mark.parametrize(
    ("profile", "min_hours", "cache_on", "progressive_on"),
    [("development", 1, False, False), ("production", 48, True, True)],
)
def test_seed_profiles_take_effect_under_dreamd_env(
    seed_json: Path, profile: str, min_hours: float, cache_on: bool, progressive_on: bool
) -> None:
    loaded = load_settings(config_path=seed_json, environ={"DREAMD_ENV": profile})
    s = loaded.settings
    assert loaded.profile == profile
    assert s.auto_dream.time_gate.min_hours_between_dream == min_hours
    assert s.retrieval.intent_analysis.cache_enabled is cache_on
    assert s.cache.enabled is True  # the seed's cache section, untouched by the profiles
    assert s.retrieval.progressive_search.enabled is progressive_on
    assert s.metrics.enabled is (profile == "production")
    label = f"file:{seed_json} [{profile}]"
    assert loaded.sources["auto_dream.time_gate.min_hours_between_dream"] == label
    assert loaded.sources["retrieval.intent_analysis.cache_enabled"] == label
    assert loaded.sources["retrieval.progressive_search.enabled"] == label
    # Untouched seed values keep coming from the default part of the file.
    assert s.auto_dream.time_gate.max_hours_between_dream == 168
    assert loaded.sources["auto_dream.time_gate.max_hours_between_dream"] == (
        f"file:{seed_json} [default]"
    )


def test_seed_profile_may_hold_nested_objects(write_config: WriteConfig) -> None:
    data = {"cache": {"enabled": True},
            "environments": {"test": {"cache": {"enabled": False, "maxSize": 7}}}}
    path = write_config(json.dumps(data), "config.json")
    loaded = load_settings(config_path=path, env_name="test", environ={})
    assert (loaded.settings.cache.enabled, loaded.settings.cache.max_size) == (False, 7)


def test_models_accept_the_seed_camel_case_directly(seed_config: dict[str, object]) -> None:
    seed = {key: value for key, value in seed_config.items() if key != "environments"}
    settings = Settings.model_validate(seed)
    assert settings.retrieval.intent_analysis.llm_confidence_threshold == 0.7
    assert settings.obsidian.fallback.max_retries == 2


# --------------------------------------------------------------------------- profiles


def test_missing_profile_names_profile_file_and_available(write_config: WriteConfig) -> None:
    path = write_config("[default]\n[development]\n[production]\n")
    with pytest.raises(ProfileNotFoundError) as info:
        load_settings(config_path=path, env_name="staging", environ={})
    message = str(info.value)
    assert "'staging'" in message and str(path) in message
    assert "development, production" in message


def test_missing_profile_in_seed_json(seed_json: Path) -> None:
    with pytest.raises(ProfileNotFoundError, match="development, production"):
        load_settings(config_path=seed_json, environ={"DREAMD_ENV": "qa"})


def test_profile_requested_without_any_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileNotFoundError, match="no config file"):
        load_settings(environ={"DREAMD_ENV": "production"})


def test_profile_error_is_a_config_error() -> None:
    assert issubclass(ProfileNotFoundError, ConfigError)


# --------------------------------------------------------------------------- bad files


def test_bad_value_in_file_names_key_value_reason_and_table(write_config: WriteConfig) -> None:
    path = write_config("[default]\n[production.embedding]\nbatch_size = 0\n")
    with pytest.raises(ConfigError) as info:
        load_settings(config_path=path, env_name="production", environ={})
    message = str(info.value)
    assert "embedding.batch_size = 0" in message
    assert f"{path} [production]" in message
    assert "greater than 0" in message


def test_bad_value_in_env_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(environ={"DREAMD_SYNC__MAX_DELETE_SHARE": "1.5"})
    message = str(info.value)
    assert "environment variable DREAMD_SYNC__MAX_DELETE_SHARE" in message
    assert "sync.max_delete_share = '1.5'" in message


def test_bad_value_in_cli_names_the_override(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"command-line override: logging.level = 'loud'"):
        load_settings(environ={}, overrides={"logging.level": "loud"})


def test_bad_json_in_env_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DREAMD_VAULT__INCLUDE"):
        load_settings(environ={"DREAMD_VAULT__INCLUDE": "[not json"})


def test_cross_field_error_names_both_sources(write_config: WriteConfig) -> None:
    path = write_config("[default.auto_dream.time_gate]\nmin_hours_between_dream = 10\n")
    with pytest.raises(ConfigError) as info:
        load_settings(
            config_path=path,
            environ={"DREAMD_AUTO_DREAM__TIME_GATE__MAX_HOURS_BETWEEN_DREAM": "5"},
        )
    message = str(info.value)
    assert "auto_dream.time_gate" in message and "must not exceed" in message
    assert f"{path} [default]" in message
    assert "DREAMD_AUTO_DREAM__TIME_GATE__MAX_HOURS_BETWEEN_DREAM" in message


def test_unknown_key_names_key_file_and_suggestion(write_config: WriteConfig) -> None:
    path = write_config("[default.embedding]\nbatch_sise = 3\n")
    with pytest.raises(ConfigError) as info:
        load_settings(config_path=path, environ={})
    message = str(info.value)
    assert "unknown key 'embedding.batch_sise'" in message
    assert f"{path} [default]" in message
    assert "did you mean 'batch_size'?" in message


def test_unknown_section_in_plain_layout(write_config: WriteConfig) -> None:
    path = write_config("[embeding]\nbatch_size = 3\n")
    with pytest.raises(ConfigError, match=r"unknown key 'embeding'.*did you mean 'embedding'"):
        load_settings(config_path=path, environ={})


def test_unknown_key_in_a_profile_not_requested_is_still_an_error(
    write_config: WriteConfig,
) -> None:
    path = write_config("[default]\n[production]\ncache.enabeld = true\n")
    with pytest.raises(ConfigError, match=r"\[production\]: unknown key 'cache.enabeld'"):
        load_settings(config_path=path, environ={})


def test_unknown_key_in_seed_profile(write_config: WriteConfig) -> None:
    data = {"environments": {"development": {"autoDream.timeGate.minHours": 1}}}
    path = write_config(json.dumps(data), "config.json")
    with pytest.raises(ConfigError, match=r"auto_dream.time_gate.minHours"):
        load_settings(config_path=path, environ={})


def test_unknown_nested_env_key_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"DREAMD_EMBEDDING__BATCH_SZE.*batch_sze"):
        load_settings(environ={"DREAMD_EMBEDDING__BATCH_SZE": "3"})


def test_unknown_cli_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"command-line override: unknown key 'vault.pth'"):
        load_settings(environ={}, overrides={"vault.pth": "/x"})


def test_toml_syntax_error_names_file_and_line(write_config: WriteConfig) -> None:
    path = write_config("[default]\ncache.enabled = true\nembedding.batch_size = \n")
    with pytest.raises(ConfigError, match=rf"{path}: invalid TOML: .*line 3"):
        load_settings(config_path=path, environ={})


def test_json_syntax_error_names_file_and_line(write_config: WriteConfig) -> None:
    path = write_config('{\n  "cache": {\n    "enabled": true,\n  }\n}\n', "config.json")
    with pytest.raises(ConfigError, match=rf"{path}: invalid JSON at line 4"):
        load_settings(config_path=path, environ={})


def test_json_top_level_must_be_an_object(write_config: WriteConfig) -> None:
    path = write_config("[1, 2]", "config.json")
    with pytest.raises(ConfigError, match="top level must be an object"):
        load_settings(config_path=path, environ={})


def test_profile_must_be_a_table(write_config: WriteConfig) -> None:
    path = write_config("production = 3\n[default]\n")
    with pytest.raises(ConfigError, match=r"\[production\] must be a table"):
        load_settings(config_path=path, environ={})


def test_unsupported_format(write_config: WriteConfig) -> None:
    path = write_config("cache: {}\n", "config.yaml")
    with pytest.raises(ConfigError, match=r"unsupported format '.yaml'"):
        load_settings(config_path=path, environ={})


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config_path=tmp_path / "nope.toml", environ={})


def test_missing_file_named_by_dreamd_config_means_defaults(tmp_path: Path) -> None:
    """DREAMD_CONFIG says where the file lives; `dreamd init` may not have written it yet."""
    path = tmp_path / "later.toml"
    loaded = load_settings(environ={"DREAMD_CONFIG": str(path)})
    assert (loaded.config_path, loaded.config_exists) == (path, False)


def test_config_path_that_is_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a file"):
        load_settings(environ={"DREAMD_CONFIG": str(tmp_path)})


def test_several_errors_are_reported_together(write_config: WriteConfig) -> None:
    path = write_config("[default]\ncache.max_size = -1\nmetrics.port = 70000\n")
    with pytest.raises(ConfigError) as info:
        load_settings(config_path=path, environ={})
    assert "cache.max_size = -1" in str(info.value)
    assert "metrics.port = 70000" in str(info.value)


def test_the_readme_llm_roles_config_is_valid(write_config: WriteConfig) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Search options", 1)[1].split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```toml\n(.+?)\n```", section, flags=re.S)
    llm = load_settings(config_path=write_config(snippet), environ={}).settings.llm
    assert (llm.intent.enabled, llm.intent.concurrency, llm.intent.timeout_s) == (True, 1, 10)
    assert (llm.verifier.enabled, llm.verifier.concurrency, llm.verifier.timeout_s) == \
        (True, 0, 2)
    assert llm.enabled is False  # the dream's own model stays off


def test_the_readme_object_store_config_is_valid(write_config: WriteConfig) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Two devices, one store.**", 1)[1].split("\n## ", 1)[0]
    snippet = next(block for block in re.findall(r"```toml\n(.+?)\n```", section, flags=re.S)
                   if "options" in block)
    storage = load_settings(config_path=write_config(snippet), environ={}).settings.storage
    assert storage.uri == "s3://my-bucket/dreamd" and storage.device == "laptop"
    assert set(storage.options) == {"aws_endpoint", "aws_region", "aws_access_key_id",
                                    "aws_secret_access_key"}


def test_an_enabled_llm_role_needs_a_model(write_config: WriteConfig) -> None:
    path = write_config("[default.llm.verifier]\nenabled = true\n")
    with pytest.raises(ConfigError, match=r"llm\.verifier.*model"):
        load_settings(config_path=path, environ={})


def test_the_intent_llm_switch_without_the_intent_role_is_a_clear_error(
        write_config: WriteConfig) -> None:
    path = write_config('[default.retrieval.intent_analysis]\nenable_llm = true\n'
                        '[default.llm]\nenabled = true\nmodel = "dream-model"\n')
    with pytest.raises(ConfigError, match=r"needs the intent LLM: set llm\.intent\.enabled"):
        load_settings(config_path=path, environ={})
    path = write_config('[default.retrieval.intent_analysis]\nenable_llm = true\n'
                        '[default.llm.intent]\nenabled = true\nmodel = "m"\n')
    assert load_settings(config_path=path, environ={}).settings.llm.intent.enabled


@pytest.mark.parametrize(("key", "value", "reason"), [
    ("llm.verifier.timeout_s", "inf", "finite number"),
    ("metrics.interval_s", "nan", "finite number"),
    ("metrics.interval_s", "1e300", "less than or equal"),
    ("obsidian.cli.timeout_ms", "100000000000000000000", "less than or equal"),
    ("obsidian.cli.command", "./bin/obsidian", "absolute path"),
    ("obsidian.cli.command", "bin/obsidian", "absolute path"),
])
def test_values_that_would_overflow_or_run_a_vault_file_are_refused(
        key: str, value: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        load_settings(environ={}, overrides={key: value})


def test_the_cli_command_may_be_a_name_or_an_absolute_path() -> None:
    for value in ("obsidian", "/opt/Obsidian/obsidian", "Obsidian.com"):
        assert load_settings(environ={}, overrides={"obsidian.cli.command": value}) \
            .settings.obsidian.cli.command == value
