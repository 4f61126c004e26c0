"""The writer's registries beside the vault: what a held batch saves is what one save writes."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.write_records import BATCH_SAVE_EVERY, ORIGINS_FILE, OriginLog

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


def _saved(folder: Path) -> bytes:
    return (folder / ORIGINS_FILE).read_bytes()


def _reference(folder: Path, origins: dict[str, object]) -> bytes:
    """What a save of ``origins`` outside a batch writes (``json.dumps`` of what it keeps)."""
    OriginLog(folder)._save(dict(origins))
    return _saved(folder)


@settings(max_examples=40, deadline=None)
@given(writes=st.lists(st.tuples(st.binary(max_size=8), _TEXT, _TEXT), max_size=250),
       before=st.dictionaries(st.text(max_size=6), st.one_of(
           st.tuples(_TEXT, _TEXT, st.sampled_from([0.0, time.time(), time.time() - 60]))
           .map(list), st.lists(_TEXT, max_size=2), st.integers(), st.none()), max_size=5))
def test_a_held_batch_saves_the_text_a_single_save_writes(tmp_path_factory, writes, before):
    """English, Chinese, quotes, escapes, control characters, a write of the same bytes twice
    (a new value for one key), entries of other shapes and older files already there (some
    past the window): every save of a hold (each BATCH_SAVE_EVERY writes and its end) is
    byte for byte what one save outside a batch writes of the same origins."""
    folder = tmp_path_factory.mktemp("origins")
    other = tmp_path_factory.mktemp("reference")
    (folder / ORIGINS_FILE).write_text(json.dumps(before), encoding="utf-8")
    log = OriginLog(folder)
    log.hold()
    for n, (data, origin, change) in enumerate(writes, start=1):
        log.note(data, (origin, change))
        log.count_write()
        if n % BATCH_SAVE_EVERY == 0:
            assert _saved(folder) == _reference(other, log._load())
    held = dict(log._load())
    log.release()
    assert _saved(folder) == _reference(other, held)


def test_the_same_bytes_written_again_in_a_batch_are_saved_with_their_new_change(tmp_path):
    log = OriginLog(tmp_path)
    log.hold()
    for n in range(BATCH_SAVE_EVERY):
        log.note(b"memory %d" % n, ("dream", "dream: archived"))
        log.count_write()
    log.note(b"memory 0", ("api", "记忆 rewritten \"by hand\""))
    log.release()
    saved = json.loads(_saved(tmp_path))
    assert log.of(next(iter(saved))) == ("api", "记忆 rewritten \"by hand\"")
    assert len(saved) == BATCH_SAVE_EVERY
    assert log._encoded == {}  # nothing kept past the hold
