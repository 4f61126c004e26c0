"""Two devices share one store on object storage: a real S3-protocol server on loopback.

moto in server mode (``tests/support/s3_server.py``), started by the session with signature
checks on; each test gets a new bucket. Device A and device B each have their own copy of the
demo vault (as git or Syncthing would leave them) and their own state folder, and one
``s3://`` store (``storage.uri``) with the endpoint and credentials in ``storage.options``.
Real LanceDB on S3, real files; the token-hash FAKE embedder (conftest), as nothing here is
about meaning.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from daemon_harness import write_memory  # type: ignore[import-not-found]
from s3_server import S3Server

from ccb.parse import parse_note
from config.errors import StoreError
from daemon.app import App, load
from daemon.doctor_checks import check_store
from magma.versions import NewVersion, VersionArchive

pytestmark = pytest.mark.scenario

REPO = Path(__file__).resolve().parents[2]
Builder = Callable[..., tuple[App, object]]
PROJECT = "Memory/kiln-first-firing-in-january.md"
INDEX = "Memory/MEMORY.md"


def _device(tmp_path: Path, make_app: Builder, server: S3Server, bucket: str,
            name: str) -> App:
    vault = tmp_path / f"device-{name}" / "vault"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    app, _ = make_app(vault, **{"storage.uri": f"s3://{bucket}/dreamd",
                                "storage.device": name, "storage.options": server.options()})
    return app


@pytest.fixture
def devices(tmp_path: Path, make_app: Builder, s3_server: S3Server,
            s3_bucket: str) -> tuple[App, App]:
    apps = (_device(tmp_path, make_app, s3_server, s3_bucket, "a"),
            _device(tmp_path, make_app, s3_server, s3_bucket, "b"))
    for app in apps:
        app.sync()
    return apps


def _key(app: App, path: str) -> str:
    note = parse_note(path, (app.vault_root / path).read_bytes())
    assert note.memory is not None and note.memory.id
    return note.memory.id


def _carry(source: App, target: App, path: str) -> None:
    """The vault sync (git, Syncthing) bringing ``path`` from one device's copy to the other's,
    seconds after the write: the index write that follows a ``remember``'s answer on the
    source device is in the store by then."""
    source.indexing.settle()
    if (source.vault_root / path).exists():
        (target.vault_root / path).parent.mkdir(parents=True, exist_ok=True)
        (target.vault_root / path).write_bytes((source.vault_root / path).read_bytes())
    else:
        (target.vault_root / path).unlink(missing_ok=True)


def _history(app: App, key: str) -> list[tuple[int, str | None, bytes]]:
    return [(v.n, v.device, app.versions.content(key, v.n))
            for v in app.history().history(key) if v.kind == "edit"]


def test_both_devices_edit_remember_and_roll_back_and_see_each_others_versions(
    devices: tuple[App, App], s3_server: S3Server, s3_bucket: str
) -> None:
    a, b = devices
    assert a.store.counts().files == b.store.counts().files > 0
    keys = set(s3_server.objects(s3_bucket))
    for table in ("files-a", "chunks-b", "versions", "snippets"):
        assert any(k.startswith(f"dreamd/{table}.lance/") for k in keys), table
    assert any(hit.path == PROJECT for hit in a.search("kiln first firing"))

    made = a.memories().remember("The choir rehearses in the church hall on Thursdays.",
                                 type="project", name="Choir rehearsals")
    path, key = made.path, made.memory_id
    assert path is not None and key
    _carry(a, b, path)
    b.sync()
    original = (b.vault_root / path).read_bytes()
    assert _history(b, key) == [(1, "a", original)]  # B's identical copy added no version

    edited = original + b"- from March they move to Fridays\n"
    (b.vault_root / path).write_bytes(edited)
    b.sync()
    service_a = a.consistency()
    report = service_a.check()
    assert [f.kind for f in report.findings] == ["behind"]
    service_a.fix(report, automatic_only=False)
    assert (a.vault_root / path).read_bytes() == edited

    a.history().rollback(key, 1)
    assert (a.vault_root / path).read_bytes() == original
    service_b = b.consistency()
    service_b.fix(automatic_only=False)
    assert (b.vault_root / path).read_bytes() == original
    expected = [(1, "a", original), (2, "b", edited), (3, "a", original)]
    assert _history(a, key) == _history(b, key) == expected
    assert service_a.check().clean and service_b.check().clean
    assert any(hit.path == path for hit in b.search("choir rehearsals church hall"))


def test_a_forget_on_one_device_leaves_no_text_in_the_bucket(
    devices: tuple[App, App], s3_server: S3Server, s3_bucket: str
) -> None:
    a, b = devices
    secret = b"the kiln loan from Marta Quillfeather"
    made = a.memories().remember(f"Keep quiet about {secret.decode()} until June.",
                                 type="project", name="Kiln loan")
    assert made.path is not None
    key, path = made.memory_id, made.path
    a.search("Quillfeather kiln loan")  # a recall row in the shared store
    for synced in (path, INDEX):
        _carry(a, b, synced)
    b.sync()
    (b.vault_root / path).write_bytes((b.vault_root / path).read_bytes() + b"- Quillfeather\n")
    b.sync()
    assert len(a.history().history(key)) == 2

    assert b"Quillfeather" in (b.vault_root / INDEX).read_bytes()
    a.memories().forget(key)
    for synced in (path, INDEX):  # the vault sync: the file goes, MEMORY.md loses its line
        _carry(a, b, synced)
    b.sync()
    b.versions.repair()
    assert a.versions.history(key) == [] and b.versions.history(key) == []
    holding = sorted(name for name, data in s3_server.objects(s3_bucket).items()
                     if b"quillfeather" in data.lower() or key.encode() in data)
    assert holding == []


def test_concurrent_commits_from_both_devices_lose_no_version(
    devices: tuple[App, App]
) -> None:
    """A remembers and forgets (each forget rewrites the shared version table) while B
    remembers: every version either device recorded is in the shared history afterwards."""
    a, b = devices
    start = threading.Barrier(2)
    made: dict[str, list[str]] = {"a": [], "b": []}
    errors: list[BaseException] = []

    def work(app: App, name: str) -> None:
        try:
            start.wait()
            service = app.memories()
            for i in range(4):
                result = service.remember(f"Device {name} fact {i}: shelf {i} holds cone "
                                          f"{i + 5} glazes.", type="reference")
                made[name].append(result.memory_id)
                if name == "a":
                    service.forget(result.memory_id)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(app, name))
               for app, name in ((a, "a"), (b, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    heads = a.versions.heads()
    assert all(key in heads for key in made["b"]), "a version B recorded was lost"
    assert not any(key in heads for key in made["a"])
    assert b.versions.heads().keys() == heads.keys()


def test_a_dream_on_one_device_is_in_the_shared_history_of_both(
    devices: tuple[App, App]
) -> None:
    a, b = devices
    old = write_memory(a.vault_root, "uses-pnpm", "Use pnpm for installs.", subject="tools.pm",
                       days_old=10)
    new = write_memory(a.vault_root, "pnpm-again", "use **pnpm** for installs",
                       subject="tools.pm", days_old=2)
    a.sync()
    report = a.dreamer().dream()
    assert report.applied and new in report.written
    archived = parse_note(new, (a.vault_root / new).read_bytes())
    assert archived.memory is not None and archived.memory.status == "archived"
    for path in (old, new, INDEX):
        _carry(a, b, path)
    b.sync()
    key = _key(b, new)
    assert [v.n for v in b.history().history(key)] == [1, 2]  # the dream's version, from A
    assert b.consistency().check().clean


def test_both_devices_recording_one_memory_at_once_keep_both_versions(
    devices: tuple[App, App]
) -> None:
    """No lease on object storage: two devices may give one version number twice at the same
    moment; both rows are kept, and the next repair renumbers the later one."""
    a, b = devices
    key = _key(a, PROJECT)
    start = threading.Barrier(2)
    written: dict[str, bytes] = {}
    errors: list[BaseException] = []

    def edit(app: App, name: str) -> None:
        try:
            target = app.vault_root / PROJECT
            written[name] = target.read_bytes() + f"- device {name.upper()} was here\n".encode()
            target.write_bytes(written[name])
            start.wait()
            app.sync()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=edit, args=(app, name))
               for app, name in ((a, "a"), (b, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    b.versions.repair()
    a.versions.repair()
    versions = a.versions.history(key)
    assert len({v.n for v in versions}) == len(versions)  # every number given once
    contents = [a.versions.content(key, v.n) for v in versions if v.kind != "tombstone"]
    assert written["a"] in contents and written["b"] in contents
    assert b.versions.history(key) == versions


def test_two_devices_compacting_the_shared_history_at_once_both_succeed(
    tmp_path: Path, s3_server: S3Server, s3_bucket: str
) -> None:
    """Each sync ends with a compaction of the shared version table: when both devices'
    collide, Lance refuses the later commit, and the archive tries it again."""
    uri = f"s3://{s3_bucket}/dreamd"
    archives = {name: VersionArchive.open(uri, archive_dir=tmp_path / name, device=name,
                                          storage_options=s3_server.options())
                for name in ("a", "b")}
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def work(name: str) -> None:
        archive = archives[name]
        try:
            for i in range(6):
                archive.record([NewVersion(f"{name}-{i}", f"Memory/{name}-{i}.md",
                                           f"fact {i} of {name}\n".encode(), "user-edit")])
                start.wait(timeout=60)
                archive.optimize(timedelta(0))
        except BaseException as error:
            errors.append(error)
            start.abort()

    threads = [threading.Thread(target=work, args=(name,)) for name in archives]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert len(archives["a"].heads()) == len(archives["b"].heads()) == 12


def test_a_config_reload_with_new_storage_options_reopens_the_store(
    tmp_path: Path, make_app: Builder, s3_server: S3Server, s3_bucket: str
) -> None:
    app = _device(tmp_path, make_app, s3_server, s3_bucket, "a")
    app.sync()
    where = {"vault.path": str(app.vault_root), "storage.uri": f"s3://{s3_bucket}/dreamd",
             "storage.device": "a"}
    same = app.reloaded(load(None, None, {**where, "storage.options": s3_server.options()}))
    assert same.store is app.store
    rotated = app.reloaded(load(None, None, {
        **where, "storage.options": s3_server.options(timeout="60s")}))
    assert rotated.store is not app.store
    assert rotated.store.counts().files == app.store.counts().files


# --------------------------------------------------------------------------- doctor


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("case", "status", "expected"), [
    ("reachable", "ok", "answers"),
    ("bad endpoint", "fail", "nothing answers at http://127.0.0.1:{port} (connection refused)"),
    ("plain http not allowed", "fail", "is plain http but allow_http is not set"),
    ("no bucket", "fail", "bucket no-such-bucket does not exist at"),
    ("unknown access key", "fail", "bad credentials: {endpoint} knows no such access key id"),
    ("wrong secret", "fail", "the secret access key does not match the access key id"),
])
def test_doctor_names_the_problem_with_the_remote_store_in_one_line(
    s3_server: S3Server, s3_bucket: str, case: str, status: str, expected: str
) -> None:
    port = _closed_port()
    options = s3_server.options()
    bucket = s3_bucket
    if case == "bad endpoint":
        options["aws_endpoint"] = f"http://127.0.0.1:{port}"
    elif case == "plain http not allowed":
        del options["allow_http"]
    elif case == "no bucket":
        bucket = "no-such-bucket"
    elif case == "unknown access key":
        options["aws_access_key_id"] = "AKIAUNKNOWNKEY000000"
    elif case == "wrong secret":
        options["aws_secret_access_key"] = "not-the-secret-of-this-key"
    check = check_store(f"s3://{bucket}/dreamd", "my vault", options)
    assert check.status == status, check
    assert expected.format(port=port, endpoint=s3_server.endpoint) in check.detail
    assert "\n" not in check.detail and "\n" not in (check.hint or "")
    for secret in (options["aws_access_key_id"], options["aws_secret_access_key"],
                   s3_server.secret_access_key):
        assert secret not in check.detail + (check.hint or "")


def test_status_doctor_and_config_show_never_print_the_credentials(
    tmp_path: Path, s3_server: S3Server, s3_bucket: str
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    options = s3_server.options()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[default.vault]\npath = "{vault}"\n[default.storage]\n'
        f'uri = "s3://{s3_bucket}/dreamd"\ndevice = "laptop"\n'
        "options = { " + ", ".join(f'{k} = "{v}"' for k, v in options.items()) + " }\n",
        encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "DREAMD_CONFIG": str(config)}
    secrets = (s3_server.access_key_id, s3_server.secret_access_key)
    outputs = {}
    for command in (["config", "show", "--json"], ["doctor"], ["status"]):
        done = subprocess.run([sys.executable, "-m", "daemon", *command], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        outputs[" ".join(command)] = done
        for secret in secrets:
            assert secret not in done.stdout + done.stderr, command
    assert outputs["doctor"].returncode == 0, outputs["doctor"].stdout
    assert f"remote store s3://{s3_bucket}/dreamd answers" in outputs["doctor"].stdout
    assert outputs["status"].returncode == 0, outputs["status"].stderr
    assert '"aws_secret_access_key": "(hidden)"' in outputs["config show --json"].stdout


def test_a_store_refused_for_bad_credentials_says_so_in_one_line(
    tmp_path: Path, make_app: Builder, s3_server: S3Server, s3_bucket: str
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    wrong = "not-the-secret-of-this-key"
    app, _ = make_app(vault, **{"storage.uri": f"s3://{s3_bucket}/dreamd",
                                "storage.options": s3_server.options(aws_secret_access_key=wrong)})
    with pytest.raises(StoreError) as caught:
        app.sync()
    message = str(caught.value)
    assert message == (f"magma: open store s3://{s3_bucket}/dreamd: bad credentials: the secret "
                       "access key does not match the access key id (check "
                       "storage.options.aws_secret_access_key)")
