"""A Rewind session: ``rewind.connect(home, user=..., now=...).sql(text)``.

Each statement runs in its own catalog transaction with an undo journal for storage,
so a failed statement leaves nothing behind (SPEC R28), and is logged with its query
id, user, status and error (SPEC R14, R36).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from rewind import spark_server
from rewind.catalog.db import make_engine, migrate
from rewind.catalog.grants import Grants
from rewind.catalog.models import RunAction, Statement
from rewind.catalog.repository import Catalog, table_locator
from rewind.clock import Clock
from rewind.config import Config
from rewind.errors import (
    AlreadyDone,
    CatalogError,
    ConcurrentWrite,
    ExecutionError,
    ObjectAlreadyExists,
    RewindError,
    SparkUnavailable,
    StorageError,
    TimeTravelUnavailable,
    UnknownUser,
)
from rewind.home import prepare_home, prepare_roots
from rewind.query_type import query_type
from rewind.result import Result
from rewind.security import refresh_role, require_lifecycle, session_role
from rewind.spark_errors import lost_jvm, spark_error
from rewind.sql.execute import execute, prepare
from rewind.sql.parse import flow_parts, parse, split
from rewind.sql.tables import naming_table
from rewind.statement import Analysis, Context, SessionState
from rewind.storage import objectstore
from rewind.storage.delta import TableStore
from rewind.storage.running import running

# A statement whose commit conflicts with another writer's runs again from the start
# (after delta-rs's own retries of the commit), at most this many times (SPEC R40).
COMMIT_ATTEMPTS = 3

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class RunKey:
    """One action of one Airflow run (a restore, a recovery, the validation of one): it
    commits at most once, whatever re-runs its task (catalog ``run_actions``)."""

    dag_id: str
    run_id: str
    action: str

    def __str__(self) -> str:
        return f"{self.action} of {self.dag_id}/{self.run_id}"


class Connection:
    """Statements run in order in one session; ``USE`` carries over."""

    def __init__(
        self,
        config: Config,
        start_server: Callable[[], AbstractContextManager[None]] | None = None,
    ) -> None:
        """``start_server``: start the home's Spark Connect server if none runs (the CLI),
        inside this while it starts (its spinner); None: use one only if it runs."""
        self.config = config
        self.start_server = start_server
        self._spark: SparkSession | None = None
        self._server: spark_server.Endpoint | None = None
        self._held: int | None = None  # spark_server.hold's lock, while a statement runs
        self.clock = Clock.from_text(config.now)
        prepare_home(config)  # SPEC R38: owner-only
        try:
            self.engine = make_engine(config.catalog_url)
            migrate(self.engine)
            with Session(self.engine) as session, session.begin():
                catalog = Catalog(session)
                catalog.bootstrap(self.clock.now())
                tokens = catalog.keep_roots(config.kept_roots)  # SPEC R4, R44, R48
                user = catalog.user(config.user)
                if user is None:
                    raise UnknownUser(f"User '{config.user}' does not exist.")
                role = session_role(Grants(session), user)  # SPEC R37: else PUBLIC
        except SQLAlchemyError as exc:
            raise CatalogError(
                f"Cannot open the catalog at {config.catalog_url}: {_first_line(exc)}"
            ) from None
        prepare_roots(config, tokens["warehouse"])
        self.store = TableStore(
            config.warehouse_root,
            table_locator(self.engine),
            home=config.home,
            system=config.system_root,
        )
        self.state = SessionState(user=config.user, role=role)

    def spark(self) -> SparkSession:
        """Where this session's Spark work runs, chosen at its first use: the Spark Connect
        server of ``REWIND_SPARK_REMOTE``, else the home's own server if it runs (or the
        CLI starts it), else a SparkSession in this process. A home server that stopped
        since is started again (CLI) or reported: never waited on."""
        if (
            self._held is None
            and not self.config.spark_remote
            and self.config.spark_server == "auto"
        ):
            self._held = spark_server.hold(self.config.home)  # until the statement ends
        if self._server is not None:
            current = spark_server.running(self.config.home)
            if current != self._server:
                self._release_spark()
                if current is None and self.start_server is None:
                    raise SparkUnavailable(
                        f"The Spark Connect server of {self.config.home} stopped; "
                        "run `rewind server start`."
                    )
                self._server = None  # the server that runs now, or a new one (CLI)
        if self._spark is None:
            self._spark = self._open_spark()
        return self._spark

    @contextlib.contextmanager
    def _server_held(self) -> Iterator[None]:
        """A statement: once it ends, the home's server may stop when idle (its first
        :meth:`spark` call holds the server)."""
        try:
            yield
        finally:
            self._let_go()

    def _let_go(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            spark_server.let_go(self.config.home, held)

    def _open_spark(self) -> SparkSession:
        from rewind.spark import get_spark, remote_spark

        config = self.config
        log = config.home / "logs" / "spark.log"
        if config.spark_remote:
            return remote_spark(config.spark_remote, log)
        if config.spark_server == "auto":
            endpoint = spark_server.running(config.home)
            if endpoint is None and self.start_server is not None:
                endpoint = spark_server.start(config.home, config.spark_master, self.start_server)
            if endpoint is not None:
                self._server = endpoint
                return remote_spark(endpoint.session_url, log, configure=False, shared=True)
        return get_spark(config.spark_master, log)

    def _release_spark(self) -> None:
        """End this session's Spark Connect client: its own session on a server the user
        names ends with it, the home server's shared one stays for the next call
        (spark_server.SHARED_SESSION_CONF); the in-process SparkSession stays for the
        process's next session."""
        spark, self._spark = self._spark, None
        if spark is not None and (self._server is not None or self.config.spark_remote):
            with contextlib.suppress(Exception):  # a server that is gone has nothing to free
                spark.stop()

    def sql(self, text: str, dialect: str = "snowflake") -> list[Result]:
        """Run ';'-separated statements; raises at the first failure."""
        return list(self.execute(text, dialect))

    def execute(self, text: str, dialect: str = "snowflake") -> Iterator[Result]:
        """Yield one result per statement as it completes."""
        self.state.dialect = dialect
        for statement in split(text, dialect):
            parts = flow_parts(statement, dialect)
            try:
                for part in parts[:-1]:  # Snowflake's flow operator: only the last is shown
                    self.state.flow.append(self.run(part, dialect))
                yield self.run(parts[-1], dialect)
            finally:
                self.state.flow = []

    def run(
        self, statement: str, dialect: str = "snowflake", *, once: RunKey | None = None
    ) -> Result:
        """Run one statement (SPEC R28: all or nothing). ``once``: the statement is that
        run's action, committed at most once (:meth:`done`); AlreadyDone otherwise."""
        return self._statement(
            statement, lambda ctx: execute(ctx, parse(statement, dialect).tree), once
        )

    def restore(
        self,
        table: str,
        *,
        at: str | None = None,
        before: str | None = None,
        once: RunKey | None = None,
    ) -> Result:
        """Restore ``table`` in place as of a point (``rewind restore``; see sql/restore.py).

        ``at`` / ``before``: an ISO timestamp, an offset in seconds (``-3600``) or a
        statement's query id. ``once``: as :meth:`run`.
        """
        from rewind.sql.restore import restore_table, restore_text

        text = restore_text(table, at=at, before=before)
        return self._statement(
            text, lambda ctx: restore_table(ctx, table, at=at, before=before), once
        )

    def done(self, key: RunKey) -> dict[str, Any] | None:
        """What ``key``'s action reported when it committed (None: it has not)."""
        with Session(self.engine) as session:
            row = session.get(RunAction, (key.dag_id, key.run_id, key.action))
            return None if row is None else dict(row.outcome)

    def record_done(self, key: RunKey, query_id: str, outcome: dict[str, Any]) -> None:
        """Record an action that ran no statement of its own (a validation) as done.

        Raises:
            AlreadyDone: it was recorded already.
        """
        with Session(self.engine) as session:
            _mark_done(session, key, self.config.user, (query_id, self.clock.now()), outcome)
            session.commit()

    def failsafe_list(self) -> Result:
        """Tables with data in fail-safe (ACCOUNTADMIN only, SPEC R12)."""
        from rewind.recovery import list_failsafe

        root = self.config.failsafe_root
        return self._statement("FAILSAFE LIST", lambda ctx: list_failsafe(ctx, root))

    def failsafe_recover(
        self,
        table_id: int,
        into: str,
        version: int | None = None,
        *,
        once: RunKey | None = None,
    ) -> Result:
        """Recover a table from fail-safe into a new table (ACCOUNTADMIN only, SPEC R12).
        ``once``: as :meth:`run`."""
        from rewind.recovery import recover

        text = f"FAILSAFE RECOVER {table_id} INTO {into}" + (
            f" VERSION {version}" if version is not None else ""
        )
        root = self.config.failsafe_root
        return self._statement(text, lambda ctx: recover(ctx, root, table_id, into, version), once)

    def authorize_lifecycle(self) -> Result:
        """Whether this session's user may run the lifecycle (ACCOUNTADMIN or
        REWIND_LIFECYCLE, SPEC R37), as a logged statement: the nightly DAG's first step."""

        def action(ctx: Context) -> Result:
            require_lifecycle(ctx.state.role)
            return ctx.status(f"{ctx.state.user} may run the lifecycle as {ctx.state.role}.")

        return self._statement("LIFECYCLE AUTHORIZE", action)

    def lifecycle(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """``rewind lifecycle run`` as this session's user: ACCOUNTADMIN or REWIND_LIFECYCLE
        (SPEC R37), logged as a statement. Returns each step's summary (SPEC R29)."""
        from rewind.runner import run_lifecycle

        steps: list[dict[str, Any]] = []

        def action(ctx: Context) -> Result:
            require_lifecycle(ctx.state.role)
            # The lifecycle commits through its own engine: end this read transaction
            # first, or SQLite refuses the statement log's write after it.
            ctx.catalog.session.commit()
            steps.extend(run_lifecycle(self.config, ctx.now, run_id, self.spark))
            return ctx.status(f"Lifecycle run {steps[0]['run_id']} done.")

        self._statement("LIFECYCLE RUN", action)
        return steps

    def _statement(
        self, text: str, action: Callable[[Context], Result], once: RunKey | None = None
    ) -> Result:
        """Run ``action`` as one statement: one catalog transaction, undo on failure,
        logged with its query id either way (SPEC R14, R28, R36). A conflict with
        another writer's commit is retried from the start (SPEC R40); one that another
        writer's commit overtook while it ran commits at a later time
        (``tables.check_clock``, R14, R15). ``once``: the
        action's record is written in the same transaction, so it commits at most once."""
        state_before = (self.state.database, self.state.schema, dict(self.state.variables))
        query_id, now = str(uuid.uuid4()), self.clock.now()
        try:
            return self._attempts(text, action, once, query_id, now, state_before)
        finally:
            self.state.query_ids.append(query_id)  # LAST_QUERY_ID(): failed ones too

    def _attempts(
        self,
        text: str,
        action: Callable[[Context], Result],
        once: RunKey | None,
        query_id: str,
        now: datetime,
        state_before: tuple[str | None, str | None, dict[str, Any]],
    ) -> Result:
        for attempt in range(1, COMMIT_ATTEMPTS + 1):
            with (
                Session(self.engine) as session,
                running(self.store.home, query_id),
                self._server_held(),
            ):
                ctx = self._context(session, query_id, now, text)
                try:
                    refresh_role(ctx)  # a role revoked since USE ROLE is gone (SPEC R37)
                    ctx.catalog.expire(now)  # tables past their expiration are dropped
                    result = action(ctx)
                    if once is not None:
                        done = (ctx.query_id, self.clock.now())
                        _mark_done(session, once, self.config.user, done, result.outcome())
                    self._log(session, ctx, now, "SUCCESS", None)
                    session.commit()
                    return result
                except BaseException as exc:
                    # Named before the rollback, which forgets a table being created (R39).
                    error = naming_table(ctx, as_rewind_error(exc, self.state.dialect))
                    if isinstance(error, SparkUnavailable) and self._server is not None:
                        spark_server.retire(self.config.home, self._server)
                    session.rollback()
                    for undo in reversed(ctx.undo):
                        undo()
                    self.state.database, self.state.schema = state_before[:2]
                    self.state.variables = dict(state_before[2])  # a failed SET sets none
                    if attempt < COMMIT_ATTEMPTS and isinstance(error, ConcurrentWrite):
                        continue
                    # A catalog that is locked or read-only refuses the log too: the error
                    # the user gets is still the statement's own (SPEC R39).
                    with contextlib.suppress(SQLAlchemyError), Session(self.engine) as log_session:
                        self._log(log_session, ctx, now, "FAILED", error)
                        log_session.commit()
                    if error is exc or not isinstance(exc, Exception):
                        raise
                    raise error from exc
        raise AssertionError("unreachable")

    def analyse(self, statement: str, dialect: str = "snowflake") -> Analysis:
        """What ``statement`` would read, write, create, drop and alter if it ran now (its
        analysis, from which it is authorized and audited), without running it or
        checking privileges; nothing is logged or changed (the tables past their
        expiration are dropped as the statement would find them, then rolled back)."""
        with Session(self.engine) as session:
            ctx = self._context(session, str(uuid.uuid4()), self.clock.now(), statement)
            ctx.catalog.expire(ctx.now)
            return prepare(ctx, parse(statement, dialect).tree)[1]

    def _context(self, session: Session, query_id: str, now: datetime, text: str) -> Context:
        return Context(
            query_id=query_id,
            text=text,
            now=now,
            catalog=Catalog(session),
            store=self.store,
            state=self.state,
            spark_provider=self.spark,
            own_roots=(
                self.config.home,
                self.config.warehouse_root,
                self.config.system_root,
                self.config.failsafe_root,
            ),
            clock=self.clock,
        )

    def _log(
        self,
        session: Session,
        ctx: Context,
        started: datetime,
        status: str,
        error: RewindError | None,
    ) -> None:
        session.add(
            _statement_row(
                self.config,
                ctx.query_id,
                ctx.text,
                (self.state.role, self.state.dialect),
                (started, self.clock.now()),
                status,
                error,
            )
        )

    def close(self) -> None:
        self._let_go()
        self._release_spark()
        self.engine.dispose()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _mark_done(
    session: Session,
    key: RunKey,
    user: str,
    done: tuple[str, datetime],
    outcome: dict[str, Any],
) -> None:
    """Add ``key``'s record to ``session``'s transaction; AlreadyDone if it exists (the
    primary key decides between two tries that raced)."""
    query_id, at = done
    row = RunAction(
        dag_id=key.dag_id,
        run_id=key.run_id,
        action=key.action,
        query_id=query_id,
        user_name=user,
        done_at=at,
        outcome=outcome,
    )
    session.add(row)
    try:
        session.flush()
    except IntegrityError:  # the caller rolls the whole transaction back
        raise AlreadyDone(f"The {key} committed already; it is not repeated.") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def as_rewind_error(exc: BaseException, dialect: str = "snowflake") -> RewindError:
    """Map any failure to a RewindError with a stable code and one line (SPEC R39)."""
    if isinstance(exc, TimeTravelUnavailable) and dialect == "bigquery":
        from rewind.sql.bigquery import reword

        return reword(exc)
    if isinstance(exc, RewindError):
        return exc
    if isinstance(exc, IntegrityError):
        return ObjectAlreadyExists(f"Object already exists ({_first_line(exc.orig or exc)}).")
    if isinstance(exc, OperationalError):
        return CatalogError(f"Catalog unavailable: {_first_line(exc.orig or exc)}")
    if isinstance(exc, SQLAlchemyError):
        return CatalogError(_first_line(exc))
    lost = lost_jvm(exc)
    if lost is not None:
        return lost
    if isinstance(exc, OSError):
        return StorageError(f"{exc.strerror or _first_line(exc)}: {exc.filename or ''}".strip(": "))
    failure = spark_error(exc)
    if failure is not None:
        return failure
    if isinstance(exc, KeyboardInterrupt):
        return ExecutionError("Statement interrupted.", code="INTERRUPTED")
    return RewindError(f"{type(exc).__name__}: {_first_line(exc)}")


def _statement_row(
    config: Config,
    query_id: str,
    text: str,
    role_and_dialect: tuple[str, str],
    times: tuple[datetime, datetime],
    status: str,
    error: RewindError | None,
) -> Statement:
    role, dialect = role_and_dialect
    return Statement(
        query_id=query_id,
        text=objectstore.redact_text(text),  # SPEC R45
        user_name=config.user,
        role_name=role,
        start_time=times[0],
        end_time=times[1],
        status=status,
        error_code=error.code if error else None,
        error_message=error.message if error else None,
        query_type=query_type(text, dialect),  # SPEC R36
        query_tag=config.query_tag,
    )


def record_refusal(config: Config, text: str, error: RewindError) -> str:
    """Log a request refused before a session could open for it — an Airflow user no
    Rewind user answers to, or a mapped user that does not exist — as a FAILED statement
    of ``config.user`` with no role, so QUERY_HISTORY shows the request, the refusal and
    (in ``config.query_tag``) who asked (SPEC R36, R37). Returns its query id."""
    prepare_home(config)
    engine = make_engine(config.catalog_url)
    try:
        migrate(engine)
        query_id, now = str(uuid.uuid4()), Clock.from_text(config.now).now()
        with Session(engine) as session, session.begin():
            Catalog(session).bootstrap(now)
            row = _statement_row(
                config, query_id, text, ("", "snowflake"), (now, now), "FAILED", error
            )
            session.add(row)
    finally:
        engine.dispose()
    return query_id


def connect(
    home: str | os.PathLike[str] | None = None,
    user: str | None = None,
    now: str | datetime | None = None,
    query_tag: str | None = None,
) -> Connection:
    """Open a session on the Rewind home (created on first use). Its Spark work runs on
    the home's Spark Connect server if one runs (``rewind server start``), on
    ``REWIND_SPARK_REMOTE``'s if set, else in this process (:meth:`Connection.spark`)."""
    now_text = now.isoformat() if isinstance(now, datetime) else now
    return Connection(Config.load(home=home, user=user, now=now_text, query_tag=query_tag))
