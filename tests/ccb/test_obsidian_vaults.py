"""Finding the vaults Obsidian knows: real ``obsidian.json`` files in a temp home, for each
platform's layout (home, environment and platform are parameters)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.obsidian_vaults import (
    MAX_OBSIDIAN_JSON_BYTES,
    ObsidianJsonMissing,
    ObsidianJsonRead,
    ObsidianJsonUnreadable,
    discover_vaults,
    obsidian_config_dirs,
    parse_obsidian_json,
    read_obsidian_json,
)

TS_2023_MS = 1_700_000_000_000  # 2023-11-14T22:13:20Z
TS_2024_MS = 1_710_000_000_000  # 2024-03-09T16:00:00Z


def write_json(folder: Path, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "obsidian.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    return file


def one_vault(path: Path, ts: int = TS_2023_MS) -> dict[str, object]:
    return {"vaults": {"a1b2c3d4e5f60718": {"path": str(path), "ts": ts, "open": True}}}


def parse(raw: bytes, platform: str = "linux") -> ObsidianJsonRead | ObsidianJsonUnreadable:
    return parse_obsidian_json(raw, source=Path("obsidian.json"), platform=platform,
                               folder_exists=lambda _path: True)


# --------------------------------------------------------------------------- where to look

# (platform, environment given the home folder, Obsidian's config folder given the home)
Layout = tuple[str, Callable[[Path], dict[str, str]], Callable[[Path], Path]]
LAYOUTS: dict[str, Layout] = {
    "linux": ("linux", lambda h: {}, lambda h: h / ".config" / "obsidian"),
    "linux-xdg": ("linux", lambda h: {"XDG_CONFIG_HOME": str(h / "xdg")},
                  lambda h: h / "xdg" / "obsidian"),
    "linux-flatpak": ("linux", lambda h: {},
                      lambda h: h / ".var" / "app" / "md.obsidian.Obsidian" / "config"
                      / "obsidian"),
    "linux-snap": ("linux", lambda h: {},
                   lambda h: h / "snap" / "obsidian" / "current" / ".config" / "obsidian"),
    "freebsd": ("freebsd14", lambda h: {}, lambda h: h / ".config" / "obsidian"),
    "macos": ("darwin", lambda h: {},
              lambda h: h / "Library" / "Application Support" / "obsidian"),
    "windows-appdata": ("win32", lambda h: {"APPDATA": str(h / "Roaming")},
                        lambda h: h / "Roaming" / "obsidian"),
    "windows-no-appdata": ("win32", lambda h: {},
                           lambda h: h / "AppData" / "Roaming" / "obsidian"),
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_each_platform_layout_is_found(tmp_path: Path, layout: Layout) -> None:
    platform, env_of, folder_of = layout
    home = tmp_path / "home"
    notes = home / "Notes"
    notes.mkdir(parents=True)
    file = write_json(folder_of(home), one_vault(notes))

    found = discover_vaults(home=home, env=env_of(home), platform=platform)

    assert [(v.name, v.path, v.exists, v.source) for v in found.vaults] == [
        ("Notes", notes, True, file)
    ]
    assert folder_of(home) in obsidian_config_dirs(
        home=home, env=env_of(home), platform=platform)


def test_linux_looks_in_xdg_then_the_default_then_flatpak_and_snap(tmp_path: Path) -> None:
    home = tmp_path
    assert obsidian_config_dirs(home=home, env={"XDG_CONFIG_HOME": "/x"}, platform="linux") == (
        Path("/x/obsidian"),
        home / ".config" / "obsidian",
        home / ".var" / "app" / "md.obsidian.Obsidian" / "config" / "obsidian",
        home / "snap" / "obsidian" / "current" / ".config" / "obsidian",
    )
    # XDG_CONFIG_HOME equal to the default is not searched twice; a relative one is ignored
    same = obsidian_config_dirs(home=home, env={"XDG_CONFIG_HOME": str(home / ".config")},
                                platform="linux")
    assert same == obsidian_config_dirs(home=home, env={"XDG_CONFIG_HOME": "rel/cfg"},
                                        platform="linux")
    assert len(same) == 3 and same[0] == home / ".config" / "obsidian"


def test_macos_and_windows_look_in_one_place_and_ignore_xdg(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "APPDATA": str(tmp_path / "Roaming")}
    assert obsidian_config_dirs(home=tmp_path, env=env, platform="darwin") == (
        tmp_path / "Library" / "Application Support" / "obsidian",)
    assert obsidian_config_dirs(home=tmp_path, env=env, platform="win32") == (
        tmp_path / "Roaming" / "obsidian",)
    # an obsidian.json under XDG_CONFIG_HOME is not Obsidian's on macOS (Electron ignores it)
    write_json(tmp_path / "xdg" / "obsidian", one_vault(tmp_path))
    assert discover_vaults(home=tmp_path, env=env, platform="darwin").vaults == ()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux rule")
@pytest.mark.parametrize("xdg", [True, False])
def test_the_linux_rule_agrees_with_platformdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: bool
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    else:
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    ours = obsidian_config_dirs(home=Path.home(), env=os.environ, platform=sys.platform)
    theirs = platformdirs.user_config_dir("obsidian", appauthor=False, roaming=True)
    assert ours[0] == Path(theirs)


def test_nothing_installed_reports_every_place_as_missing(tmp_path: Path) -> None:
    found = discover_vaults(home=tmp_path, env={}, platform="linux")
    assert found.vaults == () and found.unreadable == ()
    assert [type(f) for f in found.files] == [ObsidianJsonMissing] * 3
    assert [f.file for f in found.files] == [
        d / "obsidian.json" for d in obsidian_config_dirs(home=tmp_path, env={}, platform="linux")
    ]


# --------------------------------------------------------------------------- what is read


def test_vaults_come_most_recently_opened_first_with_their_fields(tmp_path: Path) -> None:
    home = tmp_path
    for name in ("Work", "Notes", "Archive"):
        (home / name).mkdir()
    file = write_json(home / ".config" / "obsidian", {
        "vaults": {
            "0000000000000001": {"path": str(home / "Notes"), "ts": TS_2023_MS, "open": True},
            "0000000000000002": {"path": str(home / "Work"), "ts": TS_2024_MS},
            "0000000000000003": {"path": str(home / "Gone"), "ts": TS_2024_MS + 1},
            "0000000000000004": {"path": str(home / "Archive")},  # no ts: last
            "0000000000000005": {"path": str(home / "b-same"), "ts": 5},
            "0000000000000006": {"path": str(home / "A-same"), "ts": 5},
        },
        "frame": "hidden",
    })

    found = discover_vaults(home=home, env={}, platform="linux")

    assert [v.name for v in found.vaults] == ["Gone", "Work", "Notes", "A-same", "b-same",
                                             "Archive"]
    gone, work, notes = found.vaults[:3]
    assert (notes.id, notes.is_open, notes.exists) == ("0000000000000001", True, True)
    assert notes.last_opened == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert (work.is_open, work.exists, work.source) == (False, True, file)
    assert gone.exists is False
    assert found.vaults[-1].last_opened is None


def test_a_vault_listed_by_two_installs_is_shown_once_with_its_latest_entry(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "Notes"
    notes.mkdir()
    write_json(tmp_path / ".config" / "obsidian", one_vault(notes, ts=TS_2023_MS))
    flatpak = write_json(
        tmp_path / ".var" / "app" / "md.obsidian.Obsidian" / "config" / "obsidian",
        one_vault(notes, ts=TS_2024_MS),
    )
    found = discover_vaults(home=tmp_path, env={}, platform="linux")
    assert [(v.path, v.source) for v in found.vaults] == [(notes, flatpak)]


def test_a_broken_file_is_reported_and_the_others_still_read(tmp_path: Path) -> None:
    notes = tmp_path / "Notes"
    notes.mkdir()
    broken = tmp_path / "snap" / "obsidian" / "current" / ".config" / "obsidian"
    broken.mkdir(parents=True)
    (broken / "obsidian.json").write_text("{not json", encoding="utf-8")
    write_json(tmp_path / ".config" / "obsidian", one_vault(notes))

    found = discover_vaults(home=tmp_path, env={}, platform="linux")

    assert [v.path for v in found.vaults] == [notes]
    assert [(u.file, u.reason.startswith("not JSON")) for u in found.unreadable] == [
        (broken / "obsidian.json", True)
    ]


def test_a_windows_path_is_named_by_its_last_folder() -> None:
    raw = json.dumps({"vaults": {"1": {"path": "C:\\Users\\ada\\My Notes\\", "ts": 1}}})
    result = parse(raw.encode(), platform="win32")
    assert isinstance(result, ObsidianJsonRead)
    assert [v.name for v in result.vaults] == ["My Notes"]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "not JSON"),
        (b"   \n", "not JSON"),
        (b"garbage{", "not JSON"),
        (b'{"vaults": {}', "not JSON"),
        (b"\xff\xfe\x00garbage", "not JSON"),
        (b"[" * 200_000 + b"]" * 200_000, "not JSON"),
        (b"[]", "not a JSON object but a list"),
        (b'"vaults"', "not a JSON object but a string"),
        (b"null", "not a JSON object but null"),
        (b"42", "not a JSON object but a number"),
        (b'{"vaults": []}', '"vaults" is a list'),
        (b'{"vaults": "~/Notes"}', '"vaults" is a string'),
        (b'{"vaults": null}', '"vaults" is null'),
    ],
    ids=["empty", "blank", "garbage", "truncated", "not-utf8", "deep", "list", "string",
         "null", "number", "vaults-list", "vaults-string", "vaults-null"],
)
def test_a_malformed_file_gives_a_reason(raw: bytes, reason: str) -> None:
    result = parse(raw)
    assert isinstance(result, ObsidianJsonUnreadable)
    assert result.reason.startswith(reason), result.reason
    assert "\n" not in result.reason and len(result.reason) < 200


def test_a_file_without_vaults_lists_none() -> None:
    assert parse(b'{"frame": "hidden"}') == ObsidianJsonRead(Path("obsidian.json"), (), 0)


def test_entries_of_the_wrong_shape_are_skipped_or_read_leniently() -> None:
    raw = json.dumps({"vaults": {
        "no-path": {"ts": TS_2023_MS, "open": True},
        "path-number": {"path": 42},
        "path-empty": {"path": "  "},
        "path-list": {"path": ["/a"]},
        "entry-list": ["/home/u/Notes"],
        "entry-string": "/home/u/Notes",
        "entry-null": None,
        "ts-string": {"path": "/v/ts-string", "ts": "1700000000000", "open": "yes"},
        "ts-bool": {"path": "/v/ts-bool", "ts": True},
        "ts-huge": {"path": "/v/ts-huge", "ts": 10**30},
        "ts-negative": {"path": "/v/ts-negative", "ts": -5},
        "ts-float": {"path": "/v/ts-float", "ts": 1.5e12, "open": 1},
    }})
    result = parse(raw.encode())
    assert isinstance(result, ObsidianJsonRead)
    assert result.skipped == 7
    by_name = {v.name: v for v in result.vaults}
    assert sorted(by_name) == ["ts-bool", "ts-float", "ts-huge", "ts-negative", "ts-string"]
    assert by_name["ts-float"].last_opened == datetime.fromtimestamp(1.5e9, tz=UTC)
    assert all(by_name[n].last_opened is None for n in by_name if n != "ts-float")
    assert not any(v.is_open for v in result.vaults)  # "yes" and 1 are not booleans
    assert result.vaults[0].name == "ts-float"  # the only one with a time comes first


def test_a_nan_or_infinite_ts_is_no_time() -> None:
    result = parse(b'{"vaults": {"a": {"path": "/a", "ts": NaN}, "b": {"path": "/b", '
                   b'"ts": Infinity}}}')
    assert isinstance(result, ObsidianJsonRead)
    assert [v.last_opened for v in result.vaults] == [None, None]


@settings(max_examples=200, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["vaults", "path", "ts", "open", "x"]) | st.text(max_size=5),
        inner, max_size=4),
    max_leaves=30,
))
def test_any_json_value_parses_without_raising(value: object) -> None:
    result = parse(json.dumps(value).encode())
    assert isinstance(result, ObsidianJsonRead | ObsidianJsonUnreadable)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_parse_without_raising(raw: bytes) -> None:
    assert isinstance(parse(raw), ObsidianJsonRead | ObsidianJsonUnreadable)


# --------------------------------------------------------------------------- reading the file


def test_a_missing_file_is_missing(tmp_path: Path) -> None:
    assert read_obsidian_json(tmp_path / "obsidian.json") == ObsidianJsonMissing(
        tmp_path / "obsidian.json")
    # a file where a folder should be: still simply not there
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert isinstance(read_obsidian_json(tmp_path / "file" / "obsidian.json"),
                      ObsidianJsonMissing)


def test_a_huge_file_is_refused_unread(tmp_path: Path) -> None:
    file = tmp_path / "obsidian.json"
    file.write_bytes(b" " * (MAX_OBSIDIAN_JSON_BYTES + 1))
    result = read_obsidian_json(file)
    assert isinstance(result, ObsidianJsonUnreadable)
    assert "limit" in result.reason and str(MAX_OBSIDIAN_JSON_BYTES) in result.reason
    write_json(tmp_path, one_vault(tmp_path))
    assert isinstance(read_obsidian_json(file, max_bytes=20), ObsidianJsonUnreadable)
    assert isinstance(read_obsidian_json(file), ObsidianJsonRead)


def test_a_folder_or_a_fifo_is_not_a_vault_list(tmp_path: Path) -> None:
    folder = tmp_path / "dir" / "obsidian.json"
    folder.mkdir(parents=True)
    assert read_obsidian_json(folder) == ObsidianJsonUnreadable(folder, "not a regular file")
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "obsidian.json"
        os.mkfifo(fifo)  # opening it would block: it must not be opened
        assert read_obsidian_json(fifo) == ObsidianJsonUnreadable(fifo, "not a regular file")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads any file")
def test_an_unreadable_file_gives_the_reason(tmp_path: Path) -> None:
    file = write_json(tmp_path, one_vault(tmp_path))
    file.chmod(0)
    try:
        assert read_obsidian_json(file) == ObsidianJsonUnreadable(file, "permission denied")
    finally:
        file.chmod(0o600)


def test_exists_is_false_for_a_file_or_an_impossible_path(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    write_json(tmp_path / ".config" / "obsidian", {"vaults": {
        "1": {"path": str(tmp_path / "a-file"), "ts": 2},
        "2": {"path": str(tmp_path / ("x" * 5000)), "ts": 1},
        "3": {"path": "/nul\u0000byte"},
    }})
    found = discover_vaults(home=tmp_path, env={}, platform="linux")
    assert [v.exists for v in found.vaults] == [False, False, False]


def test_a_relative_path_or_a_huge_timestamp_never_misleads(tmp_path: Path) -> None:
    (tmp_path / "Notes").mkdir()
    write_json(tmp_path / ".config" / "obsidian", {"vaults": {
        "1": {"path": "Notes", "ts": 5},  # relative: would be read against the cwd
        "2": {"path": str(tmp_path / "Notes"), "ts": 10 ** 400},  # too large for a float
    }})
    found = discover_vaults(home=tmp_path, env={}, platform="linux")
    assert [(v.path, v.last_opened) for v in found.vaults] == [(tmp_path / "Notes", None)]
