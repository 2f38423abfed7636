"""Benchmark of the cross-device digital ID's per-user costs: the QR code, and the signed request object.

Run by hand from the repository root:  .venv/bin/python bench/digital_id_phone.py [--repeat N]
Times what the service does for one phone, with a self-made reader certificate: drawing the QR code
(segno, inline SVG) of a link as long as a real one, and building and signing the request object the
wallet fetches (claims from server state, chain checks, ES256 JWS). Prints the median and p95
wall-clock of each, and the sizes a wallet and a page receive (link, QR version, SVG, request object).
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


def _timed(repeat: int, work) -> str:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    return f"n={repeat} median={statistics.median(times):.2f} ms p95={p95:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="repetitions of each (default 200)")
    repeat = parser.parse_args().repeat

    import segno

    from checks.digital_id.cross_device import request_object_claims, wallet_link
    from checks.digital_id.reader import reader_identity_load, request_object_sign
    from checks.digital_id.request import wallet_request_new
    from checks.digital_id.trust import EU_AGE_ATTESTATION
    from tests.support.reader_ca import reader_ca_create, reader_files

    host = "verify.bench.example"
    key, chain = reader_files(reader_ca_create(), dns_name=host)
    identity = reader_identity_load(key_pem=key, chain_pem=chain)
    client_id = identity.client_id()
    request_id = "dcr_" + "x" * 32  # as long as the service's ids
    request = wallet_request_new(
        origin=f"https://{host}",
        doc_types=(EU_AGE_ATTESTATION,),
        age_limit=18,
        client_id=client_id,
        response_uri=f"https://{host}/wallet/openid4vp/response/{request_id}",
    )
    link = wallet_link(client_id=client_id, request_uri=f"https://{host}/wallet/openid4vp/request/{request_id}")
    now = datetime.datetime.now(datetime.UTC)

    def qr() -> str:
        return segno.make(link, error="m").svg_inline(scale=4, border=4, title="QR", dark="#000", light="#fff")

    def signed() -> str:
        claims = request_object_claims(request, now=now, wallet_nonce="bench-nonce")
        return request_object_sign(claims, identity=identity, client_id=client_id, now=now)

    print(f"{'QR code (SVG)':26s} {_timed(repeat, qr)}")
    print(f"{'request object (signed)':26s} {_timed(repeat, signed)}")
    print(
        f"sizes: link {len(link)} chars, QR version {segno.make(link, error='m').version}, "
        f"SVG {len(qr())} bytes, request object {len(signed())} bytes"
    )


if __name__ == "__main__":
    main()
