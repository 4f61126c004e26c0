"""`dreamd export --format entries|files`, `dreamd import` and `dreamd forget file.md#key`,
as a user runs them (real subprocesses; export and import index nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from entry_corpus import generate

from ccb.entries import entry_key

REPO = Path(__file__).resolve().parents[2]


def dreamd(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-P", "-m", "daemon", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False, timeout=300)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*.md"))}


def _vault(path: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (path / "Memory" / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / "Memory" / rel).write_bytes(data)
    (path / "Memory").mkdir(parents=True, exist_ok=True)
    return path


def test_a_thousand_entries_go_out_as_files_and_come_back_byte_for_byte(tmp_path: Path
                                                                        ) -> None:
    entries = generate(seed=2206, files=50, per_file=20)
    source = _vault(tmp_path / "a", entries)
    out = tmp_path / "export"
    done = dreamd("export", "--format", "files", "--to", str(out), "--vault", str(source))
    assert done.returncode == 0, done.stderr
    assert "exported 1000 file(s) as files" in done.stdout and done.stderr == ""
    assert len(_tree(out)) == 1000
    target = _vault(tmp_path / "b", {})
    done = dreamd("import", str(out), "--as", "entries", "--vault", str(target))
    assert done.returncode == 0, done.stderr
    assert "imported 50 file(s) as entries" in done.stdout
    assert _tree(target / "Memory") == entries
    # and the other way: the memory files come back as the same memory files
    again = tmp_path / "export-entries"
    done = dreamd("export", "--format", "entries", "--to", str(again), "--vault", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("exported 0 file(s)")  # the vault holds entry files only
    done = dreamd("import", str(out), "--as", "files", "--vault", str(target))
    assert done.returncode == 0, done.stderr
    assert "imported 1000 file(s) as files" in done.stdout
    assert _tree(target / "Memory") == {**entries, **_tree(out)}


def test_bad_requests_get_one_line_and_an_exit_code(tmp_path: Path) -> None:
    source = _vault(tmp_path / "a", {"facts.md": b"- one <!--m:subj=x-->\n"})
    done = dreamd("export", "--format", "xml", "--to", str(tmp_path / "o"), "--vault",
                  str(source))
    assert done.returncode == 2 and "entries or files" in done.stderr
    assert "Traceback" not in done.stderr
    clash = tmp_path / "clash"
    (clash / "facts").mkdir(parents=True)
    (clash / "facts" / "0001-one.md").write_text("mine\n", encoding="utf-8")
    done = dreamd("export", "--format", "files", "--to", str(clash), "--vault", str(source))
    assert done.returncode == 4, done.stderr
    assert "0001-one.md exists with other content" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert (clash / "facts" / "0001-one.md").read_text(encoding="utf-8") == "mine\n"
    done = dreamd("import", str(tmp_path / "missing"), "--vault", str(source))
    assert done.returncode == 4 and "is not a folder" in done.stderr


def test_forget_an_entry_removes_its_line_only(tmp_path: Path) -> None:
    text = "- 我在余杭区 <!--m:subj=所在地-->\n- Works late\n- Drinks oolong tea\n"
    source = _vault(tmp_path / "a", {"facts.md": text.encode()})
    ref = f"Memory/facts.md#{entry_key('Works late')}"
    done = dreamd("forget", ref, "--yes", "--vault", str(source))
    assert done.returncode == 0, done.stderr
    assert f"forgot {ref}" in done.stdout
    assert (source / "Memory" / "facts.md").read_text(encoding="utf-8") == (
        "- 我在余杭区 <!--m:subj=所在地-->\n- Drinks oolong tea\n")
    done = dreamd("forget", ref, "--yes", "--vault", str(source))
    assert done.returncode == 2 and "no entry" in done.stderr and "Traceback" not in done.stderr


def test_show_an_entry_prints_its_line(tmp_path: Path) -> None:
    """`dreamd show file.md#key` prints the entry's line as the file holds it (a new user
    found show and history refused entry keys that forget took)."""
    text = "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02-->\n- Works late\n"
    source = _vault(tmp_path / "a", {"facts.md": text.encode()})
    ref = f"Memory/facts.md#{entry_key('我在余杭区')}"
    done = dreamd("show", ref, "--vault", str(source))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02-->"
    missing = dreamd("show", "Memory/facts.md#0000", "--vault", str(source))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
