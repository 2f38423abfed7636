"""The systemd units in deploy/: every process docs/operations.md names, restarted by systemd, on the queues the code
uses."""

import configparser
import os
import shlex
from pathlib import Path

from django.conf import settings

from bench.api import production_workers

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
OPERATIONS_PAGE = DEPLOY.parent / "docs" / "operations.md"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(DEPLOY / name)
    return parser


def exec_start(name: str) -> list[str]:
    return shlex.split(unit(name)["Service"]["ExecStart"])


def test_web_two_workers_and_beat_each_have_a_unit_restarted_by_systemd_and_in_the_target():
    names = [
        "ageverify-web.service",
        "ageverify-worker-analysis.service",
        "ageverify-worker-webhooks.service",
        "ageverify-beat.service",
    ]
    wanted = unit("ageverify.target")["Unit"]["Wants"].split()

    assert sorted(wanted) == sorted(names)
    for name in names:
        service = unit(name)
        assert service["Service"]["Restart"] == "always", name
        assert service["Service"]["EnvironmentFile"] == "/etc/ageverify/env", name
        assert "StartLimitBurst" in service["Unit"], name  # a [Unit] option: systemd ignores it under [Service]


def test_there_is_one_worker_unit_per_queue_the_tasks_are_routed_to():
    queues = {}
    for name in ["ageverify-worker-analysis.service", "ageverify-worker-webhooks.service"]:
        command = exec_start(name)
        assert command[1:5] == ["-A", "ageverify", "worker", "-Q"], command
        queues[command[5]] = name

    assert sorted(queues) == sorted(settings.CELERY_TASK_QUEUES)
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()} | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert routed <= set(queues)


def test_the_delivery_worker_unit_runs_the_thread_pool_the_docs_describe():
    command = exec_start("ageverify-worker-webhooks.service")
    documented = OPERATIONS_PAGE.read_text()

    assert command[command.index("--pool") + 1] == "threads"
    assert int(command[command.index("--concurrency") + 1]) == 32
    assert "celery -A ageverify worker -Q webhooks -n webhooks@%h --pool threads --concurrency 32" in documented


def test_the_web_unit_serves_the_wsgi_application_and_beat_runs_the_schedule():
    web = exec_start("ageverify-web.service")
    beat = exec_start("ageverify-beat.service")

    assert web[0].endswith("/gunicorn") and web[1] == "ageverify.wsgi"
    assert beat[0].endswith("/celery") and beat[1:4] == ["-A", "ageverify", "beat"]


def _gunicorn_workers(env: dict) -> int:
    """The worker count gunicorn resolves for the web command of docs/operations.md, from gunicorn.conf.py and `env`."""
    shell = {name: value for name, value in os.environ.items() if name != "WEB_CONCURRENCY"}
    return production_workers({**shell, "DEBUG": "1", **env})


def test_the_web_service_runs_two_sync_workers_per_core_plus_one_unless_told_otherwise():
    # A request holds its sync worker for its whole length, a session's creation through its commit's wait
    # for the disk: three workers on two cores left the CPU idle during those waits.
    web = exec_start("ageverify-web.service")
    documented = OPERATIONS_PAGE.read_text()

    assert _gunicorn_workers({}) == 2 * len(os.sched_getaffinity(0)) + 1
    assert _gunicorn_workers({"WEB_CONCURRENCY": "7"}) == 7
    assert "--workers" not in web  # the unit takes the count from gunicorn.conf.py, as the documented command
    assert "gunicorn ageverify.wsgi --bind 0.0.0.0:8000  " in documented
