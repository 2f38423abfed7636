"""The Celery application; tasks live in each app's tasks.py and are found by autodiscovery."""

import os

from celery import Celery
from celery.signals import (
    celeryd_after_setup,
    celeryd_init,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ageverify.settings")

app = Celery("ageverify")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@celeryd_init.connect
def _worker_broker_options(conf=None, options=None, **_kwargs):
    # Web requests give up on Redis after REDIS_REQUEST_TIMEOUT; a worker's consumer blocks on the
    # broker by design (BRPOP) and its teardown drains a pending read, so it waits a little longer.
    from django.conf import settings

    transport_options = {
        **conf.broker_transport_options,
        "socket_timeout": settings.CELERY_WORKER_BROKER_SOCKET_TIMEOUT,
    }
    if _queues(options) == ["webhooks"]:
        # A delivery worker does without the Redis transport's acknowledgement emulation: kombu keeps
        # each message taken in an `unacked` hash and index until it is acknowledged, two Redis
        # transactions per message on the consumer's single thread, about a third of what a delivery
        # worker process can do (bench/webhooks.py). What it guards against, a worker dying with
        # messages it took, the outbox covers for this queue: a delivery whose message is lost is still
        # due in the database and the sweep queues it again after WEBHOOK_REQUEUE_AFTER_SECONDS (60 s,
        # where the broker would have waited out its 300 s visibility timeout), and the chores on this
        # queue run again at beat's next tick. Messages taken and not started go back to the queue
        # at a warm shutdown, as before. The analysis queue keeps the emulation.
        transport_options["ack_emulation"] = False
    conf.broker_transport_options = transport_options


def _queues(options: dict | None) -> list[str]:
    queues = (options or {}).get("queues") or []
    return sorted(queues.split(",") if isinstance(queues, str) else queues)


@celeryd_after_setup.connect
def _analysis_queues_in_turn(sender=None, instance=None, **_kwargs):
    analysis_queues_consumed(instance.app.amqp.queues)


def analysis_queues_consumed(queues) -> None:
    """A worker of the `analysis` queue (its `-Q`, or every queue) takes from every analysis queue.

    The analyses of a tenant's users at one address wait in one of them (sessions_api.tasks.analysis_queue_of).
    Kombu's Redis transport waits on all of them in one BRPOP and moves the queue it just took from to the end
    of its list (its round-robin queue order), and with a prefetch of one per process each analysis is taken
    only when a process is free: the queues are served in turn, so a tenant's or an address's flood waits
    behind its own work only.
    """
    from sessions_api.tasks import ANALYSIS_QUEUE, analysis_queues

    if ANALYSIS_QUEUE in queues.consume_from:
        for name in analysis_queues():
            queues.select_add(name)


@worker_process_init.connect
def _analysis_models_load(**_kwargs):
    # An analysis worker's process loads the models as it starts, not in its first task: there they cost that
    # task's time limit, and a limit striking during `import dlib` left the process unable to import it again.
    from sessions_api.analysis import analysis_models_load
    from sessions_api.tasks import ANALYSIS_QUEUE

    if ANALYSIS_QUEUE in app.amqp.queues.consume_from:
        analysis_models_load()


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
