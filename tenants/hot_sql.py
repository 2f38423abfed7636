"""The API's hot queries as prepared statements: one-row reads in a single round trip, one-row inserts.

Django's cursors bind parameters on the client, so PostgreSQL parses and plans every query again: for
the session read (a primary-key read with three left joins) planning cost several times the read
itself. A read made here runs as a named prepared statement of the connection (psycopg's server-side
binding), planned once per connection (`DATABASE_CONN_MAX_AGE`).

A reused connection is normally checked with a `SELECT 1` before its first query of a request
(`CONN_HEALTH_CHECKS`). A read made here is its own check: if the connection turns out to be dead
(PostgreSQL restarted while it was idle) the read is made once more on a new connection, which is
safe because it writes nothing. So a request that only reads costs one round trip, and a restart
still costs no request. Elsewhere (SQLite in the demo) the read is an ordinary Django query.

`insert_row` writes one row the same way, in the current transaction (autocommit: its own); it keeps
Django's connection check, since a write is not made twice.
"""
import time

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections


def fetch_one(sql: str, params: list):
    """The first row of a read-only `sql` with `%s` placeholders, or None."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()
    folded = (connection.connection is not None and connection.health_check_enabled
              and not connection.health_check_done and not connection.in_atomic_block)
    if folded:
        connection.health_check_done = True  # this read is the check
    else:
        connection.close_if_health_check_failed()  # as Django's cursors do (nothing if checked or not enabled)
    try:
        return _fetch_prepared(connection, sql, params)
    except (OperationalError, InterfaceError):
        if not folded:
            raise
        connection.close()  # the reused connection had died: read once more on a new one
        return _fetch_prepared(connection, sql, params)


def insert_row(model, values: dict) -> None:
    """INSERT one row of `model` from {concrete field name: Python value}, every field given."""
    connection = connections[DEFAULT_DB_ALIAS]
    fields = model._meta.concrete_fields
    params = [field.get_db_prep_save(values[field.attname], connection) for field in fields]
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_insert_sql(model, "%s"), params)
        return
    connection.close_if_health_check_failed()
    _execute_prepared(connection, _insert_sql(model, "%s"), params, fetch=False)


_insert_sql_cache: dict = {}


def _insert_sql(model, placeholder: str) -> str:
    key = (model, placeholder)
    if key not in _insert_sql_cache:
        fields = model._meta.concrete_fields
        columns = ", ".join(f'"{field.column}"' for field in fields)
        _insert_sql_cache[key] = (f'INSERT INTO "{model._meta.db_table}" ({columns}) '
                                  f'VALUES ({", ".join([placeholder] * len(fields))})')
    return _insert_sql_cache[key]


def _fetch_prepared(connection, sql: str, params: list):
    return _execute_prepared(connection, sql, params, fetch=True)


def _execute_prepared(connection, sql: str, params: list, *, fetch: bool):
    if connection.connection is None:
        connection.connect()
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
        connection.queries_log.append({"sql": sql % tuple(repr(param) for param in params),
                                       "time": f"{time.monotonic() - started:.3f}"})
    return row
