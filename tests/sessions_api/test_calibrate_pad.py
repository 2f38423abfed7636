"""`manage.py calibrate_pad`: the passive veto's and the colour flash's thresholds from genuine material."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assurance.pad_calibration import threshold_for
from tests.support.faces import add_noise, astronaut_portrait, encode
from tests.support.pad import capture_make, capture_write


def test_the_threshold_leaves_at_most_the_target_share_of_genuine_scores_under_it():
    scores = [i / 100 for i in range(100)]

    assert threshold_for(scores, 0.05) == 0.05  # 0.00 .. 0.04 fall under it: 5 of 100
    assert sum(s < threshold_for(scores, 0.035) for s in scores) == 3


def test_flash_prints_the_bpcer_of_the_threshold_in_force_with_its_exact_bound(tmp_path):
    for index in range(4):
        capture_write(tmp_path, f"genuine-{index}", capture_make("genuine", seed=index + 1))
    capture_write(tmp_path, "attack-0", capture_make("still_image", seed=1))  # not genuine: not counted
    out = StringIO()

    call_command("calibrate_pad", "flash", str(tmp_path), stdout=out)

    text = out.getvalue()
    assert text.startswith("flash: 4 genuine items, 0 skipped")
    # The synthetic genuine captures reflect the colours: none is refused; 0/4 has the exact upper bound 60.2 %.
    assert re.search(r"threshold in force 0\.\d{4}, on all items: BPCER 0/4 = 0\.0% \[0\.0%, 60\.2%\]", text)


def test_passive_prints_the_threshold_for_the_target_from_bona_fide_photos(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    portrait = astronaut_portrait()[0]
    for index in range(6):
        (folder / f"{index}.jpg").write_bytes(encode(add_noise(portrait, seed=index)))
    out = StringIO()

    call_command("calibrate_pad", "passive", str(folder), "--target", "0.2", stdout=out)

    text = out.getvalue()
    assert text.startswith("passive: 6 genuine items, 0 skipped")
    assert re.search(r"calibration half: threshold for BPCER <= 20.0%: 0\.\d{4} \(on \d items\)", text)
    assert re.search(r"threshold in force 0\.\d{4}, on all items: BPCER \d/6 = ", text)


def test_a_wrong_target_or_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="--target is a share"):
        call_command("calibrate_pad", "flash", str(tmp_path), "--target", "5")
    with pytest.raises(CommandError, match="is not a directory"):
        call_command("calibrate_pad", "passive", str(tmp_path / "missing"))
