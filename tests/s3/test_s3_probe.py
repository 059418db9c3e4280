"""Bad S3 input fails fast and clearly (SPEC R49, R45): ``objectstore.probe`` against a real
S3 server (SeaweedFS) and against endpoints that do not answer. Each failure has its code,
names the URI, says why, comes within seconds, writes nothing, and shows no secret."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rewind.errors import ConfigurationError, InvalidLocation, RewindError, StorageError
from rewind.storage import objectstore
from rewind.storage.objectstore import S3Settings

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("s3")]

BOUND = 10.0  # seconds: "within seconds, not minutes" (R49), with room for a loaded machine


def failure(call: Callable[[], None]) -> tuple[RewindError, float]:
    started = time.monotonic()
    with pytest.raises(RewindError) as caught:
        call()
    return caught.value, time.monotonic() - started


def objects(bucket: Any) -> list[str]:
    listed = bucket.server.client().list_objects_v2(Bucket=bucket.name)
    return [item["Key"] for item in listed.get("Contents", [])]


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_reachable_bucket_passes_the_probe(s3_bucket: Any) -> None:
    objectstore.probe(s3_bucket.uri + "some/table")
    assert objects(s3_bucket) == []


def test_a_wrong_secret_is_a_configuration_error_that_shows_no_secret(s3_bucket: Any) -> None:
    wrong = "not-the-secret-" + "x" * 20
    settings = S3Settings(
        endpoint_url=s3_bucket.server.endpoint,
        access_key_id=s3_bucket.server.access_key,
        secret_access_key=wrong,
    )
    error, seconds = failure(lambda: objectstore.probe(s3_bucket.uri + "t", settings))
    assert isinstance(error, ConfigurationError)
    assert s3_bucket.uri + "t" in error.message and "rejects the credentials" in error.message
    assert wrong not in str(error) and s3_bucket.server.secret_key not in str(error)
    assert s3_bucket.server.access_key not in str(error)  # its last 4 characters only
    assert seconds < BOUND
    assert objects(s3_bucket) == []


def test_an_unknown_access_key_is_a_configuration_error(s3_bucket: Any) -> None:
    settings = S3Settings(
        endpoint_url=s3_bucket.server.endpoint,
        access_key_id="AKIANOBODY000000",
        secret_access_key=s3_bucket.server.secret_key,
    )
    error, seconds = failure(lambda: objectstore.probe(s3_bucket.uri, settings))
    assert isinstance(error, ConfigurationError)
    assert s3_bucket.server.secret_key not in str(error)
    assert seconds < BOUND


def test_a_missing_bucket_is_an_invalid_location(s3_bucket: Any) -> None:
    uri = f"s3://{s3_bucket.name}-missing/orders"
    error, seconds = failure(lambda: objectstore.probe(uri))
    assert isinstance(error, InvalidLocation)
    assert error.message.startswith(uri) and "does not exist" in error.message
    assert seconds < BOUND


def test_credentials_in_the_uri_are_refused_before_any_request(s3_bucket: Any) -> None:
    secret = s3_bucket.server.secret_key
    uri = f"s3://{s3_bucket.server.access_key}:{secret}@{s3_bucket.name}/t"
    error, _ = failure(lambda: objectstore.probe(uri))
    assert isinstance(error, InvalidLocation)
    assert secret not in str(error) and f"s3://***@{s3_bucket.name}/t" in error.message


def test_a_refused_connection_is_a_storage_error_within_seconds(s3_bucket: Any) -> None:
    settings = S3Settings(
        endpoint_url=f"http://127.0.0.1:{closed_port()}",
        access_key_id=s3_bucket.server.access_key,
        secret_access_key=s3_bucket.server.secret_key,
    )
    error, seconds = failure(lambda: objectstore.probe(s3_bucket.uri, settings))
    assert isinstance(error, StorageError)
    assert "does not answer" in error.message and s3_bucket.uri in error.message
    assert seconds < BOUND


def test_an_endpoint_that_never_answers_is_a_storage_error_within_the_bound(
    s3_bucket: Any, silent_endpoint: str
) -> None:
    """Two attempts of one second each, not botocore's default minute of waiting."""
    settings = S3Settings(
        endpoint_url=silent_endpoint,
        access_key_id=s3_bucket.server.access_key,
        secret_access_key=s3_bucket.server.secret_key,
    )
    error, seconds = failure(
        lambda: objectstore.probe(s3_bucket.uri, settings, timeout=1.0, attempts=2)
    )
    assert isinstance(error, StorageError)
    assert "does not answer" in error.message
    assert seconds < BOUND


def test_no_credentials_at_all_is_a_configuration_error(
    s3_bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    error, seconds = failure(lambda: objectstore.probe(s3_bucket.uri))
    assert isinstance(error, ConfigurationError)
    assert "no AWS credentials" in error.message
    assert seconds < BOUND
