"""The test database as a URL, for the processes a test starts (a worker, gunicorn) to use the same one."""

from django.db import connection


def current_database_url() -> str:
    """The URL of the database this test process uses (pytest-django's test database)."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
