"""No import cycles between Rewind's packages and top-level modules.

Every ``import rewind...`` counts, also one inside a function (a deferred import is
still a dependency) or under ``if TYPE_CHECKING:`` (a reader follows it all the same),
as ``../shared/tools/import_cycles.py`` counts them.

The layers this keeps, bottom up: the leaves (errors, constants, clock, retention,
...), ``catalog``, ``storage``, ``statement`` (a statement's context), ``security``,
``audit`` (its data model), ``lifecycle`` (steps 1–5), ``quality`` (step 6), ``sql``
(the statements, their authorization and audit rows), then ``runner``, ``recovery``,
``connection``, ``operations`` and the front ends.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[2] / "include" / "rewind"


def unit(module: str) -> str:
    """``rewind.sql.ddl`` -> ``sql``; ``rewind.runner`` -> ``runner``; ``rewind`` -> ``rewind``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rewind"


def imported(tree: ast.Module) -> Iterator[str]:
    """The rewind modules a file imports, wherever the import sits."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "rewind":
                yield from (f"rewind.{alias.name}" for alias in node.names)
            elif node.module.startswith("rewind."):
                yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "rewind")


def dependencies() -> dict[str, dict[str, str]]:
    """unit -> {unit it imports: one file that does}."""
    graph: dict[str, dict[str, str]] = {}
    for file in sorted(PACKAGE.rglob("*.py")):
        parts = file.relative_to(PACKAGE.parent).with_suffix("").parts
        source = unit(".".join(p for p in parts if p != "__init__"))
        for module in imported(ast.parse(file.read_text())):
            target = unit(module)
            if target != source:
                graph.setdefault(source, {}).setdefault(target, str(file.relative_to(PACKAGE)))
    return graph


def cycle(graph: dict[str, dict[str, str]]) -> list[str] | None:
    """One cycle of ``graph`` as the files that close it, or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            loop = [*path[path.index(node) :], node]
            return [f"{a} -> {b} ({graph[a][b]})" for a, b in itertools.pairwise(loop)]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph.get(node, {})):
            found = visit(target)
            if found:
                return found
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start)
        if found:
            return found
    return None


def test_the_walk_sees_the_imports_it_must() -> None:
    """The walk is not vacuous: known edges (module level and deferred) are found."""
    graph = dependencies()
    assert "storage" in graph["sql"]  # module level
    assert "quality" in graph["runner"]
    assert "runner" in graph["connection"]  # deferred, inside a method
    assert cycle({"a": {"b": "a.py"}, "b": {"a": "b.py"}}) == ["a -> b (a.py)", "b -> a (b.py)"]


def test_no_import_cycle_between_packages() -> None:
    assert cycle(dependencies()) is None
