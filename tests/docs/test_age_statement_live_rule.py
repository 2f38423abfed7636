"""The published statement says how the flow's decision on a capture relates to the one photo per face it measures.

The rule's own account of it (sessions_api.age_policy.capture_rule_lines) must stand in
docs/age-assurance.md as written there, and the statement must not describe the rule before it (every frame).
"""

from pathlib import Path

from sessions_api.age_policy import capture_rule_lines

STATEMENT = Path(__file__).resolve().parents[2] / "docs" / "age-assurance.md"


def test_the_statement_explains_the_capture_rule_as_the_rule_states_it():
    statement = STATEMENT.read_text()

    assert "\n".join(capture_rule_lines()) in statement
    assert "**every** frontal frame" not in statement and "(every frame)" not in statement
