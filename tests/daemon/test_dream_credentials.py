"""A credential typed by hand into the diary, or said in a session, never leaves the file it
was written in: light sleep stages no snippet that holds one, ``DREAMS.md`` shows none (nor a
control character), and no file of the state folder (snippets, vectors, ``dream-state.json``)
keeps a copy. Real vault files, a real transcript in Claude Code's shape, real LanceDB; the
fake embedder (nothing here is about meaning)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from daemon.app import App

Builder = Callable[..., tuple[App, object]]
SESSION = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
NIGHT = datetime(2026, 12, 1, 22, 0, tzinfo=UTC)
GITHUB = "ghp_1234567890abcdefghij" + "klmnopqrstuvwxyzAB"
#: What must appear nowhere but in the files the user wrote.
PLANTED = ("Sup3rS3cret!x", "Qw3rty!!88", "1234567890abcdefghij", "klmnopqrstuvwxyzAB",
           "Hunter2Zeta9")
DIARY = (
    "## Notes\n"
    "- 09:55 From now on, every release is tagged from the main branch.\n"
    "- 10:00 Staging db password=Sup3rS3cret!x typed by hand\n"
    "- 10:05 服务器密码是 Qw3rty!!88\n"
    "- 10:10 密\u200b码是 Hunter2Zeta9\n"
)


def _transcript(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    at = "2026-12-01T14:00:00.000Z"
    said = [f"Always deploy with the token {GITHUB[:24]}\u0001{GITHUB[24:]} from now on.",
            "From now on, answer me in short paragraphs."]
    lines = [{"parentUuid": None, "isSidechain": False, "userType": "external",
              "cwd": "/home/me/code/kiln", "sessionId": SESSION, "version": "2.0.14",
              "type": "user", "message": {"role": "user", "content": text},
              "uuid": f"u-{n}", "timestamp": at} for n, text in enumerate(said)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    stamp = NIGHT.timestamp() - 3600
    os.utime(path, (stamp, stamp))
    return path


def test_the_dream_copies_no_credential_of_the_diary_or_a_session(
        vault: Path, make_app: Builder, tmp_path: Path) -> None:
    (vault / "Daily").mkdir(exist_ok=True)
    (vault / "Daily" / "2026-12-01.md").write_text(DIARY, encoding="utf-8")
    projects = tmp_path / "claude" / "projects"
    transcript = _transcript(projects / "-home-me-code-kiln")
    app, _ = make_app(vault, **{"time.zone": "UTC",
                                "dream.transcripts": str(projects / "*" / "*.jsonl")})
    app.sync()
    app.dreamer(clock=lambda: NIGHT).dream(force=True)

    dreams = (vault / "Memory" / "DREAMS.md").read_text(encoding="utf-8")
    assert "every release is tagged from the main branch" in dreams  # light sleep ran
    assert "\u0001" not in dreams and "\u200b" not in dreams
    store = app.snippet_recaller.store
    bodies = [s.body for s in store.snippets()]
    assert any("short paragraphs" in b for b in bodies) and len(bodies) == 2, bodies
    written_by_user = {vault / "Daily" / "2026-12-01.md", transcript}
    holding = [p for p in [*vault.rglob("*"), *app.state_dir.rglob("*")] if p.is_file()
               and p not in written_by_user
               and not p.relative_to(app.state_dir if p.is_relative_to(app.state_dir)
                                     else vault).as_posix().startswith(
                   ("versions/", "lancedb/versions.lance/"))
               and any(s.encode() in p.read_bytes() for s in PLANTED)]
    assert not holding, holding
