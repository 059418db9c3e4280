"""Every SQL example of Snowflake's and BigQuery's pages runs as the page describes (SPEC R16,
R19, R21–R23, R36; the pages are ../shared/seeds, the examples tests/spark/conformance.toml)."""

from __future__ import annotations

import re
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import rewind
from rewind.clock import Clock, parse_timestamp
from rewind.errors import RewindError
from rewind.result import json_value

pytestmark = pytest.mark.spark

DATA = Path(__file__).with_name("conformance.toml")
SCENARIOS: list[dict[str, Any]] = tomllib.loads(DATA.read_text())["scenario"]
README = Path(__file__).parents[2] / "README.md"
_REFERENCE = re.compile(r"\$\{(ms )?([^}]+)\}")


def examples() -> list[tuple[str, dict[str, Any]]]:
    """(seed reference, step) for every documented example."""
    return [(ref, step) for s in SCENARIOS for step in s["steps"] for ref in step.get("seed", [])]


def _text(sql: str, ids: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        if match.group(1):
            return str(int(parse_timestamp(match.group(2)).timestamp() * 1000))
        return ids[match.group(2)]

    return _REFERENCE.sub(value, sql)


def _comparable(value: Any) -> Any:
    value = json_value(value)
    return "null" if value is None else value


def _run(conn: Any, step: dict[str, Any], ids: dict[str, str]) -> None:
    where = ", ".join(step.get("seed", [])) or "set-up"
    if "at" in step:
        conn.clock = Clock(datetime.fromisoformat(step["at"]))
    sql = _text(step["sql"], ids)
    try:
        result = conn.sql(sql, dialect=step.get("dialect", "snowflake"))[-1]
    except RewindError as exc:
        assert exc.code == step.get("error"), f"{where}: {sql}\n-> {exc.code}: {exc}"
        assert step.get("message", "") in exc.message, f"{where}: {exc.message}"
        return
    assert "error" not in step, f"{where}: {sql} succeeded, expected {step['error']}"
    ids[step.get("name", "")] = result.query_id
    if "rows" in step:
        names = [c.upper() for c in result.columns]
        picked = [names.index(c.upper()) for c in step.get("select", result.columns)]
        rows = [[_comparable(row[i]) for i in picked] for row in result.rows]
        expected = step["rows"]
        if not re.search(r"^\s*SHOW|ORDER\s+BY", sql, re.IGNORECASE):
            rows, expected = sorted(rows, key=repr), sorted(expected, key=repr)
        assert rows == expected, f"{where}: {sql}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_the_documented_examples_run_as_documented(
    scenario: dict[str, Any], tmp_path: Path, spark: Any
) -> None:
    conn = rewind.connect(home=tmp_path / "home", now=scenario["steps"][0]["at"])
    ids: dict[str, str] = {}
    try:
        for step in scenario["steps"]:
            _run(conn, step, ids)
    finally:
        conn.close()


def test_the_readme_states_how_many_examples_run() -> None:
    """The README's count is the data file's: N of M examples run, the rest are the
    deliberate refusals it lists."""
    found = examples()
    refused = [step for _, step in found if "unsupported" in step]
    assert all(step.get("error") == "UNSUPPORTED" for step in refused)
    assert len(found) == 68  # every example of the five pages (the count)
    text = README.read_text()
    assert f"{len(found) - len(refused)} of {len(found)}" in text
    for step in {id(s): s for s in refused}.values():
        assert " ".join(step["sql"].split()[:2]).rstrip(";") in text, step["sql"]
