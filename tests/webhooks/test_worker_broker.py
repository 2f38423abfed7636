"""The delivery worker's broker options: no acknowledgement emulation where the outbox already covers a lost message."""

from types import SimpleNamespace

import pytest

from ageverify.celery import _worker_broker_options


def options_for(queues):
    conf = SimpleNamespace(broker_transport_options={"visibility_timeout": 300})
    _worker_broker_options(conf=conf, options={"queues": queues})
    return conf.broker_transport_options


@pytest.mark.parametrize("queues", [["webhooks"], "webhooks"])
def test_a_worker_of_the_webhooks_queue_alone_runs_without_ack_emulation(queues):
    assert options_for(queues)["ack_emulation"] is False


@pytest.mark.parametrize("queues", [["analysis"], ["analysis", "webhooks"], "webhooks,analysis", None, []])
def test_any_other_worker_keeps_the_brokers_ack_emulation(queues):
    options = options_for(queues)
    assert "ack_emulation" not in options and options["visibility_timeout"] == 300
