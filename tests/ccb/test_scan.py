"""Vault ignore rules, the scandir walk, symlinks, unreadable folders, read_note guards."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccb.model import ConflictCopy, ScanResult
from ccb.scan import (
    VaultFilter,
    is_temp_file_name,
    load_user_ignore_filters,
    read_note,
    scan_paths,
    scan_vault,
)
from config.errors import NoteParseError, VaultError

# --------------------------------------------------------------------------- ignore rules

DEFAULT = VaultFilter()

IGNORE_TABLE: list[tuple[str, bool, bool]] = [
    # rel_path, is_dir, ignored
    ("Note.md", False, False),
    ("Folder/Note.md", False, False),
    ("Folder", True, False),
    ("image.png", False, False),
    ("关于睡眠的笔记.md", False, False),
    (".obsidian", True, True),
    (".obsidian/app.json", False, True),
    (".trash", True, True),
    (".trash/Old.md", False, True),
    (".git", True, True),
    (".git/HEAD", False, True),
    (".stfolder", True, True),
    (".stversions/Note~20240101-101010.md", False, True),
    (".stignore", False, True),
    (".syncthing.Note.md.tmp", False, True),
    ("Folder/.Note.md.icloud", False, True),
    (".DS_Store", False, True),
    ("Folder/.hidden/Note.md", False, True),
    ("node_modules", True, True),
    ("a/node_modules/x.md", False, True),
    ("Note.md~", False, True),
    ("4913", False, True),
    ("Folder/4913", False, True),
    ("Note.md.new", False, True),
    ("Note.tmp", False, True),
    ("Note.md.swp", False, True),
    ("Note.md.swx", False, True),
    ("video.mp4.part", False, True),
    ("file.crdownload", False, True),
    (".goutputstream-ABC123", False, True),
    ("Note.md.dreamd-tmp", False, True),
    ("Memory/x.md.1a2b3c.dreamd-tmp", False, True),
    ("Note.sync-conflict-20240305-184500-ABCDEF1.md", False, True),
    ("Note (Conflicted copy Laptop 202403051845).md", False, True),
    ("Notes.md.backup", False, False),
    ("tmp/Note.md", False, False),
    ("Thumbs.db", False, True),
]


@pytest.mark.parametrize(("rel_path", "is_dir", "ignored"), IGNORE_TABLE)
def test_default_ignore_rules(rel_path: str, is_dir: bool, ignored: bool) -> None:
    assert DEFAULT.is_ignored(rel_path, is_dir=is_dir) is ignored


def test_custom_config_folder() -> None:
    vfilter = VaultFilter(config_folder="_config")
    assert vfilter.is_ignored("_config", is_dir=True)
    assert vfilter.is_ignored("_config/app.json")
    assert not vfilter.is_ignored("_configuration/x.md")


@pytest.mark.parametrize(
    ("exclude", "rel_path", "is_dir", "ignored"),
    [
        (("*.pdf",), "a/b/doc.pdf", False, True),
        (("*.pdf",), "a/doc.md", False, False),
        (("Archive",), "Archive", True, True),
        (("Archive",), "x/Archive/y.md", False, True),
        (("Archive/**",), "Archive/y.md", False, True),
        (("Archive/*.md",), "Archive/y.md", False, True),
        (("Archive/*.md",), "Archive/sub/y.md", False, False),
        (("Archive/**/*.md",), "Archive/sub/y.md", False, True),
        (("Templates/",), "Templates", True, True),
        (("Daily/2024-*",), "Daily/2024-01-01.md", False, True),
        (("Daily/2024-*",), "Daily/2025-01-01.md", False, False),
        (("[Dd]rafts",), "drafts/x.md", False, True),
    ],
)
def test_exclude_globs(
    exclude: tuple[str, ...], rel_path: str, is_dir: bool, ignored: bool
) -> None:
    assert VaultFilter(exclude=exclude).is_ignored(rel_path, is_dir=is_dir) is ignored


@pytest.mark.parametrize(
    ("rel_path", "is_dir", "ignored"),
    [
        ("Notes/a.md", False, False),
        ("Memory/m.md", False, False),
        ("Other/a.md", False, True),
        ("Other", True, False),  # include never prunes a folder
        ("Notes/pic.png", False, True),
    ],
)
def test_include_globs(rel_path: str, is_dir: bool, ignored: bool) -> None:
    vfilter = VaultFilter(include=("Notes/**/*.md", "Notes/*.md", "Memory/**"))
    assert vfilter.is_ignored(rel_path, is_dir=is_dir) is ignored


@pytest.mark.parametrize(
    ("rel_path", "is_dir", "ignored"),
    [
        ("Archive/Ignored/x.md", False, True),
        ("Archive/Ignored", True, True),
        ("Archive/Kept.md", False, False),
        ("Private notes.md", False, True),  # plain prefix, as Obsidian does
        ("Work/secret-plan.md", False, True),  # /regex/
        ("Work/plan.md", False, False),
    ],
)
def test_user_ignore_filters(rel_path: str, is_dir: bool, ignored: bool) -> None:
    vfilter = VaultFilter(
        ignore_filters=("Archive/Ignored/", "Private", "/secret-/", "/[unclosed/")
    )
    assert vfilter.is_ignored(rel_path, is_dir=is_dir) is ignored


@pytest.mark.parametrize(
    ("name", "temp"),
    [("4913", True), ("x~", True), ("x.SWP", True), ("x.md", False), ("tmp", False)],
)
def test_is_temp_file_name(name: str, temp: bool) -> None:
    assert is_temp_file_name(name) is temp


def test_load_user_ignore_filters(tmp_path: Path) -> None:
    assert load_user_ignore_filters(tmp_path) == ()
    (tmp_path / ".obsidian").mkdir()
    app = tmp_path / ".obsidian/app.json"
    app.write_text(json.dumps({"userIgnoreFilters": ["A/", "/b+/", 3, ""]}), encoding="utf-8")
    assert load_user_ignore_filters(tmp_path) == ("A/", "/b+/")
    app.write_text("{not json", encoding="utf-8")
    assert load_user_ignore_filters(tmp_path) == ()
    app.write_text("[1, 2]", encoding="utf-8")
    assert load_user_ignore_filters(tmp_path) == ()
    vfilter = VaultFilter.for_vault(tmp_path, exclude=["x"])
    assert vfilter.exclude == ("x",)
    assert vfilter.ignore_filters == ()


# --------------------------------------------------------------------------- scan


def _write(root: Path, rel: str, text: str = "x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_scan_kinds_sorting_and_pruning(tmp_path: Path) -> None:
    for rel in [
        "b.md",
        "A/c.md",
        "A/pic.PNG",
        "Upper.MD",
        "a.canvas",
        ".obsidian/app.json",
        ".trash/t.md",
        "node_modules/pkg/readme.md",
        "A/.hidden.md",
        "A/note.md~",
        "A/note.md.dreamd-tmp",
        "Excluded/x.md",
    ]:
        _write(tmp_path, rel)
    (tmp_path / ".obsidian/app.json").write_text('{"userIgnoreFilters": ["Excluded/"]}')
    result = scan_vault(tmp_path, VaultFilter.for_vault(tmp_path))
    assert [(e.path, e.kind) for e in result.entries] == [
        ("A/c.md", "note"),
        ("A/pic.PNG", "attachment"),
        ("Upper.MD", "note"),
        ("a.canvas", "attachment"),
        ("b.md", "note"),
    ]
    entry = result.entries[0]
    st = (tmp_path / "A/c.md").stat()
    assert (entry.size, entry.mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert result.problems == ()
    assert result.conflict_copies == ()


def test_scan_reports_conflict_copies(cases_dir: Path) -> None:
    vault = cases_dir / "15-sync-conflict-copies/vault"
    result = scan_vault(vault, VaultFilter.for_vault(vault))
    assert [e.path for e in result.entries] == [
        "Links here.md",
        "Meeting notes.md",
        "Reading list.md",
    ]
    assert result.conflict_copies == (
        ConflictCopy(
            path="Meeting notes (Conflicted copy Laptop2 202403051845).md",
            conflict_of="Meeting notes.md",
        ),
        ConflictCopy(
            path="Reading list.sync-conflict-20240305-184500-ABCDEF1.md",
            conflict_of="Reading list.md",
        ),
    )
    assert result.problems == ()


def test_symlink_escaping_the_vault_is_skipped_and_reported(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    _write(vault, "in.md")
    _write(outside, "secret.md")
    (vault / "escape-dir").symlink_to(outside, target_is_directory=True)
    (vault / "escape-file.md").symlink_to(outside / "secret.md")
    (vault / "relative-escape.md").symlink_to(Path("..") / "outside" / "secret.md")
    result = scan_vault(vault, VaultFilter())
    assert [e.path for e in result.entries] == ["in.md"]
    assert sorted((p.path, p.kind) for p in result.problems) == [
        ("escape-dir", "symlink"),
        ("escape-file.md", "symlink"),
        ("relative-escape.md", "symlink"),
    ]
    assert all("outside the vault" in p.reason for p in result.problems)


def test_a_symlink_inside_the_vault_is_a_second_name_skipped_with_its_reason(
        tmp_path: Path) -> None:
    """A note is one note, under its real path: a link to it (or to its folder) is skipped
    and said, never indexed a second time under the link's name."""
    _write(tmp_path, "Real.md")
    _write(tmp_path, "Notes/n.md")
    (tmp_path / "Alias.md").symlink_to("Real.md")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/Deep.md").symlink_to("../Real.md")
    (tmp_path / "Link").symlink_to(tmp_path / "Notes", target_is_directory=True)
    (tmp_path / "Notes/loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "Notes/self").symlink_to(tmp_path / "Notes", target_is_directory=True)
    result = scan_vault(tmp_path, VaultFilter())
    assert [e.path for e in result.entries] == ["Notes/n.md", "Real.md"]
    assert [(p.path, p.kind, p.reason) for p in result.problems] == [
        ("Alias.md", "symlink", "link to Real.md"),
        ("Link", "symlink", "link to Notes/"),
        ("Notes/loop", "symlink", "loop: points to a parent folder"),
        ("Notes/self", "symlink", "loop: points to a parent folder"),
        ("sub/Deep.md", "symlink", "link to Real.md"),
    ]
    # the watcher's view of the same paths agrees
    looked = scan_paths(tmp_path, VaultFilter(), ["Alias.md", "sub/Deep.md", "Link", "Real.md"])
    assert [e.path for e in looked.entries] == ["Real.md"]
    assert [(p.path, p.reason) for p in looked.problems] == [
        ("Alias.md", "link to Real.md"), ("Link", "link to Notes/"),
        ("sub/Deep.md", "link to Real.md")]


def test_a_symlink_to_an_ignored_file_stands_for_it(tmp_path: Path) -> None:
    """The target is never indexed under its own path (a dot-folder, an excluded folder):
    the link is the only name the vault gives it, and is followed as before."""
    _write(tmp_path, ".hidden/kept.md")
    _write(tmp_path, "Drafts/d.md")
    (tmp_path / "shown.md").symlink_to(".hidden/kept.md")
    (tmp_path / "draft.md").symlink_to("Drafts/d.md")
    result = scan_vault(tmp_path, VaultFilter(exclude=("Drafts",)))
    assert [e.path for e in result.entries] == ["draft.md", "shown.md"]
    assert result.problems == ()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_skipped_with_its_reason_and_never_opened(tmp_path: Path) -> None:
    _write(tmp_path, "a.md")
    os.mkfifo(tmp_path / "pipe.md")  # opening it to read would block the walk
    os.mkfifo(tmp_path / ".quiet.md")  # an ignored name: nothing to say
    (tmp_path / "to-pipe.md").symlink_to("pipe.md")
    result = scan_vault(tmp_path, VaultFilter())
    assert [e.path for e in result.entries] == ["a.md"]
    assert [(p.path, p.kind, p.reason) for p in result.problems] == [
        ("pipe.md", "skipped", "a FIFO (named pipe), not a regular file: never opened"),
        ("to-pipe.md", "symlink", "link to pipe.md"),
    ]
    looked = scan_paths(tmp_path, VaultFilter(), ["pipe.md"])
    assert looked.entries == ()
    assert [(p.path, p.kind) for p in looked.problems] == [("pipe.md", "skipped")]


def test_broken_symlink_is_reported(tmp_path: Path) -> None:
    (tmp_path / "gone.md").symlink_to(tmp_path / "missing.md")
    result = scan_vault(tmp_path, VaultFilter())
    assert result.entries == ()
    assert [(p.path, p.kind) for p in result.problems] == [("gone.md", "symlink")]


@pytest.fixture
def world_readable_tmp() -> Iterator[Path]:
    """A temporary folder other users can enter (pytest's tmp_path parents are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="dreamd-scan-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for folder in path.rglob("*"):
            if folder.is_dir() and not folder.is_symlink():
                folder.chmod(0o755)
        shutil.rmtree(path)


def _scan_as_unprivileged(root: Path) -> ScanResult:
    """Scan as ``nobody`` when running as root (root reads 0o000 folders)."""
    if os.geteuid() != 0:
        return scan_vault(root, VaultFilter())
    os.seteuid(65534)
    try:
        return scan_vault(root, VaultFilter())
    finally:
        os.seteuid(0)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_unreadable_folder_is_reported_and_scan_continues(world_readable_tmp: Path) -> None:
    vault = world_readable_tmp
    _write(vault, "ok.md")
    _write(vault, "Locked/secret.md")
    _write(vault, "Z/after.md")
    for path in vault.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (vault / "Locked").chmod(0o000)
    result = _scan_as_unprivileged(vault)
    assert [e.path for e in result.entries] == ["Z/after.md", "ok.md"]
    assert [(p.path, p.kind) for p in result.problems] == [("Locked", "read")]


def test_missing_root_or_file_root_raises_vault_error(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="not found"):
        scan_vault(tmp_path / "nope", VaultFilter())
    file_root = _write(tmp_path, "file.md")
    with pytest.raises(VaultError, match="not a folder"):
        scan_vault(file_root, VaultFilter())


def test_scan_does_not_touch_files(tmp_path: Path) -> None:
    path = _write(tmp_path, "n.md", "---\na: 1\n---\n")
    before = path.stat()
    scan_vault(tmp_path, VaultFilter())
    after = path.stat()
    assert (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)


# --------------------------------------------------------------------------- read_note


def test_read_note_parses(tmp_path: Path) -> None:
    _write(tmp_path, "Folder/N.md", "---\ntags: [x]\n---\nbody\n")
    note = read_note(tmp_path, "Folder/N.md")
    assert (note.path, note.title, note.tags, note.body) == ("Folder/N.md", "N", ("x",), "body\n")


def test_read_note_refuses_escapes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    _write(tmp_path, "outside.md")
    (vault / "link.md").symlink_to(tmp_path / "outside.md")
    for rel in ["../outside.md", "link.md", str(tmp_path / "outside.md"), ""]:
        with pytest.raises(VaultError, match="leaves the vault"):
            read_note(vault, rel)


def test_read_note_os_error_is_note_parse_error(tmp_path: Path) -> None:
    with pytest.raises(NoteParseError, match=r"ccb: read missing\.md: "):
        read_note(tmp_path, "missing.md")
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(NoteParseError, match=r"dir\.md"):
        read_note(tmp_path, "dir.md")


def test_a_note_replaced_by_a_fifo_after_the_walk_is_not_read(tmp_path: Path) -> None:
    """A cold index reads a note up to an hour after the walk listed it: a FIFO put in its
    place since would block the read (and the sync holding the vault) until some process
    wrote to it."""
    import threading

    (tmp_path / "Log.md").write_text("# Log\n", encoding="utf-8")
    assert [e.path for e in scan_vault(tmp_path, VaultFilter()).entries] == ["Log.md"]
    (tmp_path / "Log.md").unlink()
    os.mkfifo(tmp_path / "Log.md")
    errors: list[str] = []

    def read() -> None:
        try:
            read_note(tmp_path, "Log.md")
        except NoteParseError as error:
            errors.append(str(error))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # (a writer's open lets the blocked read end)
        os.close(os.open(tmp_path / "Log.md", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("the read of a note replaced by a FIFO blocked")
    assert errors == ["ccb: read Log.md: a FIFO (named pipe), not a regular file: never opened"]


def test_a_note_replaced_by_a_symlink_as_it_is_read_is_not_followed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The note becomes a symlink out of the vault between the check of its real path and
    its open: the open does not follow it."""
    import ccb.scan as scan

    vault, outside = tmp_path / "vault", tmp_path / "secret.md"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n", encoding="utf-8")
    outside.write_text("outside the vault\n", encoding="utf-8")
    resolved = scan.realpath_under

    def swapped(real_root: str, rel_path: str) -> str:
        target = resolved(real_root, rel_path)
        (vault / "Note.md").unlink()
        (vault / "Note.md").symlink_to(outside)
        return target

    monkeypatch.setattr(scan, "realpath_under", swapped)
    with pytest.raises(NoteParseError, match=r"Note\.md: a symlink now .*never followed"):
        read_note(vault, "Note.md")


def test_a_file_name_that_is_not_utf8_is_reported_and_left_alone(tmp_path: Path) -> None:
    # names in another encoding come from old archives and other systems' copies
    (tmp_path / "ok.md").write_text("# ok\n", "utf-8")
    raw = os.fsencode(tmp_path) + b"/caf\xe9 latin1.md"
    with open(raw, "wb") as handle:
        handle.write(b"# x\n")
    result = scan_vault(tmp_path, VaultFilter())
    assert [e.path for e in result.entries] == ["ok.md"]
    assert [(p.path, p.kind) for p in result.problems] == [("caf\\xe9 latin1.md", "decode")]
    with open(raw, "rb") as handle:
        assert handle.read() == b"# x\n"


def test_realpath_under_is_realpath_looking_at_the_vault_part_only(tmp_path: Path) -> None:
    """Every vault path, link, escape and odd spelling resolves as ``os.path.realpath`` does
    (the reads and writes of a dream resolve some 50,000 paths)."""
    from ccb.scan import realpath_under

    root = os.path.realpath(tmp_path / "vault")
    (Path(root) / "a" / "b").mkdir(parents=True)
    (Path(root) / "a" / "b" / "x.md").write_text("x\n", encoding="utf-8")
    (Path(root) / "L").symlink_to(Path(root) / "a")
    (Path(root) / "a" / "out").symlink_to(tmp_path)
    for rel in ["a/b/x.md", "a/b/missing.md", "L/b/x.md", "a/out/vault/a", "/etc/hosts",
                "a/../a/b/x.md", "a//b/x.md", "", "a/b/x.md/z", "a/./b/x.md", "a/b/",
                "../outside.md"]:
        want = os.path.realpath(os.path.join(root, rel))  # noqa: PTH118 - the reference
        assert realpath_under(root, rel) == want, rel
