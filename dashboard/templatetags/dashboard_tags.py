"""Small formatting helpers for the dashboard's templates: UTC times, percentages, SVG arithmetic."""

from datetime import UTC, timedelta

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

register = template.Library()


def _in_utc(value):
    return timezone.localtime(value, UTC) if timezone.is_aware(value) else value


@register.filter
def utc_text(value):
    """A timestamp as plain `Nov 3, 2026 14:05 UTC`, for an attribute such as a tooltip's title."""
    if value is None:
        return "—"
    value = _in_utc(value)
    return f"{value:%b} {value.day}, {value:%Y %H:%M} UTC"


@register.simple_tag
def utc(value):
    """A timestamp as `Nov 3, 2026 14:05 UTC`, inside a <time> element carrying the exact ISO value."""
    if value is None:
        return "—"
    return format_html('<time datetime="{}">{}</time>', _in_utc(value).isoformat(), utc_text(value))


@register.filter
def ago(value):
    """`3 minutes ago`, or `just now` within the first minute (timesince would say `0 minutes`)."""
    if value is None:
        return ""
    if timezone.now() - value < timedelta(minutes=1):
        return "just now"
    return f"{timesince(value)} ago"


@register.filter
def percent(value):
    return f"{value * 100:.1f} %"


@register.filter
def sub(value, other):
    return value - other


@register.simple_tag
def utc_seconds(value):
    """A timestamp to the second, `Nov 3, 2026 14:05:09 UTC`, inside a <time> element carrying the exact ISO value."""
    if value is None:
        return "—"
    value = _in_utc(value)
    text = f"{value:%b} {value.day}, {value:%Y %H:%M:%S} UTC"
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), text)


@register.filter
def duration(seconds):
    """Seconds as `45 s`, `3 min 05 s` or `2 h 04 min`; `—` for none."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
