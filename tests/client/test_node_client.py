"""The Node client (clients/node): its own tests against the running service, and the package npm packs.

The service is the Python client's gunicorn (conftest.py); the webhooks come from this process's Celery
worker, which trusts the receiver certificate the Node test serves; a real `webhook.test` event is recorded
here for the Node test to verify. The package is packed from a copy of the sources without `dist/`, as a
clone has them, and installed into an empty project as a partner would.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.factories import SETUP
from webhooks.services import webhook_test_send

NODE_CLIENT = Path(__file__).resolve().parents[2] / "clients" / "node"
pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="needs Node")


def _run(command: list[str], cwd: Path = NODE_CLIENT) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _npm(*args: str, cwd: Path = NODE_CLIENT) -> str:
    return _run(["npm", *args], cwd=cwd)


@pytest.fixture(scope="module")
def built_node_client():
    """Installed from package-lock.json (npm's cache serves it after the first time) and compiled."""
    if not (NODE_CLIENT / "node_modules" / "typescript").is_dir():
        _npm("ci", "--no-audit", "--no-fund")
    _npm("run", "build")
    return NODE_CLIENT


def test_the_node_client_passes_its_tests_against_the_service(
    built_node_client, service, tenant, celery_worker, receiver, tls_files, tmp_path
):
    webhook_test_send(tenant=tenant.tenant, mode="test", url=receiver.url(), actor=SETUP)
    [test_event] = receiver.wait_for(1, timeout=15)
    recorded = tmp_path / "test-event.json"
    recorded.write_text(json.dumps({"body": test_event.body.decode(), "headers": dict(test_event.headers)}))

    result = subprocess.run(
        ["node", "--test", "test/"],
        cwd=built_node_client,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": os.environ["PATH"],
            "AGEVERIFY_BASE_URL": service,
            "AGEVERIFY_TEST_KEY": tenant.test_key,
            "AGEVERIFY_WEBHOOK_SECRET": tenant.tenant.test_webhook_secret,
            "AGEVERIFY_TEST_EVENT": str(recorded),
            "TLS_CERT": str(tls_files.cert_chain),
            "TLS_KEY": str(tls_files.key),
        },
    )

    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout and "# pass 15" in result.stdout, result.stdout[-2000:]


def _sources_as_cloned(built_node_client: Path, folder: Path) -> Path:
    """The client's files as a clone has them: no dist/, no node_modules/."""
    sources = folder / "client"
    shutil.copytree(built_node_client, sources, ignore=shutil.ignore_patterns("node_modules", "dist", "*.tgz"))
    return sources


def _partner_installs(spec: str, folder: Path) -> Path:
    """An empty project of a partner's that installs the client as `spec` says (tarball, git URL)."""
    partner = folder / "partner"
    partner.mkdir()
    (partner / "package.json").write_text(json.dumps({"name": "partner", "private": True}))
    _npm("install", "--prefer-offline", "--no-audit", "--no-fund", spec, cwd=partner)
    return partner


def _assert_imports_from_esm_and_commonjs(partner: Path) -> None:
    esm = _run(
        ["node", "--input-type=module", "-e", USE_THE_CLIENT.format(load="import * as av from '@ageverify/client';")],
        cwd=partner,
    )
    cjs = _run(["node", "-e", USE_THE_CLIENT.format(load="const av = require('@ageverify/client');")], cwd=partner)
    assert esm == cjs == "function function test\n"


@pytest.fixture(scope="module")
def packed_node_client(built_node_client, tmp_path_factory):
    """`npm pack` of a clone's sources, with the devDependencies installed beside them."""
    sources = _sources_as_cloned(built_node_client, tmp_path_factory.mktemp("node-client"))
    (sources / "node_modules").symlink_to(built_node_client / "node_modules")
    [packed] = json.loads(_npm("pack", "--json", "--pack-destination", str(sources.parent), cwd=sources))
    return sources.parent / packed["filename"], {file["path"] for file in packed["files"]}


def test_npm_pack_builds_the_package_with_es_modules_commonjs_and_types(packed_node_client):
    _, files = packed_node_client

    for entry in ("index", "errors", "transport", "types", "webhooks"):
        assert {
            f"dist/esm/{entry}.js",
            f"dist/esm/{entry}.d.ts",
            f"dist/cjs/{entry}.js",
            f"dist/cjs/{entry}.d.ts",
        } <= files
    assert "dist/cjs/package.json" in files
    assert not [name for name in files if name.startswith(("src/", "test/", "node_modules/"))]


def test_the_packed_package_installs_and_imports_from_esm_commonjs_and_typescript(packed_node_client, tmp_path):
    tarball, _ = packed_node_client
    partner = _partner_installs(str(tarball), tmp_path)

    _assert_imports_from_esm_and_commonjs(partner)
    # A partner's TypeScript, compiled strictly as ES module and as CommonJS, sees the declarations.
    (partner / "esm.mts").write_text(TYPED_PARTNER_CODE)
    (partner / "cjs.cts").write_text(TYPED_PARTNER_CODE)
    tsc = ["node", str(NODE_CLIENT / "node_modules" / "typescript" / "bin" / "tsc"), "--noEmit", "--strict"]
    tsc += ["--module", "NodeNext", "--moduleResolution", "NodeNext", "--skipLibCheck"]
    _run([*tsc, "esm.mts", "cjs.cts"], cwd=partner)
    (partner / "wrong.mts").write_text(
        TYPED_PARTNER_CODE
        + "client.sessions.get(42);\n"
        + 'client.sandbox.advance("ses_x", "approved", { reason: "document_expired" });\n'
    )
    refused = subprocess.run([*tsc, "wrong.mts"], cwd=partner, capture_output=True, text=True, timeout=300)
    errors = [line for line in refused.stdout.splitlines() if "error TS" in line]
    assert len(errors) == 2, refused.stdout
    assert "Argument of type 'number' is not assignable to parameter of type 'string'" in errors[0]
    assert """Type '"document_expired"' is not assignable to type 'ApprovedReason | undefined'""" in errors[1]


def test_an_install_from_a_git_url_builds_the_package(built_node_client, tmp_path):
    """npm clones the repository, installs its devDependencies and runs `prepare` before packing it."""
    repository = _sources_as_cloned(built_node_client, tmp_path)
    git = ["git", "-c", "user.name=partner", "-c", "user.email=partner@example.com"]
    _run(["git", "init", "-q"], cwd=repository)
    _run(["git", "add", "."], cwd=repository)
    _run([*git, "commit", "-q", "-m", "The Node client alone"], cwd=repository)

    partner = _partner_installs(f"git+file://{repository}", tmp_path)

    _assert_imports_from_esm_and_commonjs(partner)
    assert (partner / "node_modules" / "@ageverify" / "client" / "dist" / "cjs" / "index.d.ts").is_file()


USE_THE_CLIENT = """{load}
const client = new av.AgeVerify("av_test_x", {{ baseUrl: "http://127.0.0.1:9" }});
console.log(typeof av.AgeVerify, typeof client.sessions.get, av.TEST_EVENT.split(".")[1]);
"""

TYPED_PARTNER_CODE = """import { AgeVerify, type SessionResult, type Status } from "@ageverify/client";
const client: AgeVerify = new AgeVerify("av_test_x", { baseUrl: "http://127.0.0.1:9" });
declare const result: SessionResult;
const status: Status = result.session.status;
export const pending: Promise<SessionResult> = client.sessions.get("ses_x");
export const denied = client.sandbox.advance("ses_x", "denied", { reason: "document_expired" });
export { status };
"""
