"""A credential the user wrote by hand into a memory or a note never leaves dreamd: not in the
index (chunks, full-text index, vectors, properties), not in search hits (CLI, JSON, MCP), and
``dreamd check`` / ``dreamd doctor`` name the file and line without the secret.

Real LanceDB store in tmp_path, real files; the embedder is the token-hash fake (conftest):
nothing here is about meaning. The CLI end to end (real subprocesses, the real model) is in
``test_cli.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from ccb.parse import parse_note
from consistency.checker import Credential
from consistency.secrets import REDACTED
from daemon.app import App
from daemon.cli import serve_command
from daemon.credential_ledger import CREDENTIALS_FILE, read_credentials
from daemon.doctor_checks import check_credentials
from daemon.mcp_server import build_server
from daemon.memory_pool import first_chunk_hash

Builder = Callable[..., tuple[App, object]]

SECRET_EN = "S3cr3t-Passw0rd-xyz"
SECRET_ZH = "Abc12345xyz!"
LOGIN = "Memory/staging-login.md"
LOGIN_TEXT = (
    "---\n"
    "name: Staging login\n"
    "description: How to log in to the staging server\n"
    "type: user\n"
    "---\n"
    "The staging server is staging.example.org, user deploy.\n"
    "\n"
    f"password: {SECRET_EN}\n"
)
NOTE = "Projects/Warehouse database.md"
NOTE_TEXT = (
    "# Warehouse database\n"
    "\n"
    "The warehouse database runs on the old rack in the basement.\n"
    f"数据库密码：{SECRET_ZH}\n"
)


def _secrets_in(text: str) -> list[str]:
    return [s for s in (SECRET_EN, SECRET_ZH) if s in text]


def _state_files_holding_secrets(state_dir: Path) -> list[str]:
    """Every file of the state folder whose bytes hold a secret (``grep -rl``), except the
    version history, which keeps the files' bytes for rollback."""
    found = []
    for path in sorted(p for p in state_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(state_dir).as_posix()
        data = path.read_bytes()
        if any(s.encode() in data for s in (SECRET_EN, SECRET_ZH)):
            found.append(rel)
    return [rel for rel in found
            if not rel.startswith(("versions/", "lancedb/versions.lance/"))]


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    (vault / LOGIN).write_text(LOGIN_TEXT, encoding="utf-8")
    (vault / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    application, _ = make_app(vault)
    return application


def test_the_index_holds_no_credential_written_by_hand(app: App) -> None:
    report = app.sync()
    found = {p.path: p.reason for p in report.problems if p.kind == "credential"}
    assert set(found) == {LOGIN, NOTE}
    assert "line 8 (password=…)" in found[LOGIN] and "line 4 (密码 …)" in found[NOTE]
    assert not _secrets_in(json.dumps(found, ensure_ascii=False))

    tables = app.store._t
    for table in (tables.files, tables.chunks, tables.links):
        assert not _secrets_in(json.dumps(table.to_arrow().to_pylist(), ensure_ascii=False,
                                          default=str))
    bodies = app.store.chunk_bodies()
    assert any(REDACTED in body for body in bodies.values())
    assert not _state_files_holding_secrets(app.state_dir)
    assert (app.state_dir / "versions").is_dir()  # the memory's bytes are kept for rollback


def test_search_hits_never_show_the_credential(app: App) -> None:
    app.sync()
    # The store of an older dreamd, or a cut that hid it from the index: the hit is what
    # the search service withholds from, whatever the chunk holds.
    for query in ("staging server deploy password", "warehouse database 数据库密码",
                  SECRET_EN, SECRET_ZH):
        hits = app.search(query, limit=10)
        assert hits
        for hit in hits:
            assert not _secrets_in(f"{hit.title} {hit.heading} {hit.snippet}"), hit
    hits = app.search("staging server deploy", limit=3)
    login = next(h for h in hits if h.path == LOGIN)
    assert REDACTED in login.snippet


def test_a_hit_from_an_older_index_is_withheld_by_the_search_service() -> None:
    from daemon.search_service import withhold_in_hit
    from magma.search import SearchHit

    hit = SearchHit(path=LOGIN, title="Staging login", heading="token: Zq8kLm2pXw7R",
                    snippet=f"user deploy. password: {SECRET_EN}", score=1.0, why=(),
                    memory_type="user", note_id="x")
    withheld = withhold_in_hit(hit)
    assert withheld.snippet == f"user deploy. {REDACTED}"
    assert withheld.heading == REDACTED and withheld.path == LOGIN
    clean = SearchHit(path="a.md", title="a", heading=None, snippet="nothing here",
                      score=1.0, why=(), memory_type=None, note_id="y")
    assert withhold_in_hit(clean) is clean


def _mcp(app: App, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(app, None)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def test_mcp_memory_search_and_memory_read_never_show_the_credential(app: App) -> None:
    app.sync()
    search, read = _mcp(app, [
        ("memory_search", {"query": "staging server deploy password", "limit": 5}),
        ("memory_read", {"memory": "Staging login"}),
    ])
    for result in (search, read):
        assert not result.is_error, result.content
        text = json.dumps([c.model_dump() for c in result.content], ensure_ascii=False)
        assert not _secrets_in(text) and not _secrets_in(str(result.structured_content))
    assert REDACTED in str(read.structured_content)


def test_the_ledger_follows_the_file(app: App, vault: Path) -> None:
    app.sync()
    records = read_credentials(app.state_dir)
    assert set(records) == {LOGIN, NOTE}
    assert [(f.line, f.kind) for f in records[LOGIN].found] == [(8, "password")]
    assert not _secrets_in((app.state_dir / CREDENTIALS_FILE).read_text(encoding="utf-8"))

    (vault / NOTE).write_text(NOTE_TEXT.replace(f"数据库密码：{SECRET_ZH}\n", ""),
                              encoding="utf-8")
    (vault / LOGIN).rename(vault / "Memory/staging.md")
    app.sync()
    assert set(read_credentials(app.state_dir)) == {"Memory/staging.md"}

    (vault / "Memory/staging.md").unlink()
    app.sync()
    assert read_credentials(app.state_dir) == {}
    assert not (app.state_dir / CREDENTIALS_FILE).exists()


def test_a_vault_without_credentials_gets_no_ledger(vault: Path, make_app: Builder) -> None:
    application, _ = make_app(vault)
    report = application.sync()
    assert not [p for p in report.problems if p.kind == "credential"]
    assert not (application.state_dir / CREDENTIALS_FILE).exists()


def test_check_and_doctor_name_file_and_line_never_the_secret(app: App, vault: Path) -> None:
    app.sync()
    report = app.consistency().check()
    found = {f.drift.path: f for f in report.findings if isinstance(f.drift, Credential)}
    assert set(found) == {LOGIN, NOTE}
    assert not report.clean
    hint = found[LOGIN].decision.hint  # type: ignore[union-attr]
    assert "line 8 (password=…)" in hint and "secret manager" in hint
    assert not found[LOGIN].automatic
    assert not _secrets_in(repr(report.findings))

    doctor = check_credentials(app.state_dir)
    assert doctor.status == "warn" and doctor.hint and "secret manager" in doctor.hint
    assert f"{LOGIN} line 8 (password=…)" in doctor.detail and "line 4 (密码 …)" in doctor.detail
    assert not _secrets_in(doctor.detail + doctor.hint)

    # check reads what the indexer recorded, it does not scan the vault again: without the
    # record there is nothing to report, and a record of other content is not reported
    ledger = app.state_dir / CREDENTIALS_FILE
    data = json.loads(ledger.read_text(encoding="utf-8"))
    data["files"][LOGIN]["content_hash"] = "0" * 64
    ledger.write_text(json.dumps(data), encoding="utf-8")
    assert {f.drift.path for f in app.consistency().check().findings
            if isinstance(f.drift, Credential)} == {NOTE}
    ledger.unlink()
    assert not [f for f in app.consistency().check().findings if f.kind == "credential"]
    assert check_credentials(app.state_dir).status == "ok"

    # the user takes the credentials out: the next sync clears them
    (vault / LOGIN).write_text(LOGIN_TEXT.replace(f"password: {SECRET_EN}\n", ""),
                               encoding="utf-8")
    (vault / NOTE).write_text(NOTE_TEXT.replace(f"数据库密码：{SECRET_ZH}\n", ""),
                              encoding="utf-8")
    app.sync()
    assert not [f for f in app.consistency().check().findings if f.kind == "credential"]


#: More credentials, English and Chinese, in notes and memories; one file holds two.
MORE_SECRETS = ("Relay-7731-kestrel", "Zq8kLm2vP7", "sk-proj-3fA9xQ2mZk7LpR4tY8wB1nC6",
                "Gx7!pR2qLm")
MORE_FILES = {
    "Projects/Mail relay.md": ("# Mail relay\n\nThe relay sends the shop's receipts.\n"
                               f"smtp password: {MORE_SECRETS[0]}\n", ["line 4 (password=…)"]),
    "Memory/家里路由器.md": ("---\nname: 家里路由器\ndescription: 家里路由器的设置\n"
                            "type: user\n---\n路由器在书房。\n"
                            f"路由器密码：{MORE_SECRETS[1]}\n", ["line 7 (密码 …)"]),
    "Notes/Keys.md": ("# Keys\n\n"
                      f"api_key = {MORE_SECRETS[2]}\n\n"
                      f"the wifi password is {MORE_SECRETS[3]}\n",
                      ["line 3 (sk-proj-…", "line 5 (password …)"]),
}


def test_check_lists_every_credential_however_much_else_it_finds(
        vault: Path, make_app: Builder) -> None:
    """``dreamd check`` listed the first 20 findings and "… and N more": a memory with 25
    links to notes not written yet hid every credential behind them (and ``dreamd sync``'s
    list of problem files, behind 22 notes whose properties do not read). The other kinds
    are still cut at 20; every credential, each line of it, is listed (never its secret)."""
    links = "\n".join(f"- [[Book not written yet {n:02}]]" for n in range(25))
    (vault / "Memory" / "reading-list.md").write_text(
        "---\nname: reading list\ndescription: Books to read next\ntype: user\n---\n"
        f"{links}\n", encoding="utf-8")
    (vault / LOGIN).write_text(LOGIN_TEXT, encoding="utf-8")
    (vault / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    for path, (text, _) in MORE_FILES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    for n in range(22):  # notes whose properties are no YAML: problem files, listed first
        (vault / "Broken" / f"note {n:02}.md").parent.mkdir(exist_ok=True)
        (vault / "Broken" / f"note {n:02}.md").write_text(
            f"---\ntitle: [unclosed {n}\n---\nA note whose properties do not read.\n",
            encoding="utf-8")
    app, _ = make_app(vault)
    synced = serve_command(app, ["sync"], None, {})
    assert synced is not None and synced.exit_code == 0, synced
    lines = synced.stdout.splitlines()
    credentials = [line for line in lines if line.startswith("  ") and ": credential: " in line]
    assert len(credentials) == 5 and not _secrets_in(synced.stdout), synced.stdout
    problem_files = int(next(line for line in lines if " problem files " in line).split()[0])
    assert problem_files >= 5 + 22
    assert f"  … and {problem_files - 5 - 20} more (" in synced.stdout, synced.stdout
    answer = serve_command(app, ["check"], None, {})
    assert answer is not None, answer
    said = answer.stdout
    data = serve_command(app, ["check", "--json"], None, {})
    assert data is not None
    items = json.loads(data.stdout)["items"]
    others = [i for i in items if i["kind"] != "credential"]
    assert sum(i["kind"] == "broken_link" for i in others) == 25
    assert f"  … and {len(others) - 20} more (--json lists all)" in said, said
    listed = [line for line in said.splitlines() if line.startswith("  credential: ")]
    wanted = {LOGIN: ["line 8 (password=…)"], NOTE: ["line 4 (密码 …)"],
              **{path: lines for path, (_, lines) in MORE_FILES.items()}}
    assert len(listed) == len(wanted) == 5, said
    for path, lines in wanted.items():
        line = next(line for line in listed if line.startswith(f"  credential: {path} — "))
        assert all(part in line for part in lines), line
    assert sum(line.startswith("  broken link: ") for line in said.splitlines()) <= 20
    assert not _secrets_in(said) and not [s for s in MORE_SECRETS if s in said]


def test_the_memory_pool_finds_the_stored_vector_of_a_memory_with_a_credential(
        app: App, vault: Path) -> None:
    app.sync()
    note = parse_note(LOGIN, (vault / LOGIN).read_bytes())
    stored = app.store.chunk_hashes([LOGIN])[f"{LOGIN}#0"]
    assert first_chunk_hash(note, app.settings.sync.chunk_max_chars) == stored


def test_an_index_from_before_is_rebuilt_without_the_credential(
        vault: Path, make_app: Builder) -> None:
    """An older dreamd indexed the memory as it is; its bytes have not changed since, so only
    the schema version tells the next sync to index it again."""
    import lancedb

    from magma.chunking import chunk_note
    from magma.store import NoteRecord
    from magma.store_tables import SCHEMA_VERSION

    (vault / LOGIN).write_text(LOGIN_TEXT, encoding="utf-8")
    application, fake = make_app(vault)
    application.sync()
    note = parse_note(LOGIN, (vault / LOGIN).read_bytes())
    chunks = chunk_note(note)  # as it was indexed before: the password in the text
    stat = (vault / LOGIN).stat()
    application.store.apply(upserts=[NoteRecord(
        note=note, note_id="old", size=stat.st_size, mtime_ns=stat.st_mtime_ns, chunks=chunks,
        vectors=fake.embed([c.embed_text for c in chunks]))])  # type: ignore[attr-defined]
    assert _state_files_holding_secrets(application.state_dir)
    # schema 2: the last one before credentials were withheld
    lancedb.connect(application.store_uri).open_table("meta").update(
        values={"schema_version": 2})
    assert SCHEMA_VERSION > 2

    again, _ = make_app(vault)
    again.sync()
    assert not _state_files_holding_secrets(again.state_dir)
    assert set(read_credentials(again.state_dir)) == {LOGIN}


HIDDEN_TOKEN = "ghp_" + "1234567890abcdefghijklmnopqrstuvwxyzAB"


def test_memory_md_withholds_a_credential_of_a_hand_written_description(
        vault: Path, make_app: Builder) -> None:
    (vault / "Memory").mkdir(exist_ok=True)
    (vault / "Memory" / "ci-deploy.md").write_text(
        "---\nname: CI deploy\n"
        f"description: deploy token {HIDDEN_TOKEN} for CI\n"
        "type: reference\n---\nThe CI deploys on every tag.\n", encoding="utf-8")
    application, _ = make_app(vault)
    application.sync()
    application.dreamer().dream()  # the dream rebuilds MEMORY.md from its own records
    index = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    line = next(line for line in index.splitlines() if "ci-deploy.md" in line)
    assert line.endswith(" — deploy token \\[credential withheld\\] for CI"), line
    application.memories().rebuild_index()
    assert (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8") == index
    assert "1234567890abcdefghij" not in index
    holding = [p for p in vault.rglob("*") if p.is_file() and p.name != "ci-deploy.md"
               and b"1234567890abcdefghij" in p.read_bytes()]
    assert not holding
    assert not [p for p in application.state_dir.rglob("*") if p.is_file()
                and b"1234567890abcdefghij" in p.read_bytes()
                and not p.relative_to(application.state_dir).as_posix().startswith(
                    ("versions/", "lancedb/versions.lance/"))]
