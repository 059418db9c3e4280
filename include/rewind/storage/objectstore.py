"""Object stores: the one module that turns the AWS settings into each client's (SPEC R44).

Rewind reaches S3 (and the stores that speak its API: SeaweedFS, MinIO, Ceph, R2, ...)
through three clients: Spark through Hadoop's s3a, delta-rs through its object store, and
Rewind's own object calls through boto3. A user sets the standard AWS variables only
(``AWS_ENDPOINT_URL``, an ``http://`` endpoint included; ``AWS_ACCESS_KEY_ID`` /
``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN``; ``AWS_REGION``; ``AWS_PROFILE`` and the
shared config and credentials files); botocore resolves them, and this module derives what
each client needs: path-style addressing and plain HTTP for a custom endpoint, the region,
the keys. No other module reads ``AWS_*`` variables (STYLE habit 11). In Airflow, an
``aws`` connection supplies these variables to a task (:func:`connection_variables`,
:func:`environment`; ``rewind.operations.dagkit.aws_connection``).

Secrets (SPEC R45) leave this module only towards those clients: delta-rs's
``storage_options`` and the boto3 client take the keys in process; Spark's s3a reads them
from the JVM's environment (``EnvironmentVariableCredentialsProvider``) when they came from
the environment, as they do in a spark-submitted job, and otherwise (a profile, SSO, a
credential process) from Spark settings made in process (:func:`spark_secret_conf`), never
on a command line. Error messages name the URI (without any user info) and the reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rewind.errors import ConfigurationError, InvalidLocation, StorageError

if TYPE_CHECKING:
    from botocore.client import BaseClient
    from pyarrow.fs import S3FileSystem

SCHEMES = ("s3", "s3a")
DEFAULT_REGION = "us-east-1"
# The variables that say a user configured S3 at all; without one Rewind neither imports
# botocore nor asks it for credentials (its chain ends at the EC2 instance metadata service).
AWS_SETTINGS = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
)
# s3a's credential providers: the AWS SDK's reader of AWS_ACCESS_KEY_ID / ..._SECRET_... /
# AWS_SESSION_TOKEN in the JVM's environment; s3a's readers of fs.s3a.access.key & co.
ENV_PROVIDER = "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"
CONF_PROVIDERS = (
    "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider,"
    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
)
S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem"
# A bucket name as S3 accepts it (3-63 lower-case letters, digits, dots, hyphens).
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


@dataclass(frozen=True)
class S3Settings:
    """What every client needs to reach the object store (secrets out of ``repr``).

    Attributes:
        endpoint_url: a custom endpoint (``http://127.0.0.1:8333``), or None for AWS's own.
        region: the signing region (``us-east-1`` when none is set: a custom endpoint's
            servers mostly ignore it, and AWS redirects).
        access_key_id, secret_access_key, session_token: the resolved credentials; None
            when none were found.
        keys_in_environment: the keys came from this process's ``AWS_*`` variables, so a
            JVM it starts (and a spark-submitted job) reads the same there.
    """

    endpoint_url: str | None = None
    region: str = DEFAULT_REGION
    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    keys_in_environment: bool = True

    @property
    def plain_http(self) -> bool:
        return bool(self.endpoint_url) and str(self.endpoint_url).lower().startswith("http://")

    @property
    def secrets(self) -> tuple[str, ...]:
        """The strings no message may carry (SPEC R45)."""
        return tuple(s for s in (self.secret_access_key, self.session_token) if s)


@dataclass(frozen=True)
class S3Location:
    """``s3://bucket/key`` (``key`` without a leading slash; empty: the whole bucket).

    Joined like a path (``location / "_delta_log" / name``), so code that reads a table
    under a root reads it under a local directory or an S3 prefix alike
    (:mod:`rewind.storage.location`).
    """

    bucket: str
    key: str = ""

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    def __str__(self) -> str:
        return self.uri

    def __truediv__(self, part: str) -> S3Location:
        part = str(part).strip("/")
        return S3Location(self.bucket, f"{self.key}/{part}" if self.key else part)

    @property
    def parent(self) -> S3Location:
        return S3Location(self.bucket, self.key.rpartition("/")[0])

    @property
    def name(self) -> str:
        return self.key.rpartition("/")[2]

    @property
    def prefix(self) -> str:
        """The key prefix of everything under this location (``key/``; ``""``: the bucket)."""
        return f"{self.key}/" if self.key else ""

    def is_relative_to(self, other: S3Location) -> bool:
        """Whether this location is ``other`` or under it (whole key segments only)."""
        return self.bucket == other.bucket and (
            not other.key or self.key == other.key or self.key.startswith(other.prefix)
        )


def is_object_store(uri: str) -> bool:
    """Whether ``uri`` names an object in S3 (``s3://`` or ``s3a://``)."""
    return uri.split("://", 1)[0].lower() in SCHEMES if "://" in uri else False


def redact(uri: str) -> str:
    """``uri`` without any user info (``s3://key:secret@bucket/t`` -> ``s3://***@bucket/t``),
    for messages: a URI may be quoted, a secret never (SPEC R45)."""
    scheme, sep, rest = uri.partition("://")
    at = _user_info_end(rest) if sep else -1
    return f"{scheme}{sep}***@{rest[at + 1 :]}" if at >= 0 else uri


# An s3:// or s3a:// URI inside free text (a statement), up to a quote or a blank.
_URI_IN_TEXT = re.compile(r"\bs3a?://[^\s'\"`]+", re.IGNORECASE)


def redact_text(text: str) -> str:
    """``text`` (a statement, as QUERY_HISTORY keeps it) with every S3 URI in it
    :func:`redact`-ed: a LOCATION that carried credentials is refused, and its secret is
    not kept either (SPEC R45)."""
    return _URI_IN_TEXT.sub(lambda found: redact(found.group(0)), text)


def _user_info_end(rest: str) -> int:
    """Where the user info of a URI's part after ``://`` ends (its ``@``), or -1. A secret
    key may hold ``/`` (AWS's do), so the user info does not end at the first ``/``: an ``@``
    that follows text with a ``:``, or text that is not ``bucket/...``, ends one. A key of
    a real bucket may hold ``@`` (``s3://lake/a@b``): that is no user info."""
    at = rest.find("@")
    if at < 0:
        return -1
    head = rest[:at]
    if "/" not in head or ":" in head or not _BUCKET.fullmatch(head.split("/", 1)[0]):
        return at
    return -1


def parse_location(uri: str) -> S3Location:
    """The bucket and key of an ``s3://`` / ``s3a://`` URI.

    Raises:
        InvalidLocation: not an S3 URI, credentials embedded in it (SPEC R45: they belong
            in the AWS settings, never in a location that the catalog and the query history
            keep), or no valid bucket name.
    """
    shown = redact(uri)
    if not is_object_store(uri):
        raise InvalidLocation(f"{shown}: not an s3:// location")
    if _user_info_end(uri.split("://", 1)[1]) >= 0:
        raise InvalidLocation(
            f"{shown}: a location must not carry credentials; set them in the AWS settings "
            "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile) instead"
        )
    parts = urlsplit(uri)
    bucket = parts.netloc
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise InvalidLocation(f"{shown}: {bucket!r} is not a valid bucket name")
    if parts.query or parts.fragment:
        raise InvalidLocation(f"{shown}: an S3 location has no query or fragment")
    return S3Location(bucket, parts.path.lstrip("/"))


def configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether any AWS setting is present (:data:`AWS_SETTINGS`)."""
    env = os.environ if environ is None else environ
    return any(env.get(name) for name in AWS_SETTINGS)


# The extra fields of an ``aws`` connection Rewind reads, and the variable each one sets.
_CONNECTION_EXTRA = {
    "aws_session_token": "AWS_SESSION_TOKEN",
    "endpoint_url": "AWS_ENDPOINT_URL",
    "region_name": "AWS_REGION",
}


def connection_variables(
    conn_id: str,
    conn_type: str | None,
    login: str | None,
    password: str | None,
    extra: Mapping[str, Any],
) -> dict[str, str]:
    """The standard AWS variables of an Airflow connection of type ``aws`` (SPEC R44), by the
    Amazon provider's conventions: ``login`` the access key id, ``password`` the secret key,
    ``extra`` ``aws_session_token``, ``endpoint_url`` and ``region_name``.

    Raises:
        ConfigurationError: the connection is of another type, or lacks the access key id or
            the secret key. The message names the connection, never a secret (R45).
    """
    if conn_type != "aws":
        raise ConfigurationError(
            f"Airflow connection {conn_id!r} is of type {conn_type!r}; the object store's "
            "settings come from a connection of type 'aws'"
        )
    if not login or not password:
        raise ConfigurationError(
            f"Airflow connection {conn_id!r} lacks its access key id (login) or its secret "
            "access key (password)"
        )
    variables = {"AWS_ACCESS_KEY_ID": login, "AWS_SECRET_ACCESS_KEY": password}
    for key, variable in _CONNECTION_EXTRA.items():
        if extra.get(key):
            variables[variable] = str(extra[key])
    return variables


@contextlib.contextmanager
def environment(variables: Mapping[str, str]) -> Iterator[None]:
    """This process's ``AWS_*`` variables are ``variables``, and only those, for the block
    (none of the machine's own is mixed in: a worker's profile or token with a connection's
    keys would be settings nobody wrote); the previous ones come back after it. A process
    started in the block (``spark-submit``, its driver and JVMs) inherits them: secrets
    reach it in its environment, never on its command line (SPEC R45)."""
    saved = {name: value for name, value in os.environ.items() if name.startswith("AWS_")}
    try:
        for name in saved:
            del os.environ[name]
        os.environ.update(variables)
        yield
    finally:
        for name in [n for n in os.environ if n.startswith("AWS_")]:
            del os.environ[name]
        os.environ.update(saved)


def settings() -> S3Settings:
    """The settings of the standard AWS chain, as boto3 reads them from this process's
    environment and the shared config and credentials files (endpoint: ``AWS_ENDPOINT_URL_S3``,
    ``AWS_ENDPOINT_URL``, the profile's ``endpoint_url``; region: ``AWS_REGION``,
    ``AWS_DEFAULT_REGION``, the profile's; credentials: botocore's provider chain).

    Raises:
        ConfigurationError: the profile named does not exist or the config is invalid.
    """
    import botocore.exceptions
    import botocore.session
    from botocore.configprovider import ConfiguredEndpointProvider

    try:
        session = botocore.session.Session()
        scoped = session.get_scoped_config()
        endpoint = ConfiguredEndpointProvider(
            full_config=session.full_config, scoped_config=scoped, client_name="s3"
        ).provide()
        region = (
            os.environ.get("AWS_REGION") or session.get_config_variable("region") or DEFAULT_REGION
        )
        credentials = session.get_credentials()
    except botocore.exceptions.BotoCoreError as error:
        raise ConfigurationError(
            f"the AWS settings cannot be read: {type(error).__name__}"
        ) from None
    if credentials is None:
        return S3Settings(endpoint_url=endpoint, region=region)
    frozen = credentials.get_frozen_credentials()
    return S3Settings(
        endpoint_url=endpoint,
        region=region,
        access_key_id=frozen.access_key,
        secret_access_key=frozen.secret_key,
        session_token=frozen.token,
        keys_in_environment=getattr(credentials, "method", "") == "env",
    )


def spark_conf(s: S3Settings) -> dict[str, str]:
    """s3a's settings as Spark settings: none of them secret, fit for a command line.

    ``s3://`` URIs reach S3 through s3a too, so that Spark, delta-rs and boto3 name a
    table by one URI. A custom endpoint gets path-style addressing (``host/bucket/key``:
    no wildcard DNS needed) and, for ``http://``, no TLS. Credentials come from the JVM's
    environment, or from :func:`spark_secret_conf` when they are not there.
    """
    conf = {
        "spark.hadoop.fs.s3.impl": S3A,
        "spark.hadoop.fs.s3a.endpoint.region": s.region,
        "spark.hadoop.fs.s3a.aws.credentials.provider": (
            ENV_PROVIDER if s.keys_in_environment else CONF_PROVIDERS
        ),
        # Not "delta.enableFastS3AListFrom" (listFrom as a LIST with StartAfter, SPEC R50):
        # Delta 4.4 calls an s3a method that hadoop-aws 3.5.0 no longer has
        # (NoSuchMethodError: Listing.createFileStatusListingIterator).
    }
    if s.endpoint_url:
        conf |= {
            "spark.hadoop.fs.s3a.endpoint": s.endpoint_url,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": str(not s.plain_http).lower(),
        }
    return conf


def spark_secret_conf(s: S3Settings) -> dict[str, str]:
    """The keys as s3a settings, for a SparkSession built in this process only (never a
    command line): empty when the JVM reads them from its environment."""
    if s.keys_in_environment or not s.access_key_id or not s.secret_access_key:
        return {}
    conf = {
        "spark.hadoop.fs.s3a.access.key": s.access_key_id,
        "spark.hadoop.fs.s3a.secret.key": s.secret_access_key,
    }
    if s.session_token:
        conf["spark.hadoop.fs.s3a.session.token"] = s.session_token
    return conf


def delta_rs_options(s: S3Settings) -> dict[str, str]:
    """delta-rs's ``storage_options``. Commits are conditional (``If-None-Match``, SPEC R46):
    delta-rs 1.x's default on S3, named here so that no store is left to guess."""
    options = {"AWS_REGION": s.region, "AWS_CONDITIONAL_PUT": "etag"}
    if s.endpoint_url:
        options["AWS_ENDPOINT_URL"] = s.endpoint_url
        if s.plain_http:
            options["AWS_ALLOW_HTTP"] = "true"
    if s.access_key_id and s.secret_access_key:
        options["AWS_ACCESS_KEY_ID"] = s.access_key_id
        options["AWS_SECRET_ACCESS_KEY"] = s.secret_access_key
        if s.session_token:
            options["AWS_SESSION_TOKEN"] = s.session_token
    return options


def arrow_filesystem(s: S3Settings) -> S3FileSystem:
    """pyarrow's own S3 file system, for the Arrow reads of Rewind's system tables
    (:mod:`rewind.storage.arrow_read`): path-style addressing, as for every custom endpoint."""
    from pyarrow import fs

    endpoint = s.endpoint_url.split("://", 1)[-1] if s.endpoint_url else None
    return fs.S3FileSystem(
        access_key=s.access_key_id,
        secret_key=s.secret_access_key,
        session_token=s.session_token,
        region=s.region,
        scheme="http" if s.plain_http else "https",
        endpoint_override=endpoint,
        connect_timeout=5,
        request_timeout=30,
    )


def boto3_kwargs(
    s: S3Settings, *, connect_timeout: float = 5.0, read_timeout: float = 30.0, attempts: int = 5
) -> dict[str, Any]:
    """``boto3.client("s3", **kwargs)``'s arguments: path-style addressing for a custom
    endpoint, bounded time-outs and retries (SPEC R49)."""
    from botocore.config import Config

    config = Config(
        region_name=s.region,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"max_attempts": attempts, "mode": "standard"},
        s3={"addressing_style": "path" if s.endpoint_url else "auto"},
    )
    kwargs: dict[str, Any] = {"config": config, "endpoint_url": s.endpoint_url}
    if s.access_key_id and s.secret_access_key:
        kwargs |= {
            "aws_access_key_id": s.access_key_id,
            "aws_secret_access_key": s.secret_access_key,
            "aws_session_token": s.session_token,
        }
    return kwargs


def s3_client(s: S3Settings | None = None, **timeouts: Any) -> BaseClient:
    """A boto3 S3 client for ``s`` (default: :func:`settings`)."""
    import boto3

    return boto3.client("s3", **boto3_kwargs(s or settings(), **timeouts))


_SHARED: dict[tuple[tuple[str, str], ...], BaseClient] = {}


def shared_client() -> BaseClient:
    """One boto3 client per set of ``AWS_*`` variables, for the many small reads of a Delta
    log (:mod:`rewind.storage.location`): resolving the settings costs about 20 ms, a GET
    of a commit a few. Keyed by the variables, so a process that changes them (a test's
    bucket) gets a client of the new settings."""
    key = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_")))
    if key not in _SHARED:
        _SHARED.clear()
        _SHARED[key] = s3_client()
    return _SHARED[key]


# What the store's error codes mean for a user (SPEC R49): the code class and the reason.
_CREDENTIALS_REJECTED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken"}
_EXPIRED = {"ExpiredToken", "TokenRefreshRequired", "RequestExpired"}


def probe(
    uri: str, s: S3Settings | None = None, *, timeout: float = 3.0, attempts: int = 2
) -> None:
    """Check that ``uri``'s bucket answers these settings: one LIST of at most one key under
    the URI's key, within about ``attempts`` x 2 x ``timeout`` seconds. Reads nothing else
    and writes nothing.

    Raises:
        InvalidLocation: the URI is not a usable S3 location, or its bucket does not exist.
        ConfigurationError: no credentials, or the store rejects them (a wrong key or
            secret, an expired token).
        StorageError: the endpoint does not answer in time, or refuses the listing
            (access denied), or fails otherwise.
    """
    import botocore.exceptions

    location = parse_location(uri)
    s = s or settings()
    shown = redact(uri)
    if not s.access_key_id or not s.secret_access_key:
        raise ConfigurationError(
            f"{shown}: no AWS credentials found (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY "
            "or a profile)"
        )
    client = s3_client(s, connect_timeout=timeout, read_timeout=timeout, attempts=attempts)
    where = redact(s.endpoint_url) if s.endpoint_url else f"AWS S3 ({s.region})"
    started = time.monotonic()
    try:
        client.list_objects_v2(Bucket=location.bucket, Prefix=location.key, MaxKeys=1)
    except botocore.exceptions.ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code == "NoSuchBucket":
            raise InvalidLocation(
                f"{shown}: bucket {location.bucket!r} does not exist at {where}"
            ) from None
        if code in _CREDENTIALS_REJECTED or code in _EXPIRED:
            raise ConfigurationError(
                f"{shown}: {where} rejects the credentials of access key "
                f"{_key_hint(s.access_key_id)} ({code})"
            ) from None
        if code == "AccessDenied" or status == 403:
            raise StorageError(
                f"{shown}: access denied to access key {_key_hint(s.access_key_id)} at {where}"
            ) from None
        raise StorageError(f"{shown}: {where} answered {code or status}") from None
    except (
        botocore.exceptions.EndpointConnectionError,
        botocore.exceptions.ConnectTimeoutError,
        botocore.exceptions.ReadTimeoutError,
        botocore.exceptions.ConnectionClosedError,
    ) as error:
        waited = time.monotonic() - started
        raise StorageError(
            f"{shown}: the object store at {where} does not answer "
            f"({type(error).__name__} after {waited:.1f} s)"
        ) from None
    except botocore.exceptions.BotoCoreError as error:
        raise StorageError(f"{shown}: {where}: {type(error).__name__}") from None


def _key_hint(access_key_id: str | None) -> str:
    """An access key id as AWS's own console shows one: its last four characters. The id is
    no secret, yet a message needs no more of it to tell two keys apart."""
    return f"...{access_key_id[-4:]}" if access_key_id else "(none)"
