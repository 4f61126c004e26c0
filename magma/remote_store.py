"""What went wrong reaching a store on object storage (``s3://…``), in one line for the user.

LanceDB reports a failed request to an object store as one long error text: the request, the
HTTP status and the server's body. :func:`store_problem` turns it into a line that names the
problem and what to change: the S3 error code the server answered with (the ``<Code>`` of an
S3 REST error response, e.g. ``NoSuchBucket``, ``InvalidAccessKeyId``,
``SignatureDoesNotMatch``, ``AccessDenied`` — AWS's documented list of error codes), or the
transport failure (connection refused, a name that does not resolve, TLS to a plain-HTTP
server, ``http://`` without ``allow_http``). A credential never appears in the line: every
value of ``storage.options`` that is not public (:func:`config.settings.shown_storage_options`)
is taken out of any text shown, and some S3 servers echo the access key id in their errors.

:func:`probe_store` asks the store for its table list, the cheapest request that needs the
endpoint, the bucket and valid credentials (``dreamd doctor``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import lancedb

from config.settings import HIDDEN, PUBLIC_STORAGE_OPTIONS

__all__ = ["hide_credentials", "open_failure", "probe_store", "store_problem"]

_CODE = re.compile(r"<Code>([A-Za-z]+)</Code>")
_STATUS = re.compile(r"status: (\d{3})")
#: Longest part of an unrecognised error shown (characters).
_SHOWN_CHARS = 300

#: Storage options of the probe unless the user set them: no retries of a failed request
#: (LanceDB's retries of a closed port took 5.4 s, without them 2.4 s), short timeouts.
_PROBE_OPTIONS = {"client_max_retries": "0", "connect_timeout": "3s", "timeout": "10s"}

#: S3 error code -> (what it means here, what to change).
_CODES: dict[str, tuple[str, str]] = {
    "NoSuchBucket": ("bucket {bucket} does not exist at {endpoint}",
                     "create it, or fix the bucket in storage.uri"),
    "InvalidAccessKeyId": ("bad credentials: {endpoint} knows no such access key id",
                           "check storage.options.aws_access_key_id"),
    "SignatureDoesNotMatch": ("bad credentials: the secret access key does not match the "
                              "access key id", "check storage.options.aws_secret_access_key"),
    "AccessDenied": ("access denied to bucket {bucket}",
                     "give these credentials s3:ListBucket, s3:GetObject, s3:PutObject and "
                     "s3:DeleteObject on it"),
    "InvalidBucketName": ("{bucket} is not a valid bucket name", "fix storage.uri"),
    "PermanentRedirect": ("bucket {bucket} is in another region",
                          "set storage.options.aws_region to the bucket's region"),
    "AuthorizationHeaderMalformed": ("the region does not match the bucket's",
                                     "set storage.options.aws_region to the bucket's region"),
}

#: A piece of a transport failure -> (what it means, what to change).
_TRANSPORT: tuple[tuple[str, str, str], ...] = (
    ("BadScheme", "the endpoint {endpoint} is plain http but allow_http is not set",
     "set storage.options.allow_http = true (or use https)"),
    ("Connection refused", "nothing answers at {endpoint} (connection refused)",
     "check storage.options.aws_endpoint and that the server runs"),
    ("dns error", "the host of {endpoint} does not resolve",
     "check storage.options.aws_endpoint"),
    ("InvalidContentType", "TLS to {endpoint} failed (a plain-http server?)",
     "use http:// in storage.options.aws_endpoint with allow_http = true"),
    ("certificate", "the TLS certificate of {endpoint} is not trusted",
     "fix the certificate, or set storage.options.allow_invalid_certificates = true"),
    ("timed out", "{endpoint} did not answer in time", "check the endpoint and the network"),
    ("Timeout", "{endpoint} did not answer in time", "check the endpoint and the network"),
)


def _endpoint(options: Mapping[str, str]) -> str:
    return options.get("aws_endpoint") or options.get("endpoint") or "the AWS endpoint"


def _bucket(uri: str) -> str:
    rest = uri.split("://", 1)[-1]
    return rest.split("/", 1)[0]


def hide_credentials(text: str, options: Mapping[str, str]) -> str:
    """``text`` with every non-public ``storage.options`` value replaced by ``(hidden)``."""
    for key, value in options.items():
        if key not in PUBLIC_STORAGE_OPTIONS and len(value) >= 4:
            text = text.replace(value, HIDDEN)
    return text


def store_problem(error: BaseException | str, *, uri: str,
                  options: Mapping[str, str]) -> tuple[str, str]:
    """``(problem, what to change)``: one line each for the failure ``error`` of a request
    to the object store at ``uri`` (see the module docstring); never a credential."""
    text = str(error)
    where = {"endpoint": _endpoint(options), "bucket": _bucket(uri)}
    code = _CODE.search(text)
    if code is not None:
        problem, hint = _CODES.get(code.group(1), (f"the server refused: {code.group(1)}",
                                                   "see the S3 error code's documentation"))
        return problem.format(**where), hint
    for needle, problem, hint in _TRANSPORT:
        if needle in text:
            return problem.format(**where), hint
    status = _STATUS.search(text)
    if status is not None and status.group(1) in {"401", "403"}:
        return "bad credentials (HTTP " + status.group(1) + ")", \
            "check storage.options.aws_access_key_id and aws_secret_access_key"
    first = " ".join(hide_credentials(text, options).split())[:_SHOWN_CHARS]
    return f"{type(error).__name__}: {first}", "check storage.uri and storage.options"


def open_failure(error: BaseException, *, uri: str, options: Mapping[str, str]) -> str:
    """Why the store at ``uri`` could not be opened, for a :class:`StoreError`'s message: for
    a remote store :func:`store_problem`'s problem and what to change (one line), for a local
    one the error's class and text."""
    if "://" in uri and not uri.startswith("file:"):
        problem, hint = store_problem(error, uri=uri, options=options)
        return f"{problem} ({hint})"
    return f"{type(error).__name__}: {error}"


def probe_store(uri: str, options: Mapping[str, str]) -> tuple[str, str] | None:
    """``None`` when the object store at ``uri`` answers a table listing with these
    ``options`` (LanceDB's storage options), else :func:`store_problem`'s
    ``(problem, what to change)``. Gives up after about 2 s on a refusal or a closed port
    (LanceDB's own retries; measured against a loopback S3 server), within
    :data:`_PROBE_OPTIONS`' timeouts otherwise, unless ``options`` set their own."""
    asked = {**_PROBE_OPTIONS, **options}
    try:
        lancedb.connect(uri, storage_options=asked).list_tables()
    except Exception as exc:  # LanceDB raises ValueError, OSError, RuntimeError …
        return store_problem(exc, uri=uri, options=options)
    return None
