"""Scenarios (real daemon and CLI subprocesses, marker ``scenario``): fixtures from
``tests/support/daemon_fixtures.py`` and, for the shared store on object storage, the
loopback S3 server of ``tests/support/s3_server.py``."""

from daemon_fixtures import daemons, make_app, vault
from s3_server import s3_bucket, s3_server

__all__ = ["daemons", "make_app", "s3_bucket", "s3_server", "vault"]
