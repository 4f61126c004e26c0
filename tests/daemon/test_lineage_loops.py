"""Loops and junk in the lineage properties, through ``dreamd dream`` and ``dreamd check``
as a user runs them: real subprocesses, the real embedding model, real LanceDB, a copy of the
demo vault with memory files written by hand.

``merged_into`` loops (two memories, three memories) and ``supersedes`` values that are no
link (a number, a mapping, a name of no memory, the memory's own name, a list with an empty
item) must not make the dream and the checker disagree about ``MEMORY.md``: whichever runs
first, the other leaves the file as it is; no memory drops out of it or is archived because
of a loop; ``check`` names each loop with its chain and each junk value; the files
themselves are never rewritten.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from dreamd_cli import Run, dreamd_on

_HEAD = ("---\nname: {name}\ndescription: {name}, as written by hand\ntype: project\n"
         "created: 2026-11-20T10:00:00Z\nupdated: 2026-11-20T10:00:00Z\nversion: 1\n")
#: stem -> (lineage lines of the frontmatter, body). Bodies say unrelated things, so the
#: dream finds no duplicates among them.
_MEMORIES = {
    "loop-a": ('merged_into: "[[loop-b]]"\n', "The kiln in the garden shed fires at cone six."),
    "loop-b": ('merged_into: "[[loop-a]]"\n', "Our cat Mochi eats salmon on Sundays."),
    "tri-a": ('merged_into: "[[tri-b]]"\n', "The invoice for the roof repair is due in March."),
    "tri-b": ('merged_into: "[[tri-c]]"\n', "祖母的生日聚会在湖边的房子里举行。"),
    "tri-c": ('merged_into: "[[tri-a]]"\n',
              "The bicycle chain needs oil every two hundred kilometres."),
    "from-the-loop": ('derived_from:\n  - "[[loop-a]]"\n  - "[[tomatoes]]"\n',
                      "The kiln fires at cone six; tomatoes grow along the south fence."),
    "junk-number": ("supersedes: 42\n", "Deploys to staging happen from the release branch."),
    "junk-mapping": ("supersedes: {a: 1}\n", "Piano lessons moved to Thursday evenings."),
    "junk-nobody": ('supersedes: "[[no-such-memory]]"\n',
                    "The sourdough starter lives in the second fridge."),
    "junk-itself": ('supersedes: "[[junk-itself]]"\n',
                    "Passport renewal needs two photos from the booth."),
    # (a list's one link to a live memory would be a supersession the user wrote: the dream
    # honours it; here it names nobody)
    "junk-list": ('supersedes:\n  - null\n  - "[[no-such-memory]]"\n',
                  "The backup drive is encrypted with the blue key."),
    "tomatoes": ("", "Tomatoes are planted along the south fence."),
}


def _write(vault: Path) -> dict[str, bytes]:
    written = {}
    for stem, (lineage, body) in _MEMORIES.items():
        data = (_HEAD.format(name=stem) + lineage + "---\n" + body + "\n").encode()
        (vault / "Memory" / f"{stem}.md").write_bytes(data)
        written[stem] = data
    return written


def _runner(vault: Path) -> Run:
    cli = dreamd_on(vault)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = cli(*args)
        assert done.returncode in (0, 1), done.stderr  # 1: check found drift
        return done
    return run


def _listed(vault: Path) -> set[str]:
    text = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    return {stem for stem in _MEMORIES if f"]({stem}.md)" in text}


@pytest.mark.parametrize("order", ["dream first", "check --fix first"])
def test_loops_and_junk_leave_memory_md_where_dream_and_check_agree(vault: Path,
                                                                     order: str) -> None:
    written = _write(vault)
    run = _runner(vault)
    run("sync")
    steps = [("dream", "--force"), ("check", "--fix")]
    if order != "dream first":
        steps.reverse()
    run(*steps[0])
    index = vault / "Memory" / "MEMORY.md"
    first = index.read_bytes()
    assert _listed(vault) == set(_MEMORIES)  # a loop or a junk value hides nobody
    for step in [steps[1], steps[0]]:
        run(*step)
        assert index.read_bytes() == first, f"{' '.join(step)} rewrote MEMORY.md"

    report = json.loads(run("check", "--json").stdout)
    kinds = report["counts"]
    assert "memory_index_out_of_date" not in kinds
    assert kinds["merged_into_cycle"] == 2 and kinds["supersedes_cycle"] == 1
    assert kinds["junk_lineage"] == 3 and kinds["dangling_lineage"] == 2
    assert "derived_from_changed_source" not in kinds  # a loop changes no source
    chains = sorted(tuple(item["drift"]["chain"]) for item in report["items"]
                    if item["kind"] == "merged_into_cycle")
    assert chains == [("Memory/loop-a.md", "Memory/loop-b.md"),
                      ("Memory/tri-a.md", "Memory/tri-b.md", "Memory/tri-c.md")]
    junk = sorted((item["drift"]["path"], item["drift"]["value"]) for item in report["items"]
                  if item["kind"] == "junk_lineage")
    assert junk == [("Memory/junk-list.md", "null"), ("Memory/junk-mapping.md", '{"a": 1}'),
                    ("Memory/junk-number.md", "42")]
    # the user's files are the user's: nothing archived, not a byte rewritten
    for stem, data in written.items():
        assert (vault / "Memory" / f"{stem}.md").read_bytes() == data, stem
