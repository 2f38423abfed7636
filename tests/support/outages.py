"""Simulated outages for fault tests: this process is pointed at a closed port; the machine's services stay up."""

import contextlib

from django.db import connection

CLOSED_PORT = "1"


@contextlib.contextmanager
def database_at(**where):
    """The default connection goes to another server (HOST, PORT, NAME...) until the block ends."""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(where)
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def database_unreachable():
    """The default connection fails like a database that went away, then is restored."""
    return database_at(HOST="127.0.0.1", PORT=CLOSED_PORT)


@contextlib.contextmanager
def broker_at(url: str):
    """The Celery app of this process publishes to `url` (a closed port, a private redis-server), then is restored."""
    from ageverify.celery import app

    real_url = app.conf.broker_url

    def use(broker_url):
        app.conf.broker_url = broker_url
        app._pool = None  # the connection pool and producer pool are rebuilt from broker_url on next use
        app.amqp._producer_pool = None

    use(url)
    try:
        yield
    finally:
        use(real_url)


def broker_unreachable():
    """The Celery app publishes to a closed port, as during a Redis outage."""
    return broker_at(f"redis://127.0.0.1:{CLOSED_PORT}/0")
