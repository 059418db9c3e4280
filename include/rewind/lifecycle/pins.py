"""Pins (SPEC R19): a time-travel read holds the version it reads until it ends.

A pin is committed in its own transaction, so a lifecycle run in another process sees
it while the read runs; it expires on its own if the reader dies.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine, delete
from sqlalchemy.orm import Session

from rewind.catalog.models import Pin

PIN_MINUTES = 60


def hold(engine: Engine, table_id: int, version: int, query_id: str, now: datetime) -> int:
    """Pin ``version`` of a table until ``now + PIN_MINUTES``; returns the pin id."""
    with Session(engine) as session, session.begin():
        pin = Pin(
            table_id=table_id,
            version=version,
            query_id=query_id,
            expires_at=now + timedelta(minutes=PIN_MINUTES),
        )
        session.add(pin)
        session.flush()
        return pin.id


def release(engine: Engine, pin_ids: list[int]) -> None:
    if not pin_ids:
        return
    with Session(engine) as session, session.begin():
        session.execute(delete(Pin).where(Pin.id.in_(pin_ids)))
