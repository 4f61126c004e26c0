"""A big real vault for the scale benches: ≥ 100,000 notes from ``../shared/corpora``.

    .venv/bin/python bench/big_vault.py FOLDER [--notes 100000] [--corpora DIR]

What goes in, in this order (the same bytes and names every run):

1. ``help/`` — every markdown note of the Obsidian help vault (``obsidian-help/``, all 34
   languages plus ``Sandbox/``; 5,914 notes), copied byte for byte under their own paths.
2. ``kepano/`` — every markdown note of kepano's vault template (``kepano-obsidian/``; 103
   notes, its ``{{date}}`` templates included), byte for byte.
3. ``Sessions/`` — every distinct chat session of LongMemEval (the 500 oracle instances, then
   the 264 LongMemEval_S development instances; 11,530 sessions by id, the first date met
   kept) as one dated note each, written exactly as ``bench/longmemeval_bench.py`` writes
   them (``Sessions/<YYYY-MM-DD>-<id>.md``, frontmatter ``date`` and ``session``).
4. ``copy-02/``, ``copy-03/``, … — the whole of 1–3 again under a distinct top folder each,
   until ``--notes`` notes are written (the last copy stops part way). A copy is a distinct
   note: its own path, title links resolving inside its own copy, the same text.

Only notes (``.md``) are written: attachments are not notes, and a 100,000-note bench keeps
its disk use to the text. The files are plain copies (no hard links), so a bench may edit them.

The folder must be absent or empty (nothing is overwritten). The script prints the notes and
bytes per source and in all. Errors: ``SystemExit`` with one line when the folder is not empty
or a corpus is missing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import longmemeval_bench as lme  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
#: The issue's size for a big vault ("≥ 100,000 notes", issue 24).
DEFAULT_NOTES = 100_000
#: Folder of the n-th copy (n ≥ 2) of the base notes.
COPY_FOLDER = "copy-{:02d}"


@dataclass(frozen=True, slots=True)
class Planned:
    """One note to write: its vault-relative ``path``, the ``source`` it is counted under, and
    either a corpus file to copy (``origin``) or the text to write (``text``)."""

    path: str
    source: str
    origin: Path | None = None
    text: bytes | None = None


def corpus_notes(root: Path, folder: str, source: str) -> list[Planned]:
    """Every ``.md`` file under ``root`` -> ``Planned`` under ``folder/``, sorted by path.
    Raises ``SystemExit`` when ``root`` is not a folder."""
    if not root.is_dir():
        raise SystemExit(f"big_vault: corpus {root} not found (a checkout outside the one "
                         "beside ../shared: pass --corpora DIR, the folder of the corpora)")
    found = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if p.is_file())
    return [Planned(f"{folder}/{rel}", source, origin=root / rel) for rel in found]


def session_notes(data: Path) -> list[Planned]:
    """One dated note per distinct LongMemEval session (oracle then S development set)."""
    sessions = lme.sessions_of(lme.load_oracle(data) + lme.load_s_dev(data))
    return [Planned(lme.note_path(s), "longmemeval", text=lme.note_text(s).encode("utf-8"))
            for s in sessions.values()]


def base_notes(corpora: Path) -> list[Planned]:
    """The notes of one copy of the base vault (help, kepano, sessions), in write order."""
    return [*corpus_notes(corpora / "obsidian-help", "help", "obsidian-help"),
            *corpus_notes(corpora / "kepano-obsidian", "kepano", "kepano-obsidian"),
            *session_notes(corpora / "longmemeval")]


def plan(base: list[Planned], notes: int) -> Iterator[Planned]:
    """The first ``notes`` notes of ``base``, ``base`` under ``copy-02/``, ``copy-03/`` … ."""
    if not base:
        return
    written = 0
    copy = 1
    while written < notes:
        for item in base:
            if written >= notes:
                return
            if copy == 1:
                yield item
            else:
                yield Planned(f"{COPY_FOLDER.format(copy)}/{item.path}", "copies",
                              item.origin, item.text)
            written += 1
        copy += 1


def write(folder: Path, items: Iterator[Planned]) -> dict[str, tuple[int, int]]:
    """Write ``items`` under ``folder`` -> ``{source: (notes, bytes)}``."""
    counts: dict[str, tuple[int, int]] = {}
    made: set[Path] = set()
    for item in items:
        target = folder / item.path
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        if item.origin is not None:
            shutil.copyfile(item.origin, target)
            size = target.stat().st_size
        else:
            data = item.text or b""
            target.write_bytes(data)
            size = len(data)
        notes, total = counts.get(item.source, (0, 0))
        counts[item.source] = (notes + 1, total + size)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where to write the vault (absent or empty)")
    parser.add_argument("--notes", type=int, default=DEFAULT_NOTES,
                        help=f"notes to write (default {DEFAULT_NOTES:,})")
    parser.add_argument("--corpora", type=Path, default=CORPORA,
                        help="the corpora folder (default ../shared/corpora)")
    args = parser.parse_args(argv)
    folder: Path = args.folder
    if folder.exists() and any(folder.iterdir()):
        raise SystemExit(f"big_vault: {folder} is not empty; give an absent or empty folder")
    started = time.perf_counter()
    base = base_notes(args.corpora)
    counts = write(folder, plan(base, args.notes))
    took_s = time.perf_counter() - started
    print(f"big vault {folder}: base {len(base):,} notes, {took_s:.1f} s")
    print(f"{'source':<16} {'notes':>9} {'bytes':>14}")
    for source, (notes, size) in counts.items():
        print(f"{source:<16} {notes:>9,} {size:>14,}")
    all_notes = sum(n for n, _ in counts.values())
    all_bytes = sum(b for _, b in counts.values())
    print(f"{'total':<16} {all_notes:>9,} {all_bytes:>14,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
