"""Two devices, one MAGMA: two copies of a vault share one store and diverge.

Device A and device B each have their own copy of the demo vault (as git or Syncthing would
leave them), their own state folder, and one shared LanceDB store (``storage.uri``: a folder,
as on a mounted drive, or ``s3://`` on a loopback S3 server — every test runs on both), each with
its ``storage.device`` name: their index tables are their own, the version history is one.
Both change every kind of memory while their vault sync is off; then ``check --fix`` on each
must give what the arbiter's rules say — the file wins for ``user`` and ``feedback``, the store's
newer version for ``reference``, a conflict for the user otherwise — with every version still
in the history. Real files, a real shared store; the token-hash FAKE embedder (conftest),
as nothing here is about meaning.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ccb.parse import parse_note
from daemon.app import App

pytestmark = pytest.mark.scenario

REPO = Path(__file__).resolve().parents[2]
Builder = Callable[..., tuple[App, object]]

MEMORIES = {
    "user": "Memory/prefers-metric-units.md",
    "feedback": "Memory/tests-hit-a-real-database.md",
    "project": "Memory/kiln-first-firing-in-january.md",
    "reference": "Memory/glaze-recipes-live-in-the-studio-binder.md",
}


@pytest.fixture(params=["shared-drive", "s3"])
def devices(request: pytest.FixtureRequest, tmp_path: Path, make_app: Builder) -> tuple[App, App]:
    """The two devices, sharing a folder (a mounted drive) or an ``s3://`` store on the
    loopback S3 server (``tests/support/s3_server.py``)."""
    where: dict[str, object] = {"storage.uri": str(tmp_path / "shared-drive" / "dreamd")}
    if request.param == "s3":
        server = request.getfixturevalue("s3_server")
        where = {"storage.uri": f"s3://{request.getfixturevalue('s3_bucket')}/dreamd",
                 "storage.options": server.options()}
    apps = []
    for name in ("a", "b"):
        vault = tmp_path / f"device-{name}" / "vault"
        shutil.copytree(REPO / "vault_example", vault, symlinks=True)
        app, _ = make_app(vault, **where, **{"storage.device": name})
        app.sync()
        apps.append(app)
    return apps[0], apps[1]


def _key(app: App, path: str) -> str:
    note = parse_note(path, (app.vault_root / path).read_bytes())
    assert note.memory is not None and note.memory.id
    return note.memory.id


def _edit(app: App, path: str, old: bytes, new: bytes) -> bytes:
    target = app.vault_root / path
    data = target.read_bytes()
    assert old in data
    target.write_bytes(data.replace(old, new, 1))
    return target.read_bytes()


def _append(app: App, path: str, line: str) -> bytes:
    target = app.vault_root / path
    target.write_bytes(target.read_bytes() + line.encode() + b"\n")
    return target.read_bytes()


def _contents(app: App, key: str) -> list[bytes]:
    return [app.versions.content(key, v.n) for v in app.versions.history(key)
            if v.kind != "tombstone"]


def test_each_device_keeps_its_own_index_and_shares_the_history(
    devices: tuple[App, App]
) -> None:
    a, b = devices
    assert a.store.counts().files == b.store.counts().files > 0
    names = set(a.store._t.db.list_tables().tables)
    assert {"files-a", "files-b", "chunks-a", "chunks-b", "versions"} <= names
    key = _key(a, MEMORIES["feedback"])
    assert len(a.versions.history(key)) == 1  # B's identical copy added no version
    assert a.consistency().check().clean and b.consistency().check().clean


def test_divergent_edits_settle_by_the_rules_and_every_version_stays(
    devices: tuple[App, App]
) -> None:
    a, b = devices
    keys = {kind: _key(a, path) for kind, path in MEMORIES.items()}
    originals = {kind: (a.vault_root / path).read_bytes() for kind, path in MEMORIES.items()}

    # Device A edits every memory and its daemon records the versions.
    ours_a = {kind: _append(a, path, f"- device A's note about {kind}")
              for kind, path in MEMORIES.items()}
    a.sync()
    # Device B edits the same memories differently while its dreamd was off.
    ours_b = {kind: _append(b, path, f"- device B's note about {kind}")
              for kind, path in MEMORIES.items()}

    service_b = b.consistency()
    report = service_b.check()
    assert {f.kind for f in report.findings} == {"divergent"}
    decisions = {f.drift.memory_type: type(f.decision).__name__  # type: ignore[union-attr]
                 for f in report.findings}
    assert decisions == {"user": "KeepFile", "feedback": "KeepFile",
                         "reference": "TakeMagma", "project": "ManualReview"}
    service_b.fix(report, automatic_only=False)

    read_b = {kind: (b.vault_root / path).read_bytes() for kind, path in MEMORIES.items()}
    # The two edits added different lines: where the rules pick a winner, both edits survive.
    for kind in ("user", "feedback", "reference"):
        assert b"device A's note" in read_b[kind] and b"device B's note" in read_b[kind]
    assert read_b["project"] == ours_b["project"]  # left as the user wrote it ...
    (conflict,) = service_b.conflicts()  # ... with A's version beside it for review
    assert conflict.memory_key == keys["project"]
    assert (b.vault_root / conflict.copy).read_bytes() == ours_a["project"]
    assert [f.kind for f in service_b.check().findings] == ["open_conflict"]

    # Device A: its files are unchanged since its sync; the history moved on.
    service_a = a.consistency()
    report_a = service_a.check()
    assert sorted(f.kind for f in report_a.findings) == ["behind"] * 3
    service_a.fix(report_a, automatic_only=False)
    assert service_a.check().clean
    for kind in ("user", "feedback", "reference"):
        assert (a.vault_root / MEMORIES[kind]).read_bytes() == read_b[kind]

    # The user settles the project conflict on B keeping both edits; A follows.
    service_b.resolve(keys["project"], "both")
    merged = (b.vault_root / MEMORIES["project"]).read_bytes()
    assert b"device A's note" in merged and b"device B's note" in merged
    assert service_b.check().clean
    service_a.fix(automatic_only=False)
    assert (a.vault_root / MEMORIES["project"]).read_bytes() == merged
    assert service_a.check().clean and service_b.check().clean

    # Every version either device wrote is still in the shared history, seen from both.
    for kind, key in keys.items():
        for app in (a, b):
            contents = _contents(app, key)
            assert originals[kind] in contents and ours_a[kind] in contents
            assert ours_b[kind] in contents, kind


def test_a_sync_lets_the_file_win_only_where_the_rules_say(devices: tuple[App, App]) -> None:
    """With B's daemon running (a sync), user/feedback edits win at once; the others wait
    for ``check`` with B's edit kept in the history."""
    a, b = devices
    for path in MEMORIES.values():
        _append(a, path, "- from A")
    a.sync()
    ours_b = {kind: _append(b, path, "- from B") for kind, path in MEMORIES.items()}
    b.sync()
    heads = b.versions.heads()
    for kind, path in MEMORIES.items():
        key = _key(b, path)
        head_is_b = b.versions.content(key, heads[key].n) == ours_b[kind]
        assert head_is_b == (kind in {"user", "feedback"}), kind
        assert ours_b[kind] in _contents(b, key)
    assert sorted(f.kind for f in b.consistency().check().findings) == [
        "divergent", "divergent"]


def test_a_memory_forgotten_on_one_device_stays_forgotten(devices: tuple[App, App]) -> None:
    a, b = devices
    path = MEMORIES["project"]
    key = _key(b, path)
    _append(b, path, "- a private note about the kiln loan")
    b.sync()
    a.versions.repair()  # A's daemon copies B's versions into A's state folder
    assert (a.state_dir / "versions" / key).is_dir()
    b.memories().forget(key)
    assert b.versions.history(key) == []
    report = a.versions.repair()  # must drop A's copies, not add them back
    assert report.erased_copies_dropped >= 2 and report.rows_added == 0
    assert a.versions.history(key) == [] and b.versions.history(key) == []
    leftovers = list((a.state_dir / "versions").rglob("*"))
    assert not any(b"private note" in p.read_bytes() for p in leftovers if p.is_file())


def test_when_both_rewrote_the_same_line_the_rules_pick_the_winner(
    devices: tuple[App, App]
) -> None:
    a, b = devices
    edits = {kind: (a.vault_root / path).read_bytes().splitlines()[-1]
             for kind, path in MEMORIES.items()}
    ours_a = {kind: _edit(a, path, edits[kind], edits[kind] + b" (A)")
              for kind, path in MEMORIES.items()}
    a.sync()
    ours_b = {kind: _edit(b, path, edits[kind], edits[kind] + b" (B)")
              for kind, path in MEMORIES.items()}
    b.consistency().fix(automatic_only=False)
    read_b = {kind: (b.vault_root / path).read_bytes() for kind, path in MEMORIES.items()}
    assert read_b["user"] == ours_b["user"] and read_b["feedback"] == ours_b["feedback"]
    assert read_b["reference"] == ours_a["reference"]  # the store's newer version won
    assert read_b["project"] == ours_b["project"] and len(b.consistency().conflicts()) == 1
    for kind, path in MEMORIES.items():
        contents = _contents(b, _key(b, path))
        assert ours_a[kind] in contents and ours_b[kind] in contents
