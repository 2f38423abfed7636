"""The Celery worker's broker consumer, patched so that a lost Redis connection is survived, not fatal.

Celery 5.7.0 (`Consumer.on_connection_error_after_connected`) first `collect()`s the broken broker
connection, which closes its channels and detaches its transport, and then `close()`s the same
connection again. When a task acknowledged late is running, that second close re-opens the channel
to put the unacknowledged message back, asks the detached transport for the broker's address
(`connection.client` is None) and raises `AttributeError: 'NoneType' object has no attribute
'hostname'`, which `ignore_errors` does not catch: the worker logs "Unrecoverable error" and exits,
and stays down after Redis returns. Celery 5.6 stopped after `collect()`; this consumer does the same.
(Pinning 5.6 instead would also pin redis-py below 6.5.) The messages are not lost either way: the
unacknowledged ones come back after the visibility timeout, and the webhook outbox sweep re-queues
every due delivery.
"""

from celery.worker.consumer import Consumer as CeleryConsumer


class Consumer(CeleryConsumer):
    def on_connection_error_after_connected(self, exc):
        connection = self.connection
        if connection is not None:
            # collect() inside the parent call releases everything; its later close() must not reopen it.
            connection.close = connection.release = _already_collected
        super().on_connection_error_after_connected(exc)


def _already_collected() -> None:
    return None
