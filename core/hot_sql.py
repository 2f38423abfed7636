"""The hot queries (the API's, a webhook attempt's claim and record) as prepared statements, each in a single
PostgreSQL round trip.

Django's cursors bind parameters on the client, so PostgreSQL parses and plans every query again: for
the session read (a primary-key read with three left joins) planning cost several times the read
itself, and the ORM compiles an INSERT anew for every save. A query made here runs as a named
prepared statement of the connection (psycopg's server-side binding), planned once per connection
(`DATABASE_CONN_MAX_AGE`), through one psycopg cursor kept per connection.

A reused connection is normally checked with a `SELECT 1` before its first query of a request
(`CONN_HEALTH_CHECKS`). A query made here is its own check: if the connection turns out to be dead
(PostgreSQL restarted, or dropped it while idle) the query is made once more on a new connection, so
a restart still costs no request:
- a read writes nothing, so reading twice is harmless; a statement that writes is made here only if
  running it twice is harmless too (its caller says why);
- an insert outside a transaction carries its own new primary key: if the first attempt did commit
  before the connection broke, the second one meets that key (a unique violation) and the row is
  there, so the insert counts as done. Inside a transaction nothing is retried.
Elsewhere (SQLite in the demo) the insert is an ordinary Django query, and the reads' callers use
the ORM instead (`hot_sql_applies`): SQLite's driver gives naive datetimes and 0/1 for booleans.
"""

import time

from django.db import DEFAULT_DB_ALIAS, IntegrityError, InterfaceError, OperationalError, connections
from django.db.models import JSONField


def hot_sql_applies() -> bool:
    """Whether the default database is PostgreSQL, whose rows the hot reads' callers expect."""
    return connections[DEFAULT_DB_ALIAS].vendor == "postgresql"


def fetch_one(sql: str, params: list):
    """The first row of `sql` with `%s` placeholders, or None; PostgreSQL only (`hot_sql_applies`).

    `sql` reads, or writes in a way that is harmless to repeat: a reused connection found dead runs it again.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    return _with_folded_check(connection, lambda: _execute_prepared(connection, sql, params, fetch=True))


def insert_row(model, values: dict, *, wait_for_disk: bool = True) -> None:
    """INSERT one row of `model` from {field attname: Python value}, every concrete field given, its pk new.

    wait_for_disk=False: on PostgreSQL, outside a caller's transaction, the insert's own transaction
    commits without waiting for the WAL flush (`synchronous_commit = off` for that transaction only,
    set inside the statement): still atomic and at once visible to every reader, but a crash of
    PostgreSQL or of its machine within about 0.6 s (three `wal_writer_delay`) may undo it. Inside a
    caller's transaction the setting is left alone, or it would cover the caller's other writes too.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    sql, sql_without_commit_wait, fields, prepared = _insert_statement(model)
    if not hot_sql_applies():
        params = [field.get_db_prep_save(values[field.attname], connection) for field in fields]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
        return
    # As the ORM would send them: only JSON needs adapting; the others go to psycopg as they are.
    params = [
        field.get_db_prep_save(values[field.attname], connection) if needs_prep else values[field.attname]
        for field, needs_prep in prepared
    ]
    if connection.in_atomic_block:
        connection.close_if_health_check_failed()
        _execute_prepared(connection, sql, params, fetch=False)
        return
    if not wait_for_disk:
        sql = sql_without_commit_wait
    attempts = []

    def insert():
        attempts.append(True)
        try:
            _execute_prepared(connection, sql, params, fetch=False)
        except IntegrityError as error:
            if len(attempts) == 1 or not _is_primary_key_violation(error, model):
                raise
            # The first attempt committed before its connection broke: the new primary key is already there.

    _with_folded_check(connection, insert)


def _with_folded_check(connection, query):
    folded = (
        connection.connection is not None
        and connection.health_check_enabled
        and not connection.health_check_done
        and not connection.in_atomic_block
    )
    if not folded:
        connection.close_if_health_check_failed()  # as Django's cursors do (nothing if checked or not enabled)
        return query()
    connection.health_check_done = True  # the query is the check
    try:
        return query()
    except (OperationalError, InterfaceError):
        connection.close()  # the reused connection had died: once more on a new one
        return query()


def _is_primary_key_violation(error: IntegrityError, model) -> bool:
    diag = getattr(error.__cause__, "diag", None)
    return (
        getattr(error.__cause__, "sqlstate", None) == "23505"
        and diag is not None
        and (diag.constraint_name == f"{model._meta.db_table}_pkey")
    )


_insert_statements: dict = {}


def _insert_statement(model):
    statement = _insert_statements.get(model)
    if statement is None:
        fields = model._meta.concrete_fields
        columns = ", ".join(f'"{field.column}"' for field in fields)
        sql = f'INSERT INTO "{model._meta.db_table}" ({columns}) VALUES ({", ".join(["%s"] * len(fields))})'
        prepared = [(field, isinstance(field, JSONField)) for field in fields]
        # Made once, like the statement: the insert is its own transaction (autocommit), and `true` makes
        # the setting last only that long.
        without_commit_wait = f"{sql} RETURNING set_config('synchronous_commit', 'off', true)"
        statement = _insert_statements[model] = (sql, without_commit_wait, fields, prepared)
    return statement


def _execute_prepared(connection, sql: str, params: list, *, fetch: bool):
    connection.ensure_connection()  # connects if needed, a failure raised as Django's OperationalError
    raw = connection.connection
    # One psycopg cursor per connection, kept: it binds on the server, so its queries can be prepared.
    cursor = getattr(connection, "_hot_sql_cursor", None)
    if cursor is None or cursor.connection is not raw:
        import psycopg

        cursor = connection._hot_sql_cursor = psycopg.Cursor(raw)
    started = time.monotonic()
    with connection.wrap_database_errors:
        cursor.execute(sql, params, prepare=True, binary=True)  # binary timestamps load faster
        row = cursor.fetchone() if fetch else None
    if connection.queries_logged:  # counted like any query (DEBUG, tests, the benchmark's SQL/req)
        connection.queries_log.append(
            {"sql": sql % tuple(repr(param) for param in params), "time": f"{time.monotonic() - started:.3f}"}
        )
    return row
