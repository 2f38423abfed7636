"""The licence report: every package installed in this virtualenv, its version and licence, held to the
allow-list in requirements/licences.toml. Exit 1, naming them, if any package's licence is not allowed.

    .venv/bin/python scripts/licences.py            # the report, then the verdict
    .venv/bin/python scripts/licences.py --quiet    # the verdict only

The licences come from each package's metadata, as pip-licenses reads it (its License-Expression, else
its License field or trove classifiers).
"""

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ALLOW_LIST = REPO / "requirements" / "licences.toml"


def installed() -> list[dict]:
    """[{"Name", "Version", "License"}] of everything installed beside this Python, pip's own tools included."""
    printed = subprocess.run(
        [sys.executable, "-m", "piplicenses", "--from=mixed", "--with-system", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(json.loads(printed), key=lambda package: package["Name"].lower())


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def licence_allowed(expression: str, allowed: set[str]) -> bool:
    """Whether one alternative (joined by OR) has every part (joined by AND, or ';' between classifiers) allowed."""
    if expression in allowed:  # a name with parentheses of its own, such as the MPL's classifier
        return True
    for alternative in re.split(r"\s+OR\s+", expression):
        parts = [part.strip() for part in re.split(r"\s+AND\s+|;", alternative) if part.strip()]
        # A part may carry a parenthesis of a grouped expression: "(MIT", "Apache-2.0)".
        if parts and all(part in allowed or part.strip("()") in allowed for part in parts):
            return True
    return False


def verdicts(packages: list[dict], allow_list: dict) -> list[tuple[dict, str]]:
    """(package, "" if accepted else why not) for each package."""
    allowed = set(allow_list["allowed"]["licences"])
    recorded = {_canonical(name): entry for name, entry in allow_list.get("packages", {}).items()}
    found = []
    for package in packages:
        licence = package["License"]
        entry = recorded.get(_canonical(package["Name"]))
        if entry is not None:
            wrong = "" if licence == entry["reported"] else f"recorded as {entry['reported']!r}: decide again"
        else:
            wrong = "" if licence_allowed(licence, allowed) else "not in the allow-list"
        found.append((package, wrong))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="print the verdict only")
    args = parser.parse_args()
    allow_list = tomllib.loads(ALLOW_LIST.read_text())
    found = verdicts(installed(), allow_list)
    if not args.quiet:
        width = max(len(package["Name"]) for package, _ in found)
        for package, wrong in found:
            line = f"{package['Name']:<{width}}  {package['Version']:<20}  {package['License']}"
            print(line + (f"  <- {wrong}" if wrong else ""))
    refused = [(package, wrong) for package, wrong in found if wrong]
    for package, wrong in refused:
        print(f"refused: {package['Name']} {package['Version']}: {package['License']!r} {wrong}", file=sys.stderr)
    print(f"{len(found)} packages, {len(refused)} refused (allow-list: {ALLOW_LIST.relative_to(REPO)})")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
