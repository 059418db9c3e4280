"""SPEC R38: no code path reads the fail-safe store except the ACCOUNTADMIN recovery.

A scan of everything that ships (the library, the Airflow DAGs and plugin, the Spark
jobs): only the lifecycle modules that move files in and out, the recovery module and
DAG, and the wiring that hands them the configured root may name a path into the store
(figures such as FAILSAFE_BYTES are no path), and no module sweeps the whole Rewind
home, which would walk into the store when it sits there (the default). The scan reads
the syntax tree, so neither comments nor docstrings count, and the root's names are
caught however they are spelled (``failsafe_root``, ``REWIND_FAILSAFE_URI``).
tests/spark/test_failsafe_reads.py tries every user-facing way to read the store.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ("include/rewind", "plugins", "dags", "spark_jobs")
# A path into the store: its directory name (Config's default) as a path part, or the
# names of its root in code and in the environment (any case).
STORE_PART = re.compile(r"(^|/)failsafe($|/)")
STORE_NAME = re.compile(r"fail[-_]?safe_(root|path|uri|dir|store|folder)\b", re.IGNORECASE)
# Recursive listings, which would walk into the store when given the home.
SWEEPS = {"rglob", "walk", "copytree", "make_archive", "fwalk"}
ALLOWED = {
    "include/rewind/cli.py": "the `failsafe` command group (recovery)",
    "include/rewind/config.py": "reads REWIND_FAILSAFE_URI",
    "include/rewind/connection.py": "hands the root to recovery only",
    "include/rewind/lifecycle/context.py": "the moving steps' paths",
    "include/rewind/lifecycle/purge.py": "deletes data (never reads it)",
    "dags/rewind_failsafe_recovery.py": "the ACCOUNTADMIN recovery DAG",
    "include/rewind/plugin_api.py": "the URL /api/v1/failsafe (data: the catalog's manifest)",
    "include/rewind/demo.py": "make run-s3 sets REWIND_FAILSAFE_URI on its own S3 server",
}


def shipped_modules() -> Iterator[tuple[str, ast.Module]]:
    for folder in SHIPPED:
        for path in sorted((REPO / folder).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(), str(path))


def names_the_store(tree: ast.AST) -> list[str]:
    """Identifiers and string constants (not docstrings) that name a path into the store."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if id(node) not in docstrings and (STORE_PART.search(text) or STORE_NAME.search(text)):
                found.append(repr(text))
        elif isinstance(node, ast.Name | ast.Attribute | ast.arg | ast.keyword):
            name = getattr(node, "id", None) or getattr(node, "attr", None) or node.arg
            if name and STORE_NAME.search(name):
                found.append(name)
    return found


def sweeps_the_home(tree: ast.AST) -> list[str]:
    """Recursive listings whose target mentions the home (``home.rglob("*")``)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        globbing = name in ("glob", "iglob") and "**" in ast.unparse(node)
        if name not in SWEEPS and not globbing:
            continue
        target = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
        target += " ".join(ast.unparse(arg) for arg in node.args[:1])
        if "home" in target.lower():
            found.append(ast.unparse(node))
    return found


def test_only_known_modules_name_the_failsafe_store() -> None:
    naming = {module for module, tree in shipped_modules() if names_the_store(tree)}
    assert naming == set(ALLOWED), {
        "unexpected": sorted(naming - set(ALLOWED)),
        "allowed but silent (shorten ALLOWED)": sorted(set(ALLOWED) - naming),
    }


def test_no_module_sweeps_the_whole_home() -> None:
    sweeping = {
        module: calls for module, tree in shipped_modules() if (calls := sweeps_the_home(tree))
    }
    assert sweeping == {}


def test_the_sql_and_storage_paths_never_name_it() -> None:
    """Queries, clones, restores and DML cannot reach fail-safe files (R38); recovery
    gets the root handed in by the connection, for ACCOUNTADMIN only."""
    for folder in ("sql", "storage"):
        for path in (REPO / "include/rewind" / folder).rglob("*.py"):
            assert not re.search(r"fail[-_ ]?safe", path.read_text(), re.IGNORECASE), path


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ('root = home / "failsafe"', True),
        ('root = Path(f"{home}/failsafe/{table_id}")', True),
        ("root = config.failsafe_root", True),
        ('uri = env["REWIND_FAILSAFE_URI"]', True),
        ("run(failsafe_path=target)", True),
        ('column = "FAILSAFE_BYTES"', False),
        ('state = "FAILSAFE"', False),
        ('"""Moves files into the failsafe/ store."""', False),
    ],
)
def test_the_scan_catches_paths_and_ignores_figures(source: str, caught: bool) -> None:
    """The scan itself: what counts as naming the store, and what does not."""
    assert bool(names_the_store(ast.parse(source))) is caught


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ('files = list(config.home.rglob("*"))', True),
        ("for folder, dirs, files in os.walk(home): pass", True),
        ('paths = glob.glob(f"{home}/**", recursive=True)', True),
        ("shutil.copytree(self.home, backup)", True),
        ("for folder, dirs, files in os.walk(table_root): pass", False),
        ('files = sorted(warehouse.glob("*.parquet"))', False),
    ],
)
def test_the_scan_catches_sweeps_of_the_home(source: str, caught: bool) -> None:
    assert bool(sweeps_the_home(ast.parse(source))) is caught
