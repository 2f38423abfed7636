"""The research data sets (labelled face photos, research use only): never in the repository, found beside it.

Tests that read them carry `@pytest.mark.research_data("faces-dev", ...)`; without the data they are
skipped, saying what is missing and where it comes from, unless AV_TEST_REQUIRE_RESEARCH_DATA=1 (CI)
makes that an error (tests/conftest.py). docs/testing.md describes both variables.
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REQUIRED_VARIABLE = "AV_TEST_REQUIRE_RESEARCH_DATA"
DIRECTORY_VARIABLE = "AV_RESEARCH_DATA"
# What each data set is (shared/data/README.md has their sources and licences).
DATA_SETS = {
    "faces-dev": "labelled face photos, UTKFace crops",
    "faces-pairs": "photos of people across years, FG-NET",
    "faces-aaf": "labelled face photos, All-Age-Faces",
}


def research_data_dir() -> Path | None:
    """AV_RESEARCH_DATA if set, else the first `shared/data` beside the checkout or one of its parents."""
    configured = os.environ.get(DIRECTORY_VARIABLE)
    if configured:
        return Path(configured)
    for folder in REPO.parents:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return None


def research_data_missing(name: str) -> str | None:
    """Why the data set `name` cannot be read here, or None when it is there."""
    directory = research_data_dir()
    if directory is not None and (directory / name).is_dir():
        return None
    where = f"not in {directory}" if directory is not None else "no shared/data beside the checkout"
    return (
        f"needs the research data set {name!r} ({DATA_SETS.get(name, 'research data')}; {where}). "
        "It is not in the repository (research use only): "
        f"the team's shared/data, which CI has at ../shared/data beside the checkout; or set "
        f"{DIRECTORY_VARIABLE} to a folder holding {name}/. See docs/testing.md."
    )


def research_data_required() -> bool:
    return os.environ.get(REQUIRED_VARIABLE, "") == "1"
