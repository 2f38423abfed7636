"""checks.mrz: ICAO 9303 layouts and check digits, on the specimens of ICAO Doc 9303."""

from __future__ import annotations

import datetime

import pytest

from checks.mrz import MrzFormatError, check_digit, parse_mrz

TODAY = datetime.date(2026, 11, 22)

# ICAO Doc 9303 part 4 (TD3) and part 5 (TD1) specimens of the fictitious state "UTO".
TD3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
TD1 = ["I<UTOD231458907<<<<<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]


def _with(line: str, position: int, character: str) -> str:
    return line[:position] + character + line[position + 1 :]


@pytest.mark.parametrize(
    ("field", "digit"),
    [("L898902C3", 6), ("740812", 2), ("120415", 9), ("ZE184226B<<<<<", 1), ("D23145890", 7), ("<<<", 0)],
)
def test_check_digit_matches_the_icao_specimens(field, digit):
    assert check_digit(field) == digit


def test_td3_specimen_is_valid():
    mrz = parse_mrz("\n".join(TD3), today=TODAY)

    assert mrz.kind == "mrz_td3"
    assert mrz.checks_valid
    assert mrz.birthdate == datetime.date(1974, 8, 12)
    assert mrz.expiry_date == datetime.date(2012, 4, 15)


def test_td3_with_wrong_birthdate_check_digit_is_invalid():
    mrz = parse_mrz("\n".join([TD3[0], _with(TD3[1], 19, "3")]), today=TODAY)

    assert not mrz.checks_valid
    assert "birth_date" in mrz.failed_checks


def test_td3_with_altered_birthdate_fails_its_own_and_the_composite_check():
    mrz = parse_mrz("\n".join([TD3[0], _with(TD3[1], 14, "5")]), today=TODAY)  # born 1975

    assert set(mrz.failed_checks) >= {"birth_date", "composite"}


def test_td3_with_wrong_composite_check_digit_is_invalid():
    mrz = parse_mrz("\n".join([TD3[0], _with(TD3[1], 43, "1")]), today=TODAY)

    assert mrz.failed_checks == ("composite",)


def test_td1_specimen_is_valid():
    mrz = parse_mrz("\n".join(TD1), today=TODAY)

    assert mrz.kind == "mrz_td1"
    assert mrz.checks_valid
    assert mrz.birthdate == datetime.date(1974, 8, 12)
    assert mrz.expiry_date == datetime.date(2012, 4, 15)


def test_td1_with_wrong_expiry_check_digit_is_invalid():
    mrz = parse_mrz("\n".join([TD1[0], _with(TD1[1], 14, "0"), TD1[2]]), today=TODAY)

    assert "expiry_date" in mrz.failed_checks
    assert not mrz.checks_valid


def test_td1_with_wrong_composite_check_digit_is_invalid():
    mrz = parse_mrz("\n".join([TD1[0], _with(TD1[1], 29, "7"), TD1[2]]), today=TODAY)

    assert mrz.failed_checks == ("composite",)


def test_td1_document_number_longer_than_nine_characters_is_verified_in_its_overflow():
    number = "D23145890123"
    first = f"I<UTO{number[:9]}<{number[9:]}{check_digit(number)}<".ljust(30, "<")
    second_body = "7408122F1204159UTO".ljust(29, "<")
    composite = first[5:30] + second_body[0:7] + second_body[8:15] + second_body[18:29]
    lines = [first, second_body + str(check_digit(composite)), TD1[2]]

    assert parse_mrz("\n".join(lines), today=TODAY).checks_valid
    assert not parse_mrz("\n".join([_with(first, 16, "9"), *lines[1:]]), today=TODAY).checks_valid


def test_name_line_is_never_needed():
    garbled_names = "P<UTOERIKSSON<<ANNAXMARIAK<X<K<K<<<<KK<K<<K<KKKK<KKKK"

    assert parse_mrz(f"{garbled_names}\n{TD3[1]}", today=TODAY).checks_valid


def test_ocr_noise_in_filler_runs_is_repaired():
    ocr = "I<UT0D231458907<<<<<K<K<<<<<<<<<\n7408122F1204159UT0<<<<<<<K<<<<6\nERIKSSON<<ANNA<KMARIA<<<<<<<<<<"

    mrz = parse_mrz(ocr, today=TODAY)

    assert mrz.checks_valid
    assert mrz.birthdate == datetime.date(1974, 8, 12)


def test_letter_o_read_for_zero_in_dates_is_read_as_the_digit():
    mrz = parse_mrz("\n".join([TD3[0], TD3[1].replace("7408122", "74O8122")]), today=TODAY)

    assert mrz.checks_valid
    assert mrz.birthdate == datetime.date(1974, 8, 12)


def test_document_number_o_and_zero_confusion_is_settled_by_its_check_digit():
    mrz = parse_mrz("\n".join([TD3[0], TD3[1].replace("L898902C3", "L8989O2C3")]), today=TODAY)

    assert mrz.checks_valid


def test_noise_in_a_data_field_is_not_repaired():
    mrz = parse_mrz("\n".join([TD3[0], _with(TD3[1], 16, "K")]), today=TODAY)

    assert not mrz.checks_valid


def test_birth_year_is_placed_in_the_latest_century_not_in_the_future():
    line = "L898902C36UTO2512310F3101012ZE184226B<<<<<10"
    birth_2025 = parse_mrz(f"{TD3[0]}\n{line}", today=TODAY).birthdate
    birth_1927 = parse_mrz(f"{TD3[0]}\n{line.replace('2512310', '2712310')}", today=TODAY).birthdate

    assert birth_2025 == datetime.date(2025, 12, 31)
    assert birth_1927 == datetime.date(1927, 12, 31)


def test_empty_optional_data_may_have_a_filler_as_its_check_digit():
    line = "L898902C36UTO7408122F1204159<<<<<<<<<<<<<<<4"
    # Recompute the composite for an empty optional field with '<' as its check digit.
    composite = line[0:10] + line[13:20] + line[21:43]
    line = line[:43] + str(check_digit(composite))

    assert parse_mrz(f"{TD3[0]}\n{line}", today=TODAY).checks_valid


def test_text_without_an_mrz_is_refused():
    with pytest.raises(MrzFormatError):
        parse_mrz("UTOPIA IDENTITY\nSURNAME ERIKSSON", today=TODAY)
