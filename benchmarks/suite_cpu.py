"""Where a command's CPU went, every process it started counted (issue 26).

``REWIND_SUITE_CPU=1`` (tests/conftest.py) charges each test phase with its worker's
process tree, which misses what leaves the tree: Airflow's daemons, servers that outlive
a phase, processes re-parented to init. Over a whole clean-clone suite it saw 1,503 of
the 2,455 CPU-s this sampler saw. This runs the command and reads ``/proc`` once a second:
every process that descends from the command, or that started after it and was
re-parented to init, with the CPU it used (user + system, its own, not its children's).
A process that lives less than a second between two reads is missed, and so is the CPU a
process uses in its last second.

Processes are grouped by what they are, from their last command line (``spark-class``
execs into Java): a Spark JVM by its application (``spark_jobs/expire_versions.py``, a
Spark Connect server), a JVM of an in-process session (``pyspark-shell``) by the process
that started it, Python by its module or script, ``airflow`` by its subcommand, anything
else by its program's name.

    python benchmarks/suite_cpu.py [--out benchmarks/results/suite_cpu.json] -- ./.ci/run

Prints, and writes with ``--out``, as JSON: the command, its exit code, wall time, the CPU
seconds counted, the machine's cores and how busy they were (CPU counted / cores x wall),
and per kind the processes and CPU seconds, most first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Seen:
    """One process as last read: its command line, its parent's when first seen, and its
    CPU seconds."""

    cmd: list[str]
    parent: list[str]
    cpu_s: float


def read(pid: str) -> tuple[int, int, float, list[str]] | None:
    """(parent pid, start tick, CPU seconds, argv) of ``pid``, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    return int(fields[1]), int(fields[19]), cpu, [a.decode(errors="replace") for a in argv if a]


def boot_ticks_now() -> int:
    """Ticks since boot: the clock of /proc's start times."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * TICK)


def sample(root: int, began: int, seen: dict[tuple[int, int], Seen]) -> None:
    """One read of /proc into ``seen`` (keyed by pid and start tick: pids are reused)."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (found := read(entry.name)) is not None:
            table[int(entry.name)] = found
    ours = {root}
    pending = [root]
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    while pending:
        for child in children.get(pending.pop(), []):
            ours.add(child)
            pending.append(child)
    for pid, (ppid, start, cpu, argv) in table.items():
        key = (pid, start)
        orphan = ppid == 1 and start >= began and pid != os.getpid()
        if key in seen:
            seen[key].cpu_s = cpu
            seen[key].cmd = argv or seen[key].cmd
        elif pid in ours or orphan:
            seen[key] = Seen(argv, table[ppid][3] if ppid in table else [], cpu)


def kind(cmd: list[str], parent: list[str]) -> str:
    """What a process is, from its command line (and its parent's, for an in-process
    Spark session's JVM)."""
    if len(cmd) == 1 and " " in cmd[0]:
        cmd = cmd[0].split()  # a title the process set itself (setproctitle)
    if not cmd:
        return "?"
    if cmd[0].startswith("[pytest-xdist") or "::" in cmd[0]:
        return "pytest worker"  # pytest-xdist's title: its state, or the running test
    program = Path(cmd[0]).name.rstrip(":")
    if "chromium" in program.lower():
        return "chromium"
    if program == "java":
        return _java(cmd, parent)
    if program.startswith("python") or program in ("airflow", "rewind"):
        return _python(program, cmd[1:])
    if program in ("bash", "sh") and len(cmd) > 1:
        return f"{program} {Path(cmd[1]).name}"
    return program


def _java(cmd: list[str], parent: list[str]) -> str:
    """A Spark JVM by its application, another JVM by its main class."""
    if "org.apache.spark.deploy.SparkSubmit" in cmd:
        if "--class" in cmd:
            return "spark " + cmd[cmd.index("--class") + 1].rsplit(".", 1)[-1]
        if cmd[-1] in ("pyspark-shell", "spark-internal"):
            return f"spark session of {kind(parent, [])}"
        app = next((a for a in cmd if a.endswith(".py")), cmd[-1])
        return "spark-submit " + Path(app).name
    main = next((a for a in cmd[1:] if re.fullmatch(r"[a-z]+(\.[\w$]+)+", a)), "?")
    return "java " + main.rsplit(".", 1)[-1]


def _python(program: str, args: list[str]) -> str:
    """``airflow`` by subcommand, the CLI, a module, a pytest worker, or a script."""
    if args and Path(args[0]).name in ("airflow", "rewind"):
        program, args = Path(args[0]).name, args[1:]
    if program == "airflow":
        return "airflow " + next((a for a in args if not a.startswith("-")), "").replace("_", "-")
    if program == "rewind":
        return "rewind CLI"
    if "-m" in args[:-1]:
        module = args[args.index("-m") + 1]
        return "python -m " + (module if module != "pytest" else "pytest (controller)")
    if "-c" in args:
        return "pytest worker" if any("exec(eval(" in a for a in args) else "python -c"
    return "python " + Path(next((a for a in args if not a.startswith("-")), "?")).name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between reads")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: suite_cpu.py [--out FILE] -- COMMAND ...")
    began, start = boot_ticks_now(), time.monotonic()
    proc = subprocess.Popen(command)
    seen: dict[tuple[int, int], Seen] = {}
    while proc.poll() is None:
        sample(proc.pid, began, seen)
        time.sleep(args.every)
    wall = time.monotonic() - start
    cpu: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for s in seen.values():
        name = kind(s.cmd, s.parent)
        cpu[name] += s.cpu_s
        count[name] += 1
    total = sum(cpu.values())
    cores = os.cpu_count() or 1
    report: dict[str, Any] = {
        "command": command,
        "returncode": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(total, 1),
        "cores": cores,
        "cores_busy": round(total / (cores * wall), 2),
        "processes": len(seen),
        "by_kind": [
            {"kind": name, "processes": count[name], "cpu_s": round(seconds, 1)}
            for name, seconds in cpu.most_common()
        ],
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
