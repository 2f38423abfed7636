"""The API's one timestamp format: ISO 8601 UTC with milliseconds and `Z` (CONTRACT 2)."""
from datetime import datetime, timezone


def iso_ms(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def truncate_to_ms(value: datetime) -> datetime:
    return value.replace(microsecond=value.microsecond - value.microsecond % 1000)
