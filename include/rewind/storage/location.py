"""Where a table's files are: a local directory or an S3 prefix (SPEC R41, R44, R50).

A table root is a :class:`~pathlib.Path` or an :class:`~rewind.storage.objectstore.S3Location`;
both join with ``/``. The few file operations that reading a Delta log, staging a
statement's files and the lifecycle's moves need are here, once per kind of root, so the
code above them (the log reader, the writer of new data files, the lifecycle's file
operations and recoveries) has one implementation for both. On S3 they are boto3 calls
through :func:`rewind.storage.objectstore.shared_client`; a listing names one
"directory" (a prefix with a ``/`` delimiter), so listing ``_delta_log`` never lists a
table's data files (SPEC R50). A copy that must be kept safe before its source goes
(:func:`copy_verified`) is copied server-side, verified, and placed as a
:class:`Placement` says (storage class, Object Lock, SPEC R48).

Errors are the local ones on both: :class:`FileNotFoundError` for a missing file,
:class:`OSError` (``strerror``: the store's error code) for anything else, so a caller
turns both into one message naming the location, never a secret (SPEC R45).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from rewind.storage import objectstore
from rewind.storage.objectstore import S3Location

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from botocore.client import BaseClient

Root = Path | S3Location
_NOT_FOUND = {"NoSuchKey", "404", "NotFound"}
_FOOTER_READ = 64 * 1024  # bytes: one ranged GET holds the footer of most Parquet files
# CopyObject and PutObject take at most 5 GiB in one request; above, boto3's managed
# transfers copy or upload in parts (UploadPartCopy, UploadPart).
_ONE_REQUEST = 5 * 1024**3
_PART = 256 * 1024**2
_ENCRYPTED_ETAG = {"aws:kms", "aws:kms:dsse"}  # SSE-KMS: an ETag that is no MD5 of the bytes


def of(text: str) -> Root:
    """The root a stored location names: ``s3://`` / ``s3a://`` -> an S3 prefix (without
    a trailing ``/``), anything else -> a local path.

    Raises:
        InvalidLocation: an S3 URI that is not usable (credentials in it, a bad bucket).
    """
    if objectstore.is_object_store(text):
        found = objectstore.parse_location(text)
        return S3Location(found.bucket, found.key.strip("/"))
    return Path(text)


def identity(uri: str) -> str:
    """A file as Spark names it (``_metadata.file_path``: ``file:/...``, ``s3a://...``), in
    the form :func:`canonical` gives a root joined with a file's path."""
    if objectstore.is_object_store(uri):
        found = objectstore.parse_location(uri)
        return str(S3Location(found.bucket, unquote(found.key)))
    return canonical(Path(unquote(urlparse(uri).path)))


def file(text: str) -> Root:
    """A file as ``str(root / path)`` spells it (a task of the lifecycle's executors):
    ``s3://bucket/key`` split at the bucket, the key as it is (a key, not a URI: no
    decoding, and ``#`` or ``?`` in it are characters of the key); anything else a path."""
    if objectstore.is_object_store(text):
        bucket, _, key = text.split("://", 1)[1].partition("/")
        return S3Location(bucket, key)
    return Path(text)


def data_file(root: Root, path: str) -> Root:
    """A data file of the table at ``root``, as its Delta log names it (decoded): a path
    relative to the root, or an object's absolute URI, which is how a clone references its
    source's files where they are, as Delta's shallow clone does (SPEC R47)."""
    return file(path) if objectstore.is_object_store(path) else root / path


def data_file_size(root: Root, path: str) -> int:
    """The size of a file of the table at ``root`` as its log names it (:func:`data_file`:
    relative, or an object's URI); 0 where it is gone."""
    return size(data_file(root, path)) or 0


def canonical(path: Root) -> str:
    """One spelling per file: a local path resolved, an S3 location as ``s3://``."""
    return str(path.resolve()) if isinstance(path, Path) else str(path)


def overlaps(one: Root, other: Root) -> bool:
    """Whether one location is the other or holds it (never across kinds)."""
    if type(one) is not type(other):
        return False
    return one.is_relative_to(other) or other.is_relative_to(one)  # type: ignore[arg-type]


@contextlib.contextmanager
def _s3(where: S3Location) -> Iterator[BaseClient]:
    """The shared client, its errors as the local ones (see the module docstring)."""
    import botocore.exceptions

    try:
        yield objectstore.shared_client()
    except botocore.exceptions.ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in _NOT_FOUND:
            raise FileNotFoundError(errno.ENOENT, "no such object", str(where)) from None
        raise OSError(errno.EIO, code or "error", str(where)) from None
    except botocore.exceptions.BotoCoreError as error:
        raise OSError(errno.EIO, type(error).__name__, str(where)) from None


def read(path: Root) -> tuple[bytes, datetime]:
    """A file's bytes and its modification time (S3: ``LastModified``)."""
    if isinstance(path, Path):
        data = path.read_bytes()
        return data, datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    with _s3(path) as client:
        got = client.get_object(Bucket=path.bucket, Key=path.key)
        return got["Body"].read(), got["LastModified"].astimezone(UTC)


def write(path: Root, data: bytes) -> None:
    """Write ``data`` as the file ``path`` (S3: one PUT, replacing any object there)."""
    if isinstance(path, Path):
        path.write_bytes(data)
        return
    with _s3(path) as client:
        client.put_object(Bucket=path.bucket, Key=path.key, Body=data)


def write_new(path: Root, data: bytes) -> None:
    """Write ``data`` as the file ``path`` only if there is none: a Delta commit's
    put-if-absent (a hard link of a written temporary file; S3: a PUT with
    ``If-None-Match: *``, SPEC R46). Raises FileExistsError when ``path`` is taken."""
    if isinstance(path, Path):
        staged = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        staged.write_bytes(data)
        try:
            os.link(staged, path)
        finally:
            staged.unlink()
        return
    import botocore.exceptions

    with _s3(path) as client:
        try:
            client.put_object(Bucket=path.bucket, Key=path.key, Body=data, IfNoneMatch="*")
        except botocore.exceptions.ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code in ("PreconditionFailed", "ConditionalRequestConflict"):
                raise FileExistsError(errno.EEXIST, "the object exists", str(path)) from None
            raise


def exists(path: Root) -> bool:
    """Whether a file is there."""
    return size(path) is not None


def size(path: Root) -> int | None:
    """A file's size in bytes (S3: one HEAD, its ``ContentLength``); None when it is not
    there."""
    try:
        if isinstance(path, Path):
            return path.stat().st_size
        with _s3(path) as client:
            return int(client.head_object(Bucket=path.bucket, Key=path.key)["ContentLength"])
    except FileNotFoundError:
        return None


def is_dir(directory: Root) -> bool:
    """Whether a directory is there (S3: anything under its prefix, one LIST of one key)."""
    if isinstance(directory, Path):
        return directory.is_dir()
    with _s3(directory) as client:
        found = client.list_objects_v2(Bucket=directory.bucket, Prefix=directory.prefix, MaxKeys=1)
    return bool(found.get("Contents"))


def make_dir(directory: Root, *, exist_ok: bool = True) -> None:
    """Create a directory and its parents (S3: nothing to create, a prefix is there once an
    object is under it).

    Raises:
        FileExistsError: a local directory is there and ``exist_ok`` is False.
    """
    if isinstance(directory, Path):
        directory.mkdir(parents=True, exist_ok=exist_ok)


def storage_options(root: Root) -> dict[str, str] | None:
    """delta-rs's ``storage_options`` for a Delta table at ``root``: None for a local one;
    on S3 the object store's (conditional commits, SPEC R46)."""
    if isinstance(root, Path):
        return None
    return objectstore.delta_rs_options(objectstore.settings())


def copy(source: Root, target: Root) -> None:
    """Put a copy of a file at ``target``, a file of its own: a local one copied (or, from
    S3, downloaded, :func:`download`); on S3 copied server-side or uploaded, verified
    (:func:`copy_verified`).

    Raises:
        FileNotFoundError: the source is not there.
        OSError: the store failed, or the copy is not the source's bytes.
    """
    if isinstance(target, S3Location):
        copy_verified(source, target, Placement())
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, Path):
        shutil.copy2(source, target)
    else:
        download(source, target)


def download(source: S3Location, target: Path) -> None:
    """Copy an object into a local file so that ``target`` is either absent or whole: the
    bytes go to ``target + '.part'``, are synced, and are verified against the object's
    ``ContentLength`` before the rename (SPEC R48: verified before the object may leave
    its table's location).

    Raises:
        FileNotFoundError: the object is not there.
        OSError: the store failed, or the bytes written are not the object's size.
    """
    partial = target.with_name(target.name + ".part")
    with _s3(source) as client:
        expected = int(client.head_object(Bucket=source.bucket, Key=source.key)["ContentLength"])
        with open(partial, "wb") as handle:
            client.download_fileobj(source.bucket, source.key, handle)
            handle.flush()
            os.fsync(handle.fileno())
    written = partial.stat().st_size
    if written != expected:
        partial.unlink(missing_ok=True)
        raise OSError(errno.EIO, f"copied {written} of {expected} bytes", f"{source} -> {target}")
    os.replace(partial, target)


def names(directory: Root) -> list[str]:
    """The names in a directory (S3: the objects right under the prefix, paged).

    Raises:
        FileNotFoundError: a local directory that is not there (an S3 prefix with nothing
            under it is empty).
    """
    if isinstance(directory, Path):
        return os.listdir(directory)
    return [key.removeprefix(directory.prefix) for key, _ in _objects(directory, "/")]


def _objects(directory: S3Location, delimiter: str = "") -> Iterator[tuple[str, int]]:
    """(key, size) of the objects under a prefix: right under it with ``delimiter="/"``."""
    with _s3(directory) as client:
        pages = client.get_paginator("list_objects_v2").paginate(
            Bucket=directory.bucket, Prefix=directory.prefix, Delimiter=delimiter
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield str(item["Key"]), int(item["Size"])


def parts(directory: Root, nested: bool = False) -> list[tuple[Root, str, int]]:
    """The ``part-*.parquet`` files a Spark job wrote into ``directory``, with their names
    under it and their sizes, in name order; ``nested``: in its sub-folders too (a
    partitioned write's ``column=value/`` folders)."""
    if isinstance(directory, Path):
        found = directory.rglob("part-*.parquet") if nested else directory.glob("part-*.parquet")
        return [
            (part, part.relative_to(directory).as_posix(), part.stat().st_size)
            for part in sorted(found)
        ]
    listed: list[tuple[Root, str, int]] = []
    for key, size in sorted(_objects(directory, "" if nested else "/")):
        name = key.removeprefix(directory.prefix)
        base = name.rsplit("/", 1)[-1]
        if base.startswith("part-") and base.endswith(".parquet"):
            listed.append((directory / name, name, size))
    return listed


def parquet(path: Root) -> Path | pa.BufferReader:
    """A Parquet file for ``pyarrow.parquet`` (S3: its bytes, read once)."""
    import pyarrow as pa  # here: the configuration reads locations without pyarrow

    return path if isinstance(path, Path) else pa.BufferReader(read(path)[0])


def parquet_metadata(path: Root) -> pq.FileMetaData:
    """A Parquet file's footer: its row count, row groups and their column statistics
    (S3: one or two ranged GETs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(path, Path):
        return pq.ParquetFile(path).metadata
    tail = _tail(path, _FOOTER_READ)
    footer = int.from_bytes(tail[-8:-4], "little") + 8
    if footer > len(tail):
        tail = _tail(path, footer)
    # The footer alone, behind the leading magic bytes, reads as a Parquet file's metadata.
    return pq.read_metadata(pa.BufferReader(b"PAR1" + tail[-footer:]))


def _tail(path: S3Location, size: int) -> bytes:
    with _s3(path) as client:
        got = client.get_object(Bucket=path.bucket, Key=path.key, Range=f"bytes=-{size}")
        return bytes(got["Body"].read())


def move(source: Root, destination: Root) -> None:
    """Give a statement's staged file its place in the table (S3: a server-side copy,
    then the delete of the staged object)."""
    if isinstance(source, Path) and isinstance(destination, Path):
        source.rename(destination)
        return
    assert isinstance(source, S3Location) and isinstance(destination, S3Location)
    with _s3(source) as client:
        client.copy_object(
            Bucket=destination.bucket,
            Key=destination.key,
            CopySource={"Bucket": source.bucket, "Key": source.key},
        )
        client.delete_object(Bucket=source.bucket, Key=source.key)


def unlink(path: Root) -> None:
    """Delete a file; a missing one is no error."""
    if isinstance(path, Path):
        path.unlink(missing_ok=True)
        return
    with _s3(path) as client:
        client.delete_object(Bucket=path.bucket, Key=path.key)


def remove_tree(directory: Root) -> None:
    """Delete a directory and everything in it (best effort): a statement's staging area,
    a new table whose creation is undone, a purged table's directory."""
    if isinstance(directory, Path):
        shutil.rmtree(directory, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        unlink_all([S3Location(directory.bucket, key) for key, _ in _objects(directory)])


def unlink_many(paths: Sequence[Root]) -> None:
    """Delete files in order, local ones one by one and objects in batches
    (:func:`unlink_all`); a missing one is no error."""
    local = [path for path in paths if isinstance(path, Path)]
    for path in local:
        path.unlink(missing_ok=True)
    unlink_all([path for path in paths if not isinstance(path, Path)])


def unlink_all(objects: Sequence[S3Location]) -> None:
    """Delete objects, up to 1000 in a request (DeleteObjects, SPEC R50); a missing one is
    no error.

    Raises:
        OSError: the store refused one (named, with its error code) or failed.
    """
    for bucket, keys in _by_bucket(objects).items():
        with _s3(S3Location(bucket)) as client:
            for refused in _delete_entries(client, bucket, [{"Key": key} for key in keys]):
                raise _refused(bucket, refused)


def _by_bucket(objects: Sequence[S3Location]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for found in objects:
        keys.setdefault(found.bucket, []).append(found.key)
    return keys


def _delete_entries(
    client: BaseClient, bucket: str, entries: list[dict[str, str]]
) -> list[dict[str, Any]]:
    """DeleteObjects of ``entries`` (``Key``, optionally ``VersionId``), 1000 a request:
    the entries the store refused, each with its ``Code``."""
    refused: list[dict[str, Any]] = []
    for start in range(0, len(entries), 1000):  # DeleteObjects takes 1000 keys
        answer = client.delete_objects(
            Bucket=bucket, Delete={"Objects": entries[start : start + 1000], "Quiet": True}
        )
        refused += answer.get("Errors", [])
    return refused


def _refused(bucket: str, refused: dict[str, Any]) -> OSError:
    where = str(S3Location(bucket, str(refused.get("Key", ""))))
    return OSError(errno.EIO, str(refused.get("Code") or "error"), where)


def remove_if_empty(directory: Root) -> None:
    """Delete a directory that holds nothing (S3: its marker object, when nothing else
    is under its prefix); one that holds something stays."""
    if isinstance(directory, Path):
        with contextlib.suppress(OSError):
            directory.rmdir()
        return
    with contextlib.suppress(OSError):
        keys = {key for key, _ in _objects(directory)}
        if keys <= {directory.prefix}:
            unlink(S3Location(directory.bucket, directory.prefix))


@dataclass(frozen=True)
class Placement:
    """How an object Rewind writes is kept (SPEC R48): its storage class (None: the
    bucket's default) and an S3 Object Lock in COMPLIANCE mode until ``locked_until``
    (None: no lock), which no credential can shorten or delete before it ends."""

    storage_class: str | None = None
    locked_until: datetime | None = None

    def arguments(self) -> dict[str, Any]:
        """The PutObject / CopyObject arguments that set it."""
        arguments: dict[str, Any] = {}
        if self.storage_class:
            arguments["StorageClass"] = self.storage_class
        if self.locked_until:
            arguments["ObjectLockMode"] = "COMPLIANCE"
            arguments["ObjectLockRetainUntilDate"] = self.locked_until
        return arguments


@dataclass(frozen=True)
class Fingerprint:
    """What a copy is verified by: the size, and the MD5 of the bytes where the store's
    ETag is one (None where it is not); ``etag``, an object's ETag as the store gave it
    (empty for a local file), makes a copy conditional on the bytes fingerprinted."""

    size: int
    md5: str | None
    etag: str = ""

    def matches(self, other: Fingerprint) -> bool:
        """Same size, and the same MD5 wherever both are known."""
        return self.size == other.size and (
            self.md5 is None or other.md5 is None or self.md5 == other.md5
        )

    @classmethod
    def of_head(cls, head: dict[str, Any]) -> Fingerprint:
        """An object's fingerprint from its HEAD (:func:`_digest`)."""
        return cls(int(head["ContentLength"]), _digest(head), str(head.get("ETag", "")))


def _digest(answer: dict[str, Any]) -> str | None:
    """The MD5 of an object's bytes from a HEAD's or a copy's answer, where its ETag is one:
    for an object written in one request and not encrypted with SSE-KMS or SSE-C. A
    multipart ETag (``<md5 of the parts' md5s>-<parts>``) depends on the part sizes, so a
    multipart source and its single-request copy (or the reverse) differ with equal bytes,
    and an encrypted object's ETag is no digest of its bytes at all: those compare by size."""
    etag = str(answer.get("ETag", "")).strip('"')
    digest = (
        etag
        and "-" not in etag
        and answer.get("ServerSideEncryption") not in _ENCRYPTED_ETAG
        and not answer.get("SSECustomerAlgorithm")
    )
    return etag if digest else None


def fingerprint(path: Root) -> Fingerprint:
    """A file's size and MD5 (S3: one HEAD; a local file: read once).

    Raises:
        FileNotFoundError: it is not there.
    """
    if isinstance(path, Path):
        with open(path, "rb") as handle:
            return Fingerprint(path.stat().st_size, hashlib.file_digest(handle, "md5").hexdigest())
    with _s3(path) as client:
        return Fingerprint.of_head(client.head_object(Bucket=path.bucket, Key=path.key))


def copy_verified(
    source: Root, target: S3Location, placement: Placement, expected: Fingerprint | None = None
) -> None:
    """Put a copy of ``source`` at ``target``, placed as ``placement`` says, and verify it
    against ``expected`` (default: the source's :func:`fingerprint`) before returning, so a
    caller may then remove the source (SPEC R48). Whatever was at ``target`` is replaced,
    never trusted. An object is copied server-side, its bytes never pass through this
    process: up to 5 GiB in one CopyObject, on condition that the source still has the
    fingerprinted ETag (a source replaced since fails with ``PreconditionFailed``), verified
    by the MD5 the copy's answer gives where both are one (SPEC R50: no request more); a
    bigger object in parts (UploadPartCopy), and a copy whose MD5 is not comparable or that
    must carry a lock, are verified by :func:`verify_copy`. A local file is uploaded
    (PutObject; parts above 5 GiB), each request checksummed by botocore and checked by the
    store, then verified.

    Raises:
        FileNotFoundError: the source is not there.
        OSError: the store failed, or the copy is not the source's bytes.
    """
    from boto3.s3.transfer import TransferConfig

    expected = expected or fingerprint(source)
    once = TransferConfig(multipart_threshold=_ONE_REQUEST, multipart_chunksize=_PART)
    arguments = placement.arguments()
    with _s3(target) as client:
        if isinstance(source, Path):
            client.upload_file(
                str(source), target.bucket, target.key, ExtraArgs=arguments, Config=once
            )
        elif expected.size > _ONE_REQUEST:
            copied = {"Bucket": source.bucket, "Key": source.key}
            client.copy(copied, target.bucket, target.key, ExtraArgs=arguments, Config=once)
        else:
            answer = client.copy_object(
                Bucket=target.bucket,
                Key=target.key,
                CopySource={"Bucket": source.bucket, "Key": source.key},
                CopySourceIfMatch=expected.etag,
                **arguments,
            )
            digest = _digest({**answer, **answer.get("CopyObjectResult", {})})
            if expected.md5 and digest and not placement.locked_until:
                if digest != expected.md5:
                    _reject(client, target, locked=False, why=f"{source} -> {target}", which="MD5")
                return
    verify_copy(source, target, placement, expected)


def verify_copy(
    source: Root, target: S3Location, placement: Placement, expected: Fingerprint
) -> None:
    """Check by a HEAD that ``target`` holds the bytes ``expected`` fingerprints (its size,
    and its MD5 where both ETags are one) and carries ``placement``'s lock. A store that
    keeps no lock a copy asked for (SeaweedFS 4.48 ignores CopyObject's lock headers) gets
    it set here (PutObjectRetention).

    Raises:
        OSError: the copy differs from its source (then it is deleted where no lock holds
            it, so that a rerun copies again), or the store failed.
    """
    with _s3(target) as client:
        head = client.head_object(Bucket=target.bucket, Key=target.key)
        found = Fingerprint.of_head(head)
        if not expected.matches(found):
            which = "size" if found.size != expected.size else "MD5"
            locked = bool(head.get("ObjectLockMode"))
            _reject(client, target, locked=locked, why=f"{source} -> {target}", which=which)
        until = placement.locked_until
        if until and not (
            head.get("ObjectLockMode") == "COMPLIANCE"
            and head["ObjectLockRetainUntilDate"] >= until.replace(microsecond=0)
        ):
            client.put_object_retention(
                Bucket=target.bucket,
                Key=target.key,
                VersionId=head["VersionId"],
                Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until},
            )


def _reject(client: BaseClient, copy: S3Location, *, locked: bool, why: str, which: str) -> None:
    """A copy that is not its source's bytes: deleted unless a lock holds it (so that a
    rerun copies again), and an error naming both."""
    if not locked:
        client.delete_object(Bucket=copy.bucket, Key=copy.key)
    raise OSError(errno.EIO, f"the copy differs from its source ({which})", why)


def purge_all(objects: Sequence[S3Location]) -> set[S3Location]:
    """Delete objects for good, up to 1000 in a DeleteObjects request (SPEC R50):
    in a bucket that never had versioning, their keys; in one that has (Object Lock needs
    it), every version and delete marker of each (listed by folder, :func:`_versions`: a
    plain delete there only hides an object behind a marker, keeping its bytes). A version
    an Object Lock holds is not forced (SPEC R48): the store refuses its delete, and it
    stays. A missing object is no error.

    Returns:
        The objects of which a lock still holds a version.

    Raises:
        OSError: the store refused a delete for another reason (named), or failed.
    """
    held: set[S3Location] = set()
    for bucket, keys in _by_bucket(objects).items():
        with _s3(S3Location(bucket)) as client:
            versioned = "Status" in client.get_bucket_versioning(Bucket=bucket)
            entries = (
                _versions(client, bucket, keys) if versioned else [{"Key": key} for key in keys]
            )
            for refused in _delete_entries(client, bucket, entries):
                if not (versioned and _locked(client, bucket, refused)):
                    raise _refused(bucket, refused)
                held.add(S3Location(bucket, str(refused["Key"])))
    return held


def _versions(client: BaseClient, bucket: str, keys: Sequence[str]) -> list[dict[str, str]]:
    """Every version and delete marker (``Key``, ``VersionId``) of each of ``keys``, listed
    by folder (:func:`_folder_versions`, SPEC R50)."""
    folders: dict[str, set[str]] = {}
    for key in keys:
        folders.setdefault(key[: key.rfind("/") + 1], set()).add(key)
    return [
        entry
        for folder, wanted in folders.items()
        for entry in _folder_versions(client, bucket, folder, wanted)
    ]


def _folder_versions(
    client: BaseClient, bucket: str, folder: str, wanted: set[str]
) -> list[dict[str, str]]:
    """The versions and delete markers of the ``wanted`` keys of one folder. A
    ListObjectVersions of the folder gives up to 1,000 versions, where listing each object
    alone takes a request per object. The listing goes in key order and stops past the last
    wanted key; once it has made as many requests as the wanted keys it has not reached
    yet, those are listed one by one instead (a few objects of a large folder cost at most
    twice what they did), the key it stopped in included. One object alone is listed alone."""
    if len(wanted) == 1:
        return _key_versions(client, bucket, next(iter(wanted)))
    found: list[dict[str, str]] = []
    last = max(wanted)
    pages = client.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=folder)
    for requests, page in enumerate(pages, start=1):
        found += [
            {"Key": str(version["Key"]), "VersionId": str(version["VersionId"])}
            for version in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
            if version["Key"] in wanted
        ]
        # keys before the marker are listed whole; the marker's own may go on next page
        reached = str(page.get("NextKeyMarker") or "") if page.get("IsTruncated") else ""
        if not reached or reached > last:
            return found
        ahead = sorted(key for key in wanted if key >= reached)
        if requests >= len(ahead):
            kept = [entry for entry in found if entry["Key"] < reached]
            return kept + [entry for key in ahead for entry in _key_versions(client, bucket, key)]
    return found


def _key_versions(client: BaseClient, bucket: str, key: str) -> list[dict[str, str]]:
    """Every version and delete marker of one object."""
    pages = client.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=key)
    return [
        {"Key": key, "VersionId": str(version["VersionId"])}
        for page in pages
        for version in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
        if version["Key"] == key
    ]


def _locked(client: BaseClient, bucket: str, refused: dict[str, Any]) -> bool:
    """Whether a refused version delete was refused by a lock: AccessDenied for a version
    that carries one (whatever this machine's clock says of its end: the store's clock
    decides); else a missing permission, an error."""
    if refused.get("Code") != "AccessDenied" or not refused.get("VersionId"):
        return False
    head = client.head_object(Bucket=bucket, Key=refused["Key"], VersionId=refused["VersionId"])
    return bool(head.get("ObjectLockMode"))


def object_lock_enabled(root: S3Location) -> bool:
    """Whether ``root``'s bucket has S3 Object Lock enabled (GetObjectLockConfiguration)."""
    try:
        with _s3(root) as client:
            found = client.get_object_lock_configuration(Bucket=root.bucket)
    except OSError as error:
        if error.strerror == "ObjectLockConfigurationNotFoundError":
            return False
        raise
    return bool(found["ObjectLockConfiguration"].get("ObjectLockEnabled") == "Enabled")
