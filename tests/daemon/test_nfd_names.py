"""A vault synced from a Mac: file names stored decomposed (NFD), links and names typed
composed (NFC). Real files in tmp_path, real LanceDB; the CLI test runs ``dreamd`` as a
subprocess with the real embedding model, the in-process ones use the token-hash fake (they
are about names, not meaning).

The tests need a file system that keeps the bytes of a name as given (ext4, tmpfs, btrfs …).
On one that normalises names (macOS APFS/HFS+ as seen through some layers, some network
shares) an NFD name cannot be stored apart from its NFC spelling: there they are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from ccb.parse import parse_note
from consistency.checker import BrokenLink
from daemon.app import App
from daemon.retrieval import stored_prefix

DREAMD = Path(sys.executable).with_name("dreamd")
Builder = Callable[..., tuple[App, object]]


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.fixture
def nfd_vault(tmp_path: Path) -> Path:
    """A vault whose note ``Café.md``, folder ``Recettes/Crème/`` and memory
    ``Memory/crème-brûlée.md`` are named in NFD; every link and name in the text is NFC."""
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    probe = vault / nfd("é.probe")
    probe.write_bytes(b"")
    kept = {os.fsencode(path.name) for path in vault.iterdir()}
    probe.unlink()
    if nfd("é.probe").encode() not in kept:
        pytest.skip("this file system normalises file names: NFD names cannot be stored")
    (vault / nfd("Café.md")).write_text(
        "# Café\n\nThe café on the corner opens at seven.\n", encoding="utf-8")
    (vault / nfd("Recettes/Crème")).mkdir(parents=True)
    (vault / nfd("Recettes/Crème/Tarte tatin.md")).write_text(
        "Caramelise the apples first, then the pastry goes on top.\n", encoding="utf-8")
    (vault / "Memory" / nfd("crème-brûlée.md")).write_text(
        "---\nname: Crème brûlée at home\ndescription: how the user makes crème brûlée\n"
        "type: user\n---\nThe user torches the sugar with a kitchen blowtorch.\n",
        encoding="utf-8")
    (vault / "Memory" / "where-we-meet.md").write_text(
        "---\nname: Where the user meets friends\ndescription: the café, on Saturdays\n"
        "type: reference\n---\nSee [[Café]], [[crème-brûlée]] and "
        "[[Recettes/Crème/Tarte tatin]].\n", encoding="utf-8")
    return vault


def _names(folder: Path) -> set[bytes]:
    return {os.fsencode(path.name) for path in folder.iterdir()}


def test_check_show_history_and_forget_by_the_names_a_user_types(nfd_vault: Path) -> None:
    env = {**os.environ, "DREAMD_VAULT__PATH": str(nfd_vault)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    before = _names(nfd_vault) | _names(nfd_vault / "Memory")
    synced = run("sync", "--json")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["problems"] == []
    run("check", "--fix")  # MEMORY.md, written for the first time
    checked = run("check", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert report["clean"] and "broken_link" not in report["counts"], report["items"]

    memory_file = nfd("Memory/crème-brûlée.md")
    for spelling in ("Crème brûlée at home", "crème-brûlée", "crème-brûlée.md",
                     "Memory/crème-brûlée.md", "MEMORY/CRÈME-BRÛLÉE.MD"):
        shown = run("show", spelling)
        assert shown.returncode == 0, f"{spelling}: {shown.stderr}"
        assert shown.stdout.startswith(memory_file)  # the path as stored
        assert "blowtorch" in shown.stdout
    history = run("history", "Memory/crème-brûlée.md")
    assert history.returncode == 0 and "first version" in history.stdout, history.stderr
    folder = json.loads(run("search", "apples pastry", "--json", "--path", "Recettes/Crème/")
                        .stdout)
    assert [hit["path"] for hit in folder][:1] == [nfd("Recettes/Crème/Tarte tatin.md")]

    # nothing was renamed or added beside the user's files (MEMORY.md is dreamd's own)
    after = _names(nfd_vault) | _names(nfd_vault / "Memory")
    assert after - before == {b"MEMORY.md"}
    forgot = run("forget", "Memory/crème-brûlée.md", "--yes")
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    assert nfd("crème-brûlée.md").encode() not in _names(nfd_vault / "Memory")
    assert "Traceback" not in forgot.stderr


def test_forget_unlinks_a_memory_named_in_the_other_spelling(
        nfd_vault: Path, make_app: Builder) -> None:
    """A memory that supersedes the decomposed one names it composed (as a user types it):
    forgetting the old one takes dreamd's link out (no broken link left in the newer); a
    link the user wrote in a body is listed, never edited."""
    newer = nfd_vault / "Memory" / "brulee-with-a-torch.md"
    newer.write_text(
        "---\nname: Brûlée with a torch\ndescription: the user caramelises with a torch\n"
        "type: user\nsupersedes: \"[[crème-brûlée]]\"\n---\nA torch, never the grill.\n",
        encoding="utf-8")
    app, _ = make_app(nfd_vault)
    app.sync()
    service = app.memories()
    assert service.find("Memory/crème-brûlée.md").path == nfd("Memory/crème-brûlée.md")
    report = service.forget("crème-brûlée")
    note = parse_note(newer.name, newer.read_bytes())
    assert note.memory is not None and note.memory.supersedes == ()
    assert any("Memory/where-we-meet.md" in line for line in report.removed), report.removed
    broken = {(f.drift.path, f.drift.target) for f in app.consistency().check().findings
              if isinstance(f.drift, BrokenLink)}
    assert broken == {("Memory/where-we-meet.md", "crème-brûlée")}  # the user's own link


def test_a_folder_filter_typed_composed_keeps_the_folder_stored_decomposed() -> None:
    paths = [nfd("Recettes/Crème/Tarte.md"), "Recettes/Pain.md"]
    assert stored_prefix(paths, "Recettes/Crème/") == nfd("Recettes/Crème/")
    assert stored_prefix(paths, "Recettes/") == "Recettes/"
    assert stored_prefix(paths, "Ailleurs/") == "Ailleurs/"
    assert stored_prefix(paths, None) is None


def test_a_folder_searched_lists_its_notes_as_stored_and_keeps_them() -> None:
    """:func:`folder_of`: the folder as the paths spell it (typed composed, stored
    decomposed) and the notes in it in the snapshot's order, look-alike folders
    ("Recettes/Crème 2/", "Recettes/Crèmes.md") left out; kept on the snapshot."""
    from types import SimpleNamespace
    from typing import cast

    from daemon.retrieval import folder_of
    from magma.catalogue import Snapshot

    rows = {nfd("Recettes/Crème/Tarte.md"): [0], "Recettes/Pain.md": [1],
            nfd("Recettes/Crème 2/Flan.md"): [2], nfd("Recettes/Crèmes.md"): [3],
            nfd("Recettes/Crème/Anglaise.md"): [4], "日记/睡眠.md": [5]}
    snap = cast(Snapshot, SimpleNamespace(entries=dict.fromkeys(rows), rows_by_path=rows,
                                          folders={}))
    assert folder_of(snap, "Recettes/Crème/") == (
        nfd("Recettes/Crème/"), [nfd("Recettes/Crème/Tarte.md"),
                                 nfd("Recettes/Crème/Anglaise.md")])
    assert folder_of(snap, "日记/") == ("日记/", ["日记/睡眠.md"])
    assert folder_of(snap, "Ailleurs/") == ("Ailleurs/", [])
    assert set(snap.folders) == {"Recettes/Crème/", "日记/", "Ailleurs/"}
    snap.rows_by_path = {}  # a second search of a folder reads what the first listed
    assert folder_of(snap, "日记/") == ("日记/", ["日记/睡眠.md"])
