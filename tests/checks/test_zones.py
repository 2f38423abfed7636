"""Consistency between a document's zones: the printed dates, read offline, against the machine-readable ones."""

import datetime

import pytest

from checks.zones import dates_after_labels, zones_agree
from tests.support.documents import encode, mrz_card, td3_lines

BIRTH, EXPIRY = datetime.date(1996, 2, 29), datetime.date(2031, 1, 1)


@pytest.mark.parametrize(
    "text, birth, expiry",
    [
        ("DATE OF BIRTH 29.02.1996\nDATE OF EXPIRY 01.01.2031", [BIRTH], [EXPIRY]),
        ("Date of birth / Date de naissance\n29 FEB/FEV 96\nDate of expiry\n01 JAN 31", [BIRTH], [EXPIRY]),
        ("3 DOB 02/29/1996  4b EXP 01/01/2031", [BIRTH], [EXPIRY]),  # a US licence prints month first
        ("Geburtsdatum 1996-02-29", [BIRTH], []),
        ("ISSUED 01.01.2021  SURNAME SAMPLE", [], []),  # an issue date is nobody's birth or expiry
    ],
)
def test_labelled_dates_are_read_in_the_usual_printed_forms(text, birth, expiry):
    printed = dates_after_labels(text)
    assert BIRTH in printed.birth if birth else printed.birth == []
    assert EXPIRY in printed.expiry if expiry else printed.expiry == []


def test_an_ambiguous_day_and_month_is_read_both_ways():
    assert set(dates_after_labels("DOB 03/04/1990").birth) == {datetime.date(1990, 4, 3), datetime.date(1990, 3, 4)}


@pytest.fixture(scope="module")
def lines():
    return td3_lines(birth="960229", expiry="310101")


def test_a_data_page_whose_printed_dates_are_the_mrz_ones_agrees(lines):
    page = encode(mrz_card(lines, printed=("29.02.1996", "01.01.2031")))
    assert zones_agree([page], birthdate=BIRTH, expiry_date=EXPIRY) is True


def test_a_data_page_printing_another_birth_date_than_its_mrz_disagrees(lines):
    page = encode(mrz_card(lines, printed=("29.02.1992", "01.01.2031")))
    assert zones_agree([page], birthdate=BIRTH, expiry_date=EXPIRY) is False


def test_a_page_without_printed_dates_checks_nothing(lines):
    assert zones_agree([encode(mrz_card(lines))], birthdate=BIRTH, expiry_date=EXPIRY) is True


def test_printed_dates_beside_the_mrz_do_not_disturb_its_reading(lines):
    from checks.document import read_document

    reading = read_document(
        encode(mrz_card(lines, printed=("29.02.1996", "01.01.2031"))), today=datetime.date(2026, 11, 22)
    )
    assert (reading.kind, reading.birthdate, reading.expiry_date, reading.checks_valid) == (
        "mrz_td3",
        BIRTH,
        EXPIRY,
        True,
    )
