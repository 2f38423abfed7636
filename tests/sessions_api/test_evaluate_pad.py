"""`manage.py evaluate_pad DIR`: APCER per attack type and BPCER with exact bounds, on a capture set (docs/pad.md)."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.support.pad import capture_make, capture_write


@pytest.fixture(scope="module")
def capture_set(tmp_path_factory):
    folder = tmp_path_factory.mktemp("captures")
    for kind, count in (("genuine", 2), ("still_image", 2), ("virtual_camera", 1), ("script_injection", 1)):
        for index in range(count):
            capture_write(folder, f"{kind}-{index}", capture_make(kind, seed=index + 1))
    return folder


def _rows(output: str) -> dict[str, str]:
    return {line.split()[0]: line for line in output.splitlines()[1:]}


def test_it_prints_bpcer_and_apcer_per_attack_type_with_exact_bounds(capture_set):
    out = StringIO()
    call_command("evaluate_pad", str(capture_set), stdout=out)

    rows = _rows(out.getvalue())
    assert set(rows) == {"genuine", "still_image", "virtual_camera", "script_injection"}
    # 0 of 2 genuine refused: the exact upper bound for 0/2 is 1 - 0.025^(1/2) = 84.2 %.
    assert re.search(r"\s2 BPCER\s+0\.0%\s+\[\s*0\.0%,\s+84\.2%\]", rows["genuine"])
    assert re.search(r"\s2 APCER\s+0\.0%\s+\[\s*0\.0%,\s+84\.2%\].*replay 2", rows["still_image"])
    assert re.search(r"\s1 APCER\s+0\.0%.*virtualCamera 1", rows["virtual_camera"])
    # The script that follows the page passes: the residual risk, printed as such.
    assert re.search(r"\s1 APCER\s+100\.0%\s+\[\s*2\.5%,\s+100\.0%\]", rows["script_injection"])


def test_a_capture_set_that_is_not_in_the_format_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no capture.json"):
        call_command("evaluate_pad", str(tmp_path))
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "capture.json").write_text(json.dumps({"kind": "attack", "challenge": ["center"]}))
    with pytest.raises(CommandError, match=r"one/capture.json: .*kind"):
        call_command("evaluate_pad", str(tmp_path))
