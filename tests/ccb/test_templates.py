"""Which notes are templates: the Templates plugin's folder, the Daily notes template and
placeholders (``ccb.templates``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccb.templates import (
    has_placeholder,
    in_locations,
    read_templates_folder,
    template_locations,
)


@pytest.mark.parametrize(("content", "folder"), [
    ({"folder": "Templates"}, "Templates"),
    ({"folder": "/Meta/Tpl/"}, "Meta/Tpl"),
    ({"folder": "Meta\\Tpl"}, "Meta/Tpl"),
    ({"folder": ""}, None),
    ({"folder": "../outside"}, None),
    ({"folder": 3}, None),
    (["Templates"], None),
])
def test_the_templates_folder_is_read_from_the_plugins_settings(
        tmp_path: Path, content: object, folder: str | None) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "templates.json").write_text(json.dumps(content),
                                                          encoding="utf-8")
    assert read_templates_folder(tmp_path) == folder


def test_no_settings_no_places(tmp_path: Path) -> None:
    assert read_templates_folder(tmp_path) is None
    assert template_locations(tmp_path) == frozenset()
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "templates.json").write_text("{not json", encoding="utf-8")
    assert template_locations(tmp_path) == frozenset()


def test_the_daily_notes_template_and_the_folder_are_the_places(tmp_path: Path) -> None:
    """``/tmp/trial_v2``-like settings: a ``Tpl/Day`` daily template and a ``Forms`` folder, in
    a config folder of the user's choosing."""
    config = tmp_path / ".config"
    config.mkdir()
    (config / "templates.json").write_text('{"folder":"Forms"}', encoding="utf-8")
    (config / "daily-notes.json").write_text(
        '{"folder":"Journal/Daily","format":"YYYY/MM/DD-dddd","template":"Tpl/Day"}',
        encoding="utf-8")
    places = template_locations(tmp_path, ".config")
    assert places == {"Forms/", "Tpl/Day.md"}
    assert in_locations("Forms/Weekly.md", places)
    assert in_locations("forms/sub/Weekly.md", places)  # as Obsidian on macOS and Windows
    assert in_locations("Tpl/Day.md", places)
    assert not in_locations("Tpl/Day 2.md", places)
    assert not in_locations("Formsworth.md", places)


@pytest.mark.parametrize(("text", "expected"), [
    ("created: {{date}}", True),
    ("# {{date:dddd, MMMM D}}", True),
    ("{{ title }}", True),
    ("{{TIME}}", True),
    ("<% tp.date.now() %>", True),
    ("{{unknown}}", False),
    ("a plain note about {{ braces", False),
    ("", False),
])
def test_placeholders(text: str, expected: bool) -> None:
    assert has_placeholder(text) is expected


@pytest.mark.parametrize(("content", "places"), [
    ({"templates_folder": "Meta/Forms", "trigger_on_file_creation": True}, {"Meta/Forms/"}),
    ({"templates_folder": "/模板库/"}, {"模板库/"}),
    ({"templates_folder": ""}, set()),  # Templater's default: no folder
    ({"templates_folder": "../elsewhere"}, set()),
    ({"folder": "Meta/Forms"}, set()),  # the core plugin's key, not Templater's
])
def test_the_templater_plugin_s_folder_is_a_template_place(
        tmp_path: Path, content: object, places: set[str]) -> None:
    settings = tmp_path / ".obsidian" / "plugins" / "templater-obsidian" / "data.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(content), encoding="utf-8")
    assert template_locations(tmp_path) == places
    (tmp_path / ".obsidian" / "templates.json").write_text('{"folder":"Tpl"}',
                                                          encoding="utf-8")
    assert template_locations(tmp_path) == places | {"Tpl/"}
