"""The architecture page (docs/architecture.md) names what the tree holds: every path it names exists, and every
app and every package of the import contracts is named, so the page cannot drift from a move or a new app."""

import re
import tomllib
from pathlib import Path

from django.conf import settings

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"
FILE_SUFFIXES = (".py", ".json", ".toml", ".md", ".yml", ".yaml", ".csv", ".html", ".js", ".txt", ".cfg")


def named_paths(text: str) -> set[str]:
    """The code spans of a page that name a file or folder of the tree (URLs like `/admin/` aside)."""
    spans = re.findall(r"`([^`\n]+)`", text)
    return {
        span
        for span in spans
        if " " not in span and not span.startswith("/") and ("/" in span or span.endswith(FILE_SUFFIXES))
    }


def missing_paths(text: str) -> list[str]:
    """Named paths that are not in the tree: from its root when the name has a folder, anywhere when it is bare."""
    missing = []
    for path in sorted(named_paths(text)):
        if "/" in path:
            found = (REPO / path).exists()
        else:
            found = any(".venv" not in each.parts for each in REPO.glob(f"**/{path}"))
        if not found:
            missing.append(path)
    return missing


def packages() -> set[str]:
    """The tree's Django apps (a folder with apps.py, or in INSTALLED_APPS) and the import contracts' packages."""
    apps = {path.parent.name for path in REPO.glob("*/apps.py")}
    installed = {app for app in settings.INSTALLED_APPS if "." not in app and (REPO / app).is_dir()}
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
    return apps | installed | set(contracts)


def test_every_path_the_architecture_page_names_exists():
    assert missing_paths(PAGE.read_text()) == []


def test_every_app_and_every_package_of_the_contracts_is_on_the_architecture_page():
    text = PAGE.read_text()

    assert {"core", "age_passes", "pipeline", "assurance", "sessions_api", "checks"} <= packages()
    assert sorted(name for name in packages() if f"`{name}/`" not in text) == []


def test_a_path_that_moved_away_is_reported():
    # The page once named tenants/hot_sql.py after it had moved to core/.
    text = "`tenants/hot_sql.py` runs the query; `core/hot_sql.py` too; see `/admin/` and `GET /v1/sessions/{id}`."

    assert named_paths(text) == {"tenants/hot_sql.py", "core/hot_sql.py"}
    assert missing_paths(text) == ["tenants/hot_sql.py"]
    assert missing_paths("the `no_such_module.py` of nowhere") == ["no_such_module.py"]
