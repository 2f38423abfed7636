"""The API's one timestamp format: ISO 8601 UTC with milliseconds and `Z` (CONTRACT 2)."""
from datetime import datetime, timezone


def iso_ms(value: datetime | None) -> str | None:
    if value is None:
        return None
    # "2026-11-22T10:15:30.123+00:00" without its offset: the year padded to four digits, milliseconds truncated.
    return value.astimezone(timezone.utc).isoformat(timespec="milliseconds")[:23] + "Z"


def truncate_to_ms(value: datetime) -> datetime:
    return value.replace(microsecond=value.microsecond - value.microsecond % 1000)
