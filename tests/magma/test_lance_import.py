"""LanceDB's namespace REST client runs its package code only when something asks for it.

In a fresh interpreter (the import state of a test worker is shared by every test), the way
every ``dreamd`` command starts: importing the store leaves the client's API modules out,
LanceDB still writes and reads a table, and a name of the client's package still resolves
(its own ``__init__`` runs then).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import sys
sys.path.insert(0, {repo!r})
import magma.store
import lancedb, pyarrow as pa
client = "lance_namespace_urllib3_client"
print("api", any(m.startswith(client + ".api") for m in sys.modules))
db = lancedb.connect({db!r})
table = db.create_table("t", pa.table({{"a": [1, 2, 3]}}))
print("rows", table.count_rows("a > 1"))
import lance_namespace_urllib3_client as package
print("late", package.ApiClient.__name__, package.TableApi.__name__)
print("api", any(m.startswith(client + ".api") for m in sys.modules))
print("missing", hasattr(package, "NoSuchName"))
"""


def test_the_namespace_client_runs_only_when_asked_for(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(repo=str(REPO), db=str(tmp_path / "db"))],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:5] == [
        "api False", "rows 2", "late ApiClient TableApi", "api True", "missing False"]
