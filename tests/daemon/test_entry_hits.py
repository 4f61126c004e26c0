"""Hit counts: a search never writes ``hc`` (recalls live in MAGMA), and
``dreamd export --format entries --with-hits`` writes them out on request only.

Real files and a real store; the embedder is the token-hash fake (not about meaning).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ccb.entries import parse_entry_file
from daemon.app import App
from daemon.entry_exchange import export_folder, recall_counts

Builder = Callable[..., tuple[App, object]]
NOW = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
FACTS = "# 关于我\n\n- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"


def test_a_search_never_writes_hc_and_counts_in_magma(vault: Path, make_app: Builder) -> None:
    facts = vault / "Memory" / "facts.md"
    facts.write_text(FACTS, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    before = {p: p.read_bytes() for p in vault.rglob("*.md")}
    for _ in range(3):
        hits = app.search("余杭区工作", now=NOW)  # counts recalls
        assert hits and hits[0].path.startswith("Memory/facts.md#")
    assert {p: p.read_bytes() for p in vault.rglob("*.md")} == before  # hc=2 stays as is
    row = app.store.file_index()[hits[0].path]
    assert app.recalls.stats()[row.note_id].count == 3


def test_export_writes_recall_counts_as_hc_on_request_only(vault: Path, make_app: Builder
                                                           ) -> None:
    app, _ = make_app(vault)
    app.sync()
    found = [h for h in app.search("kiln glaze firing", now=NOW) if h.memory_type]
    app.search("kiln glaze firing", now=NOW)
    assert found
    counts = recall_counts(app)
    recalled = found[0].path.removeprefix("Memory/")
    assert counts[recalled] == 2
    plain = export_folder(app, "entries")
    assert all(b"hc=" not in data for data in plain.files.values())
    with_hits = export_folder(app, "entries", with_hits=True)
    assert with_hits.lossy == plain.lossy  # hc is no loss: it comes on request
    lines = [e for path, data in with_hits.files.items()
             for e in parse_entry_file(path, data).entries]
    assert lines and all(e.fields.hc is not None for e in lines)
    assert sorted(e.fields.hc or 0 for e in lines)[-1] == max(counts.values())
    assert sum(e.fields.hc or 0 for e in lines) == sum(counts.values())


def test_with_hits_goes_with_format_entries_only(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-P", "-m", "daemon", "export", "--format", "files", "--with-hits",
         "--to", str(tmp_path / "out")], cwd=repo, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(repo), "DREAMD_VAULT__PATH": str(tmp_path)},
        check=False, timeout=120)
    assert run.returncode == 2 and "--with-hits goes with --format entries" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "out").exists()
