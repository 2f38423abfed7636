"""Writes the generated reference pages: docs/configuration.md and deploy/env.example from the settings'
own reads of the environment, docs/api-reference.md from the OpenAPI document.

Every variable is read through ageverify/env.py's reader, which records its form, default, meaning and
whether production sets it; this script loads the settings (and gunicorn.conf.py) with an empty
environment (DEBUG on) and writes both files from that record, then asks drf-spectacular for the OpenAPI
document those settings serve at /v1/openapi.json. `--check` writes nothing and fails, showing the
difference, when a committed file is not what it would write (tests/test_configuration.py and
tests/docs/test_site.py run it).

    .venv/bin/python scripts/reference_docs.py          # rewrite the three files
    .venv/bin/python scripts/reference_docs.py --check  # exit 1 if one differs
"""

import argparse
import difflib
import importlib
import os
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ageverify import env as environment  # noqa: E402

REFERENCE = REPO / "docs" / "configuration.md"
ENV_EXAMPLE = REPO / "deploy" / "env.example"
API_REFERENCE = REPO / "docs" / "api-reference.md"
WRITER = "scripts/reference_docs.py"


def variables() -> list[environment.Variable]:
    """Every variable the settings and gunicorn.conf.py read, in the order they read them."""
    environment.ENV.environ = {"DEBUG": "1"}  # the defaults, whatever the caller's environment holds
    environment.ENV.variables.clear()
    sys.modules.pop("ageverify.settings", None)
    importlib.import_module("ageverify.settings")
    runpy.run_path(str(REPO / "gunicorn.conf.py"))
    return list(environment.ENV.variables.values())


def _sections(found: list[environment.Variable]) -> dict[str, list[environment.Variable]]:
    sections: dict[str, list[environment.Variable]] = {}
    for variable in found:
        sections.setdefault(variable.section, []).append(variable)
    return sections


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _default(variable: environment.Variable) -> str:
    if variable.default == "":
        return "empty"
    return variable.default if "`" in variable.default or " " in variable.default else f"`{variable.default}`"


def reference(found: list[environment.Variable]) -> str:
    lines = [
        "# Configuration",
        "",
        f"<!-- Written by {WRITER} from the reads in ageverify/settings.py and gunicorn.conf.py: change a",
        "     meaning or default there and run the script again; a test fails while this file differs. -->",
        "",
        "All settings are environment variables, each read once, in `ageverify/settings.py` (and the web",
        "server's worker count in `gunicorn.conf.py`), by one typed reader (`ageverify/env.py`). An empty value",
        "counts as unset. A value of the wrong form stops the process at start-up with a message that names",
        "the variable and the form it expects:",
        "",
        "```sh",
        "DEBUG=1 API_RATE_LIMIT_BURST=abc .venv/bin/python manage.py check",
        "# Configuration error: API_RATE_LIMIT_BURST must be an integer of at least 1; it is 'abc'",
        "```",
        "",
        "In production the units in `deploy/` read `/etc/ageverify/env`: `deploy/env.example` (written from",
        "the same reads) sets what a production installation must set and lists every other variable",
        "commented out with its default. The variables marked *development* below are for a laptop or the",
        "tests only and are not in it.",
        "",
    ]
    for section, members in _sections(found).items():
        lines += [f"## {section}", "", "| variable | form | default | meaning |", "|---|---|---|---|"]
        for variable in members:
            meaning = variable.meaning
            if variable.production == environment.SET:
                meaning += " (production sets it)"
            elif variable.production == environment.DEVELOPMENT:
                meaning = "*development*: " + meaning
            lines.append(
                f"| `{variable.name}` | {_cell(variable.form)} | {_cell(_default(variable))} | {_cell(meaning)} |"
            )
        lines.append("")
    return "\n".join(lines)


def env_example(found: list[environment.Variable]) -> str:
    lines = [
        "# /etc/ageverify/env (mode 0640, owner root:ageverify): read by every AgeVerify unit.",
        f"# Written by {WRITER} from the settings' reads; docs/configuration.md explains each variable.",
        "# Set the uncommented ones; the commented ones show their default (or an example) and may stay unset.",
    ]
    for section, members in _sections(found).items():
        members = [variable for variable in members if variable.production != environment.DEVELOPMENT]
        if not members:
            continue
        lines += ["", f"# --- {section} ---"]
        for variable in members:
            lines.append(f"# {variable.meaning} (default: {_default(variable)})".replace("`", ""))
            value = variable.value
            if " " in value or "<" in value:
                value = f'"{value}"'
            if variable.production == environment.SET:
                lines.append(f"{variable.name}={value}")
            else:
                lines.append(f"# {variable.name}={value}")
    return "\n".join(lines) + "\n"


def openapi_document() -> dict:
    """The OpenAPI document of /v1/openapi.json, from the settings `variables()` loaded."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "ageverify.settings"
    import django

    django.setup()
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def api_reference(document: dict) -> str:
    info = document["info"]
    lines = [
        "# API reference",
        "",
        f"<!-- Written by {WRITER} from the OpenAPI document the service serves: change the views' schema",
        "     and run the script again; a test fails while this file differs. -->",
        "",
        info["description"],
        "",
        f"The whole reference, with every field, example and answer, is the OpenAPI {document['openapi']}",
        "document the service serves at `/v1/openapi.json` (its `webhooks` describe the",
        'events it sends), shown by Swagger UI at [/v1/docs](/v1/docs) (with "Try it out") and by Redoc at',
        "[/v1/redoc](/v1/redoc); all their assets are served by the service itself, and `/` links them and",
        "the dashboard. Authentication is the `X-API-Key` header (secret keys) or a publishable key as `?key=`",
        "(the client endpoints of [SDK mode](integration-sdk.md)); errors are problem details",
        "([Errors and reasons](errors.md)).",
        "",
        f"Version {info['version']}. The operations, from that document:",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict]]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            by_tag.setdefault(operation.get("tags", ["other"])[0], []).append((method.upper(), path, operation))
    for tag, operations in by_tag.items():
        lines += [f"## {tag}", "", "| operation | request | answers |", "|---|---|---|"]
        for method, path, operation in operations:
            link = f"[{_cell(operation['summary'])}](/v1/redoc#operation/{operation['operationId']})"
            answers = ", ".join(sorted(operation["responses"]))
            lines.append(f"| {link} | `{method} {path}` | {answers} |")
        lines.append("")
    lines += ["## Webhooks", "", "| event | sent |", "|---|---|"]
    for name, hook in document.get("webhooks", {}).items():
        lines.append(f"| `{name}` | {_cell(hook['post']['summary'])} |")
    lines += ["", "How they are sent, retried and verified: [Webhooks](webhooks.md).", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    args = parser.parse_args()
    found = variables()
    written = {
        REFERENCE: reference(found),
        ENV_EXAMPLE: env_example(found),
        API_REFERENCE: api_reference(openapi_document()),
    }
    differ = False
    for path, text in written.items():
        current = path.read_text() if path.exists() else ""
        if current == text:
            continue
        if args.check:
            differ = True
            name = str(path.relative_to(REPO))
            sys.stdout.writelines(
                difflib.unified_diff(current.splitlines(True), text.splitlines(True), name, f"{name} (as written)")
            )
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(REPO)}")
    if differ:
        print(f"\nout of date: run .venv/bin/python {WRITER}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
