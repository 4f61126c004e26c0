"""``python -m daemon``: the ``dreamd`` CLI without relying on the console script being on PATH.

Service units start ``<venv python> -P -m daemon run <vault>``; ``-P`` keeps the working
folder off ``sys.path`` so a stray ``daemon/`` or ``config/`` folder there cannot shadow ours.
"""

from __future__ import annotations

from daemon.entry import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
