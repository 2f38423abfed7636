"""The README's face-path table is the one the policy in force gives (manage.py age_statement writes it)."""

import json
from pathlib import Path

from assurance.statement import readme_with_face_path
from sessions_api.age_policy import DEFAULT_POLICY_FILE

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_states_the_face_path_of_the_policy_in_force_at_every_limit():
    policy = json.loads(DEFAULT_POLICY_FILE.read_text())
    readme = README.read_text()

    assert readme_with_face_path(readme, policy) == readme, "re-run manage.py age_statement"
    assert all(f"\n| {limit} | {'off' if policy['limits'][str(limit)]['threshold'] is None else 'on'} | " in readme
               for limit in range(10, 22))  # fmt: skip
    assert f"`{policy['version']}`" in readme
