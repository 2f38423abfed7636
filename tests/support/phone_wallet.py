"""The tests' phone wallet: tests/support/wallet/wallet.mjs (npm libraries we did not write), run by node.

Installed by scripts/test (scripts/install_test_wallet.py: locked, integrity-checked) into `.test-wallet/`.
`phone_wallet_answer` hands it the `openid4vp://` link the page shows and what a holder's phone would
hold: the reader CA it trusts, an issuer's signer key and certificate for its mdoc, the age elements.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from joserfc.jwk import ECKey

from checks.digital_id.request import NAMESPACES
from checks.digital_id.sandbox_wallet import Issuer
from checks.digital_id.trust import EU_AGE_ATTESTATION

WALLET_DIR = Path(__file__).resolve().parents[2] / ".test-wallet"
WALLET_SCRIPT = WALLET_DIR / "wallet.mjs"


def phone_wallet_answer(
    link: str,
    *,
    reader_ca_pem: bytes,
    issuer: Issuer,
    elements: dict | None = None,
    doc_type: str = EU_AGE_ATTESTATION,
    post_to: str | None = None,
    resolve_only: bool = False,
) -> dict:
    """What the wallet did: {"stage": "refused", "error"} or "resolved", or "answered" with the HTTP answer."""
    node = shutil.which("node")
    if node is None or not WALLET_SCRIPT.exists():
        raise AssertionError(f"{WALLET_SCRIPT} is missing: run scripts/test (or scripts/install_test_wallet.py)")
    given = {
        "link": link,
        "readerCaPem": reader_ca_pem.decode(),
        "issuer": {
            "keyJwk": ECKey.import_key(issuer.signer_key).as_dict(private=True),
            "certPem": issuer.signer.public_bytes(serialization.Encoding.PEM).decode(),
        },
        "docType": doc_type,
        "namespace": NAMESPACES[doc_type],
        "elements": elements if elements is not None else {"age_over_18": True},
        "postTo": post_to,
        "resolveOnly": resolve_only,
    }
    completed = subprocess.run(
        [node, str(WALLET_SCRIPT)], input=json.dumps(given), capture_output=True, text=True, cwd=WALLET_DIR, timeout=60
    )
    if completed.returncode != 0:
        raise AssertionError(f"the wallet failed: {completed.stderr[-3000:]}")
    return json.loads(completed.stdout)
