"""Egress safety: only public addresses, resolved once, HTTPS only, and a certificate the sender trusts."""

import socket

import pytest

from tests.support.receiver import IDN_HOST, IDN_HOST_ASCII, Reply
from webhooks.egress import ip_is_public
from webhooks.transport import https_post


def post(url, **overrides):
    options = {"body": b"{}", "headers": {"Content-Type": "application/json"}, "connect_timeout": 2, "total_timeout": 3}
    return https_post(url, **{**options, **overrides})


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2001:db8::1",
        "fec0::1",
        "fec0:1:2:3::9",
    ],
)
def test_private_loopback_link_local_reserved_and_multicast_addresses_are_not_public(address):
    assert not ip_is_public(address)


@pytest.mark.parametrize(
    "address",
    [
        "2002:7f00:1::",
        "2002:a00:1::1",
        "2002:a9fe:a9fe::",  # 6to4 of 127.0.0.1, 10.0.0.1, 169.254.169.254
        "64:ff9b::7f00:1",
        "64:ff9b::a00:1",
        "64:ff9b::a9fe:a9fe",  # NAT64
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo: 127.0.0.1, 10.0.0.1
        "::ffff:192.168.0.1",
    ],
)
def test_ipv6_forms_that_embed_a_non_public_ipv4_are_not_public(address):
    assert not ip_is_public(address)


def test_a_6to4_notification_url_embedding_loopback_is_refused_at_creation(api):
    response = api.post(
        "/v1/sessions", {"subject": "u", "age_limit": 18, "notification_url": "https://[2002:7f00:1::1]/hook"}
    )
    assert response.status_code == 400 and response.json()["errors"][0]["code"] == "forbidden_host"


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1", "64:ff9b::808:808"]
)
def test_global_unicast_addresses_are_public(address):
    assert ip_is_public(address)


def test_a_loopback_target_is_refused_without_the_setting_and_nothing_is_sent(receiver, settings, tls_files):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    result = post(receiver.url(), ca_bundle=str(tls_files.ca_bundle))

    assert result.status_code is None
    assert result.error == "refused: 127.0.0.1 is not a public address"
    assert receiver.received == []


@pytest.mark.parametrize("host", ["2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]", "[::1]"])
def test_other_spellings_of_loopback_are_refused_too(receiver, settings, tls_files, host):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    result = post(f"https://{host}:{receiver.port}/hook", ca_bundle=str(tls_files.ca_bundle))

    assert result.status_code is None and result.error.startswith("refused: ")
    assert receiver.received == []


def test_a_name_that_resolves_to_loopback_is_refused_without_the_setting(receiver, settings, tls_files):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    result = post(receiver.url(host="localhost"), ca_bundle=str(tls_files.ca_bundle))

    assert result.error.startswith("refused: localhost resolves to ")
    assert receiver.received == []


def test_the_connection_goes_to_the_address_that_was_checked_not_to_a_second_lookup(receiver, tls_files, monkeypatch):
    # A rebinding DNS: the first answer is the receiver, any later one an address where nothing listens.
    answers = iter(["127.0.0.1"])
    real_getaddrinfo = socket.getaddrinfo

    def rebinding_getaddrinfo(host, port, *args, **kwargs):
        if host != "localhost":
            return real_getaddrinfo(host, port, *args, **kwargs)
        return real_getaddrinfo(next(answers, "127.0.0.9"), port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_getaddrinfo)

    result = post(receiver.url(host="localhost"), ca_bundle=str(tls_files.ca_bundle))

    assert result.status_code == 200, result.error
    assert next(answers, None) is None  # looked up exactly once


def resolving(monkeypatch, name: str, address: str = "127.0.0.1") -> None:
    """Make `name` resolve to `address` for this test, as a partner's DNS would (either form of an IDN)."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        asked = host.encode("idna") if isinstance(host, str) else host
        return real_getaddrinfo(address if asked == name.encode("idna") else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_the_certificate_is_verified_for_the_hostname(receiver, tls_files):
    result = post(receiver.url(host="localhost"), ca_bundle=str(tls_files.ca_bundle))
    assert result.status_code == 200, result.error
    assert receiver.received[0].headers["host"] == f"localhost:{receiver.port}"


def test_the_hostname_is_sent_as_sni(receiver, tls_files):
    post(receiver.url(host="localhost"), ca_bundle=str(tls_files.ca_bundle))
    assert receiver.server_names == ["localhost"]


def test_a_certificate_for_another_name_is_refused_even_from_a_trusted_ca(receiver, tls_files, monkeypatch):
    resolving(monkeypatch, "other.example")

    result = post(receiver.url(host="other.example"), ca_bundle=str(tls_files.ca_bundle))

    assert result.status_code is None
    assert result.error.startswith("TLS certificate not trusted") and "other.example" in result.error
    assert receiver.received == []


def test_an_internationalized_host_name_is_sent_to_in_its_ascii_form(receiver, tls_files, monkeypatch):
    resolving(monkeypatch, IDN_HOST_ASCII)

    result = post(receiver.url(host=IDN_HOST), ca_bundle=str(tls_files.ca_bundle))

    assert result.status_code == 200, result.error
    assert receiver.server_names == [IDN_HOST_ASCII]
    assert receiver.received[0].headers["host"] == f"{IDN_HOST_ASCII}:{receiver.port}"


def test_a_site_local_ipv6_notification_url_is_refused_at_creation(api):
    response = api.post("/v1/sessions", {"subject": "u", "age_limit": 18, "notification_url": "https://[fec0::1]/hook"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "forbidden_host"


def test_a_certificate_outside_the_trust_store_is_not_sent_to(receiver):
    result = post(receiver.url(), ca_bundle=None)  # the system store does not know the test CA

    assert result.status_code is None
    assert result.error.startswith("TLS certificate not trusted")
    assert receiver.received == []


def test_plain_http_is_never_sent(receiver):
    result = post(receiver.url().replace("https://", "http://"))
    assert result.error == "refused: only https:// URLs are delivered"


def test_a_connection_refused_is_reported_as_a_connection_error(receiver, tls_files):
    result = post("https://127.0.0.1:1/hook", ca_bundle=str(tls_files.ca_bundle))
    assert result.status_code is None and result.error.startswith("connection error")


def test_a_slow_answer_is_cut_at_the_total_timeout(receiver, tls_files):
    receiver.script(Reply(delay=1.5))
    result = post(receiver.url(), ca_bundle=str(tls_files.ca_bundle), total_timeout=0.4)
    assert result.error == "timeout: no complete answer within 0.4 s"
    assert 350 <= result.latency_ms < 1200


def test_a_receiver_that_resets_the_connection_at_once_is_a_connection_error(tls_files, monkeypatch, settings):
    # The receiver accepts the TCP connection and resets it (a crashed or restarting receiver) before
    # our TLS handshake starts: the attempt must read as a connection error, to be retried as one.
    import socket
    import struct
    import time as time_module

    import webhooks.transport as transport

    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    listener = socket.create_server(("127.0.0.1", 0))
    connect = transport._connect

    def connect_then_get_reset(addresses, **kwargs):
        sock = connect(addresses, **kwargs)
        accepted, _ = listener.accept()
        accepted.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        accepted.close()  # with SO_LINGER 0: a reset
        time_module.sleep(0.1)
        return sock

    monkeypatch.setattr(transport, "_connect", connect_then_get_reset)
    try:
        result = post(f"https://127.0.0.1:{listener.getsockname()[1]}/hooks", ca_bundle=str(tls_files.ca_bundle))
    finally:
        listener.close()

    assert result.status_code is None
    assert result.error.startswith(("connection error", "TLS error")), result.error
