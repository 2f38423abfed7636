"""Rules for what a tenant registers on a publishable key: allowed web origins and mobile return URLs."""

import ipaddress
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

# Schemes that would run code or read local files if a hand-off "returned" to them.
FORBIDDEN_RETURN_SCHEMES = {"javascript", "data", "file", "blob", "vbscript", "about", "filesystem", "ftp", "ws", "wss"}
MAX_ENTRIES = 20


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def origin_normalize(value: str) -> str:
    """`scheme://host[:port]` exactly as browsers send it in `Origin`; https, or http on a loopback host."""
    text = value.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.username or parts.password:
        raise ValidationError(f"{value!r} is not an origin: write scheme://host[:port], e.g. https://shop.example")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValidationError(f"{value!r} has a path: an origin is only scheme://host[:port]")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise ValidationError(f"{value!r}: only https origins may embed the flow (http only on localhost)")
    host = parts.netloc.lower()
    default_port = ":443" if parts.scheme == "https" else ":80"
    if host.endswith(default_port):
        host = host[: -len(default_port)]
    return f"{parts.scheme}://{host}"


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
