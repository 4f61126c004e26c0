"""Links in Obsidian comments, HTML comments and code, through ``dreamd sync``,
``dreamd graph export`` and ``dreamd check`` as a user runs them (the real ``dreamd``, the
real model, real LanceDB). dreamd follows Obsidian's metadata cache (``ccb.markdown``): a
link inside ``%% … %%`` — inline or a block — is a link (an edge, and a broken link when it
names nothing); one inside ``<!-- … -->`` or code is none; and code names no note for a
``mentions`` edge.
"""

from __future__ import annotations

import json
from pathlib import Path

from dreamd_cli import dreamd_on

NOTES = {
    "Notes/Kiln log.md": "# Kiln log\nFired the bisque on Sunday.\n",
    "Notes/Glaze recipes.md": "# Glaze recipes\nCeladon: 4 parts feldspar.\n",
    "Notes/Studio plan.md": (
        "# Studio plan\n\nOrder clay this week; see [[Kiln log]].\n"
        "Open question %% compare with [[Glaze recipes]] %% for the spring firing.\n\n"
        "%%\nParked ideas:\n- ![[Glaze recipes]]\n- [[Pottery wheel]] (not written yet)\n%%\n\n"
        "<!-- old plan: [[Old studio]] -->\n\n"
        "```\nexample: [[Kiln log#Sunday]] [[Code only]]\n```\n"
        "Inline code `[[Also code only]]` is an example.\n"),
    "读书清单.md": "# 读书清单\n- 《挪威的森林》\n",
    "日记/2026-12-04.md": "今天读完了一本书。%% 参见 [[读书清单]] %% <!-- [[旧清单]] -->\n",
    "Memory/studio-move.md": (
        "---\nname: Studio move\ndescription: The studio moves in January\ntype: project\n"
        "---\nThe studio moves in January; %% check [[Moving checklist]] %% the Glaze "
        "recipes binder goes first. Log firings with `kiln log --today`.\n"),
}


def test_links_in_comments_and_code_as_obsidian_counts_them(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    run = dreamd_on(vault)

    assert run("sync").returncode == 0
    exported = run("graph", "export", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    edges = {(e["source"].split(":", 1)[1], e["target"].split(":", 1)[1], e["relation"])
             for e in json.loads(exported.stdout)["edges"]}
    plan = "Notes/Studio plan.md"
    assert {(dst, rel) for src, dst, rel in edges if src == plan} == {
        ("Notes/Kiln log.md", "links_to"),          # plain text
        ("Notes/Glaze recipes.md", "links_to"),     # inline %% comment
        ("Notes/Glaze recipes.md", "embeds"),       # %% block comment
        ("pottery wheel", "links_to"),              # %% block comment, no such note
    }  # nothing from the HTML comment, the code block or inline code
    assert {(dst, rel) for src, dst, rel in edges if src == "日记/2026-12-04.md"} == {
        ("读书清单.md", "links_to")}
    memory = "Memory/studio-move.md"
    mentions = {dst for src, dst, rel in edges if src == memory and rel == "mentions"}
    assert mentions == {"Notes/Glaze recipes.md"}  # `kiln log --today` is code: no mention
    report = json.loads(run("check", "--json").stdout)
    broken = [(i["drift"]["path"], i["drift"]["target"]) for i in report["items"]
              if i["kind"] == "broken_link"]
    assert broken == [(memory, "Moving checklist")]  # the link in its comment names nothing
