"""A fail-safe of noncurrent versions (0 copies) against Rewind's copies (issue 28 item 2).

Rewind moves a file that left time travel into its fail-safe store by a server-side copy
(R12, R48): a HEAD fingerprints the source, CopyObject copies it, verified by the MD5 in
its answer (with a lock: by a HEAD, and a PutObjectRetention where the store ignored the
copy's lock, as SeaweedFS does), then DeleteObjects of the sources, 1,000 keys a request;
Rewind's own functions do it here. On a bucket with versioning on, the same file could
stay where it is as a noncurrent version: a HEAD for its version id and size,
DeleteObjects of the key (the store keeps the version behind a delete marker), and, on a
locked bucket, a PutObjectRetention on that version. No byte is copied.

Both are measured here on one SeaweedFS server on loopback, each in a bucket of its own,
with the same boto3 client Rewind makes (``rewind.storage.objectstore.s3_client``) and a
pool of ``--threads``, for two shapes: many small files (the lifecycle benchmarks' data
files are a few KB: the work is requests) and a few large ones (the work is bytes). Each
technique is timed and counted in requests by type (SeaweedFS's
``SeaweedFS_s3_request_total``, benchmarks/lifecycle_s3.py) through three phases:

- ``move``: the files leave their table into fail-safe;
- ``recover``: a tenth of them is copied back under a new key (a fail-safe recovery),
  checked by size;
- ``purge``: the fail-safe of every file is deleted for good (the copies; or the
  noncurrent versions and their delete markers, by version id).

Each is measured twice: without a lock, then in buckets with Object Lock on (R48), where
each fail-safe object is locked in COMPLIANCE mode until a purge instant shortly
after the move (``early_delete_refused``: the store refused a delete before it), and the
purge waits (untimed) for it.

What it does not settle is R38 (no path reads the fail-safe store but the ACCOUNTADMIN
recovery): a noncurrent version stays under its table's own prefix, where whoever may read
that table's objects with ``s3:GetObjectVersion`` reads it; a copy under a separate root
can be closed to everyone but Rewind. The README says what follows from the figures.

    .venv/bin/python benchmarks/failsafe_versioning.py [--small-files 10000] [--small-kb 4]
        [--large-files 48] [--large-mb 32] [--threads 8]
        [--output benchmarks/results/failsafe_versioning.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lifecycle_s3 import DELETE_BATCH, counted, delete_keys

from rewind.seaweedfs import SeaweedFS
from rewind.storage import location, objectstore
from rewind.storage.objectstore import S3Location

RESULTS = Path(__file__).parent / "results" / "failsafe_versioning.json"
# Each fail-safe object is locked until this long after its technique's move began, and
# that much more per file moved: a retention must end after the move does (S3 refuses
# one in the past), and the purge waits, untimed, until it ends.
LOCK_SECONDS = 20
LOCK_SECONDS_PER_FILE = 0.01


class Technique:
    """One way to keep a file in fail-safe: the table's objects in a bucket of their own
    (``bucket``), the fail-safe's in ``store`` (the same bucket or another)."""

    name = ""
    versioned = False

    def __init__(self, server: SeaweedFS, pool: ThreadPoolExecutor, lock: bool) -> None:
        self.server, self.pool, self.lock = server, pool, lock
        self.client = objectstore.s3_client()
        self.bucket = self.new_bucket(self.name, self.versioned, lock and self.versioned)
        self.store = self.bucket
        self.until = datetime.now(UTC)

    def new_bucket(self, name: str, versioned: bool, lock: bool) -> str:
        bucket = f"{name}-{secrets.token_hex(3)}"
        if lock:  # Object Lock turns versioning on as well
            self.client.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
            return bucket
        self.client.create_bucket(Bucket=bucket)
        if versioned:
            self.client.put_bucket_versioning(
                Bucket=bucket, VersioningConfiguration={"Status": "Enabled"}
            )
        return bucket

    def write(self, count: int, size: int) -> list[str]:
        """``count`` objects of ``size`` random bytes under ``table/`` (untimed)."""
        names = [f"table/part-{n:06d}.parquet" for n in range(count)]
        body = os.urandom(size)
        list(
            self.pool.map(
                lambda key: self.client.put_object(Bucket=self.bucket, Key=key, Body=body), names
            )
        )
        return names

    def measured(self, phase: Callable[[], None]) -> dict[str, Any]:
        """``phase`` timed, and its requests to both buckets counted by type."""
        entry: dict[str, Any] = {}
        with counted(self.server, entry, *sorted({self.bucket, self.store})):
            phase()
        return entry

    def run(self, names: list[str], size: int) -> dict[str, Any]:
        lock_s = LOCK_SECONDS + LOCK_SECONDS_PER_FILE * len(names)
        self.until = datetime.now(UTC) + timedelta(seconds=lock_s)
        report: dict[str, Any] = {"move": self.measured(lambda: self.move(names, size))}
        back = names[::10]
        report["recover"] = self.measured(lambda: self.recover(back, size))
        report["recovered_files"] = len(back)
        if self.lock:  # COMPLIANCE mode lets nobody delete before the purge instant
            report["early_delete_refused"] = self.refuses_delete(names[0])
            time.sleep(max(0.0, (self.until - datetime.now(UTC)).total_seconds() + 1))
        report["purge"] = self.measured(lambda: self.purge(names))
        report["left_after_purge"] = self.left()
        report["bytes_copied_by_move"] = 0 if self.versioned else len(names) * size
        return report

    def refuses_delete(self, key: str) -> bool:
        """Whether the store refuses to delete ``key``'s fail-safe version for good."""
        bucket = self.recover_source(key)["Bucket"]
        version = self.client.list_object_versions(Bucket=bucket, Prefix=key)["Versions"][0]
        answer = self.client.delete_objects(
            Bucket=bucket,
            Delete={"Objects": [{"Key": key, "VersionId": version["VersionId"]}], "Quiet": True},
        )
        return bool(answer.get("Errors"))

    def move(self, names: list[str], size: int) -> None:
        raise NotImplementedError

    def recover_source(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    def purge(self, names: list[str]) -> None:
        raise NotImplementedError

    def recover(self, names: list[str], size: int) -> None:
        """Copy each file's fail-safe back under ``recovered/`` and check its size."""

        def one(key: str) -> None:
            target = f"recovered/{key}"
            source = self.recover_source(key)
            self.client.copy_object(Bucket=self.bucket, Key=target, CopySource=source)
            self.check_size(self.bucket, target, size)

        list(self.pool.map(one, names))

    def left(self) -> int:
        """Versions and delete markers of the files left in either bucket (the recovered
        copies aside)."""
        return sum(
            1
            for bucket in {self.bucket, self.store}
            for page in self.client.get_paginator("list_object_versions").paginate(Bucket=bucket)
            for item in page.get("Versions", []) + page.get("DeleteMarkers", [])
            if not item["Key"].startswith("recovered/")
        )

    def check_size(self, bucket: str, key: str, size: int, **version: str) -> str:
        """The object's version id, once its size is checked."""
        head = self.client.head_object(Bucket=bucket, Key=key, **version)
        if int(head["ContentLength"]) != size:
            raise RuntimeError(f"{key} has {head['ContentLength']} bytes, not {size}")
        return str(head.get("VersionId") or "null")


class Copies(Technique):
    """What Rewind does, by Rewind's own functions (``rewind.storage.location``, as
    ``rewind.lifecycle.fileops`` calls them): each file fingerprinted (a HEAD), copied
    into a fail-safe bucket of its own and verified (``copy_verified``: with a lock, a HEAD
    and the retention), then the sources deleted (``unlink_all``) and, at the purge, the
    copies (``purge_all``: in a versioned bucket, each object's versions listed first)."""

    name = "copies"

    def __init__(self, server: SeaweedFS, pool: ThreadPoolExecutor, lock: bool) -> None:
        super().__init__(server, pool, lock)
        self.store = self.new_bucket("failsafe", False, lock)

    def move(self, names: list[str], size: int) -> None:
        placement = location.Placement(locked_until=self.until if self.lock else None)

        def one(key: str) -> None:
            source = S3Location(self.bucket, key)
            expected = location.fingerprint(source)
            location.copy_verified(source, S3Location(self.store, key), placement, expected)

        list(self.pool.map(one, names))
        location.unlink_all([S3Location(self.bucket, key) for key in names])

    def recover_source(self, key: str) -> dict[str, str]:
        return {"Bucket": self.store, "Key": key}

    def purge(self, names: list[str]) -> None:
        held = location.purge_all([S3Location(self.store, key) for key in names])
        if held:
            raise RuntimeError(f"{len(held)} fail-safe copies still locked at their purge")


class NoncurrentVersions(Technique):
    """The file stays where it is, as a noncurrent version behind a delete marker (with
    a COMPLIANCE retention on that version when locked)."""

    name = "versions"
    versioned = True

    def __init__(self, server: SeaweedFS, pool: ThreadPoolExecutor, lock: bool) -> None:
        super().__init__(server, pool, lock)
        self.kept: dict[str, str] = {}  # key -> the version in fail-safe (a manifest's)

    def move(self, names: list[str], size: int) -> None:
        def one(key: str) -> tuple[str, str]:
            version = self.check_size(self.bucket, key, size)
            if self.lock:
                self.client.put_object_retention(
                    Bucket=self.bucket,
                    Key=key,
                    VersionId=version,
                    Retention={"Mode": "COMPLIANCE", "RetainUntilDate": self.until},
                )
            return key, version

        self.kept = dict(self.pool.map(one, names))
        self.delete_keys(names)

    def recover_source(self, key: str) -> dict[str, str]:
        return {"Bucket": self.bucket, "Key": key, "VersionId": self.kept[key]}

    def purge(self, names: list[str]) -> None:
        # the delete markers' ids from one listing, then both by version id
        markers = {
            item["Key"]: str(item["VersionId"])
            for page in self.client.get_paginator("list_object_versions").paginate(
                Bucket=self.bucket, Prefix="table/"
            )
            for item in page.get("DeleteMarkers", [])
        }
        self.delete_versions(
            self.bucket,
            [(key, self.kept[key]) for key in names] + [(key, markers[key]) for key in names],
        )

    def delete_keys(self, names: list[str]) -> None:
        batches = [names[i : i + DELETE_BATCH] for i in range(0, len(names), DELETE_BATCH)]
        list(self.pool.map(lambda batch: delete_keys(self.client, self.bucket, batch), batches))

    def delete_versions(self, bucket: str, entries: list[tuple[str, str]]) -> None:
        def batch(start: int) -> None:
            objects = [{"Key": k, "VersionId": v} for k, v in entries[start : start + DELETE_BATCH]]
            answer = self.client.delete_objects(
                Bucket=bucket, Delete={"Objects": objects, "Quiet": True}
            )
            if answer.get("Errors"):
                raise RuntimeError(f"DeleteObjects refused: {answer['Errors'][:1]}")

        list(self.pool.map(batch, range(0, len(entries), DELETE_BATCH)))


TECHNIQUES: dict[str, type[Technique]] = {"copies": Copies, "versions": NoncurrentVersions}


def measure(
    server: SeaweedFS, shape: str, count: int, size: int, threads: int, lock: bool
) -> dict[str, Any]:
    results: dict[str, Any] = {"files": count, "file_bytes": size}
    with ThreadPoolExecutor(threads) as pool:
        for technique in TECHNIQUES.values():
            each = technique(server, pool, lock)
            names = each.write(count, size)
            results[technique.name] = each.run(names, size)
            print(
                f"  {shape} {technique.name}: {json.dumps(results[technique.name])}",
                file=sys.stderr,
            )
    copies, versions = results["copies"], results["versions"]
    results["move_seconds_copies_over_versions"] = round(
        copies["move"]["seconds"] / max(versions["move"]["seconds"], 1e-9), 2
    )
    results["move_requests_copies_over_versions"] = round(
        copies["move"]["requests_total"] / max(versions["move"]["requests_total"], 1), 2
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small-files", type=int, default=10_000)
    parser.add_argument("--small-kb", type=int, default=4)
    parser.add_argument("--large-files", type=int, default=48)
    parser.add_argument("--large-mb", type=int, default=32)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    shapes = {
        "small_files": (args.small_files, args.small_kb * 1024),
        "large_files": (args.large_files, args.large_mb * 2**20),
    }
    with tempfile.TemporaryDirectory(prefix="rewind-failsafe-versioning-") as scratch:
        server = SeaweedFS.with_new_keys(Path(scratch) / "seaweedfs", "BENCH")
        try:
            server.start()
            with objectstore.environment(server.env()):
                results = {
                    mode: {
                        shape: measure(server, shape, count, size, args.threads, lock)
                        for shape, (count, size) in shapes.items()
                    }
                    for mode, lock in (("no_lock", False), ("object_lock", True))
                }
        finally:
            server.stop()
    runs = [results[mode][shape][t] for mode in results for shape in shapes for t in TECHNIQUES]
    report = {
        "benchmark": "failsafe_versioning",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "store": "SeaweedFS (weed mini) on loopback, one bucket per technique",
        "threads": args.threads,
        "lock_seconds": {"base": LOCK_SECONDS, "per_file": LOCK_SECONDS_PER_FILE},
        "locks_held": all(run.get("early_delete_refused", True) for run in runs),
        "all_purged": all(run["left_after_purge"] == 0 for run in runs),
        **results,
    }
    args.output.parent.mkdir(exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if report["all_purged"] and report["locks_held"] else 1


if __name__ == "__main__":
    sys.exit(main())
