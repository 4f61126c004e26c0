"""The settings model: defaults, validation, aliases, and the per-vault paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from config import (
    ConfigError,
    Settings,
    describe,
    load_settings,
    state_dir,
    store_uri,
    vault_id,
)
from config.settings import (
    HIDDEN,
    AutoDreamSettings,
    CacheSettings,
    FusionSettings,
    LlmSettings,
    LoggingSettings,
    ObsidianCliSettings,
    ProgressiveSearchSettings,
    RetrievalSettings,
    Stage,
    SyncSettings,
    VaultSettings,
    default_data_dir,
)


def test_defaults_match_the_seed_and_design() -> None:
    s = load_settings(environ={}).settings
    assert s.vault.path is None and s.vault.memory_folder == "Memory"
    assert s.storage.data_dir == default_data_dir()
    assert (s.embedding.provider, s.embedding.model) == ("use-m3", "use-multilingual-v3")
    assert (s.sync.chunk_max_chars, s.sync.debounce_ms, s.sync.rescan_interval_s) == (1500, 50, 600)
    assert (s.cache.ttl_hours, s.cache.max_size, s.cache.semantic_threshold) == (24.0, 10000, 0.9)
    assert isinstance(s.cache.ttl_hours, float)
    assert s.obsidian.cli.timeout_ms == 5000 and s.obsidian.fallback.max_retries == 2
    gate = s.auto_dream.time_gate
    assert (gate.min_hours_between_dream, gate.max_hours_between_dream) == (24, 168)
    assert s.auto_dream.session_gate.min_sessions_for_dream == 5
    assert [(st.name, st.limit, st.timeout_ms) for st in s.retrieval.progressive_search.stages] == [
        ("ccb-fast", 5, 100), ("magma-extend", 10, 300), ("full-fusion", None, 800)
    ]
    assert (s.retrieval.rrf_k, s.retrieval.recency_half_life_days) == (60, 30)
    assert s.retrieval.graph_step == "pagerank"
    assert (s.fusion.max_tokens, s.fusion.semantic_similarity_threshold) == (4000, 0.85)
    assert (s.llm.enabled, s.metrics.enabled, s.logging.level) == (False, False, "info")


def test_settings_reads_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMD_EMBEDDING__THREADS", "3")
    assert Settings().embedding.threads == 3


def test_settings_are_frozen() -> None:
    s = load_settings(environ={}).settings
    with pytest.raises(ValidationError):
        s.cache.enabled = False


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (CacheSettings, {"semantic_threshold": 1.1}),
        (CacheSettings, {"max_size": 0}),
        (CacheSettings, {"ttl_hours": -1}),
        (SyncSettings, {"max_delete_share": -0.1}),
        (SyncSettings, {"debounce_ms": 0}),
        (ObsidianCliSettings, {"timeout_ms": -5}),
        (LoggingSettings, {"level": "verbose"}),
        (VaultSettings, {"memory_folder": "../outside"}),
        (VaultSettings, {"memory_folder": "/abs"}),
        (VaultSettings, {"memory_folder": ""}),
        (Stage, {"name": "warp", "timeout_ms": 1}),
        (RetrievalSettings, {"graph_step": "two_hop"}),
        (Stage, {"name": "ccb-fast", "timeout_ms": 1, "limit": 0}),
        (AutoDreamSettings, {"time_gate": {"min_hours_between_dream": 200}}),
        (LlmSettings, {"enabled": True}),
        (FusionSettings, {"max_tokens": 100}),
        (CacheSettings, {"unknown": 1}),
    ],
)
def test_invalid_values_are_rejected(model: type[BaseModel], data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_stage_names_must_be_unique() -> None:
    stage = {"name": "ccb-fast", "timeout_ms": 1}
    with pytest.raises(ValidationError, match="repeated: ccb-fast"):
        ProgressiveSearchSettings.model_validate({"stages": [stage, stage]})


def test_camel_case_snake_case_and_seed_spellings_are_accepted() -> None:
    assert ObsidianCliSettings.model_validate({"timeout": 1}).timeout_ms == 1
    assert ObsidianCliSettings.model_validate({"timeoutMs": 2}).timeout_ms == 2
    assert ObsidianCliSettings.model_validate({"timeout_ms": 3}).timeout_ms == 3
    assert CacheSettings.model_validate({"ttlHours": 4}).ttl_hours == 4
    assert Stage.model_validate({"name": "full-fusion", "timeout": 5}).timeout_ms == 5
    assert RetrievalSettings.model_validate({"graphStep": "off"}).graph_step == "off"


def test_logging_level_is_case_insensitive_and_paths_expand_user() -> None:
    assert LoggingSettings.model_validate({"level": "DEBUG"}).level == "debug"
    vault = VaultSettings.model_validate({"path": "~/notes", "memory_folder": "Mem/"})
    assert vault.path == Path.home() / "notes"
    assert vault.memory_folder == "Mem"
    assert VaultSettings.model_validate({"path": ""}).path is None


# --------------------------------------------------------------------------- per-vault paths


def test_vault_id_is_stable_and_readable(tmp_path: Path) -> None:
    vault = tmp_path / "My Notes"
    vault.mkdir()
    first = vault_id(vault)
    assert first == vault_id(vault)
    assert first == vault_id(tmp_path / "x" / ".." / "My Notes")  # same folder, other spelling
    assert re.fullmatch(r"my-notes-[0-9a-f]{8}", first)


def test_vault_id_follows_symlinks(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    link = tmp_path / "link"
    link.symlink_to(vault)
    assert vault_id(link) == vault_id(vault)


def test_vault_ids_differ_for_same_name_in_different_folders(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "notes", tmp_path / "b" / "notes"
    assert vault_id(a) != vault_id(b)
    assert vault_id(a).startswith("notes-") and vault_id(b).startswith("notes-")


def test_vault_id_of_non_latin_and_symbol_names(tmp_path: Path) -> None:
    assert vault_id(tmp_path / "我的笔记").startswith("我的笔记-")
    assert re.fullmatch(r"vault-[0-9a-f]{8}", vault_id(tmp_path / "!!!"))


@given(st.text(min_size=1, max_size=60).filter(lambda s: "/" not in s and "\x00" not in s
                                                and s not in (".", "..")))
def test_vault_id_is_always_a_safe_folder_name(name: str) -> None:
    vid = vault_id(Path("/tmp/dreamd-prop") / name)
    slug, digest = vid.rsplit("-", 1)
    assert re.fullmatch(r"[0-9a-f]{8}", digest)
    assert slug and len(slug) <= 40
    assert not set(slug) & set("/\\:*?\"<>| .")


def test_state_dir_and_store_uri(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    s = Settings.model_validate({"vault": {"path": str(vault)},
                                 "storage": {"data_dir": str(tmp_path / "data")}})
    assert state_dir(s) == tmp_path / "data" / "vaults" / vault_id(vault)
    assert store_uri(s) == str(state_dir(s) / "lancedb")
    custom = Settings.model_validate({"vault": {"path": str(vault)},
                                      "storage": {"uri": "s3://bucket/x"}})
    assert store_uri(custom) == "s3://bucket/x"


def test_state_dir_needs_a_vault() -> None:
    with pytest.raises(ConfigError, match=r"vault.path is not set"):
        state_dir(load_settings(environ={}).settings)


def test_storage_options_reach_lancedb_as_text_and_hide_credentials(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[default.storage]\nuri = "s3://bucket/dreamd"\n'
        'options = { aws_endpoint = "http://127.0.0.1:9000", allow_http = true, timeout = 30,'
        ' AWS_SECRET_ACCESS_KEY = "s3cr3t-value", aws_access_key_id = "AKIAEXAMPLE" }\n',
        encoding="utf-8")
    loaded = load_settings(config_path=path,
                           environ={"DREAMD_STORAGE__OPTIONS__AWS_REGION": "eu-west-1"})
    options = loaded.settings.storage.options
    assert options == {"aws_endpoint": "http://127.0.0.1:9000", "allow_http": "true",
                       "timeout": "30", "aws_secret_access_key": "s3cr3t-value",
                       "aws_access_key_id": "AKIAEXAMPLE", "aws_region": "eu-west-1"}
    assert "s3cr3t" not in repr(loaded.settings) and "AKIAEXAMPLE" not in repr(loaded.settings)
    (shown, source), = [(value, src) for key, value, src in describe(loaded)
                        if key == "storage.options"]
    assert shown == {"allow_http": "true", "aws_access_key_id": HIDDEN,
                     "aws_endpoint": "http://127.0.0.1:9000", "aws_region": "eu-west-1",
                     "aws_secret_access_key": HIDDEN, "timeout": "30"}
    assert source == f"file:{path} [default] + env:DREAMD_STORAGE__OPTIONS__AWS_REGION"
