"""Small formatting helpers for the dashboard's templates: UTC times, percentages, SVG arithmetic."""
from datetime import UTC, timedelta

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

register = template.Library()


@register.simple_tag
def utc(value):
    """A timestamp as `Nov 3, 2026 14:05 UTC`, inside a <time> element carrying the exact ISO value."""
    if value is None:
        return "—"
    value = timezone.localtime(value, UTC) if timezone.is_aware(value) else value
    text = f"{value:%b} {value.day}, {value:%Y %H:%M}"
    return format_html('<time datetime="{}">{} UTC</time>', value.isoformat(), text)


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
