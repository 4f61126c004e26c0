"""A real S3-protocol server on loopback for the tests of a shared store on object storage.

``s3_server`` (session scope) starts moto in server mode (``ThreadedMotoServer``, werkzeug on
127.0.0.1 and a free port) and stops it at the end. It speaks the S3 REST protocol over HTTP,
checks request signatures against its IAM users, and answers a put with ``If-None-Match: *``
on an existing key with 412 — the conditional write LanceDB commits with on ``s3://``. Before
any store is touched the fixture creates an IAM user allowed ``s3:*`` and turns moto's
authentication on (``POST /moto-api/reset-auth`` with ``0``: every later request is checked),
so a wrong key or secret is refused as on AWS.

Nothing else is reached: the ``AWS_*`` variables are fake (so no user's real credentials or
profile are ever read), the instance-metadata lookup is off, and every store gets the
endpoint in its ``storage.options``. ``s3_bucket`` gives each test a fresh bucket.
"""

from __future__ import annotations

import itertools
import json
import logging
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["S3Server", "s3_bucket", "s3_server"]

#: Region of every request (moto's default; S3-compatible servers need one).
REGION = "us-east-1"
#: What the fake ``AWS_*`` variables hold: never a real credential, and moto refuses them.
FAKE_KEY = "not-a-real-key"

_BUCKETS = itertools.count(1)


@dataclass(frozen=True)
class S3Server:
    """The running server: its endpoint and the credentials of its one IAM user."""

    endpoint: str
    access_key_id: str
    secret_access_key: str

    def options(self, **changes: str) -> dict[str, str]:
        """``storage.options`` that reach this server (LanceDB's storage_options keys)."""
        return {"aws_endpoint": self.endpoint, "aws_region": REGION, "allow_http": "true",
                "aws_access_key_id": self.access_key_id,
                "aws_secret_access_key": self.secret_access_key, **changes}

    def client(self) -> Any:
        """A boto3 S3 client signed as the IAM user (for the tests' own reads)."""
        import boto3  # (imported by the tests that use the server, not by every scenario)

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=self.access_key_id,
                            aws_secret_access_key=self.secret_access_key)

    def new_bucket(self) -> str:
        name = f"dreamd-test-{next(_BUCKETS)}"
        self.client().create_bucket(Bucket=name)
        return name

    def objects(self, bucket: str) -> dict[str, bytes]:
        """``{key: bytes}`` of every object in ``bucket`` (listed page by page, each read)."""
        client = self.client()
        found: dict[str, bytes] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"]
                found[item["Key"]] = body.read()
        return found


def _set_auth(endpoint: str, free_requests: str) -> None:
    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth", data=free_requests.encode(), method="POST",
        headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    import boto3
    from moto.server import ThreadedMotoServer

    with pytest.MonkeyPatch.context() as patch:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"):
            patch.delenv(name, raising=False)
        patch.setenv("AWS_ACCESS_KEY_ID", FAKE_KEY)
        patch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_KEY)
        patch.setenv("AWS_DEFAULT_REGION", REGION)
        patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        patch.setenv("AWS_CONFIG_FILE", "/dev/null")
        patch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        try:
            iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION)
            iam.create_user(UserName="dreamd")
            iam.put_user_policy(UserName="dreamd", PolicyName="s3", PolicyDocument=json.dumps({
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
            key = iam.create_access_key(UserName="dreamd")["AccessKey"]
            _set_auth(endpoint, "0")
            yield S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
        finally:
            try:
                _set_auth(endpoint, "inf")  # moto's settings are per process: leave them
            finally:
                server.stop()


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A new, empty bucket on the session's server."""
    return s3_server.new_bucket()
