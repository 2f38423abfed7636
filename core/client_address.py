"""The client's address as the rate limits see it, shared by the partner API, the flow and the dashboard."""

import ipaddress

from django.conf import settings


def client_address(request) -> str | None:
    """The client's address as the limits see it; an IPv6 client is its /64, which one host can fill at will."""
    if request is None:
        return None
    address = request.META.get("REMOTE_ADDR", "")
    proxies = settings.DASHBOARD_LOGIN_TRUSTED_PROXIES
    if proxies > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        # Each of our proxies appends the address it saw; anything further left was written by the client.
        if forwarded:
            address = forwarded[-min(proxies, len(forwarded))]
    address = address.strip()
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:100]  # still a stable key for whatever the server put there
    if ip.version == 6:
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)
