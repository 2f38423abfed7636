"""checks.document.age_on: full years on a given day."""

from __future__ import annotations

import datetime

import pytest

from checks.document import age_on

D = datetime.date


@pytest.mark.parametrize(
    ("birthdate", "day", "age"),
    [
        (D(2008, 11, 22), D(2026, 11, 22), 18),  # birthday today counts
        (D(2008, 11, 23), D(2026, 11, 22), 17),  # birthday tomorrow
        (D(2008, 2, 29), D(2026, 2, 28), 17),  # leap-day birthday, not yet in a common year
        (D(2008, 2, 29), D(2026, 3, 1), 18),  # ... turns on 1 March
        (D(2008, 2, 29), D(2028, 2, 29), 20),  # ... and on 29 February in a leap year
        (D(2008, 2, 29), D(2028, 2, 28), 19),
        (D(2000, 1, 1), D(2000, 1, 1), 0),
    ],
)
def test_age_in_full_years(birthdate, day, age):
    assert age_on(birthdate, day) == age
