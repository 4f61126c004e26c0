"""Several ``dreamd remember`` processes at once, with no daemon running (an assistant's
hooks and a user's shell on one vault): every memory is decided on what is there when it is
written, is written once, and is indexed, and the store holds exactly what the files say.

Each command is a real ``dreamd`` CLI process (:func:`daemon_harness.cli_worker`: the same
code, with the FAKE token-hash embedder; this is about files and the store, not meaning),
all given their commands at the same moment. Half state one changing fact (each supersedes
the one current when it is written: one chain, no memory superseded twice, no conflict copy);
the rest are facts of their own.
"""

from __future__ import annotations

import json
from pathlib import Path

import daemon_harness as harness  # type: ignore[import-not-found]
import pytest

from ccb.parse import parse_note

pytestmark = pytest.mark.scenario

CHANGING = [f"The team standup is at {hour}:00 every weekday." for hour in (8, 9, 10)]
OWN = ["Ana reviews every database migration.",
       "The staging cluster runs in eu-west-1.",
       "Invoices are sent on the first Monday of the month."]


@pytest.mark.slow
def test_parallel_remembers_decide_on_what_is_there_and_index_everything(vault: Path) -> None:
    app = harness.fresh_app(vault)
    app.sync()
    workers = [harness._CliWorker(vault.parent, n) for n in range(len(CHANGING) + len(OWN))]
    try:
        for worker in workers:
            worker.wait_ready()
        for worker, text in zip(workers, [*CHANGING, *OWN], strict=True):
            assert worker.proc.stdin is not None
            worker.proc.stdin.write(json.dumps(
                ["remember", "--vault", str(vault), "--type", "project", "--json", text]
            ).encode() + b"\n")
            worker.proc.stdin.flush()
        codes = [worker.proc.wait(timeout=300) for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    errors = [w.err_path.read_text(errors="replace")[-600:] for w in workers]
    assert codes == [0] * len(workers), errors
    memory = vault / "Memory"
    assert not [p.name for p in memory.iterdir() if ".conflict" in p.name]
    notes = [parse_note(p.name, p.read_bytes()) for p in memory.glob("*.md")
             if p.name != "MEMORY.md"]
    standups = [n for n in notes if "standup" in n.body]
    assert len(standups) == len(CHANGING)  # each written once
    superseded_by = [n.properties.get("superseded_by") for n in standups]
    assert sum(1 for v in superseded_by if v) == len(CHANGING) - 1  # one chain
    assert len({v for v in superseded_by if v}) == len(CHANGING) - 1  # none superseded twice
    for text in OWN:
        assert sum(1 for n in notes if text in n.body) == 1
    after = harness.fresh_app(vault)
    assert harness.index_vs_disk(after) == []
    assert harness.store_integrity(after) == []
    assert after.consistency().check().clean
