"""Fixtures of the CLI tests (helpers live in cli_helpers.py)."""

from cli_helpers import fails, sql

__all__ = ["fails", "sql"]
