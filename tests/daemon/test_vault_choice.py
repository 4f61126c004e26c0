"""Which vault a command line means when neither it nor the settings name one: the indexed
vault holding the working folder, else the only one indexed (said on stderr), else an error
listing them. The rule itself (pure), then the real ``dreamd`` in real working folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.vault_choice import choose_vault, indexed_vaults, no_vault_chosen, obsidian_vault

DREAMD = Path(sys.executable).with_name("dreamd")


def test_the_vault_holding_the_working_folder_wins(tmp_path: Path) -> None:
    notes, work = tmp_path / "Notes", tmp_path / "Work"
    for cwd in (notes, notes / "Daily", notes / "a" / "b" / "c"):
        choice = choose_vault([work, notes], cwd)
        assert choice is not None and (choice.vault, choice.why) == (notes, "cwd")
        assert choice.note is None
    # a vault inside another: the innermost holding the folder, either order
    inner = notes / "Projects" / "Kiln"
    for order in ([notes, inner], [inner, notes]):
        assert choose_vault(order, inner / "Glazes").vault == inner  # type: ignore[union-attr]
        assert choose_vault(order, notes / "Projects").vault == notes  # type: ignore[union-attr]


def test_a_look_alike_folder_is_not_inside_the_vault(tmp_path: Path) -> None:
    notes = tmp_path / "Notes"
    # a sibling whose name starts with the vault's, and the vault's parent: not in it
    for cwd in (tmp_path / "Notes-old", tmp_path / "Notes2" / "x", tmp_path):
        assert choose_vault([notes, tmp_path / "Other"], cwd) is None
        only = choose_vault([notes], cwd)
        assert only is not None and (only.vault, only.why) == (notes, "only")
        assert only.note is not None and str(notes) in only.note
    assert choose_vault([], tmp_path) is None


def test_a_folder_obsidian_keeps_as_a_vault_wins_over_the_only_indexed_one(
    tmp_path: Path,
) -> None:
    notes, fresh = tmp_path / "Notes", tmp_path / "新的 笔记"
    for cwd in (fresh, fresh / "Daily", fresh / "a" / "b"):
        choice = choose_vault([notes], cwd, fresh)
        assert choice is not None and (choice.vault, choice.why) == (fresh, "cwd")
        assert choice.note is None
    # the innermost of indexed and opened vaults holding the folder, either way round
    inner = fresh / "Projects"
    assert choose_vault([inner], inner / "x", fresh).vault == inner  # type: ignore[union-attr]
    assert choose_vault([fresh], inner / "x", inner).vault == inner  # type: ignore[union-attr]
    # an opened folder that does not hold the working folder decides nothing
    for cwd in (tmp_path / "新的 笔记-old", tmp_path, None):
        only = choose_vault([notes], cwd, fresh)
        assert only is not None and (only.vault, only.why) == (notes, "only")
        assert choose_vault([notes, tmp_path / "Work"], cwd, fresh) is None


def test_obsidian_vault_is_the_nearest_folder_holding_dot_obsidian(tmp_path: Path) -> None:
    outer, inner = tmp_path / "Notes", tmp_path / "Notes" / "Sub vault"
    (outer / ".obsidian").mkdir(parents=True)
    (inner / ".obsidian").mkdir(parents=True)
    (inner / "Daily" / "2026").mkdir(parents=True)
    (outer / "Daily").mkdir()
    assert obsidian_vault(inner / "Daily" / "2026") == inner
    assert obsidian_vault(outer / "Daily") == outer
    assert obsidian_vault(outer) == outer
    # look-alikes: a file named .obsidian, a folder named obsidian or .obsidian-old
    for name, make in [(".obsidian", "file"), ("obsidian", "dir"), (".obsidian-old", "dir"),
                       (".Obsidian_", "dir")]:
        folder = tmp_path / f"plain {name}"
        folder.mkdir()
        (folder / name).mkdir() if make == "dir" else (folder / name).write_text("{}", "utf-8")
        assert obsidian_vault(folder) is None, name
    assert obsidian_vault(tmp_path) is None
    assert obsidian_vault(None) is None


def test_the_home_folder_and_the_root_are_no_vault_for_holding_dot_obsidian(
    tmp_path: Path,
) -> None:
    # a .obsidian/ in the home folder would take every command run anywhere below it
    home = tmp_path / "home" / "me"
    (home / ".obsidian").mkdir(parents=True)
    (home / "code" / "kiln").mkdir(parents=True)
    for cwd in (home, home / "code", home / "code" / "kiln"):
        assert obsidian_vault(cwd, home) is None
    notes = home / "Notes"
    only = choose_vault([notes], home / "code", obsidian_vault(home / "code", home))
    assert only is not None and (only.vault, only.why) == (notes, "only")
    # a vault below the home folder is still one; look-alikes of the home folder are vaults
    (notes / ".obsidian").mkdir(parents=True)
    (notes / "Daily").mkdir()
    assert obsidian_vault(notes / "Daily", home) == notes
    for other in (tmp_path / "home" / "me2", tmp_path / "home" / "me" / "me", tmp_path / "home"):
        (other / ".obsidian").mkdir(parents=True, exist_ok=True)
        assert obsidian_vault(other, home) == other
    # indexed, the home folder is chosen like any vault (dreamd sync ~ said so)
    assert choose_vault([home], home / "code", None).vault == home  # type: ignore[union-attr]
    # the root: passed over whatever it holds (it is never written to here)
    root = Path(tmp_path.anchor)
    assert root.parent == root and obsidian_vault(root, home) is None


def test_a_command_line_under_a_home_folder_holding_dot_obsidian_uses_the_indexed_vault(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / ".obsidian").mkdir(parents=True)
    (home / "code" / "kiln").mkdir(parents=True)
    notes = home / "Notes 笔记"
    (notes / ".obsidian").mkdir(parents=True)
    state = Path(os.environ["DREAMD_STORAGE__DATA_DIR"]) / "vaults" / "notes"
    state.mkdir(parents=True)
    (state / "vault.json").write_text(json.dumps({"path": str(notes)}), "utf-8")
    done = subprocess.run([str(DREAMD), "status", "--json"], cwd=home / "code" / "kiln",
                          capture_output=True, text=True, env={**os.environ, "HOME": str(home)},
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["vault"] == str(notes)
    assert f"using {notes}, the only vault indexed" in done.stderr
    assert not (home / "Daily").exists()


def test_the_error_names_the_indexed_vaults_as_options_to_give(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    notes, work, chinese = Path("/home/me/Notes"), Path("/home/me/My Work"), Path("/v/工作笔记")
    said = no_vault_chosen([notes, work, chinese], tmp_path / "elsewhere", config)
    assert said.startswith(f"no vault given, and {tmp_path / 'elsewhere'} is in no indexed "
                           "vault: choose one of the indexed vaults with --vault /home/me/Notes "
                           "or --vault '/home/me/My Work' or --vault '/v/工作笔记', ")
    assert str(config) in said and "~/Notes" not in said
    gone = no_vault_chosen([notes, work], None, config)
    assert "the working folder no longer exists" in gone
    assert "--vault /home/me/Notes or --vault '/home/me/My Work'," in gone
    # nothing indexed: nothing to choose from, so how to give a vault
    none = no_vault_chosen([], tmp_path, config)
    assert "none is indexed yet" in none and "--vault VAULT" in none
    assert "~/Notes" not in none


def test_indexed_vaults_reads_the_state_folders(tmp_path: Path) -> None:
    for name, record in [("a", {"path": "/v/笔记"}), ("b", {"path": 3}), ("c", None)]:
        (tmp_path / "vaults" / name).mkdir(parents=True)
        if record is not None:
            (tmp_path / "vaults" / name / "vault.json").write_text(json.dumps(record), "utf-8")
    (tmp_path / "vaults" / "d").mkdir()
    (tmp_path / "vaults" / "d" / "vault.json").write_text("{not json", "utf-8")
    assert indexed_vaults(tmp_path) == [Path("/v/笔记")]
    assert indexed_vaults(tmp_path / "nowhere") == []


def _dreamd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(DREAMD), *args], cwd=cwd, capture_output=True, text=True,
                          env=os.environ.copy(), timeout=300, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _vault(folder: Path, note: str) -> Path:
    (folder / "Daily").mkdir(parents=True)
    (folder / f"{note}.md").write_text(f"# {note}\n\nA note of this vault only.\n", "utf-8")
    return folder.resolve()


@pytest.mark.slow
def test_a_command_line_naming_no_vault_follows_the_working_folder(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    notes = _vault(tmp_path / "Notes", "Kiln")
    work = _vault(tmp_path / "Work", "Roadmap")
    assert _dreamd("sync", str(notes), cwd=outside).returncode == 0

    # one vault indexed: used from anywhere, and said on stderr when outside it
    status = _dreamd("status", "--json", cwd=outside)
    assert status.returncode == 0 and json.loads(status.stdout)["vault"] == str(notes)
    assert f"using {notes}, the only vault indexed" in status.stderr
    inside = _dreamd("status", "--json", cwd=notes / "Daily")
    assert json.loads(inside.stdout)["vault"] == str(notes)
    assert "only vault indexed" not in inside.stderr

    assert _dreamd("sync", str(work), cwd=outside).returncode == 0
    # two vaults indexed: the working folder decides; outside both, an error naming them
    for cwd, vault in [(work, work), (work / "Daily", work), (notes / "Daily", notes)]:
        chosen = _dreamd("status", "--json", cwd=cwd)
        assert chosen.returncode == 0, chosen.stderr
        assert json.loads(chosen.stdout)["vault"] == str(vault)
        assert "only vault indexed" not in chosen.stderr
    refused = _dreamd("status", cwd=outside)
    assert refused.returncode == 3 and refused.stdout == ""
    assert "no vault given" in refused.stderr and f"{outside} is in no indexed vault" \
        in refused.stderr
    assert f"--vault {notes}" in refused.stderr and f"--vault {work}" in refused.stderr
    # --vault still names any vault from anywhere
    named = _dreamd("status", "--json", "--vault", str(work), cwd=notes)
    assert json.loads(named.stdout)["vault"] == str(work)


def test_a_working_folder_deleted_since_is_in_no_vault(tmp_path: Path) -> None:
    notes, work = tmp_path / "Notes", tmp_path / "Work"
    assert choose_vault([notes, work], None) is None
    only = choose_vault([notes], None)
    assert only is not None and (only.vault, only.why) == (notes, "only")


def test_a_command_line_in_a_deleted_folder_says_so(tmp_path: Path) -> None:
    # two vaults indexed (their records), the shell's folder deleted under it: exit 3 naming
    # them, no traceback, whether a daemon is asked first or not
    data = Path(os.environ["DREAMD_STORAGE__DATA_DIR"])
    for name in ("Notes", "工作 笔记"):
        (tmp_path / name).mkdir()
        state = data / "vaults" / name
        state.mkdir(parents=True)
        (state / "vault.json").write_text(json.dumps({"path": str(tmp_path / name)}), "utf-8")
    gone = tmp_path / "gone"
    gone.mkdir()
    for command in (["status"], ["search", "kiln"]):
        done = subprocess.run(
            ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone),
             str(DREAMD), *command], capture_output=True, text=True, env=os.environ.copy(),
            timeout=300, check=False)
        gone.mkdir()
        assert "Traceback" not in done.stderr and "Errno" not in done.stderr, done.stderr
        assert done.returncode == 3 and done.stdout == "", done.stderr
        assert "the working folder no longer exists" in done.stderr
        assert f"--vault {tmp_path / 'Notes'}" in done.stderr
        assert f"--vault '{tmp_path / '工作 笔记'}'" in done.stderr


@pytest.mark.slow
def test_a_command_line_in_a_new_obsidian_vault_works_on_it(tmp_path: Path) -> None:
    # one vault indexed; the user opens a new vault in Obsidian and runs dreamd sync in it
    notes = _vault(tmp_path / "Notes", "Kiln")
    assert _dreamd("sync", str(notes), cwd=tmp_path).returncode == 0
    fresh = _vault(tmp_path / "新的 vault", "Garden")
    (fresh / ".obsidian").mkdir()
    synced = _dreamd("sync", "--json", cwd=fresh / "Daily")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["added"] == 1
    assert "only vault indexed" not in synced.stderr
    status = json.loads(_dreamd("status", "--json", cwd=fresh).stdout)
    assert status["vault"] == str(fresh) and status["counts"]["notes"] == 1
    # the first vault is as it was; a folder that only looks like a vault (obsidian/ without
    # the dot) is in neither of the two vaults now indexed: refused, exit 3
    kept = json.loads(_dreamd("status", "--json", "--vault", str(notes), cwd=fresh).stdout)
    assert kept["counts"]["notes"] == 1
    plain = tmp_path / "plain"
    (plain / "obsidian").mkdir(parents=True)
    assert _dreamd("status", cwd=plain).returncode == 3
