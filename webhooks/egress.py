"""Which addresses a webhook may be sent to: public unicast only, unless settings allow private targets."""

import ipaddress

from django.conf import settings

_LOCAL_NAMES = ("localhost", "localhost.localdomain")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")


_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix: the last 32 bits are an IPv4 address


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and routes to: mapped, NAT64, 6to4 and Teredo forms.

    A relay or translator on the path delivers to that IPv4 address, so it is the one to judge
    (2002:7f00:1:: is 127.0.0.1 over 6to4, 64:ff9b::a00:1 is 10.0.0.1 through NAT64).
    """
    if ip.ipv4_mapped:
        return [ip.ipv4_mapped]
    if ip in _NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip.sixtofour:
        return [ip.sixtofour]
    if ip.teredo:
        return list(ip.teredo)  # the Teredo server and the (de-obfuscated) client
    return []


def ip_is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and (embedded := _embedded_ipv4(ip)):
        if ip.ipv4_mapped or ip in _NAT64:
            return all(_is_public(inner) for inner in embedded)
        return _is_public(ip) and all(_is_public(inner) for inner in embedded)
    return _is_public(ip)


def _is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    # fec0::/10 (deprecated site-local) still counts as global to ipaddress, yet routes inside a site.
    site_local = isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_link_local or ip.is_loopback or site_local)


def private_targets_allowed() -> bool:
    return bool(settings.WEBHOOK_ALLOW_PRIVATE_TARGETS)


def host_is_forbidden(host: str) -> bool:
    """A host that is plainly not public without a DNS lookup: a private IP literal or a local name.

    Names are resolved and checked again at each delivery (see the transport), where the answer counts.
    """
    if private_targets_allowed():
        return False
    host = host.strip("[]").rstrip(".").lower()
    try:
        return not ip_is_public(host)
    except ValueError:
        return host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES)
