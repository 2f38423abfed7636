"""Selfies and documents are biometric data: no check leaves a file behind, on success or failure.

Tesseract is the only component that needs files (pytesseract writes its input and output to the
temporary directory); each test points the temporary directory at an empty folder of its own and
checks it is empty afterwards, and that the working directory gained nothing.
"""

from __future__ import annotations

import datetime
import os
import tempfile

import pytest
from PIL import Image
from pytesseract import pytesseract

from checks.age import estimate_age
from checks.document import read_document
from checks.liveness import check_liveness
from checks.results import DocumentData, Retake
from tests.support.documents import encode, mrz_card, td1_lines

TODAY = datetime.date(2026, 11, 22)


@pytest.fixture
def private_tempdir(tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    seen = []
    run_tesseract = pytesseract.run_tesseract

    def watching_run_tesseract(input_filename, *args, **kwargs):
        seen.append(sorted(os.listdir(folder)))  # proof the files do go here while OCR runs
        return run_tesseract(input_filename, *args, **kwargs)

    monkeypatch.setattr(pytesseract, "run_tesseract", watching_run_tesseract)
    cwd_before = set(os.listdir(os.getcwd()))
    yield folder, seen
    assert set(os.listdir(os.getcwd())) == cwd_before


def test_reading_a_document_leaves_no_file(private_tempdir):
    folder, seen = private_tempdir

    result = read_document(encode(mrz_card(td1_lines())), today=TODAY)

    assert isinstance(result, DocumentData)
    assert seen and seen[0]  # tesseract's input file existed during the OCR
    assert os.listdir(folder) == []


def test_failing_to_read_a_document_leaves_no_file(private_tempdir):
    folder, seen = private_tempdir
    lines = td1_lines()
    lines[1] = lines[1][:6] + str((int(lines[1][6]) + 1) % 10) + lines[1][7:]

    result = read_document(encode(mrz_card(lines)), today=TODAY)

    assert isinstance(result, DocumentData) and not result.checks_valid
    assert seen
    assert os.listdir(folder) == []


def test_a_tesseract_crash_leaves_no_file(private_tempdir, monkeypatch):
    folder, _ = private_tempdir

    def crashing_run_tesseract(input_filename, *args, **kwargs):
        assert os.path.exists(input_filename)
        raise pytesseract.TesseractError(1, "simulated crash")

    monkeypatch.setattr(pytesseract, "run_tesseract", crashing_run_tesseract)

    result = read_document(encode(mrz_card(td1_lines())), today=TODAY)

    assert isinstance(result, Retake)
    assert os.listdir(folder) == []


def test_age_and_liveness_checks_write_no_file(private_tempdir, astronaut_jpeg):
    folder, _ = private_tempdir

    estimate_age(astronaut_jpeg)
    estimate_age(astronaut_jpeg[:1000])
    check_liveness([("left", astronaut_jpeg), ("center", astronaut_jpeg)], ["left", "center"])

    assert os.listdir(folder) == []


def test_rejected_upload_writes_no_file(private_tempdir):
    folder, _ = private_tempdir

    read_document(encode(Image.new("RGB", (64, 64))), today=TODAY)
    read_document(b"not an image", today=TODAY)

    assert os.listdir(folder) == []
