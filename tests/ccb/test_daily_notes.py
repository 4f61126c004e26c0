"""Where the diary lives: Obsidian's Daily notes settings, moment.js names, templates, and
the OpenClaw workspaces attached beside the vault."""

from __future__ import annotations

import shutil
from datetime import date, datetime
from pathlib import Path

import pytest

from ccb.daily_notes import (
    DailyNoteSettings,
    daily_note_path,
    diary_notes,
    format_moment,
    read_daily_note_settings,
    render_template,
    template_path,
)
from ccb.roots import Root
from ccb.scan import VaultFilter

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("fmt", "expected"), [
    ("YYYY-MM-DD", "2026-12-02"),
    ("YYYY/MM/YYYY-MM-DD", "2026/12/2026-12-02"),
    ("dddd, MMMM Do YYYY", "Wednesday, December 2nd 2026"),
    ("ddd D MMM YY", "Wed 2 Dec 26"),
    ("GGGG-[W]WW", "2026-W49"),
    ("YYYY-[Q]Q DDDD", "2026-Q4 336"),
    ("[Daily] YYYY.MM.DD", "Daily 2026.12.02"),
    ("日记 YYYY年M月D日", "日记 2026年12月2日"),
])
def test_moment_formats_name_the_day_as_obsidian_does(fmt: str, expected: str) -> None:
    assert format_moment(date(2026, 12, 2), fmt) == expected


@pytest.mark.parametrize(("day", "ordinal"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"),
                                              (11, "11th"), (12, "12th"), (13, "13th"),
                                              (21, "21st"), (22, "22nd"), (31, "31st")])
def test_ordinal_days(day: int, ordinal: str) -> None:
    assert format_moment(date(2026, 12, day), "Do") == ordinal


def test_the_demo_vault_and_kepanos_vault_settings_are_read(corpora_dir: Path) -> None:
    demo = read_daily_note_settings(REPO / "vault_example")
    assert demo == DailyNoteSettings(folder="Daily", format="YYYY-MM-DD", template=None)
    kepano = read_daily_note_settings(corpora_dir / "kepano-obsidian")
    assert kepano == DailyNoteSettings(folder="Daily", format="YYYY-MM-DD",
                                       template="Templates/Daily Note Template")
    assert template_path(kepano) == "Templates/Daily Note Template.md"
    assert (corpora_dir / "kepano-obsidian" / template_path(kepano)).is_file()


@pytest.mark.parametrize(("content", "expected"), [
    (None, DailyNoteSettings()),  # no settings: Daily/
    ("not json", DailyNoteSettings()),
    ("[1, 2]", DailyNoteSettings()),
    ('{"folder": "", "format": ""}', DailyNoteSettings(folder="", format="YYYY-MM-DD")),
    ('{"folder": "/Journal/Days/", "format": "YYYY/MM/DD"}',
     DailyNoteSettings(folder="Journal/Days", format="YYYY/MM/DD")),
    ('{"folder": "../outside"}', DailyNoteSettings(folder="")),
    ('{"folder": "Da\\u0000ily", "format": "YYYY\\u0001"}', DailyNoteSettings(folder="")),
    ('{"folder": 3, "template": "T/Day.md"}', DailyNoteSettings(folder="", template="T/Day.md")),
])
def test_settings_file_variants(tmp_path: Path, content: str | None,
                                expected: DailyNoteSettings) -> None:
    (tmp_path / ".obsidian").mkdir()
    if content is not None:
        (tmp_path / ".obsidian" / "daily-notes.json").write_text(content, encoding="utf-8")
    assert read_daily_note_settings(tmp_path) == expected


def test_another_config_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / ".obsidian-mobile").mkdir()
    (tmp_path / ".obsidian-mobile" / "daily-notes.json").write_text('{"folder": "Days"}')
    assert read_daily_note_settings(tmp_path, ".obsidian-mobile").folder == "Days"


@pytest.mark.parametrize(("settings", "expected"), [
    (DailyNoteSettings(), "Daily/2026-12-02.md"),
    (DailyNoteSettings(folder=""), "2026-12-02.md"),
    (DailyNoteSettings(folder="Journal", format="YYYY/MM/YYYY-MM-DD"),
     "Journal/2026/12/2026-12-02.md"),
    (DailyNoteSettings(folder="J", format="../../YYYY"), "J/2026.md"),
])
def test_daily_note_path(settings: DailyNoteSettings, expected: str) -> None:
    assert daily_note_path(settings, date(2026, 12, 2)) == expected


def test_template_variables_are_filled() -> None:
    text = "# {{title}}\n{{date}} {{time}} {{ date:dddd }} {{time:HH}} {{other}}\n"
    moment = datetime(2026, 12, 2, 9, 5)
    assert render_template(text, moment, title="2026-12-02") == \
        "# 2026-12-02\n2026-12-02 09:05 Wednesday 09 {{other}}\n"


def test_diary_notes_lists_the_vaults_days_and_an_openclaw_workspaces(
        tmp_path: Path, corpora_dir: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    workspace = tmp_path / "vhex"
    shutil.copytree(corpora_dir / "memory-samples" / "openclaw" / "VhexAI__openclaw-workspace",
                    workspace)
    memory_only = corpora_dir / "memory-samples" / "openclaw" / "4078730__clawdbot-workspace" \
        / "memory"
    roots = [Root("", vault, VaultFilter()), Root("vhex:", workspace, VaultFilter()),
             Root("claw:", memory_only, VaultFilter())]
    days = [date(2026, 1, 27), date(2026, 1, 31), date(2026, 2, 4), date(2026, 11, 25),
            date(2026, 11, 26)]
    found = diary_notes(DailyNoteSettings(), roots, days)
    assert [(n.path, n.day, n.kind) for n in found] == [
        ("claw:2026-01-27.md", date(2026, 1, 27), "openclaw"),
        ("vhex:memory/2026-01-31.md", date(2026, 1, 31), "openclaw"),
        ("vhex:memory/2026-02-04.md", date(2026, 2, 4), "openclaw"),
        ("Daily/2026-11-25.md", date(2026, 11, 25), "daily-note"),
    ]
