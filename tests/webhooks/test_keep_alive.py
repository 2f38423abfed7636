"""Keep-alive: deliveries to one receiver share a connection, and only a connection whose exchange ended cleanly."""

import shutil

import pytest

from tests.support.receiver import Reply, WebhookReceiver
from tests.support.waiting import wait_until
from tests.webhooks.test_egress import post


@pytest.fixture
def ca_bundle(receiver, tls_files):
    return str(tls_files.ca_bundle)


def test_posts_to_one_receiver_arrive_over_one_connection(receiver, ca_bundle):
    results = [post(receiver.url(), ca_bundle=ca_bundle) for _ in range(5)]
    assert [result.status_code for result in results] == [200] * 5
    assert len(receiver.received) == 5 and receiver.connections == 1


def test_a_receiver_that_closes_idle_connections_gets_every_post_once(tls_files, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    closing = WebhookReceiver(tls_files, idle_timeout=0.2)
    try:
        results = []
        for _ in range(3):
            results.append(post(closing.url(), ca_bundle=str(tls_files.ca_bundle)))
            wait_until(lambda: closing.open_connections == 0)  # the receiver closed the idle connection
        assert [result.status_code for result in results] == [200] * 3
        assert len(closing.received) == 3 and closing.connections == 3
    finally:
        closing.close()


def test_a_kept_connection_closed_as_the_post_is_sent_is_retried_once_on_a_new_one(receiver, ca_bundle):
    # The receiver reads the request and closes without an answer, as a server closing an idle
    # connection at that moment does: the POST is made again on a new connection, so the receiver
    # may see the same request twice (delivery is at-least-once; receivers de-duplicate by webhook-id).
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    receiver.script(Reply(drop=True))
    result = post(receiver.url(), ca_bundle=ca_bundle, body=b'{"n": 2}')
    assert result.status_code == 200
    assert [r.body for r in receiver.received] == [b"{}", b'{"n": 2}', b'{"n": 2}']
    assert receiver.connections == 2


def test_a_new_connection_closed_without_an_answer_is_an_error_not_retried(receiver, ca_bundle):
    receiver.script(Reply(drop=True))
    result = post(receiver.url(), ca_bundle=ca_bundle)
    assert result.status_code is None and result.error.startswith("invalid HTTP response: RemoteDisconnected")
    assert len(receiver.received) == 1


def test_a_connection_that_timed_out_is_never_used_again(receiver, ca_bundle):
    receiver.script(Reply(delay=1.0))
    assert post(receiver.url(), ca_bundle=ca_bundle, total_timeout=0.3).error.startswith("timeout")
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    assert receiver.connections == 2


@pytest.mark.parametrize(
    "reply",
    [Reply(body=b"x" * 2000), Reply(close=True), Reply(status=500, body=b"x" * 1025)],
    ids=["body past the 1 KiB read", "Connection: close", "error with a long body"],
)
def test_a_connection_whose_answer_was_not_read_to_its_end_or_that_closes_is_not_kept(receiver, ca_bundle, reply):
    receiver.script(reply)
    post(receiver.url(), ca_bundle=ca_bundle)
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    assert receiver.connections == 2


def test_an_error_status_read_to_its_end_keeps_the_connection(receiver, ca_bundle):
    receiver.script(Reply(status=503, body=b"busy"))
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 503
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    assert receiver.connections == 1


def test_connections_are_not_shared_between_ca_bundles(receiver, ca_bundle, tmp_path):
    other_bundle = shutil.copy(ca_bundle, tmp_path / "other-ca.pem")
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    assert post(receiver.url(), ca_bundle=str(other_bundle)).status_code == 200
    assert receiver.connections == 2


def test_a_kept_connection_to_a_private_address_is_refused_once_private_targets_are_not_allowed(
    receiver, ca_bundle, settings
):
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    result = post(receiver.url(), ca_bundle=ca_bundle)
    assert result.error == "refused: 127.0.0.1 is not a public address"
    assert len(receiver.received) == 1


def test_a_connection_idle_past_the_idle_time_is_not_reused(receiver, ca_bundle, monkeypatch):
    import webhooks.transport

    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    monkeypatch.setattr(webhooks.transport, "IDLE_SECONDS", 0.0)  # the connection just kept is idle past it
    assert post(receiver.url(), ca_bundle=ca_bundle).status_code == 200
    assert receiver.connections == 2
