"""How a search reads the text of the chunks it ranks: by address or through the id's index.

usage: .venv/bin/python bench/chunk_reads_bench.py LANCEDB_FOLDER [--rounds 15]

On the ``chunks`` table of a store (e.g. the one ``bench/scale_bench.py`` builds in
``WORKDIR/data/vaults/*/lancedb``), reads 1, 10 and 40 random chunks with the columns a
search shows, the two ways :meth:`magma.store.MagmaStore.chunks_by_id` can: a ``chunk_id IN
(…)`` query through the id's BTree index (what it did before), and LanceDB's
``take_row_ids`` at the addresses the search's snapshot keeps
(:func:`magma.store.chunks_at`). Prints the median CPU of each (the process's, so
LanceDB's own threads count) over ``--rounds`` random draws, alternated in one run."""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import lancedb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from magma.store import _CANDIDATE_COLUMNS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    table = lancedb.connect(str(args.folder)).open_table("chunks")
    ids = table.search().select(["chunk_id"]).with_row_id(True).limit(None).to_arrow()
    chunk_ids = ids.column("chunk_id").to_pylist()
    addresses = ids.column("_rowid").to_pylist()
    columns = list(_CANDIDATE_COLUMNS)
    draw = random.Random(2)
    print(f"{len(chunk_ids):,} chunks in {args.folder}; load {os.getloadavg()[0]:.1f}")
    for count in (1, 10, 40):
        by_id: list[float] = []
        by_address: list[float] = []
        for _ in range(args.rounds):
            picked = draw.sample(range(len(chunk_ids)), count)
            listed = ", ".join("'" + chunk_ids[i].replace("'", "''") + "'" for i in picked)
            started = time.process_time()
            one = table.search().where(f"chunk_id IN ({listed})").select(columns) \
                .limit(None).to_arrow()
            by_id.append(time.process_time() - started)
            started = time.process_time()
            other = table.take_row_ids([addresses[i] for i in picked]).select(columns).to_arrow()
            by_address.append(time.process_time() - started)
            assert sorted(one.column("chunk_id").to_pylist()) \
                == sorted(other.column("chunk_id").to_pylist())
        print(f"  {count:>2} chunks: through the id's index {np.median(by_id) * 1e3:5.1f} ms, "
              f"by address {np.median(by_address) * 1e3:5.1f} ms of CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
