// A wallet's first look at a Digital Credentials API request, with libraries AgeVerify did not write:
// @openid4vc/openid4vp resolves the signed OpenID4VP request object (JAR, x509_san_dns / x509_hash client
// identifier, expected_origins), @animo-id/mdoc decodes the Annex C DeviceRequest and encodes the
// ReaderAuthentication, pkijs validates every x5c / x5chain against the roots the wallet trusts, and the
// platform's WebCrypto checks the signatures.
//
// stdin: {"digital": <the navigator.credentials.get `digital` member>, "origin": "...", "roots": ["PEM", ...]}
// stdout: {"<protocol>": [{"verified": true, ...} | {"verified": false, "error": "..."}], ...}
// Run by tests/support/wallet_libraries.py with the installed libraries (.wallet-libraries) as the cwd.

import { createHash, webcrypto } from "node:crypto";
import { DataItem, DeviceRequest, cborDecode, cborEncode } from "@animo-id/mdoc";
import { resolveOpenid4vpAuthorizationRequest } from "@openid4vc/openid4vp";
import * as jose from "jose";
import * as pkijs from "pkijs";

pkijs.setEngine("node", new pkijs.CryptoEngine({ name: "node", crypto: webcrypto }));

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => resolve(text));
}));

const roots = input.roots.map((pem) => {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
  return pkijs.Certificate.fromBER(der);
});

// The chain (leaf first, DER) up to one of the trusted roots, each certificate within its validity now.
async function chainVerify(ders) {
  const certs = ders.map((der) => pkijs.Certificate.fromBER(der));
  const engine = new pkijs.CertificateChainValidationEngine({ certs, trustedCerts: roots, checkDate: new Date() });
  const result = await engine.verify();
  if (!result.result) throw new Error(`x509 chain does not verify: ${result.resultMessage}`);
  return certs[0];
}

function sanDnsNames(leafDer) {
  const cert = pkijs.Certificate.fromBER(leafDer);
  const san = (cert.extensions || []).find((extension) => extension.extnID === "2.5.29.17");
  if (!san) return [];
  return san.parsedValue.altNames.filter((name) => name.type === 2).map((name) => name.value);
}

const callbacks = {
  hash: (data, alg) => new Uint8Array(createHash(alg.replace("-", "").toLowerCase()).update(data).digest()),
  getX509CertificateMetadata: (certificate) => ({
    sanDnsNames: sanDnsNames(Buffer.from(certificate, "base64")),
    sanUriNames: [],
  }),
  verifyJwt: async (signer, jwt) => {
    if (signer.method !== "x5c") return { verified: false };
    const leaf = await chainVerify(signer.x5c.map((der) => Buffer.from(der, "base64")));
    const pem = `-----BEGIN CERTIFICATE-----\n${Buffer.from(leaf.toSchema().toBER()).toString("base64")}\n-----END CERTIFICATE-----`;
    const key = await jose.importX509(pem, signer.alg);
    try {
      await jose.compactVerify(jwt.compact, key, { algorithms: [signer.alg] });
    } catch {
      return { verified: false };
    }
    return { verified: true, signerJwk: await jose.exportJWK(key) };
  },
};

async function openid4vpCheck(data) {
  const resolved = await resolveOpenid4vpAuthorizationRequest({
    authorizationRequestPayload: data,
    origin: input.origin,
    callbacks,
  });
  if (!resolved.jar) throw new Error("the request is not a signed request object");
  return {
    clientId: resolved.authorizationRequestPayload.client_id,
    clientIdPrefix: resolved.client.prefix ?? resolved.client.scheme,
    signer: resolved.jar.signer.method,
    typ: resolved.jar.jwt.header.typ,
    payload: resolved.authorizationRequestPayload,
  };
}

const COSE_ALGORITHMS = { [-7]: ["P-256", "SHA-256"], [-35]: ["P-384", "SHA-384"], [-36]: ["P-521", "SHA-512"] };

async function readerAuthCheck(data) {
  const deviceRequest = DeviceRequest.parse(Buffer.from(data.deviceRequest, "base64url"));
  const info = cborEncode([data.encryptionInfo, input.origin]);
  const transcript = [null, null, ["dcapi", new Uint8Array(createHash("sha256").update(info).digest())]];
  const docs = [];
  for (const docRequest of deviceRequest.docRequests) {
    if (!docRequest.readerAuth) throw new Error("no readerAuth");
    const [protectedBytes, unprotected, payload, signature] = docRequest.readerAuth;
    if (payload !== null && payload !== undefined) throw new Error("readerAuth payload must be detached");
    const protectedHeader = cborDecode(protectedBytes);
    const alg = protectedHeader.get ? protectedHeader.get(1) : protectedHeader[1];
    if (!(alg in COSE_ALGORITHMS)) throw new Error(`readerAuth algorithm ${alg}`);
    const x5chain = unprotected.get ? unprotected.get(33) : unprotected[33];
    const chain = x5chain instanceof Uint8Array ? [x5chain] : x5chain;
    const leaf = await chainVerify(chain);
    const authentication = cborEncode(
      DataItem.fromData(["ReaderAuthentication", transcript, docRequest.itemsRequest.dataItem]),
    );
    const toBeSigned = cborEncode(["Signature1", protectedBytes, new Uint8Array(0), authentication]);
    const [curve, hash] = COSE_ALGORITHMS[alg];
    const key = await webcrypto.subtle.importKey(
      "spki", leaf.subjectPublicKeyInfo.toSchema().toBER(), { name: "ECDSA", namedCurve: curve }, false, ["verify"],
    );
    if (!(await webcrypto.subtle.verify({ name: "ECDSA", hash }, key, signature, toBeSigned))) {
      throw new Error("readerAuth signature does not verify");
    }
    const items = docRequest.itemsRequest.data;
    docs.push({ docType: items instanceof Map ? items.get("docType") : items.docType, readerDnsNames: sanDnsNames(chain[0]) });
  }
  return { docRequests: docs };
}

// A wallet that takes signed requests only (HAIP, the EU reference wallet) refuses the unsigned variant too.
const checks = { "openid4vp-v1-signed": openid4vpCheck, "openid4vp-v1-unsigned": openid4vpCheck, "org-iso-mdoc": readerAuthCheck };
const output = {};
for (const { protocol, data } of input.digital.requests) {
  let outcome;
  try {
    outcome = { verified: true, ...(await checks[protocol](data)) };
  } catch (error) {
    outcome = { verified: false, error: String(error?.message ?? error).slice(0, 500) };
  }
  (output[protocol] ||= []).push(outcome);
}
process.stdout.write(JSON.stringify(output));
