"""Scenarios (real daemon and CLI subprocesses, marker ``scenario``): fixtures from
``tests/support/daemon_fixtures.py``."""

from daemon_fixtures import daemons, make_app, vault

__all__ = ["daemons", "make_app", "vault"]
