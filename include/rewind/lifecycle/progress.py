"""Progress of the lifecycle's long work (issue 28): tables scanned, files moved and
purged with their bytes, rates and an ETA, while a run goes (SPEC R29, R32).

The steps report into this module (:func:`phase`, :func:`advance`, :func:`run_tasks`);
the caller of a run chooses what shows it (:func:`reporting`): rich progress bars on a
terminal, plain lines elsewhere (an Airflow task's log, a pipe) — one at each step's
start and end and one at least every ``REWIND_PROGRESS_INTERVAL`` seconds (default
:data:`INTERVAL_DEFAULT_S`) while it works. Nobody watching (a library call of
``rewind.runner.run_lifecycle``): every report is a no-op, and file operations run as
one Spark job, as before.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO, TypeVar

from rewind.errors import RewindError

if TYPE_CHECKING:
    from rich.progress import TaskID

INTERVAL_ENV = "REWIND_PROGRESS_INTERVAL"
# Airflow's task log gets a line at least every 30 s (issue 28); a margin for a loaded box.
INTERVAL_DEFAULT_S = 25.0
RICH_REFRESH_S = 0.2
# File operations run on Spark in chunks so that their count moves while they run: the
# first chunk of FIRST_CHUNK files, the next sized to take about CHUNK_S at the rate
# seen. A Spark job of file operations costs ~0.2 s to set up (Run.run_tasks), so
# ten-second chunks cost ~2 % at most (measured: within noise, README "The nightly
# lifecycle"); FIRST_CHUNK keeps a night of fewer files one job, as before, and at 2
# cores keeps a partition's S3 deletes in batches of up to 1,000 (SPEC R50).
FIRST_CHUNK = 2_000
CHUNK_S = 10.0
MAX_CHUNK = 100_000

T = TypeVar("T")


@dataclass
class Phase:
    """One counted part of a step: ``what`` ("tables scanned", "files moved") of ``total``
    tables or files, and of ``total_bytes`` where bytes are counted."""

    step: str
    what: str
    unit: str  # "tables", "files" or "objects"
    total: int
    total_bytes: int | None = None
    done: int = 0
    done_bytes: int = 0
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None

    def elapsed(self, now: float) -> float:
        return (self.ended or now) - self.started

    def rate(self, now: float) -> float:
        """Units a second so far."""
        elapsed = self.elapsed(now)
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta(self, now: float) -> float | None:
        """Seconds left at the rate so far; None before anything is done."""
        if self.done >= self.total:
            return 0.0
        rate = self.rate(now)
        return (self.total - self.done) / rate if rate > 0 else None


class Renderer(Protocol):
    """What shows a run's progress. ``period``: how often :meth:`show` is called."""

    period: float

    def begin(self) -> None: ...
    def show(self, step: str, elapsed: float, phases: list[Phase], now: float) -> None: ...
    def step_started(self, step: str) -> None: ...
    def note(self, text: str) -> None: ...
    def step_ended(
        self, step: str, elapsed: float, phases: list[Phase], now: float, failed: bool
    ) -> None: ...
    def end(self) -> None: ...


class Tracker:
    """A run's counters, shown by a renderer from a thread of its own (so a line comes on
    time however long one table or one chunk of files takes). The counters' lock is never
    held while the renderer writes: a slow reader of stderr does not slow the counting."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self._lock = threading.Lock()  # the counters
        self._shown = threading.Lock()  # the renderer: one report at a time, in order
        self._step: str | None = None
        self._step_started = 0.0
        self._phases: list[Phase] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="rewind-progress", daemon=True)

    def start(self) -> None:
        self.renderer.begin()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.renderer.end()

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        with self._shown:
            with self._lock:
                self._step, self._step_started, self._phases = name, time.monotonic(), []
            self.renderer.step_started(name)
        failed = True
        try:
            yield
            failed = False
        finally:
            with self._shown:
                with self._lock:
                    now = time.monotonic()
                    for each in self._phases:
                        each.ended = each.ended or now
                    elapsed, phases = now - self._step_started, self._copy()
                    self._step, self._phases = None, []
                self.renderer.step_ended(name, elapsed, phases, now, failed)

    def phase(self, what: str, unit: str, total: int, total_bytes: int | None) -> None:
        with self._lock:
            now = time.monotonic()
            for each in self._phases:
                each.ended = each.ended or now
            self._phases.append(Phase(self._step or "", what, unit, total, total_bytes))

    def advance(self, counts: dict[str, int], nbytes: int) -> None:
        with self._lock:
            if self._phases:
                current = self._phases[-1]
                current.done += counts[current.unit]
                current.done_bytes += nbytes
                if current.done >= current.total:  # its rate stops here, not at the next
                    current.ended = current.ended or time.monotonic()

    def note(self, text: str) -> None:
        with self._shown:
            self.renderer.note(text)

    def _copy(self) -> list[Phase]:
        return [replace(each) for each in self._phases]

    def _tick(self) -> None:
        while not self._stop.wait(self.renderer.period):
            with self._shown:
                with self._lock:
                    step, now = self._step, time.monotonic()
                    elapsed, phases = now - self._step_started, self._copy()
                if step is not None:
                    self.renderer.show(step, elapsed, phases, now)


_current: Tracker | None = None


@contextlib.contextmanager
def reporting(renderer: Renderer) -> Iterator[Tracker]:
    """Show the progress of the runs made inside the block with ``renderer``."""
    global _current
    tracker = Tracker(renderer)
    tracker.start()
    before, _current = _current, tracker
    try:
        yield tracker
    finally:
        _current = before
        tracker.stop()


def shown_on(stream: TextIO) -> Renderer:
    """Rich bars if ``stream`` is a terminal, else plain lines (every :func:`interval`)."""
    if stream.isatty():
        return RichBars(stream)
    return PlainLines(stream, interval())


def interval() -> float:
    """``REWIND_PROGRESS_INTERVAL``: seconds between two plain lines (> 0).

    Raises:
        RewindError: INVALID_VALUE, naming the variable.
    """
    text = os.environ.get(INTERVAL_ENV) or str(INTERVAL_DEFAULT_S)
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not seconds > 0:
        raise RewindError(
            f"{INTERVAL_ENV} must be a number of seconds > 0, not {text!r}.", code="INVALID_VALUE"
        )
    return seconds


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    """One step of a run: its start, its end and how long it took are shown."""
    if _current is None:
        yield
        return
    with _current.step(name):
        yield


def phase(
    what: str,
    *,
    tables: int | None = None,
    files: int | None = None,
    objects: int | None = None,
    nbytes: int | None = None,
) -> None:
    """The current step starts counting ``what`` ("tables scanned", "files moved") of
    ``tables`` tables, ``files`` files or ``objects`` catalog objects (and ``nbytes``)."""
    if _current is not None:
        unit, total = next(
            (name, count)
            for name, count in (("tables", tables), ("files", files), ("objects", objects))
            if count is not None
        )
        _current.phase(what, unit, total, nbytes)


def advance(*, tables: int = 0, files: int = 0, objects: int = 0, nbytes: int = 0) -> None:
    """Tables, files or objects (and their bytes) of the current phase are done."""
    if _current is not None:
        _current.advance({"tables": tables, "files": files, "objects": objects}, nbytes)


@contextlib.contextmanager
def waiting_for_spark(home: Path) -> Iterator[None]:
    """What the CLI shows while the home's Spark Connect server starts in a run (instead
    of its spinner, which would write across the bars)."""
    began = time.monotonic()
    if _current is not None:
        _current.note(f"starting Spark for {home} (once: later calls reuse it)")
    yield
    if _current is not None:
        _current.note(f"Spark started in {time.monotonic() - began:.1f} s")


def run_tasks(
    runner: Callable[[Sequence[T]], dict[str, str]], tasks: Sequence[T], sizes: Sequence[int]
) -> dict[str, str]:
    """``runner`` (``Run.run_tasks``: file operations on Spark) over ``tasks``, whose files
    have ``sizes`` bytes; returns every outcome. Watched (:func:`reporting`), in chunks
    (:data:`CHUNK_S`), each counted as done; else in one go."""
    if _current is None or len(tasks) <= FIRST_CHUNK:
        everything = runner(tasks)
        advance(files=len(tasks), nbytes=sum(sizes))
        return everything
    outcomes: dict[str, str] = {}
    start, size = 0, FIRST_CHUNK
    while start < len(tasks):
        chunk, began = tasks[start : start + size], time.monotonic()
        outcomes.update(runner(chunk))
        took = time.monotonic() - began
        advance(files=len(chunk), nbytes=sum(sizes[start : start + size]))
        start += len(chunk)
        size = max(FIRST_CHUNK, min(MAX_CHUNK, int(len(chunk) / max(took, 1e-3) * CHUNK_S)))
    return outcomes


# --- renderers -----------------------------------------------------------------------------


def _bytes(count: int) -> str:
    from rich.filesize import decimal

    return str(decimal(count))


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    if value < 60:
        return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"
    minutes, seconds = divmod(int(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


def describe(item: Phase, now: float) -> str:
    """``files moved 1200/4000, bytes 1234567/4000000 (1.2 MB of 4.0 MB), 400 files/s,
    410.5 kB/s, ETA 7.0 s``: exact counts (a log is read by scripts too), then for people."""
    text = f"{item.what} {item.done}/{item.total}"
    if item.total_bytes is not None:
        text += (
            f", bytes {item.done_bytes}/{item.total_bytes}"
            f" ({_bytes(item.done_bytes)} of {_bytes(item.total_bytes)})"
        )
    elapsed = item.elapsed(now)
    text += f", {item.rate(now):.0f} {item.unit}/s"
    if item.total_bytes is not None and elapsed > 0:
        text += f", {_bytes(int(item.done_bytes / elapsed))}/s"
    if item.ended is None:
        text += f", ETA {_seconds(item.eta(now))}"
    return text


class PlainLines:
    """One line per report to ``stream``: a step's start and end, and its current phase
    every ``interval`` seconds (``elapsed`` alone while it counts nothing)."""

    PREFIX = "lifecycle progress:"

    def __init__(self, stream: TextIO, interval: float = INTERVAL_DEFAULT_S) -> None:
        self.stream, self.period = stream, interval

    def _line(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed pipe never fails a run
            self.stream.write(f"{self.PREFIX} {text}\n")
            self.stream.flush()

    def begin(self) -> None:
        pass

    def end(self) -> None:
        pass

    def step_started(self, step: str) -> None:
        self._line(f"{step}: started")

    def note(self, text: str) -> None:
        self._line(text)

    def show(self, step: str, elapsed: float, phases: list[Phase], now: float) -> None:
        if phases and phases[-1].ended is None:
            self._line(f"{step}: {describe(phases[-1], now)}, {_seconds(elapsed)} elapsed")
        else:  # before its first count, or recording what the last one did
            last = f" after {describe(phases[-1], now)}" if phases else ""
            self._line(f"{step}: working{last}, {_seconds(elapsed)} elapsed")

    def step_ended(
        self, step: str, elapsed: float, phases: list[Phase], now: float, failed: bool
    ) -> None:
        done = "".join(f"; {describe(p, now)}" for p in phases if p.total)
        self._line(f"{step}: {'failed after' if failed else 'done in'} {elapsed:.2f} s{done}")


class RichBars:
    """Rich progress bars on a terminal: a line per step (its time once done) and a bar per
    phase with counts, bytes, rate and ETA. On stderr, not redirecting the process's
    output: stdout carries the run's summary (``--format json`` may be piped)."""

    period = RICH_REFRESH_S

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TextColumn("{task.fields[detail]}"),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream),
            redirect_stdout=False,
            redirect_stderr=False,
            refresh_per_second=5,
        )
        self._steps: dict[str, TaskID] = {}
        self._phases: dict[tuple[str, int], TaskID] = {}  # (step, its n-th phase) -> task

    def begin(self) -> None:
        self.bars.start()

    def end(self) -> None:
        self.bars.stop()

    def step_started(self, step: str) -> None:
        self._steps[step] = self.bars.add_task(step, total=None, count="", detail="")

    def note(self, text: str) -> None:
        self.bars.console.print(text, style="dim")

    def show(self, step: str, elapsed: float, phases: list[Phase], now: float) -> None:
        for number, item in enumerate(phases):
            key = (step, number)
            if key not in self._phases:
                self._phases[key] = self.bars.add_task(
                    f"  {item.what}", total=max(item.total, 1), count="", detail=""
                )
            detail = f"{item.rate(now):.0f} {item.unit}/s"
            if item.total_bytes is not None:
                detail = f"{_bytes(item.done_bytes)}/{_bytes(item.total_bytes)}  {detail}"
            self.bars.update(
                self._phases[key],
                completed=item.done if item.total else 1,
                count=f"{item.done}/{item.total}",
                detail=detail,
            )
            if item.ended is not None:
                self.bars.stop_task(self._phases[key])

    def step_ended(
        self, step: str, elapsed: float, phases: list[Phase], now: float, failed: bool
    ) -> None:
        self.show(step, elapsed, phases, now)
        task = self._steps[step]
        outcome = "failed" if failed else "done"
        self.bars.update(
            task, description=f"{step} {outcome}", total=1, completed=1, detail=f"{elapsed:.2f} s"
        )
        self.bars.stop_task(task)
