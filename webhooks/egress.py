"""Which addresses a webhook may be sent to: public unicast only, unless settings allow private targets."""
import ipaddress

from django.conf import settings

_LOCAL_NAMES = ("localhost", "localhost.localdomain")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")


def ip_is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
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
