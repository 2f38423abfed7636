"""The reason table: docs/errors.md and the OpenAPI schema explain every reason the code can give a session."""

import json
import re
from pathlib import Path

from sessions_api.choices import Reason
from sessions_api.reasons import GUIDE, reason_table_markdown
from sessions_api.state_machine import APPROVED_REASONS

ERRORS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def readme_reason_rows() -> dict[str, str]:
    """{reason: status} of the errors page's table under "Why a session ended"."""
    section = ERRORS_PAGE.read_text().split("## Why a session ended", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([a-z_]+)` \| `([a-z_]+)` \|", section, flags=re.MULTILINE))


def test_every_reason_of_the_code_has_a_row_in_the_docs_and_nothing_else_does():
    rows = readme_reason_rows()

    assert set(rows) == set(Reason.values)
    assert {reason for reason, status in rows.items() if status == "approved"} == set(APPROVED_REASONS)


def test_the_docs_table_reads_as_the_guide_says():
    assert reason_table_markdown() in ERRORS_PAGE.read_text(), "the reason table drifted: paste reason_table_markdown()"
    assert set(GUIDE) == set(Reason.values)


def test_the_openapi_reason_field_explains_every_reason(anonymous_api):
    schema = json.loads(anonymous_api.client.get("/v1/openapi.json").content)
    reason = schema["components"]["schemas"]["SessionOutput"]["properties"]["reason"]
    components = schema["components"]["schemas"]
    choices = [components[choice["$ref"].rsplit("/", 1)[1]] for choice in reason["oneOf"]]  # a named enum, or null

    assert {value for choice in choices for value in choice.get("enum", [])} == set(Reason.values)
    assert {"type": "null"} in choices
    for value, guide in GUIDE.items():
        assert f"`{value}` ({guide.status}): {guide.meaning}" in reason["description"]
