"""checks.document.read_document on rendered documents: PDF417 via zxing-cpp, MRZ via OCR."""

from __future__ import annotations

import datetime

import pytest
from PIL import Image

from checks.document import read_document
from checks.results import DocumentData, Retake
from tests.support.documents import aamva_payload, encode, mrz_card, pdf417_card, td1_lines, td3_lines

TODAY = datetime.date(2026, 11, 22)


def test_pdf417_licence_is_read_from_its_raw_bytes():
    photo = pdf417_card(aamva_payload(birth="02291996", expiry="01012031"))

    result = read_document(encode(photo), today=TODAY)

    assert result == DocumentData(
        kind="aamva",
        birthdate=datetime.date(1996, 2, 29),
        expiry_date=datetime.date(2031, 1, 1),
        checks_valid=True,
        problem=None,
    )


@pytest.mark.parametrize("skew_degrees", [5, -5])
def test_pdf417_photographed_at_a_five_degree_skew_is_read(skew_degrees):
    photo = pdf417_card(aamva_payload(birth="07041990"), skew_degrees=skew_degrees)

    result = read_document(encode(photo), today=TODAY)

    assert isinstance(result, DocumentData)
    assert result.birthdate == datetime.date(1990, 7, 4)


def test_expired_licence_reports_its_expiry_date():
    photo = pdf417_card(aamva_payload(expiry="03312020"))

    result = read_document(encode(photo), today=TODAY)

    assert result.checks_valid
    assert result.expiry_date == datetime.date(2020, 3, 31)
    assert result.expiry_date < TODAY


def test_td1_card_printed_in_ocr_b_is_read_through_ocr():
    card = mrz_card(td1_lines(birth="080229", expiry="310101"))

    result = read_document(encode(card), today=TODAY)

    assert result == DocumentData(
        kind="mrz_td1",
        birthdate=datetime.date(2008, 2, 29),
        expiry_date=datetime.date(2031, 1, 1),
        checks_valid=True,
        problem=None,
    )


def test_td3_passport_page_printed_in_ocr_b_is_read_through_ocr():
    page = mrz_card(td3_lines(birth="900704", expiry="190101"))

    result = read_document(encode(page), today=TODAY)

    assert isinstance(result, DocumentData)
    assert result.kind == "mrz_td3"
    assert result.checks_valid
    assert result.birthdate == datetime.date(1990, 7, 4)
    assert result.expiry_date == datetime.date(2019, 1, 1)  # expired: reported, the caller decides


def test_card_with_a_wrong_birth_date_check_digit_is_read_as_invalid():
    lines = td1_lines(birth="080229")
    wrong = str((int(lines[1][6]) + 1) % 10)
    lines[1] = lines[1][:6] + wrong + lines[1][7:]

    result = read_document(encode(mrz_card(lines)), today=TODAY)

    assert isinstance(result, DocumentData)
    assert result.kind == "mrz_td1"
    assert not result.checks_valid
    assert "birth_date" in result.problem


def test_picture_without_a_document_asks_for_a_retake():
    result = read_document(encode(Image.new("RGB", (800, 500), (230, 230, 230))), today=TODAY)

    assert isinstance(result, Retake)
    assert result.message.startswith("We could not read the document.")


def test_non_image_asks_for_a_retake():
    assert isinstance(read_document(b"GIF89a not supported", today=TODAY), Retake)
