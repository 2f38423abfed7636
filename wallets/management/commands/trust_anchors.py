"""`manage.py trust_anchors`: the issuer roots the digital-ID step trusts, per doc type and mode.

  trust_anchors add-pem FILE --source NAME --doc-type eu.europa.ec.av.1 [--doc-type ...] [--sandbox]
  trust_anchors load-vical FILE --provider-root ROOT.pem [--source NAME]
  trust_anchors load-etsi-list FILE --operator-cert OPERATOR.pem [--source NAME] [--doc-type ...]
  trust_anchors list
  trust_anchors remove --source NAME

Running add-pem or load-vical again for a source replaces what it gave before (the refresh). A
trusted list is believed only when its own signature verifies up to the provider root given here.
"""

from pathlib import Path

from cryptography import x509
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from checks.digital_id.trust import DOC_TYPES, EU_AGE_ATTESTATION
from checks.digital_id.trusted_list import TrustedListRejected, etsi_list_verify, vical_verify
from sessions_api.models import TrustAnchorRecord
from wallets.trust_anchors import trust_anchors_replace


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def _pem_certificates(path: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(_read(path))
    except ValueError:
        raise CommandError(f"{path} holds no PEM certificate") from None


class Command(BaseCommand):
    help = "Configure the trust anchors (IACA roots) of the digital-ID step, from PEM files or a signed VICAL."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        pem = actions.add_parser("add-pem", help="trust every certificate of a PEM file for the given doc types")
        pem.add_argument("file")
        pem.add_argument("--source", required=True, help="a name for this file, e.g. eu-av-providers")
        pem.add_argument("--doc-type", action="append", required=True, choices=DOC_TYPES, dest="doc_types")
        pem.add_argument("--sandbox", action="store_true", help="test issuers: they never approve a live session")
        vical = actions.add_parser("load-vical", help="verify a VICAL's signature and trust the roots it lists")
        vical.add_argument("file")
        vical.add_argument("--provider-root", required=True, help="PEM root of the list provider (e.g. AAMVA)")
        vical.add_argument("--source", default="vical")
        etsi = actions.add_parser(
            "load-etsi-list",
            help="verify an ETSI TS 119 612 list's XML signature (the EU "
            "lists' form) and trust its granted services' certificates",
        )
        etsi.add_argument("file")
        etsi.add_argument("--operator-cert", required=True, help="PEM certificate(s) of the list's scheme operator")
        etsi.add_argument("--source", default="eu-av")
        etsi.add_argument(
            "--doc-type",
            action="append",
            choices=DOC_TYPES,
            dest="doc_types",
            help=f"what its services may vouch for (default {EU_AGE_ATTESTATION})",
        )
        actions.add_parser("list", help="print the configured anchors")
        remove = actions.add_parser("remove", help="drop every anchor of a source")
        remove.add_argument("--source", required=True)

    def handle(self, *args, action, **options):
        getattr(self, "_" + action.replace("-", "_"))(**options)

    def _add_pem(self, *, file, source, doc_types, sandbox, **_):
        count = self._replace(
            source=f"pem:{source}", issuers=[(c, doc_types) for c in _pem_certificates(file)], sandbox=sandbox
        )
        self.stdout.write(
            f"pem:{source}: {count} anchor(s) for {', '.join(sorted(set(doc_types)))}{' (sandbox)' if sandbox else ''}"
        )

    def _load_vical(self, *, file, provider_root, source, **_):
        try:
            provider, listed = vical_verify(
                _read(file), provider_roots=_pem_certificates(provider_root), now=timezone.now()
            )
        except TrustedListRejected as rejected:
            raise CommandError(f"{file} rejected, nothing changed: {rejected}") from None
        count = self._replace(
            source=f"vical:{source}", issuers=[(i.certificate, i.doc_types) for i in listed], sandbox=False
        )
        self.stdout.write(f"vical:{source}: signature verified ({provider}); {count} anchor(s) loaded")

    def _load_etsi_list(self, *, file, operator_cert, source, doc_types, **_):
        doc_types = doc_types or [EU_AGE_ATTESTATION]
        try:
            operator, listed = etsi_list_verify(
                _read(file),
                operator_certificates=_pem_certificates(operator_cert),
                now=timezone.now(),
                doc_types=doc_types,
            )
        except TrustedListRejected as rejected:
            raise CommandError(f"{file} rejected, nothing changed: {rejected}") from None
        count = self._replace(
            source=f"etsi:{source}", issuers=[(i.certificate, i.doc_types) for i in listed], sandbox=False
        )
        self.stdout.write(
            f"etsi:{source}: signature verified ({operator}); {count} anchor(s) loaded for "
            f"{', '.join(sorted(set(doc_types)))}"
        )

    def _replace(self, **kwargs) -> int:
        try:
            return trust_anchors_replace(**kwargs)
        except ValueError as error:
            raise CommandError(str(error)) from None

    def _list(self, **_):
        for record in TrustAnchorRecord.objects.order_by("source", "subject"):
            self.stdout.write(
                f"{record.source}\t{'sandbox' if record.sandbox else 'live'}\t"
                f"{','.join(record.doc_types)}\t{record.subject}\tuntil {record.not_after:%Y-%m-%d}"
            )
        self.stdout.write("sandbox\tsandbox\tall doc types\tthe built-in test issuer")

    def _remove(self, *, source, **_):
        deleted, _ = TrustAnchorRecord.objects.filter(source=source).delete()
        self.stdout.write(f"{source}: {deleted} anchor(s) removed")
