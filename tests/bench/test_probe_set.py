"""``bench/probe_set.py``: the layer-probe vault writes, parses, and its probes are well formed.

Real files in a temp folder, no embedding model: fast.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ulid import ULID

from ccb.parse import parse_note

TODAY = dt.date(2026, 12, 1)  # a Tuesday; vault_example's daily notes fall inside the window


import probe_set as ps  # noqa: E402  (bench/ is on pytest's pythonpath)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    root = tmp_path_factory.mktemp("probe") / "vault"
    return root, ps.write_probe_vault(root, TODAY)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def test_every_memory_file_parses_as_its_intended_type(vault: tuple[Path, list[Any]]) -> None:
    root, _ = vault
    intended = ps.memory_types()
    assert len(intended) >= 40
    for path, memory_type in intended.items():
        note = parse_note(path, (root / path).read_bytes())
        assert note.problems == (), (path, note.problems)
        assert note.memory is not None, path
        assert note.memory.type == memory_type, path
        assert note.memory.subject and note.memory.description and note.body.strip()
        assert str(ULID.from_str(note.memory.id or "")) == note.memory.id
    metas = [parse_note(p, (root / p).read_bytes()).memory for p in intended]
    ids = [m.id for m in metas if m is not None]
    assert len(set(ids)) == len(ids)
    # vault_example was copied in first, its memories included
    assert (root / "Memory" / "tests-hit-a-real-database.md").is_file()
    assert (root / "Welcome.md").is_file()


def test_ten_probes_per_layer_each_pointing_at_a_file(vault: tuple[Path, list[Any]]) -> None:
    root, probes = vault
    assert Counter(p.layer for p in probes) == dict.fromkeys(ps.LAYERS, 10)
    assert len({p.query for p in probes}) == 40
    for probe in probes:
        assert (root / probe.expected_path).is_file(), probe
        assert probe.query.strip() and probe.note.strip()


def test_targets_belong_to_their_layer(vault: tuple[Path, list[Any]]) -> None:
    root, probes = vault
    for probe in probes:
        note = parse_note(probe.expected_path, (root / probe.expected_path).read_bytes())
        meta = note.memory
        if probe.layer == "L1":
            assert meta is not None and meta.type == "user", probe
        elif probe.layer == "L2":
            assert meta is not None and meta.type == "feedback", probe
            text = f"{meta.name} {meta.description} {note.body}".casefold()
            assert meta.pinned or any(w in text for w in ps.RULE_WORDS), probe
            assert meta.valid_to is None
        elif probe.layer == "L3":
            assert meta is None or meta.type in ("project", "reference"), probe
            assert not probe.expected_path.startswith(("Daily/", "Sessions/"))
        else:
            assert meta is None
            daily = re.fullmatch(r"Daily/(\d{4}-\d{2}-\d{2})\.md", probe.expected_path)
            assert daily or "date" in note.properties, probe
            if daily:
                assert TODAY - dt.timedelta(days=21) <= dt.date.fromisoformat(daily[1]) <= TODAY


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def test_queries_paraphrase_rather_than_copy(vault: tuple[Path, list[Any]]) -> None:
    """No query holds a run of four words of its target, nor the target's name."""
    root, probes = vault
    for probe in probes:
        note = parse_note(probe.expected_path, (root / probe.expected_path).read_bytes())
        target = _words(note.body + " " + " ".join(str(v) for v in note.properties.values()))
        grams = {tuple(target[i:i + 4]) for i in range(len(target) - 3)}
        query = _words(probe.query)
        assert not any(tuple(query[i:i + 4]) in grams for i in range(len(query) - 3)), probe
        if note.memory is not None:
            assert note.memory.name.casefold() not in probe.query.casefold(), probe


def test_distractors_and_a_superseded_rule(vault: tuple[Path, list[Any]]) -> None:
    root, probes = vault
    targets = {p.expected_path for p in probes}
    written = set(_files(root)) - set(_files(ps.VAULT_EXAMPLE))
    others = [p for p in written if p not in targets and not p.endswith("MEMORY.md")]
    assert len(others) >= 30
    superseded = []
    for path in ps.memory_types():
        meta = parse_note(path, (root / path).read_bytes()).memory
        if meta is not None and meta.valid_to is not None:
            superseded.append(path)
    assert len(superseded) == 1
    assert superseded[0] not in targets
    index = (root / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert Path(superseded[0]).name not in index
    assert "timeout-on-every-payments-api-call.md" in index


def test_deterministic_and_refuses_a_full_folder(
    vault: tuple[Path, list[Any]], tmp_path: Path
) -> None:
    root, probes = vault
    again = ps.write_probe_vault(tmp_path / "again", TODAY)
    assert again == probes
    assert _files(tmp_path / "again") == _files(root)
    with pytest.raises(FileExistsError):
        ps.write_probe_vault(root, TODAY)
