"""A throw-away PostgreSQL server for the tests (Debian's, which `make test` installs):
``initdb`` + ``pg_ctl`` on a Unix socket in a fresh directory, no TCP listener, run as the
``postgres`` user when the tests run as root. One per test process; each user of it gets
a database of its own (:meth:`PostgresServer.create_database`).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def _binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


class PostgresServer:
    """``start()``, ``create_database(name)`` -> a SQLAlchemy URL (psycopg 3), ``stop()``."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="rewind-pg-"))
        self.base.chmod(0o777)  # the postgres user writes its socket and data here
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]  # names the socket file; no TCP listener
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.pg_ctl = _binary("pg_ctl")

    @property
    def data(self) -> Path:
        return self.base / "data"

    def start(self) -> PostgresServer:
        initdb = _binary("initdb")
        # `make test` installs Debian's postgresql when missing: a missing server is a failure.
        assert initdb and self.pg_ctl, "PostgreSQL server binaries missing: run `make postgres`"
        subprocess.run(
            [*self.as_postgres, initdb, "-D", str(self.data), "-A", "trust", "-U", "rewind"],
            check=True,
            capture_output=True,
        )
        options = f"-k {self.base} -p {self.port} -c listen_addresses='' -c max_connections=300"
        start = [self.pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.base / "log")]
        subprocess.run(
            [*self.as_postgres, *start, "-w", "-t", "60", "start"], check=True, capture_output=True
        )
        return self

    def create_database(self, name: str) -> str:
        """A new, empty database; its SQLAlchemy URL (``postgresql+psycopg``)."""
        import psycopg

        with psycopg.connect(
            f"host={self.base} port={self.port} user=rewind dbname=postgres", autocommit=True
        ) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://rewind@/{name}?host={self.base}&port={self.port}"

    def stop(self) -> None:
        if self.pg_ctl:
            subprocess.run(
                [*self.as_postgres, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
                check=False,
                capture_output=True,
            )
        shutil.rmtree(self.base, ignore_errors=True)
