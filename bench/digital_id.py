"""Benchmark of the digital-ID verifier: one wallet answer verified offline, per protocol.

Run by hand from the repository root:  .venv/bin/python bench/digital_id.py [--repeat N]
Mints answers with a self-made issuer (not timed), then times `presentation_verify` alone:
decryption, CBOR decoding, certificate path, MSO and device signatures, digests. Prints the
median and p95 wall-clock per answer, and how many of each kind were accepted or refused.
Then times building the browser's request, unsigned and signed with a self-made reader certificate
(chain checks, the signed request object and Annex C readerAuth), which the flow does on each page load.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # bench/ must not shadow the checks package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="answers per protocol (default 200)")
    repeat = parser.parse_args().repeat

    from checks.digital_id.refusals import PresentationRefused
    from checks.digital_id.request import PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP, browser_request, wallet_request_new
    from checks.digital_id.sandbox_wallet import issuer_create, wallet_present
    from checks.digital_id.trust import EU_AGE_ATTESTATION
    from checks.digital_id.verifier import presentation_verify

    now = datetime.datetime.now(datetime.UTC)
    issuer = issuer_create()
    anchors = [issuer.anchor(doc_types=[EU_AGE_ATTESTATION], sandbox=False, source="bench")]
    for protocol in (PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP):
        answers = []
        for _ in range(repeat):
            request = wallet_request_new(origin="https://bench.example", doc_types=(EU_AGE_ATTESTATION,), age_limit=18)
            answers.append(
                (
                    request,
                    wallet_present(
                        browser_request(request),
                        issuer=issuer,
                        protocol=protocol,
                        origin=request.origin,
                        doc_type=EU_AGE_ATTESTATION,
                        elements={"age_over_18": True},
                        now=now,
                    ),
                )
            )
        times, outcomes = [], {}
        for request, data in answers:
            started = time.perf_counter()
            try:
                outcome = presentation_verify(
                    request=request, protocol=protocol, data=data, anchors=anchors, live=True, now=now
                ).outcome
            except PresentationRefused as refused:
                outcome = refused.code
            times.append((time.perf_counter() - started) * 1000)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        times.sort()
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        print(
            f"{protocol:22s} n={repeat} median={statistics.median(times):.2f} ms p95={p95:.2f} ms outcomes={outcomes}"
        )
    _request_building(repeat, now)


def _request_building(repeat: int, now: datetime.datetime) -> None:
    from checks.digital_id.reader import reader_identity_load
    from checks.digital_id.request import browser_request, wallet_request_new
    from checks.digital_id.signed_request import browser_request_signed
    from checks.digital_id.trust import EU_AGE_ATTESTATION
    from tests.support.reader_ca import reader_ca_create, reader_files

    key, chain = reader_files(reader_ca_create(), dns_name="bench.example")
    identity = reader_identity_load(key_pem=key, chain_pem=chain)
    client_id = identity.client_id()
    builders = {
        "request unsigned": lambda request: browser_request(request),
        "request signed": lambda request: browser_request_signed(
            request, identity=identity, client_id=client_id, now=now
        ),
    }
    for name, build in builders.items():
        times = []
        for _ in range(repeat):
            request = wallet_request_new(origin="https://bench.example", doc_types=(EU_AGE_ATTESTATION,), age_limit=18)
            started = time.perf_counter()
            build(request)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        print(f"{name:22s} n={repeat} median={statistics.median(times):.2f} ms p95={p95:.2f} ms")


if __name__ == "__main__":
    main()
