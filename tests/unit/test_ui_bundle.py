"""The committed bundles of the Rewind views are what ``ui/`` builds (issue 29): a pip or
Docker install serves ``include/rewind/ui_static/`` without Node, so a change to the
sources must come with its build. Needs ``npm`` (Node.js 20+) and ``ui/node_modules``
(``make ui``): without them the test fails, naming what to install; it never skips."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
UI = REPO / "ui"
COMMITTED = REPO / "include" / "rewind" / "ui_static"


def test_the_committed_bundles_are_what_the_sources_build(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.fail(
            "npm not found: install Node.js 20+ and npm (Debian: apt-get install nodejs npm; "
            "or https://nodejs.org), then `make ui`"
        )
    if not (UI / "node_modules" / "vite").is_dir():
        pytest.fail("ui/node_modules missing: `make ui` installs them (npm ci)")
    proc = subprocess.run(
        ["npm", "run", "build"],
        cwd=UI,
        env={**os.environ, "REWIND_UI_OUT": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    built = {p.name: p.read_bytes() for p in tmp_path.glob("*.js")}
    committed = {p.name: p.read_bytes() for p in COMMITTED.glob("*.js")}
    assert (
        sorted(built) == sorted(committed) == ["rewind-card.js", "rewind-page.js", "rewind-run.js"]
    )
    stale = [name for name in built if built[name] != committed[name]]
    assert not stale, f"rebuild and commit {stale}: `make ui`"
