"""``dreamd check`` names every file it cannot read whole, as a user runs it (the real
``dreamd``, the real model, real LanceDB): a template of kepano's vault whose frontmatter is
no YAML until Obsidian fills in ``{{date}}`` (copied byte for byte from
``../shared/corpora/kepano-obsidian``), a note with broken YAML, a memory with a property
it cannot read. Each is one line — the file and the parser's reason —, each is left as it
is, and each is indexed as far as it reads.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dreamd_cli import dreamd_on

TEMPLATE = "kepano-obsidian/Templates/Book Template.md"


def test_check_lists_each_file_it_cannot_read_whole(tmp_path: Path, corpora_dir: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Templates").mkdir(parents=True)
    (vault / "Memory").mkdir()
    template = vault / "Templates" / "Book Template.md"
    shutil.copyfile(corpora_dir / TEMPLATE, template)
    broken = vault / "读书笔记.md"
    broken.write_bytes("---\ntags: [reading\n作者: 村上春树\n---\n一本关于跑步的书。\n".encode())
    memory = vault / "Memory" / "piano.md"
    memory.write_bytes(b"---\nname: Piano lessons\ndescription: Piano lessons moved\n"
                       b"type: project\nsupersedes: {a: 1}\n---\nPiano lessons moved to "
                       b"Thursday evenings.\n")
    before = {p: p.read_bytes() for p in (template, broken, memory)}
    run = dreamd_on(vault)

    synced = run("sync")
    assert synced.returncode == 0, synced.stderr
    assert "1 template whose frontmatter is YAML only once filled in" in synced.stdout
    checked = run("check").stdout
    lines = [" ".join(line.split()) for line in checked.splitlines()]
    assert "3 problem files (indexed as far as they read, never modified):" in lines
    assert ("Templates/Book Template.md: template: frontmatter is not valid YAML (line 13, "
            "column 11): while constructing a mapping found unhashable key; read with its "
            "template placeholders as text") in lines
    assert any(line.startswith("读书笔记.md: yaml: frontmatter is not valid YAML (line 3")
               for line in lines), checked
    assert ("Memory/piano.md: memory: memory key 'supersedes': expected text, found dict"
            in lines)
    # a file read again (it changed since sync) is reported as it reads now
    broken.write_bytes("---\ntags: [reading]\n---\n一本关于跑步的书。\n".encode())
    report = json.loads(run("check", "--fix", "--json").stdout)
    assert sorted(p["path"] for p in report["problems"]) == [
        "Memory/piano.md", "Templates/Book Template.md"]
    broken.write_bytes(before[broken])
    for path, data in before.items():
        assert path.read_bytes() == data, path  # left alone, byte for byte
    found = json.loads(run("search", "Book Template", "--json").stdout)
    assert any(hit["path"] == "Templates/Book Template.md" for hit in found)
