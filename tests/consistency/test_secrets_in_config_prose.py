"""Credentials and their look-alikes in what assistants write of a project's configuration.

A break-it round (``bench/write_pairs/breakit5.jsonl``) wrote memories of commits, tenants,
image digests and tags: none of them is a credential, and ``remember`` must keep them all.
The same round found one credential kept: an HTTP ``Authorization: Basic …`` header, whose
base64 is the user and the password, only encoded.
"""

from __future__ import annotations

import pytest

from config.errors import SecretRefusedError
from consistency.secrets import find_secrets, refuse_secrets


@pytest.mark.parametrize("text", [
    # commit SHAs, short and long, in prose, English and Chinese
    "The regression was fixed in commit 3f9a2c1e8b7d4a6f0e5c2b1a9d8e7f6c5b4a3210.",
    "Cherry-pick e83c5163316f89bfbde7d9ab23ca2e25604af290 onto release/2.4.",
    "回归问题是 3f9a2c1 这个提交修好的。",
    "Release tag v2.4.0 points at commit a71c9b3e42.",
    # UUIDs and tenant ids, either case
    "Tenant ID for the EU org: 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
    "EU org tenant id is 9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D.",
    "Request ID 3fa85f64-5717-4562-b3fc-2c963f66afa6 reproduces the timeout.",
    # digests and integrity hashes
    "Base image pinned to sha256:4c5e1f0b2a9d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c.",
    "SRI: sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC",
    # "key", "token", "password", "basic" in prose, with no secret after them
    "The S3 bucket key prefix is logs/2026/ (not a secret).",
    "Set OPENAI_API_KEY in your shell profile, not in the repo.",
    "Token budget per answer: 4,000 tokens.",
    "The password policy requires 12 characters and one digit.",
    "密码至少 12 位，必须包含数字。",
    "Basic auth is on for the admin UI.",
    "We are on the Basic plan.",
    "The Grafana dashboard UID is a1b2c3d4e5.",
])
def test_a_look_alike_in_config_prose_is_kept(text: str) -> None:
    assert find_secrets(text) == []
    refuse_secrets(text, where="remember: memory body")


@pytest.mark.parametrize("text", [
    "Authorization: Basic YWRtaW46czNjcjN0UGFzcw==",
    "curl -H 'Authorization: Basic ZGVwbG95OlRyMHViNGRvciYz' https://ci.internal/api",
    "预发环境的请求头：Authorization: Basic b3BzOmg3I1BxMnYhbVo5",
    "Use basic c3ZjLWJpbGxpbmc6N2tMcTJ4UnZXOW1Q for the billing webhook.",
])
def test_a_basic_auth_header_is_refused(text: str) -> None:
    found = find_secrets(text)
    assert [f.kind for f in found] == ["password"]
    with pytest.raises(SecretRefusedError):
        refuse_secrets(text, where="remember: memory body")


@pytest.mark.parametrize("text", [
    "Authorization: Basic dXNlcjp1c2Vy",  # user:user, a dev default
    "Authorization: Basic YWRtaW46cGFzc3dvcmQ=",  # admin:password, a placeholder
    "Authorization: Basic aGVsbG8gd29ybGQ=",  # "hello world": no user and password
    "Basic understanding of Kubernetes is enough.",
])
def test_basic_with_no_password_in_it_is_kept(text: str) -> None:
    assert find_secrets(text) == []
