"""checks.aamva: AAMVA DL/ID barcode payloads."""

from __future__ import annotations

import datetime

import pytest

from checks.aamva import AamvaFormatError, parse_aamva
from tests.support.documents import aamva_payload


def test_usa_dates_are_month_day_year():
    record = parse_aamva(aamva_payload(birth="02291996", expiry="01012031", country="USA"))

    assert record.checks_valid
    assert record.birthdate == datetime.date(1996, 2, 29)
    assert record.expiry_date == datetime.date(2031, 1, 1)


def test_canadian_dates_are_year_month_day():
    record = parse_aamva(aamva_payload(birth="19960229", expiry="20310101", country="CAN", issuer="636012"))

    assert record.birthdate == datetime.date(1996, 2, 29)
    assert record.expiry_date == datetime.date(2031, 1, 1)


def test_ambiguous_date_follows_the_country():
    usa = parse_aamva(aamva_payload(birth="01021990", country="USA"))
    canada = parse_aamva(aamva_payload(birth="20011002", country="CAN"))

    assert usa.birthdate == datetime.date(1990, 1, 2)
    assert canada.birthdate == datetime.date(2001, 10, 2)


def test_version_one_uses_year_month_day():
    record = parse_aamva(aamva_payload(birth="19900102", version=1))

    assert record.birthdate == datetime.date(1990, 1, 2)


def test_impossible_birth_date_makes_the_record_invalid():
    record = parse_aamva(aamva_payload(birth="13451990"))

    assert not record.checks_valid
    assert record.birthdate is None
    assert "DBB" in record.problems[0]


def test_missing_expiry_makes_the_record_invalid():
    payload = aamva_payload().replace(b"DBA01012031\n", b"")

    record = parse_aamva(payload)

    assert record.expiry_date is None
    assert record.problems == ("DBA (expiry date) missing",)


def test_payload_that_is_not_aamva_is_refused():
    with pytest.raises(AamvaFormatError):
        parse_aamva(b"https://example.com/ticket/123")
