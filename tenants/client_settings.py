"""Rules for what a tenant registers on a publishable key: allowed web origins and mobile return URLs."""

import ipaddress
import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

# Schemes that would run code or read local files if a hand-off "returned" to them.
FORBIDDEN_RETURN_SCHEMES = {"javascript", "data", "file", "blob", "vbscript", "about", "filesystem", "ftp", "ws", "wss"}
MAX_ENTRIES = 20
# One DNS label: letters, digits and inner hyphens (an internationalised name is compared in its IDNA form).
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_normalize(host: str) -> str | None:
    """The host of an origin as browsers write it (lower case, IDNA, IPv6 in brackets), or None if it is none."""
    if ":" in host:
        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            return None
        # A zone id ("%eth0") names an interface of the browser's own machine, never a web origin, and
        # Python's parser takes anything after the "%" (a ";" and a whole policy directive included).
        return None if address.scope_id is not None else f"[{address.compressed}]"
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    labels = ascii_host.split(".")
    if len(ascii_host) > 253 or not all(_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        return None
    return ascii_host


def origin_normalize(value: str) -> str:
    """`scheme://host[:port]` exactly as browsers send it in `Origin`; https, or http on a loopback host.

    Parsed as an origin, then written again from its parts: a host that is not a DNS name or an IP address,
    a port outside 1-65535, or anything besides scheme, host and port is refused, so what is stored (and
    later written into a Content-Security-Policy) can never carry another directive or source.
    """
    text = value.strip()
    parts = urlsplit(text)
    not_an_origin = f"{value!r} is not an origin: write scheme://host[:port], e.g. https://shop.example"
    if parts.scheme not in ("https", "http") or not parts.hostname or "@" in parts.netloc:
        raise ValidationError(not_an_origin)
    if parts.path not in ("", "/") or parts.query or parts.fragment or "?" in text or "#" in text:
        raise ValidationError(f"{value!r} has a path: an origin is only scheme://host[:port]")
    try:
        port = parts.port
    except ValueError:
        raise ValidationError(f"{value!r}: the port must be a number from 1 to 65535") from None
    host = _host_normalize(parts.hostname)
    if host is None or port == 0:
        raise ValidationError(not_an_origin)
    if parts.scheme == "http" and not _is_loopback(host):
        raise ValidationError(f"{value!r}: only https origins may embed the flow (http only on localhost)")
    default_port = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default_port) else "")


def return_url_validate(value: str) -> str:
    text = value.strip()
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if not scheme or scheme in FORBIDDEN_RETURN_SCHEMES or len(text) > 2048:
        raise ValidationError(
            f"{value!r} is not a usable return URL: use https://... or your app's scheme, e.g. myapp://verified"
        )
    if scheme == "http" and not _is_loopback(parts.hostname or ""):
        raise ValidationError(f"{value!r}: return URLs must be https (http only on localhost)")
    if scheme in ("http", "https") and (not parts.hostname or parts.username or parts.password):
        raise ValidationError(f"{value!r} is not a usable https URL")
    return text


def entries_clean(values, normalize) -> list[str]:
    """One entry per line (or a list): normalized, duplicates removed, order kept."""
    if isinstance(values, str):
        values = values.splitlines()
    cleaned = []
    for value in values:
        if not str(value).strip():
            continue
        entry = normalize(str(value))
        if entry not in cleaned:
            cleaned.append(entry)
    if len(cleaned) > MAX_ENTRIES:
        raise ValidationError(f"At most {MAX_ENTRIES} entries.")
    return cleaned
