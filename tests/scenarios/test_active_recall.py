"""Active recall by meaning (issue 21): ``dreamd context --hook`` adds the raw diary lines a
prompt is about, by their words and, when the process holds the embedding model (the running
daemon answers the hook over its socket; a hook answered in its own process has loaded it for
its own search), by their vectors too; without the model in memory the words alone decide,
silently.

The real model (this is about meaning), a real ``dreamd run`` subprocess, real hook client
processes (``python -m daemon``), a real store. The prompt shares no word with the diary
line it is about (measured with the default model: cosine 0.40, no word match).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import daemon_harness as harness
import pytest

from daemon import client
from daemon.active_recall import ActiveRecall
from daemon.app import App, load
from magma.embedder import USE_MODEL_ID
from magma.snippet_store import SnippetStore

pytestmark = [pytest.mark.scenario, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
RULE = ("Release notes must name every breaking change: a silent rename broke the mobile "
        "client in March.")
BY_MEANING = "the changelog should call out each backwards-incompatible change"
BY_WORDS = "what must release notes name about a breaking change"


def _hook(vault: Path, prompt: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s",
                        "prompt": prompt})
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "daemon", "context",
                           "--hook", "--vault", str(vault)], cwd=cwd, input=event, text=True,
                          capture_output=True, timeout=180, check=False)


def _served(run: subprocess.CompletedProcess[str]) -> bool:
    """The daemon answered: the client process never imported LanceDB."""
    return not any(line.startswith("import time:") and line.rsplit("|", 1)[-1].strip()
                   == "lancedb" for line in run.stderr.splitlines())


def _raw(stdout: str) -> str:
    return stdout[stdout.index("<raw-diary"):] if "<raw-diary" in stdout else ""


@pytest.fixture
def dreamt_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small vault whose daily note of today light sleep cut and embedded (the real
    model, in this process); the store is closed before the daemon starts."""
    monkeypatch.setenv("DREAMD_TIME__ZONE", "UTC")
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example" / "Memory", vault / "Memory")
    today = datetime.now(UTC).date().isoformat()
    (vault / "Daily").mkdir()
    (vault / "Daily" / f"{today}.md").write_text(
        f"# {today}\n\n## PR review\n- 14:03 {RULE}\n"
        "- 15:10 Lunch with Bob at the noodle place near the station.\n", encoding="utf-8")
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    try:
        app.sync()
        app.dreamer().dream(force=True)
        keys, vectors = app.snippet_recaller.store.vectors(USE_MODEL_ID)
        assert len(keys) == 2 and vectors.shape == (2, 512)
    finally:
        app.close()
    return vault


def test_the_running_daemon_adds_a_diary_line_the_prompt_means_without_its_words(
        dreamt_vault: Path, tmp_path: Path) -> None:
    here = tmp_path / "project"
    here.mkdir()
    daemon = harness.DaemonProcess.start(dreamt_vault, tmp_path / "daemon.log", fake=False)
    try:
        daemon.wait_state("watching")
        harness.wait_until(lambda: (daemon.state_dir / client.API_RECORD).exists(), bool,
                           timeout_s=60, what="api.json")
        assert _hook(dreamt_vault, BY_WORDS, here).returncode == 0  # records the settings
        warm = _hook(dreamt_vault, BY_MEANING, here)
        assert warm.returncode == 0 and _served(warm)
        raw = _raw(warm.stdout)
        assert RULE in raw and "noodle" not in raw, warm.stdout
        assert "Traceback" not in warm.stderr
    finally:
        daemon.stop()


def test_without_the_model_in_memory_the_words_alone_decide_silently(
        dreamt_vault: Path) -> None:
    app = App.create(load(None, None, {"vault.path": str(dreamt_vault)}))
    try:
        store = SnippetStore.open(app.store_uri)
        words_only = ActiveRecall(lambda: store, app.state_dir, embedder=lambda: None)
        assert words_only.recall(BY_MEANING) == []
        assert [s.body for s in words_only.recall(BY_WORDS)] == [RULE]
        assert words_only.matched_by == "words"
        assert "embedder" not in app.__dict__  # nothing loaded the model
    finally:
        app.close()


def test_a_hook_answered_in_its_own_process_uses_the_model_its_search_loaded(
        dreamt_vault: Path, tmp_path: Path) -> None:
    here = tmp_path / "project"
    here.mkdir()
    cold = _hook(dreamt_vault, BY_MEANING, here)  # no daemon: the CLI answers in-process
    assert cold.returncode == 0 and not _served(cold)
    assert RULE in _raw(cold.stdout), cold.stdout
