"""The config.toml written by `dreamd init` loads, round-trips the vault, and lists everything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from config import describe, load_settings, render_config
from config.loading import leaf_keys


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_rendered_config_loads_to_defaults_plus_vault(tmp_path: Path) -> None:
    vault = tmp_path / "My Vault ✓"
    path = _write(tmp_path, render_config(vault))
    loaded = load_settings(config_path=path, environ={})
    assert loaded.settings.vault.path == vault
    assert loaded.sources["vault.path"] == f"file:{path} [default]"
    defaults = {key: value for key, value, _ in describe(load_settings(environ={}))}
    for key, value, source in describe(loaded):
        if key != "vault.path":
            assert (value, source) == (defaults[key], "default"), key


def test_vault_path_with_quotes_and_backslashes_round_trips(tmp_path: Path) -> None:
    vault = tmp_path / 'we"ird\\name'
    loaded = load_settings(config_path=_write(tmp_path, render_config(vault)), environ={})
    assert loaded.settings.vault.path == vault


def test_template_mentions_every_setting(tmp_path: Path) -> None:
    text = render_config(tmp_path)
    for key in leaf_keys():
        *sections, name = key.split(".")
        assert f"[default.{'.'.join(sections)}]" in text, key
        assert re.search(rf"^(# )?{name} = ", text, re.MULTILINE), key


def _uncomment_defaults(text: str) -> str:
    head, _, tail = text.partition("# Profiles:")
    lines = [
        line[2:] if re.match(r"# [a-z_]+ = |#   \{|# \]$", line) else line
        for line in head.splitlines()
    ]
    return "\n".join(lines) + "\n# Profiles:" + tail


def test_every_commented_default_is_valid_when_uncommented(tmp_path: Path) -> None:
    text = _uncomment_defaults(render_config(tmp_path))
    path = _write(tmp_path, text)
    loaded = load_settings(config_path=path, environ={})
    file_label = f"file:{path} [default]"
    assert set(loaded.sources.values()) == {file_label}
    defaults = {key: value for key, value, _ in describe(load_settings(environ={}))}
    examples = {"vault.path", "storage.uri", "storage.options", "storage.device",
                "embedding.base_url", "llm.model", "llm.intent.model", "llm.verifier.model",
                "llm.judge.model", "llm.profile.model", "metrics.textfile"}
    for key, value, _ in describe(loaded):
        if key not in examples:
            assert value == defaults[key], key


@pytest.mark.parametrize(
    ("profile", "min_hours", "cache_on", "progressive_on", "metrics_on"),
    [("development", 1, False, False, False), ("production", 48, True, True, True)],
)
def test_profile_examples_load_when_uncommented(
    tmp_path: Path, profile: str, min_hours: float, cache_on: bool, progressive_on: bool,
    metrics_on: bool,
) -> None:
    head, _, tail = render_config(tmp_path).partition("# Profiles:")
    tail = "\n".join(
        line[2:] if re.match(r"# (\[|[a-z_.]+ = )", line) else line for line in tail.splitlines()
    )
    path = _write(tmp_path, head + "# Profiles:" + tail + "\n")
    loaded = load_settings(config_path=path, env_name=profile, environ={})
    s = loaded.settings
    assert s.auto_dream.time_gate.min_hours_between_dream == min_hours
    assert s.retrieval.intent_analysis.cache_enabled is cache_on
    assert s.retrieval.progressive_search.enabled is progressive_on
    assert s.metrics.enabled is metrics_on
    assert loaded.sources["retrieval.intent_analysis.cache_enabled"] == f"file:{path} [{profile}]"
