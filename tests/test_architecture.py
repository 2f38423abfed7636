"""The dependency direction of the README's architecture, read from the source's imports (no database, no Redis)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function, relative imports resolved."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (
                ".".join(package[: len(package) - node.level + 1] + [node.module or ""]) if node.level else node.module
            )
            base = base.strip(".")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _modules(package: str) -> dict[str, set[str]]:
    return {
        _module_name(path): _imports(path)
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle among the graph's own modules, or None."""
    visiting, done = [], set()

    def visit(module):
        if module in visiting:
            return visiting[visiting.index(module) :] + [module]
        if module in done:
            return None
        visiting.append(module)
        for target in sorted(graph[module] & graph.keys()):
            if target != module and (cycle := visit(target)):
                return cycle
        visiting.pop()
        done.add(module)
        return None

    return next((cycle for module in sorted(graph) if (cycle := visit(module))), None)


def test_there_is_no_import_circle_inside_sessions_api():
    assert _cycle(_modules("sessions_api")) is None


def test_the_sessions_api_domain_does_not_import_its_http_edge():
    for module, imported in _modules("sessions_api").items():
        if not module.startswith("sessions_api.api"):
            assert not {name for name in imported if name.startswith("sessions_api.api")}, module


def test_no_flow_module_imports_a_model_or_the_checks():
    for module, imported in _modules("flow").items():
        wrong = {
            name
            for name in imported
            if name.endswith(".models") or ".models." in name or name.split(".")[0] == "checks"
        }
        assert not wrong, (module, wrong)


@pytest.mark.parametrize(
    "package, allowed",
    [
        ("checks", {"checks"}),
        ("webhooks", {"webhooks", "tenants"}),
        ("tenants", {"tenants"}),
        ("sessions_api", {"sessions_api", "tenants", "checks", "webhooks"}),
        ("flow", {"flow", "sessions_api", "tenants", "webhooks"}),
    ],
)
def test_lower_apps_import_nothing_of_the_apps_above_them(package, allowed):
    ours = {"ageverify", "tenants", "sessions_api", "webhooks", "checks", "flow", "dashboard"}
    for module, imported in _modules(package).items():
        wrong = {name for name in imported if name.split(".")[0] in ours - allowed}
        assert not wrong, (module, wrong)


def test_the_checks_import_no_django():
    for module, imported in _modules("checks").items():
        assert not {name for name in imported if name.split(".")[0] == "django"}, module
