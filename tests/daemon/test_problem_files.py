"""``dreamd check`` names every file it cannot read whole, as a user runs it (the real
``dreamd``, the real model, real LanceDB), on kepano's vault (copied byte for byte from
``../shared/corpora/kepano-obsidian``) with a note with broken YAML and a memory with a
property it cannot read added. Each problem file is one line — the file and what is wrong,
in plain words —, each is left as it is, and each is indexed as far as it reads. The vault's
28 templates, whose frontmatter is no YAML until Obsidian fills in ``{{date}}``, are no
problem of the user's: one line counts them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dreamd_cli import dreamd_on

KEPANO = "kepano-obsidian"
#: kepano's templates whose properties hold a placeholder YAML cannot read (``created:
#: {{date}}``): the corpus README's 28.
TEMPLATES = 28
TEMPLATES_SAID = (f"{TEMPLATES} templates (properties with placeholders such as {{{{date}}}}, "
                  "filled in when a note is made from a template): indexed with the "
                  "placeholders as text, never modified")


def test_check_lists_each_file_it_cannot_read_whole(tmp_path: Path, corpora_dir: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(corpora_dir / KEPANO, vault, symlinks=True)
    (vault / "Memory").mkdir()
    broken = vault / "读书笔记.md"
    broken.write_bytes("---\ntags: [reading\n作者: 村上春树\n---\n一本关于跑步的书。\n".encode())
    memory = vault / "Memory" / "piano.md"
    memory.write_bytes(b"---\nname: Piano lessons\ndescription: Piano lessons moved\n"
                       b"type: project\nsupersedes: {a: 1}\n---\nPiano lessons moved to "
                       b"Thursday evenings.\n")
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    run = dreamd_on(vault)

    synced = run("sync")
    assert synced.returncode == 0, synced.stderr
    said = " ".join(synced.stdout.split())
    assert f"{TEMPLATES_SAID} (dreamd check --json lists them)" in said, synced.stdout
    checked = run("check").stdout
    lines = [" ".join(line.split()) for line in checked.splitlines()]
    assert "2 problem files (indexed as far as they read, never modified):" in lines, checked
    assert ("读书笔记.md: yaml: frontmatter is not valid YAML (line 3, column 3): a list "
            "opened with [ and not closed") in lines, checked
    assert ("Memory/piano.md: memory: memory key 'supersedes': expected text, found dict"
            in lines)
    assert f"{TEMPLATES_SAID} (--json lists them)" in lines, checked
    # a template is no problem file: not listed one by one, nor with the parser's words
    assert "Templates/" not in checked and "unhashable" not in checked, checked
    listed = json.loads(run("check", "--json").stdout)["problems"]
    assert sum(p["kind"] == "template" for p in listed) == TEMPLATES
    assert all(p["path"].startswith("Templates/") for p in listed if p["kind"] == "template")
    # a file read again (it changed since sync) is reported as it reads now
    broken.write_bytes("---\ntags: [reading]\n---\n一本关于跑步的书。\n".encode())
    report = json.loads(run("check", "--fix", "--json").stdout)
    assert sorted(p["path"] for p in report["problems"] if p["kind"] != "template") == [
        "Memory/piano.md"]
    broken.write_bytes(before[broken])
    for path, data in before.items():
        assert path.read_bytes() == data, path  # left alone, byte for byte
    found = json.loads(run("search", "Book Template", "--json").stdout)
    assert any(hit["path"] == "Templates/Book Template.md" for hit in found)
