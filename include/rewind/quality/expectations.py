"""Great Expectations suites defined in code, run on pandas DataFrames (SPEC R29 step 6).

Each :class:`Check` is one expectation in the domain's words. The checks run in an
ephemeral GX context (nothing written to disk, no analytics, no progress bars); the
outcome is a JSON-serialisable summary, and any failed expectation becomes one
:class:`~rewind.errors.ValidationFailed` whose one-line message names what failed and
the objects it failed on (SPEC R39).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rewind.errors import ValidationFailed

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.core import ExpectationValidationResult
    from great_expectations.data_context import AbstractDataContext

OBJECT = "OBJECT"  # every frame names its rows' object in this column, for the messages
SHOWN = 5  # offending objects named in a message; the summary lists up to EXAMPLES
EXAMPLES = 20
RESULT_FORMAT = {
    "result_format": "SUMMARY",
    "partial_unexpected_count": EXAMPLES,
    "unexpected_index_column_names": [OBJECT],
}


@dataclass(frozen=True)
class Check:
    """One expectation on one frame.

    Attributes:
        title: what must hold, in the domain's words (also the GX description).
        rule: the SPEC rules it checks.
        frame: the name of the frame it reads.
        expectation: a class of ``great_expectations.expectations``.
        kwargs: the expectation's arguments.
        failing: how a failure reads; ``{rows}`` are the offending objects,
            ``{observed}`` the observed value, other fields come from ``kwargs``.
        show_value: name each offending object with its value of the column.
    """

    title: str
    rule: str
    frame: str
    expectation: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    failing: str = "{rows}"
    show_value: bool = True


def gx_context() -> AbstractDataContext:
    """An ephemeral GX context: in memory, no analytics events, no progress bars."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False),
        store_backend_defaults=InMemoryStoreBackendDefaults(),
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def evaluate(checks: list[Check], frames: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """Run ``checks`` on ``frames`` (one GX suite and batch per frame).

    Returns:
        ``{"expectations", "passed", "failed", "results"}``, each result with the
        expectation, its rules, success and the observed values.
    """
    import great_expectations as gx

    source = gx_context().data_sources.add_pandas("rewind")
    found: dict[str, ExpectationValidationResult] = {}
    for name, frame in frames.items():
        suite = gx.ExpectationSuite(
            name=name,
            expectations=[
                getattr(gx.expectations, c.expectation)(description=c.title, **c.kwargs)
                for c in checks
                if c.frame == name
            ],
        )
        # The frame's batch without a named batch definition: each definition added
        # re-serialises the context's whole configuration (a quarter of this step's time).
        batch = source.read_dataframe(frame, asset_name=name)
        result = batch.validate(suite, result_format=RESULT_FORMAT)
        for outcome in result.results:
            assert outcome.expectation_config is not None  # GX fills it in every result
            found[str(outcome.expectation_config.description)] = outcome
    results = [_outcome(check, found[check.title]) for check in checks]
    passed = sum(r["success"] for r in results)
    return {
        "expectations": len(results),
        "passed": passed,
        "failed": len(results) - passed,
        "results": results,
    }


def require(summary: dict[str, Any]) -> dict[str, Any]:
    """Return ``summary`` if every expectation passed.

    Raises:
        ValidationFailed: "2 of 10 expectations failed: <title> (<detail>); ...".
    """
    failed = [r for r in summary["results"] if not r["success"]]
    if not failed:
        return summary
    details = "; ".join(f"{r['expectation']} ({r['detail']})" for r in failed)
    raise ValidationFailed(
        f"{len(failed)} of {summary['expectations']} expectations failed: {details}",
        tuple(r["expectation"] for r in failed),
    )


def _outcome(check: Check, result: ExpectationValidationResult) -> dict[str, Any]:
    outcome: dict[str, Any] = {
        "expectation": check.title,
        "rule": check.rule,
        "success": bool(result.success),
    }
    found = result.result or {}
    if result.exception_info and result.exception_info.get("raised_exception"):
        outcome["observed"] = {"error": result.exception_info.get("exception_message")}
        outcome["detail"] = f"error: {outcome['observed']['error']}"
        return outcome
    if "observed_value" in found:
        outcome["observed"] = {"value": _plain(found["observed_value"])}
    else:
        rows = [_row(check, entry) for entry in found.get("partial_unexpected_index_list", [])]
        outcome["observed"] = {
            "rows": int(found.get("element_count", 0)),
            "unexpected": int(found.get("unexpected_count", 0)),
            "examples": rows,
        }
    if not outcome["success"]:
        outcome["detail"] = _detail(check, outcome["observed"])
    return outcome


def _detail(check: Check, observed: dict[str, Any]) -> str:
    examples = observed.get("examples", [])
    rows = ", ".join(examples[:SHOWN])
    more = observed.get("unexpected", 0) - min(len(examples), SHOWN)
    if more > 0:
        rows += f" and {more} more"
    return check.failing.format(rows=rows, observed=observed.get("value"), **check.kwargs)


def _row(check: Check, entry: dict[str, Any]) -> str:
    """``{OBJECT: label, <column>: value}`` -> "label" or "label = value"."""
    label = str(entry.get(OBJECT))
    values = [_plain(v) for k, v in entry.items() if k != OBJECT]
    return f"{label} = {values[0]}" if check.show_value and values else label


def _plain(value: Any) -> Any:
    """numpy scalars -> Python (JSON), floats rounded for people."""
    value = value.item() if hasattr(value, "item") else value
    return round(value, 3) if isinstance(value, float) else value
