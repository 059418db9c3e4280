"""What a process listens on, read from /proc (the tests of the servers Rewind starts)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

# 127.0.0.1 as /proc/net/tcp and tcp6 print it (IPv4, IPv4-mapped IPv6, ::1).
LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


def listening(pid: int) -> list[str]:
    """The local addresses (hex, as /proc/net shows them) of ``pid``'s listening sockets."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # a descriptor closed meanwhile
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                found.append(fields[1].split(":")[0])
    return found
