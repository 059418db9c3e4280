"""What a new user reads in the first minutes agrees with the code (issue 26): the home
server's idle default, as the README and ``make run``'s last lines state it. No Spark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from rewind import demo
from rewind.spark_server import IDLE_DEFAULT_S, idle_seconds

pytestmark = pytest.mark.unit

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_the_idle_default_is_the_one_the_readme_and_the_demo_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("REWIND_SPARK_SERVER_IDLE", raising=False)
    assert idle_seconds() == IDLE_DEFAULT_S == 300
    stated = re.search(r"`REWIND_SPARK_SERVER_IDLE` seconds .*?\(default (\d+);", README, re.S)
    assert stated is not None and int(stated[1]) == IDLE_DEFAULT_S
    minutes = re.findall(r"(?:stops by itself after|Why) (\d+) (?:idle )?minutes", README)
    assert minutes and set(minutes) == {str(IDLE_DEFAULT_S // 60)}
    console = Console(record=True, width=80)
    demo.next_steps(tmp_path / "home", tmp_path / "airflow", console)
    assert f"It stops after {IDLE_DEFAULT_S // 60} idle minutes" in console.export_text()
