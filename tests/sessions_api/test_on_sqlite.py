"""The read and create tests run on SQLite too: the database of `scripts/demo`, the README's first command.

The suite runs on PostgreSQL, where the session's insert and read are prepared statements (core.hot_sql);
on SQLite the insert is a plain Django query and the read goes through the ORM (`hot_sql_applies`), with
SQLite's naive datetimes and 0/1 booleans. This runs test_read.py and test_create.py again, whole, in a
pytest of their own on SQLite; only the tests of PostgreSQL's query planner are skipped there.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from django.db import connection

REPO = Path(__file__).resolve().parents[2]
ON_BOTH_DATABASES = ["tests/sessions_api/test_read.py", "tests/sessions_api/test_create.py"]
EXPECTED_DATABASE = "AV_TEST_EXPECTED_DATABASE"


def test_the_read_and_create_tests_pass_on_sqlite(tmp_path):
    # A worker's own variables would be applied a second time by the child (tests/support/parallel.py).
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_XDIST_")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'ageverify.sqlite3'}", **{EXPECTED_DATABASE: "sqlite"})
    checked = "tests/sessions_api/test_on_sqlite.py::test_the_child_process_runs_on_the_database_it_was_given"
    command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-rs", *ON_BOTH_DATABASES, checked]
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)

    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    skipped = re.search(r"(\d+) skipped", summary)
    assert passed >= 50, summary
    assert skipped is None or int(skipped.group(1)) == 2, run.stdout[-3000:]  # the two planner tests


def test_the_child_process_runs_on_the_database_it_was_given(db):
    """Run by the test above in its child: fails there if the suite did not switch to SQLite after all."""
    expected = os.environ.get(EXPECTED_DATABASE, "postgresql")
    assert connection.vendor == expected
