"""ageverify-client is its own distribution: installed (scripts/setup-env.sh), typed, and free of the service."""

import ast
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import ageverify_client

PACKAGE = Path(ageverify_client.__file__).parent
DEPENDENCIES = {"requests", "standardwebhooks"}


def test_the_distribution_is_installed_with_its_two_minimum_pinned_dependencies():
    distribution = importlib.metadata.distribution("ageverify-client")

    assert distribution.version == ageverify_client.__version__
    requirements = {req.split(">=")[0].strip(): req for req in distribution.requires}
    assert set(requirements) == DEPENDENCIES
    assert all(">=" in requirement for requirement in requirements.values())


def test_the_package_is_marked_typed():
    assert (PACKAGE / "py.typed").is_file()


def test_the_client_imports_only_the_standard_library_and_its_dependencies():
    allowed = set(sys.stdlib_module_names) | DEPENDENCIES | {"urllib3"}  # urllib3: requests' own transport
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            wrong = {name for name in names if name.split(".")[0] not in allowed | {"__future__"}}
            assert not wrong, (path.name, wrong)


def _mypy(tmp_path, *targets: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "mypy-cache"), *targets],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_client_passes_mypy_strict(tmp_path):
    assert "no issues found" in _mypy(tmp_path, str(PACKAGE))


def test_a_partner_s_code_gets_the_client_s_types(tmp_path):
    """Through the installed package and its py.typed marker, as a partner's type checker sees it."""
    (tmp_path / "partner.py").write_text(
        "from ageverify_client import AgeVerify\n"
        "av = AgeVerify('av_test_x', base_url='http://127.0.0.1')\n"
        "result = av.sessions.get('ses_x')\n"
        "reveal_type(result.validate_doc)\n"
        "reveal_type(av.sessions.create(subject='u', age_limit=18).client_secret)\n"
    )
    output = _mypy(tmp_path, "partner.py")
    assert 'Revealed type is "ageverify_client.models.ValidateDoc | None"' in output
    assert 'Revealed type is "str | None"' in output
