"""Prometheus metrics of ``dreamd run`` and the search log that feeds them.

The daemon tests run a real daemon subprocess (``daemon_harness.py``, token-hash FAKE embedder:
they are about counters, files and sockets, not meaning) and scrape it over real HTTP on
127.0.0.1 at a free port picked here; searches and dreams run in this process against the
same state folder, as ``dreamd search`` / ``dreamd dream`` would in theirs. The test marked
``slow`` runs the real ``dreamd run``, ``dreamd search`` and ``dreamd status`` with the real
model. The search-log tests use real files and real concurrent processes. Every wait is
bounded; nothing asserts on timings.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import socket
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from dataclasses import fields
from pathlib import Path
from typing import Any

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console
from structlog.testing import capture_logs

from config import load_settings
from daemon import render
from daemon.metrics import (
    CACHE_RESULTS,
    SEARCH_LOG_FILE,
    SEARCH_LOG_ROTATED,
    SearchLogTail,
    SearchRecord,
    StageRecord,
    append_search,
    read_searches,
    search_summary,
    stage_status_label,
)
from daemon.retrieval import SearchTrace

DREAMD = Path(sys.executable).with_name("dreamd")
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


# ----------------------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def parse(text: str) -> Samples:
    """``{(sample name, labels): value}`` of a Prometheus text exposition."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        return parse(answer.read().decode("utf-8"))


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of every sample ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def small_vault(root: Path) -> tuple[Path, int]:
    """Three notes, one memory and one attachment; returns the vault and its note count."""
    vault = root / "vault"
    (vault / "Baking").mkdir(parents=True)
    (vault / "Attachments").mkdir()
    (vault / "Welcome.md").write_text("# Welcome\n\nSee [[Bread]] and [[Ana]].\n", "utf-8")
    (vault / "Baking" / "Bread.md").write_text(
        "# Bread\n\nA sourdough starter wants flour and water at 100% hydration.\n", "utf-8")
    (vault / "Ana.md").write_text("# Ana\n\nAna likes green tea and long walks.\n", "utf-8")
    h.write_memory(vault, "prefers-green-tea", "The user prefers green tea in the morning.")
    (vault / "Attachments" / "pixel.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    return vault, 4


def metrics_env(monkeypatch: pytest.MonkeyPatch, *, enabled: bool, port: int,
                textfile: Path | None = None) -> None:
    """Settings for the daemon subprocess (inherited through the environment)."""
    monkeypatch.setenv("DREAMD_METRICS__ENABLED", "true" if enabled else "false")
    monkeypatch.setenv("DREAMD_METRICS__PORT", str(port))
    monkeypatch.setenv("DREAMD_METRICS__INTERVAL_S", "0.2")
    if textfile is not None:
        monkeypatch.setenv("DREAMD_METRICS__TEXTFILE", str(textfile))


def record(n: int, cache: str = "miss") -> SearchRecord:
    return SearchRecord(at=f"2026-12-01T00:00:{n % 60:02d}+00:00", total_ms=10.0 + n,
                        stages=(StageRecord("ccb-fast", "ran", 1.5, 2),
                                StageRecord("magma-extend", "skipped: confident", 0.0)),
                        intent_cache=cache, hits=n)


# ----------------------------------------------------------------------------- search log


_APPENDER = """
import os, sys, time
from pathlib import Path
from daemon.metrics import SearchRecord, StageRecord, append_search
state, who, count, go = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
while not go.exists():
    time.sleep(0.005)
for n in range(count):
    append_search(state, SearchRecord(at="t", total_ms=float(n), intent_cache="hit",
                  stages=(StageRecord("ccb-fast", "ran", 1.0, who),), hits=who * 100_000 + n))
    if who == 0 and n == count // 2:
        fd = os.open(state / "searches.jsonl", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b'{"half a line, then garbage\\n[1, 2, 3]\\n')
        os.close(fd)
"""


def test_search_log_keeps_every_line_of_concurrent_appenders_and_skips_garbage(
    tmp_path: Path,
) -> None:
    writers, each = 4, 300
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(tmp_path), str(who),
                               str(each), str(go)], cwd=h.REPO)
             for who in range(writers)]
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0] * writers

    lines = (tmp_path / SEARCH_LOG_FILE).read_bytes().splitlines()
    assert len(lines) == writers * each + 2  # no line lost, none torn into two
    bad: list[ValueError] = []
    tail = SearchLogTail(tmp_path, from_start=True)
    records = tail.read_new(on_bad=bad.append)
    assert len(bad) == 2
    assert sorted(r.hits for r in records) == sorted(
        who * 100_000 + n for who in range(writers) for n in range(each))
    for who in range(writers):  # each writer's lines in its own order
        mine = [r.hits for r in records if r.stages[0].found == who]
        assert mine == sorted(mine)
    assert tail.read_new() == []
    assert len(read_searches(tmp_path, last=10_000)) == writers * each


def test_search_log_rotation_stays_bounded_and_the_tail_reads_each_record_once(
    tmp_path: Path,
) -> None:
    max_bytes = 4096
    tail = SearchLogTail(tmp_path)  # no log yet: everything is new
    seen: list[int] = []
    for n in range(300):
        assert append_search(tmp_path, record(n), max_bytes=max_bytes)
        if n % 7 == 0:
            seen += [r.hits for r in tail.read_new()]
    seen += [r.hits for r in tail.read_new()]
    assert seen == list(range(300))
    line = len(record(299).to_line())
    for name in (SEARCH_LOG_FILE, SEARCH_LOG_ROTATED):
        assert (tmp_path / name).stat().st_size <= max_bytes + line
    recent = [r.hits for r in read_searches(tmp_path)]
    assert recent == list(range(300 - len(recent), 300)) and len(recent) > 10


def test_a_tail_started_on_an_existing_log_counts_only_what_comes_after(tmp_path: Path) -> None:
    append_search(tmp_path, record(1))
    tail = SearchLogTail(tmp_path)
    with (tmp_path / SEARCH_LOG_FILE).open("ab") as log:
        log.write(b'{"at": "t", "total_ms": 1')  # a line still being written
    assert tail.read_new() == []
    with (tmp_path / SEARCH_LOG_FILE).open("ab") as log:
        log.write(b', "stages": []}\n')
    assert [r.total_ms for r in tail.read_new()] == [1.0]


def test_an_unwritable_log_never_fails_a_search_and_a_search_is_logged(
    vault: Path, make_app: Any,
) -> None:
    app, _ = make_app(vault)
    app.sync()
    (app.state_dir / SEARCH_LOG_FILE).mkdir()  # cannot be opened for writing
    with capture_logs() as logs:
        hits = app.search("sourdough starter", count_recall=False)
    assert hits
    assert any(e["event"] == "search_log.not_written" for e in logs)
    (app.state_dir / SEARCH_LOG_FILE).rmdir()

    hits = app.search("sourdough starter", count_recall=False)
    app.search("   ", count_recall=False)  # no stage ran: not a search for the metrics
    (logged,) = read_searches(app.state_dir)
    assert logged.hits == len(hits) and logged.error is None
    assert [s.name for s in logged.stages] == ["ccb-fast", "magma-extend", "full-fusion"]
    assert logged.intent_cache.replace("-", "_") in CACHE_RESULTS
    assert logged.total_ms >= max(s.ms for s in logged.stages)


def test_stage_statuses_become_closed_label_values() -> None:
    assert stage_status_label("ran") == "ran"
    assert stage_status_label("ran late: too little found before it") == "ran-late"
    assert stage_status_label("skipped: deadline") == "skipped-deadline"
    assert stage_status_label("skipped: error") == "skipped-error"
    assert stage_status_label("skipped: confident") == "skipped-confident"
    assert stage_status_label("skipped: no query vector") == "skipped-no-vector"
    assert stage_status_label("ran: 1 failed, 0 late (kept unjudged)") == "ran-partial"
    assert stage_status_label("off") == "off"
    assert stage_status_label("something new") == "other"


def test_the_verifier_stage_and_failed_searches_are_counted(tmp_path: Path) -> None:
    from prometheus_client import generate_latest

    from daemon.metrics import DaemonMetrics

    metrics = DaemonMetrics(tmp_path, conflicts=lambda: 3)
    append_search(tmp_path, SearchRecord(
        at="t", total_ms=900.0, intent_cache="semantic-hit", hits=3, verifier_dropped=2,
        stages=(StageRecord("ccb-fast", "skipped: deadline", 100.0),
                StageRecord("verifier", "ran: 1 failed, 0 late (kept unjudged)", 700.0, -2))))
    append_search(tmp_path, SearchRecord(at="t", total_ms=0.0, error="StoreError"))
    metrics.refresh()
    samples = parse(generate_latest(metrics.registry).decode())
    assert value(samples, "dreamd_search_stage_duration_seconds_count", stage="verifier") == 1
    assert value(samples, "dreamd_search_stage_duration_seconds_count", stage="ccb-fast") == 1
    assert value(samples, "dreamd_search_stage_duration_seconds_count", stage="total") == 1
    assert value(samples, "dreamd_search_stage_outcomes_total", stage="verifier",
                 status="ran-partial") == 1
    assert value(samples, "dreamd_search_verifier_dropped_total") == 2
    assert value(samples, "dreamd_intent_cache_lookups_total", result="semantic_hit") == 1
    assert value(samples, "dreamd_intent_cache_hit_ratio") == 1.0
    assert value(samples, "dreamd_errors_total", source="search", error="StoreError") == 1
    assert value(samples, "dreamd_conflicts_open") == 3


def test_status_line_of_the_intent_cache() -> None:
    records = [record(n, cache) for n, cache in enumerate(
        ["hit"] * 5 + ["semantic-hit"] * 1 + ["miss"] * 4 + ["off"] * 2)]
    summary = search_summary(records, cache_enabled=True)
    assert summary["searches"] == 12 and summary["lookups"] == 10
    assert render.cache_line(summary).startswith(
        "60% hits (semantic 10%) over the last 12 searches")
    assert render.cache_line(search_summary([], cache_enabled=True)) == "no searches yet"
    assert render.cache_line(search_summary(records, cache_enabled=False)).startswith("off")


def test_the_readme_metrics_config_is_valid(tmp_path: Path) -> None:
    readme = (h.REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```toml\n(.+?)\n```", section, flags=re.S)
    config = tmp_path / "config.toml"
    config.write_text(snippet, encoding="utf-8")
    cfg = load_settings(config_path=config, env_name=None, overrides={}).settings.metrics
    assert tomllib.loads(snippet)["default"]["metrics"]["enabled"] is True
    assert cfg.enabled and cfg.port == 9464 and cfg.textfile is not None
    assert cfg.textfile.name == "dreamd.prom" and "~" not in str(cfg.textfile)


# ----------------------------------------------------------------------------- the daemon


def test_disabled_metrics_listen_nowhere(
    tmp_path: Path, daemons: list[Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault, _ = small_vault(tmp_path)
    port = free_port()
    metrics_env(monkeypatch, enabled=False, port=port, textfile=tmp_path / "off.prom")
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(process)
    status = process.wait_state("watching")
    assert status["metrics"]["enabled"] is False and status["metrics"]["url"] is None
    assert not listening(port)
    assert not (tmp_path / "off.prom").exists()
    report = h.fresh_app(vault).status()
    assert render.metrics_line(report.as_dict()["metrics"]) == "off (metrics.enabled = false)"
    assert process.stop() == 0


def test_a_port_in_use_leaves_the_daemon_running_and_says_so(
    tmp_path: Path, daemons: list[Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault, _ = small_vault(tmp_path)
    textfile = tmp_path / "dreamd.prom"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        metrics_env(monkeypatch, enabled=True, port=port, textfile=textfile)
        process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
        daemons.append(process)
        status = process.wait_state("watching")
        assert status["metrics"]["url"] is None
        assert status["metrics"]["error"] == f"port {port}: already in use"
        failed = [e for e in process.events() if e.get("event") == "metrics.http_failed"]
        assert failed and failed[0]["level"] == "error" and "metrics.port" in failed[0]["hint"]
        samples = h.wait_until(lambda: parse(textfile.read_text("utf-8"))
                               if textfile.exists() else {},
                               lambda s: value(s, "dreamd_index_files", kind="note") == 4,
                               timeout_s=60, what="the textfile with the index counted")
        assert value(samples, "dreamd_errors_total", source="metrics", error="OSError") == 1
        line = render.metrics_line(h.fresh_app(vault).status().as_dict()["metrics"])
        assert line == f"written to {textfile}; not working: port {port}: already in use"
        assert process.stop() == 0


def test_enabled_metrics_are_served_and_written(
    tmp_path: Path, daemons: list[Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault, notes = small_vault(tmp_path)
    port = free_port()
    textfile = tmp_path / "textfile" / "dreamd.prom"
    textfile.parent.mkdir()
    metrics_env(monkeypatch, enabled=True, port=port, textfile=textfile)
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(process)
    status = process.wait_state("watching")
    assert status["metrics"]["url"] == f"http://127.0.0.1:{port}/metrics"

    # a sync: the daemon dreamt at start-up (never dreamt: forced), then an edit is indexed.
    # "watching" is written just before the watcher starts, and an edit made before it is
    # indexed by the catch-up walk, not the watcher: edit again until the watcher had one.
    edits = iter(range(1_000))

    def edit_and_scrape() -> Samples:
        (vault / "Baking" / "Bread.md").write_text(
            f"# Bread\n\nRye needs more water ({next(edits)}).\n", "utf-8")
        return scrape(port)

    h.wait_until(edit_and_scrape, lambda s: total(s, "dreamd_sync_latency_seconds_count") >= 1,
                 timeout_s=60, what="an edit seen by the watcher and indexed", every_s=0.5)
    samples = h.wait_until(
        lambda: scrape(port), lambda s: total(s, "dreamd_watch_queue_depth") == 0
        and total(s, "dreamd_dream_runs_total") >= 1, timeout_s=60,
        what="the edits indexed and the start-up dream counted")
    assert value(samples, "dreamd_index_files", kind="note") == notes
    assert value(samples, "dreamd_index_files", kind="attachment") == 1
    assert (value(samples, "dreamd_index_chunks") or 0) >= notes
    assert value(samples, "dreamd_index_memories") == 1
    assert total(samples, "dreamd_sync_files_total", change="modified") >= 1
    assert total(samples, "dreamd_sync_duration_seconds_count", kind="reconcile") >= 1
    assert value(samples, "dreamd_watch_queue_depth") is not None
    assert value(samples, "dreamd_conflicts_open") == 0
    assert value(samples, "dreamd_daemon_state", dreamd_daemon_state="watching") == 1
    assert (value(samples, "dreamd_dream_last_timestamp_seconds") or 0) > 0
    assert (value(samples, "process_resident_memory_bytes") or 0) > 0

    # searches and a dream in another process (this one), a garbage line in the log
    app = h.fresh_app(vault)
    dreams_before = total(samples, "dreamd_dream_runs_total")
    for _ in range(2):
        assert app.search("green tea", count_recall=False)
    app.dreamer().dream(force=True)
    with (app.state_dir / SEARCH_LOG_FILE).open("ab") as log:
        log.write(b"not json\n")
    samples = h.wait_until(
        lambda: scrape(port),
        lambda s: total(s, "dreamd_search_stage_duration_seconds_count", stage="total") >= 2
        and total(s, "dreamd_dream_runs_total") > dreams_before, timeout_s=60,
        what="two searches and the dream counted")
    assert total(samples, "dreamd_search_stage_duration_seconds_count", stage="total") == 2
    assert total(samples, "dreamd_search_stage_duration_seconds_count", stage="ccb-fast") >= 1
    assert total(samples, "dreamd_search_stage_outcomes_total") == 6  # 3 stages, 2 searches
    assert total(samples, "dreamd_search_stage_outcomes_total", stage="ccb-fast",
                 status="ran") == 2
    assert total(samples, "dreamd_intent_cache_lookups_total") == 2
    if "intent_cache" in {f.name for f in fields(SearchTrace)}:  # the same query twice
        assert value(samples, "dreamd_intent_cache_lookups_total", result="miss") == 1
        assert value(samples, "dreamd_intent_cache_lookups_total", result="hit") == 1
        assert value(samples, "dreamd_intent_cache_hit_ratio") == 0.5
    assert total(samples, "dreamd_errors_total", source="search-log") == 1
    ratio = value(samples, "dreamd_intent_cache_hit_ratio")
    assert ratio is not None and (ratio != ratio or 0 <= ratio <= 1)  # NaN: no lookups

    # loopback names only (a DNS-rebinding page sends its own host name)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/metrics", headers={"Host": f"evil.example:{port}"})
    assert connection.getresponse().status == 403
    connection.close()

    # the textfile: node_exporter-parsable, without the process_* node_exporter has itself
    written = h.wait_until(lambda: parse(textfile.read_text("utf-8")),
                           lambda s: total(s, "dreamd_intent_cache_lookups_total") == 2,
                           timeout_s=60, what="the textfile with the searches")
    assert value(written, "dreamd_index_files", kind="note") == notes
    assert not any(name.startswith("process_") for name, _ in written)
    assert [p.name for p in textfile.parent.iterdir()] == ["dreamd.prom"]  # no temp left

    # dreamd status: the cache line and where the metrics go
    report = h.fresh_app(vault).status().as_dict()
    assert report["searches"]["searches"] == 2
    out = io.StringIO()
    fresh = h.fresh_app(vault)
    render.print_status(Console(file=out, width=200), fresh.status(), fresh.zone)
    text = out.getvalue()
    assert re.search(r"intent cache: (\d+% hits \(semantic \d+%\) over the last 2 searches|"
                     r"no lookups in the last 2 searches)", text), text
    assert (f"metrics: served at http://127.0.0.1:{port}/metrics; written to {textfile}"
            in text), text

    assert process.stop() == 0
    assert not listening(port)
    final = parse(textfile.read_text("utf-8"))
    assert value(final, "dreamd_daemon_state", dreamd_daemon_state="stopped") == 1


@pytest.mark.slow
def test_the_real_daemon_counts_a_dreamd_search(
    tmp_path: Path, daemons: list[Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault, notes = small_vault(tmp_path)
    port = free_port()
    metrics_env(monkeypatch, enabled=True, port=port)
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log", fake=False)
    daemons.append(process)
    process.wait_state("watching", timeout_s=120)
    h.wait_until(lambda: scrape(port),
                 lambda s: value(s, "dreamd_index_files", kind="note") == notes,
                 timeout_s=120, what="the vault indexed")
    found = subprocess.run([str(DREAMD), "search", "green tea", "--json", "--vault", str(vault)],
                           capture_output=True, text=True, timeout=180, check=True,
                           env={**os.environ, "COLUMNS": "200"})
    assert json.loads(found.stdout)
    samples = h.wait_until(
        lambda: scrape(port),
        lambda s: total(s, "dreamd_search_stage_duration_seconds_count", stage="total") >= 1,
        timeout_s=60, what="the search counted")
    assert total(samples, "dreamd_intent_cache_lookups_total") == 1
    status = subprocess.run([str(DREAMD), "status", "--json", "--vault", str(vault)],
                            capture_output=True, text=True, timeout=180, check=True)
    report = json.loads(status.stdout)
    assert report["searches"]["searches"] == 1
    assert report["metrics"]["url"] == f"http://127.0.0.1:{port}/metrics"
    assert report["metrics"]["active"] is True
    assert process.stop() == 0
    with pytest.raises(urllib.error.URLError):
        scrape(port)
