"""A ``dreamd forget`` SIGKILLed at any of its steps is finished by ``dreamd forget`` run again
(the same argument), or by ``dreamd check --fix``: then no byte of the memory's text is left in
the vault or the data folder, and ``dreamd check`` is as clean as before the forget. In
between, ``check`` calls it a forget cut short, never an orphan or a memory "made on another
device", and the restart's ``sync`` brings nothing of it back.

Each case is the soak's pattern (``soak_trial``), with the kill at a step instead of a moment:
a copy of the demo vault with its own data folder, a memory of the case's own made in this
process, ``dreamd forget`` run in a pre-started ``dreamd`` process that SIGKILLs itself when
the forget reaches the step (``soak_trial._kill_at``), then ``dreamd sync``, ``dreamd check``
and the remedy in another process. The memories: English and Chinese, with an id or written by
hand without one; named by path, id, name or file name.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest
import soak_trial

pytestmark = pytest.mark.scenario

#: The steps of a forget (``daemon.forgetting``), in order, and where the kill lands.
KILLS = (
    ("daemon.forget_journal:ForgetJournal.begin", "after"),  # written down, nothing erased
    ("ccb.writer:NoteWriter.delete", "after"),  # the file gone; its copies journaled still
    ("daemon.forgetting:unlink_forgotten", "after"),
    ("ccb.writer:NoteWriter.forget_copies", "after"),
    ("daemon.sync:RootsSyncer.sync_paths", "after"),  # rows deleted, old versions hold them
    ("magma.store:MagmaStore.maintain", "after"),  # purged; the cache and the IVF not yet
    ("daemon.memories:MemoryService.after_change", "after"),  # the history not yet
    ("magma.versions:VersionArchive.forget", "after"),  # versions deleted, not compacted
    ("magma.versions:VersionArchive.compact", "after"),
    ("daemon.forget_traces:forget_snippets", "after"),
    ("daemon.forget_journal:ForgetJournal.drop", "before"),  # all done but the record
)


@dataclass
class _Case:
    number: int
    target: str
    when: str
    remedy: str  # "forget" (run again) or "fix" (check --fix)
    language: str  # "en" or "zh"
    form: str  # how the forget names it: "path", "id", "name", "file"
    with_id: bool


def _cases() -> list[_Case]:
    forms = ("path", "id", "name", "file")
    return [_Case(n, target, when, ("forget", "fix")[n % 2], ("en", "zh")[n // 2 % 2],
                  forms[n % 4], with_id=n % 5 != 4)
            for n, (target, when) in enumerate(KILLS)]


def _made(vault: Path, case: _Case, token: str) -> tuple[str, str]:
    """The case's memory (its vault path, and the argument that names it)."""
    if case.language == "en":
        text, name = f"The locker hint is {token} amber cedar.", f"Locker hint {token}"
    else:
        text, name = f"储物柜的提示是 {token} 琥珀色的雪松。", f"储物柜提示 {token}"
    if case.with_id:
        made = h.fresh_app(vault).memories().remember(text, type="reference", name=name,
                                                      source="user")
        path, memory_id = made.path, made.memory_id
    else:  # written by hand: its history key is its path
        path, memory_id = f"Memory/{token}-hint.md", ""
        (vault / path).write_text(f"---\nname: {name}\ndescription: {text}\ntype: reference\n"
                                  f"---\n\n{text}\n", encoding="utf-8")
    named = {"path": path, "id": memory_id or path, "name": name,
             "file": path.rsplit("/", 1)[-1]}
    return path, named[case.form]


def _counts(output: str) -> dict[str, int]:
    return dict(json.loads(output)["counts"])


def _run_case(case: _Case, workdir: Path, pool: soak_trial.SessionPool) -> list[str]:
    """One kill and its remedy; the failed expectations (none: ok)."""
    vault, data = workdir / "vault", workdir / "data"
    env = {"DREAMD_STORAGE__DATA_DIR": str(data), "DREAMD_CONFIG": str(workdir / "config.toml")}
    os.environ.update(env)
    shutil.copytree(h.VAULT_EXAMPLE, vault, symlinks=True)
    h.fresh_app(vault).sync()
    restart = pool.restarter()
    code, output = restart.run(["check", "--json", "--vault", str(vault)], env)
    before = _counts(output)  # (what the demo vault shows: its own questions)
    token = f"fgk{case.number}x{case.language}q"
    path, named = _made(vault, case, token)
    assert restart.run(["sync", str(vault), "--json"], env)[0] == 0

    worker = pool.take()
    try:
        worker.send({"env": env, "argv": ["forget", named, "--yes", "--vault", str(vault)],
                     "kill_at": [case.target, case.when]})
        h.wait_until(lambda: worker.proc.poll() is not None or worker.answers()[0], bool,
                     timeout_s=120, what=f"the forget killed at {case.target}", every_s=0.01)
        if worker.proc.poll() is None:
            return [f"the forget never reached {case.target}: {worker.answers()[0]}"]
    finally:
        worker.kill()
    failures = []
    if not soak_trial._traces(token.encode(), vault, data):
        failures.append("nothing was left to finish: the kill came after the last step")
    code, output = restart.run(["sync", str(vault), "--json"], env)
    if code != 0:
        failures.append(f"sync after the kill exited {code}: {output[-300:]}")
    code, output = restart.run(["check", "--json", "--vault", str(vault)], env)
    counts = _counts(output)
    if counts.get("forget_unfinished") != 1 or {"not_in_vault", "orphaned"} & counts.keys():
        failures.append(f"check after the kill: {counts}")
    if case.remedy == "forget":
        code, output = restart.run(["forget", named, "--yes", "--vault", str(vault)], env)
        if code != 0 or not output.startswith("forgot "):
            failures.append(f"forget again exited {code}: {output[-300:]}")
    else:
        code, output = restart.run(["check", "--fix", "--json", "--vault", str(vault)], env)
        fixed = [f["kind"] for f in json.loads(output).get("fixed", [])]
        if "forget_unfinished" not in fixed:
            failures.append(f"check --fix did not finish the forget: {output[-500:]}")
    left = soak_trial._traces(token.encode(), vault, data)
    if left:
        failures.append(f"its text is still in {left}")
    code, output = restart.run(["check", "--json", "--vault", str(vault)], env)
    if _counts(output) != before:
        failures.append(f"check afterwards {_counts(output)}, before the forget {before}")
    problems = h.index_vs_disk(h.fresh_app(vault))
    if problems:
        failures.append(f"the index differs from the disk: {problems}")
    if (vault / path).exists():
        failures.append(f"{path} is back")
    return failures


def test_a_forget_killed_at_any_step_is_finished_and_leaves_nothing(tmp_path: Path) -> None:
    pool = soak_trial.SessionPool(tmp_path / "workers")
    try:
        failed = {f"{c.target} {c.when} ({c.remedy}, {c.language}, by {c.form}"
                  f"{'' if c.with_id else ', no id'})": problems
                  for c in _cases()
                  if (problems := _run_case(c, tmp_path / f"case-{c.number}", pool))}
    finally:
        pool.close()
    assert failed == {}


# ----------------------------------------------------------------- one entry of an entry file

#: The steps of a forget of one entry (``daemon.forget_entry``), in order, and where the
#: kill lands. Before it was written down, a kill after the line went left the entry's
#: versions in the history for good: ``dreamd forget file.md#key`` again said "no entry".
ENTRY_KILLS = (
    ("daemon.forget_journal:ForgetJournal.begin", "after"),  # written down, nothing erased
    ("ccb.writer:NoteWriter.write", "after"),  # the line gone from the file
    ("magma.store:MagmaStore.maintain", "after"),  # its rows and old table versions purged
    ("magma.versions:VersionArchive.forget", "after"),  # versions deleted, not compacted
    ("magma.versions:VersionArchive.compact", "after"),
    ("daemon.forget_journal:ForgetJournal.drop", "before"),  # all done but the record
)
#: An entry file of the memory folder: the entry forgotten names the case's token, the
#: other entries stay byte for byte.
ENTRY_FILE = ("# Facts\n\n- {text} <!--m:subj=locker.hint;vf=2026-05-02-->\n"
              "- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
              "- Drinks oolong tea every afternoon\n")


def _run_entry_case(number: int, target: str, when: str, workdir: Path,
                    pool: soak_trial.SessionPool) -> list[str]:
    """One kill of ``dreamd forget file.md#key`` and its remedy (even cases: the same
    forget again; odd: ``check --fix``); the failed expectations (none: ok)."""
    from ccb.entries import parse_entry_file
    from ccb.entry_notes import entry_path, is_entry_path

    vault, data = workdir / "vault", workdir / "data"
    env = {"DREAMD_STORAGE__DATA_DIR": str(data), "DREAMD_CONFIG": str(workdir / "config.toml")}
    os.environ.update(env)
    shutil.copytree(h.VAULT_EXAMPLE, vault, symlinks=True)
    h.fresh_app(vault).sync()
    restart = pool.restarter()
    before = _counts(restart.run(["check", "--json", "--vault", str(vault)], env)[1])
    token = f"fge{number}q"
    text = (f"The locker hint is {token} amber cedar." if number % 2 == 0
            else f"储物柜的提示是 {token} 琥珀色的雪松。")
    facts = "Memory/facts.md"
    (vault / facts).write_text(ENTRY_FILE.format(text=text), encoding="utf-8")
    entries = parse_entry_file(facts, (vault / facts).read_bytes()).entries
    ref = entry_path(facts, next(e.key for e in entries if token in e.text))
    assert restart.run(["sync", str(vault), "--json"], env)[0] == 0
    kept = ENTRY_FILE.format(text=text).replace(f"- {text} <!--m:subj=locker.hint;"
                                                "vf=2026-05-02-->\n", "")
    worker = pool.take()
    try:
        worker.send({"env": env, "argv": ["forget", ref, "--yes", "--vault", str(vault)],
                     "kill_at": [target, when]})
        h.wait_until(lambda: worker.proc.poll() is not None or worker.answers()[0], bool,
                     timeout_s=120, what=f"the forget killed at {target}", every_s=0.01)
        if worker.proc.poll() is None:
            return [f"the forget never reached {target}: {worker.answers()[0]}"]
    finally:
        worker.kill()
    failures = []  # (the journal names the entry by its key: no token left is no sign)
    code, output = restart.run(["sync", str(vault), "--json"], env)
    if code != 0:
        failures.append(f"sync after the kill exited {code}: {output[-300:]}")
    code, output = restart.run(["check", "--json", "--vault", str(vault)], env)
    counts = _counts(output)
    if counts.get("forget_unfinished") != 1 or {"not_in_vault", "orphaned"} & counts.keys():
        failures.append(f"check after the kill: {counts}")
    if number % 2 == 0:
        code, output = restart.run(["forget", ref, "--yes", "--vault", str(vault)], env)
        if code != 0 or not output.startswith(f"forgot {ref}"):
            failures.append(f"forget again exited {code}: {output[-300:]}")
    else:
        code, output = restart.run(["check", "--fix", "--json", "--vault", str(vault)], env)
        fixed = [f["kind"] for f in json.loads(output).get("fixed", [])]
        if "forget_unfinished" not in fixed:
            failures.append(f"check --fix did not finish the forget: {output[-500:]}")
    left = soak_trial._traces(token.encode(), vault, data)
    if left:
        failures.append(f"its text is still in {left}")
    if (vault / facts).read_text(encoding="utf-8") != kept:
        failures.append(f"{facts} is not the other entries byte for byte")
    code, output = restart.run(["check", "--json", "--vault", str(vault)], env)
    if _counts(output) != before:
        failures.append(f"check afterwards {_counts(output)}, before the forget {before}")
    fresh = h.fresh_app(vault)
    # (the harness chunks an entry file whole: its entry rows are compared with a new index)
    problems = [p for p in h.index_vs_disk(fresh) if not is_entry_path(p.split(": ", 1)[1])]
    rows = {p for p in fresh.store.file_index() if is_entry_path(p)}
    if problems or rows != {entry_path(facts, e.key) for e in parse_entry_file(
            facts, (vault / facts).read_bytes()).entries}:
        failures.append(f"the index differs from the disk: {problems}, entry rows {rows}")
    return failures


def test_a_forget_of_one_entry_killed_at_any_step_is_finished(tmp_path: Path) -> None:
    pool = soak_trial.SessionPool(tmp_path / "workers")
    try:
        failed = {f"{target} {when} ({('forget', 'fix')[n % 2]}, {('en', 'zh')[n % 2]})":
                  problems for n, (target, when) in enumerate(ENTRY_KILLS)
                  if (problems := _run_entry_case(n, target, when, tmp_path / f"entry-{n}",
                                                  pool))}
    finally:
        pool.close()
    assert failed == {}, json.dumps(failed, indent=1, ensure_ascii=False)
