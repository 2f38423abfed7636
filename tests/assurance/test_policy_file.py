"""The offline toolkit writes the policy where the service reads it: beside the decision that applies it."""

from pathlib import Path

from django.core.management import load_command_class

from sessions_api.age_policy import age_policy, policy_file

REPO = Path(__file__).resolve().parents[2]


def calibrate_age_policy_output(*args: str) -> Path:
    command = load_command_class("assurance", "calibrate_age_policy")
    options = command.create_parser("manage.py", "calibrate_age_policy").parse_args(["faces-dev", *args])
    return Path(options.output)


def test_calibrate_age_policy_writes_the_file_the_service_reads_beside_the_decision(settings):
    settings.AGE_POLICY_FILE = ""

    assert calibrate_age_policy_output() == policy_file() == REPO / "sessions_api" / "age_policy.json"
    assert age_policy().source == REPO / "sessions_api" / "age_policy.json"


def test_a_policy_file_set_by_the_operator_is_the_one_in_force_not_the_committed_one(settings, tmp_path):
    settings.AGE_POLICY_FILE = str(tmp_path / "age_policy.json")
    (tmp_path / "age_policy.json").write_bytes((REPO / "sessions_api" / "age_policy.json").read_bytes())

    assert policy_file() == tmp_path / "age_policy.json"
    assert age_policy().source == tmp_path / "age_policy.json"
