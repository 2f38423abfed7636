"""Simulated outages for fault tests: this process is pointed at a closed port; the machine's services stay up."""
import contextlib

from django.db import connection

CLOSED_PORT = "1"


@contextlib.contextmanager
def database_unreachable():
    """The default connection fails like a database that went away, then is restored."""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=CLOSED_PORT)
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@contextlib.contextmanager
def broker_unreachable():
    """The Celery app publishes to a closed port, as during a Redis outage."""
    from ageverify.celery import app

    real_url = app.conf.broker_url

    def use(url):
        app.conf.broker_url = url
        app._pool = None  # the connection pool and producer pool are rebuilt from broker_url on next use
        app.amqp._producer_pool = None

    use(f"redis://127.0.0.1:{CLOSED_PORT}/0")
    try:
        yield
    finally:
        use(real_url)
