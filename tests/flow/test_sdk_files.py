"""The JS SDK as served at /sdk/v1/: an ES2017 script, an ES module and types; CSP-safe, SSR-safe."""

import json
import re
import shutil
import subprocess

import pytest
from django.test import Client

NODE = shutil.which("node")
pytestmark = pytest.mark.django_db


@pytest.fixture
def served():
    client = Client()
    return {name: client.get(f"/sdk/v1/{name}") for name in ("ageverify.js", "ageverify.mjs", "ageverify.d.ts")}


def test_the_sdk_is_served_with_cors_and_caching_and_knows_the_services_origin(served, settings):
    script = served["ageverify.js"]
    assert script.status_code == 200 and script["Content-Type"].startswith("text/javascript")
    assert script["Access-Control-Allow-Origin"] == "*" and "max-age" in script["Cache-Control"]
    assert json.dumps(settings.PUBLIC_BASE_URL) in script.content.decode()
    assert b"export default AgeVerify" in served["ageverify.mjs"].content
    assert b"export type AgeVerifyErrorCode" in served["ageverify.d.ts"].content
    assert Client().get("/sdk/v1/other.js").status_code == 404


def test_the_sdk_needs_no_eval_no_inline_styles_no_workers_and_stays_small(served):
    for name in ("ageverify.js", "ageverify.mjs"):
        code = served[name].content.decode()
        for forbidden in (
            r"\beval\(",
            r"new Function",
            r"setTimeout\(\s*['\"]",
            r"innerHTML",
            r"setAttribute\(\s*['\"]style",
            r"<style",
            r"\bWorker\(",
            r"cssText",
        ):
            assert not re.search(forbidden, code), (name, forbidden)
        assert len(served[name].content) < 20_000


def test_every_typed_error_code_is_declared_in_the_types(served):
    types = served["ageverify.d.ts"].content.decode()
    for code in (
        "origin_not_allowed",
        "invalid_client_secret",
        "session_expired",
        "session_finished",
        "mode_mismatch",
        "camera_blocked",
        "storage_blocked",
    ):
        assert f'"{code}"' in types


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_importing_the_sdk_under_node_without_a_dom_does_nothing(served, tmp_path):
    module = tmp_path / "ageverify.mjs"
    module.write_bytes(served["ageverify.mjs"].content)
    script = tmp_path / "ageverify.js"
    script.write_bytes(served["ageverify.js"].content)
    check = f"""
    const before = Object.keys(globalThis).sort().join();
    const sdk = await import({json.dumps(str(module))});
    if (Object.keys(globalThis).sort().join() !== before) throw new Error("the module touched the global object");
    const result = await sdk.default("av_pk_test_abc").verify({{clientSecret: "ses_x_secret_y", onError: () => {{}}}});
    console.log(JSON.stringify({{type: result.type, code: result.error.code}}));
    """
    out = subprocess.run([NODE, "--input-type=module", "-e", check], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"type": "error", "code": "unsupported_environment"}
    classic = subprocess.run(
        [NODE, "-e", f"require({json.dumps(str(script))}); console.log(typeof AgeVerify)"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert classic.stdout.strip() == "function"
