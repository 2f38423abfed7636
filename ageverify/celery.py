"""The Celery application; tasks live in each app's tasks.py and are found by autodiscovery."""
import os

from celery import Celery
from celery.signals import celeryd_init, task_postrun, task_prerun, worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ageverify.settings")

app = Celery("ageverify")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@celeryd_init.connect
def _worker_broker_timeouts(conf=None, **_kwargs):
    # Web requests give up on Redis after REDIS_REQUEST_TIMEOUT; a worker's consumer blocks on the
    # broker by design (BRPOP) and its teardown drains a pending read, so it waits a little longer.
    from django.conf import settings

    conf.broker_transport_options = {
        **conf.broker_transport_options, "socket_timeout": settings.CELERY_WORKER_BROKER_SOCKET_TIMEOUT,
    }


@worker_init.connect
def _delivery_pool_size(sender=None, **_kwargs):
    # How many attempts this process runs at once: a tenant may borrow idle threads past its share.
    from webhooks.concurrency import tenant_slots

    tenant_slots.pool_size = int(getattr(sender, "concurrency", 0) or 0)


@task_prerun.connect
@task_postrun.connect
def _close_stale_database_connections(task=None, **_kwargs):
    # A worker keeps its database connection between tasks; after a PostgreSQL restart it is dead.
    # Dropping unusable or expired ones around every task (with CONN_HEALTH_CHECKS) means no task
    # runs on a dead connection. Eager tasks run inside a request that manages its own connection.
    from django.db import close_old_connections

    if task is not None and not task.request.is_eager:
        close_old_connections()
