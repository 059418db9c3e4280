"""Where every benchmark writes its JSON: benchmarks/results/<name>.json (and stdout)."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def write_report(name: str, report: dict[str, Any]) -> None:
    document = {
        "benchmark": name,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        **report,
    }
    RESULTS.mkdir(exist_ok=True)
    text = json.dumps(document, indent=2) + "\n"
    (RESULTS / f"{name}.json").write_text(text)
    print(text, end="")
