// A phone's wallet for the tests, built only from libraries AgeVerify did not write:
// @openid4vc/openid4vp resolves the `openid4vp://` link (fetches the request URI, checks the signed request
// object and its x509_san_dns client identifier), @peculiar/x509 and jose check the x5c chain up to the
// reader CA the test trusts, @auth0/mdl issues the mdoc and signs the DeviceResponse over the OpenID4VP
// handover, and the answer goes back by direct_post.jwt (a JWE made by jose).
//
// stdin: {"link", "readerCaPem", "issuer": {"keyJwk", "certPem"}, "docType", "namespace", "elements",
//         "postTo"?: another response URI to answer to (an answer for another session)}
// stdout: {"stage": "resolved"|"refused"|"answered", "error"?, "status"?, "body"?, "form"?: the posted body}
import { createHash, randomBytes, webcrypto } from "node:crypto";
import { Openid4vpClient } from "@openid4vc/openid4vp";
import { clientAuthenticationNone, setGlobalConfig } from "@openid4vc/oauth2";
import * as jose from "jose";
import * as x509 from "@peculiar/x509";
import mdl from "@auth0/mdl";
import mdlCbor from "@auth0/mdl/lib/cbor/index.js";

x509.cryptoProvider.set(webcrypto);
// The tests' live server is plain HTTP on loopback; the library otherwise insists on https:// URLs.
setGlobalConfig({ allowInsecureUrls: true });
const { Document, MDoc, DeviceResponse, DataItem } = mdl;
const { cborEncode } = mdlCbor;

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => resolve(text));
}));
const b64url = (bytes) => Buffer.from(bytes).toString("base64url");
const out = (result) => { process.stdout.write(JSON.stringify(result)); };

// The request's signature: the leaf in x5c must chain to the reader CA the wallet trusts, and sign the JWT.
async function verifyJwt(signer, jwt) {
  if (signer.method !== "x5c") { return { verified: false }; }
  const chain = signer.x5c.map((der) => new x509.X509Certificate(Buffer.from(der, "base64")));
  const anchor = new x509.X509Certificate(input.readerCaPem);
  const now = new Date();
  const links = [...chain, anchor];
  for (let index = 0; index < chain.length; index += 1) {
    const certificate = links[index];
    if (certificate.notBefore > now || certificate.notAfter < now) { return { verified: false }; }
    const issuer = index + 1 < chain.length ? links[index + 1] : anchor;
    if (!(await certificate.verify({ publicKey: issuer.publicKey, signatureOnly: true }))) { return { verified: false }; }
  }
  const leafKey = await chain[0].publicKey.export();
  const signerJwk = await jose.exportJWK(leafKey);
  try {
    await jose.compactVerify(jwt.compact, leafKey);
  } catch {
    return { verified: false, signerJwk };
  }
  return { verified: true, signerJwk };
}

function getX509CertificateMetadata(certificate) {
  const parsed = new x509.X509Certificate(Buffer.from(certificate, "base64"));
  const san = parsed.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san ? san.names.items : [];
  return {
    sanDnsNames: names.filter((name) => name.type === "dns").map((name) => name.value),
    sanUriNames: names.filter((name) => name.type === "url").map((name) => name.value),
  };
}

async function encryptJwe(encryptor, data) {
  const key = await jose.importJWK(encryptor.publicJwk, encryptor.alg);
  const header = { alg: encryptor.alg, enc: encryptor.enc, kid: encryptor.publicJwk.kid };
  if (encryptor.apu) { header.apu = encryptor.apu; }
  if (encryptor.apv) { header.apv = encryptor.apv; }
  const jwe = await new jose.CompactEncrypt(new TextEncoder().encode(data)).setProtectedHeader(header).encrypt(key);
  return { encryptionJwk: encryptor.publicJwk, jwe };
}

const callbacks = {
  fetch,
  verifyJwt,
  getX509CertificateMetadata,
  encryptJwe,
  hash: (data, alg) => createHash(alg.replace("-", "").toLowerCase()).update(data).digest(),
  generateRandom: (length) => randomBytes(length),
  signJwt: () => { throw new Error("the wallet signs no JWT here"); },
  decryptJwe: () => { throw new Error("the wallet decrypts no JWE here"); },
  clientAuthentication: clientAuthenticationNone({ clientId: "wallet" }),
};
const client = new Openid4vpClient({ callbacks });

let resolved;
try {
  const parsed = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: input.link });
  resolved = await client.resolveOpenId4vpAuthorizationRequest({ authorizationRequestPayload: parsed.params });
} catch (error) {
  out({ stage: "refused", error: String(error && (error.message || error)).slice(0, 2000) });
  process.exit(0);
}
const request = resolved.authorizationRequestPayload;
if (input.resolveOnly) {
  out({ stage: "resolved", clientId: request.client_id, responseMode: request.response_mode });
  process.exit(0);
}

// The holder's mdoc, issued by the test's issuer to this wallet's device key.
const deviceKeys = await jose.generateKeyPair("ES256", { extractable: true });
const devicePublicJwk = await jose.exportJWK(deviceKeys.publicKey);
const devicePrivateJwk = await jose.exportJWK(deviceKeys.privateKey);
const now = new Date();
const issued = await new Document(input.docType)
  .addIssuerNameSpace(input.namespace, input.elements)
  .useDigestAlgorithm("SHA-256")
  .addValidityInfo({ signed: now, validFrom: now, validUntil: new Date(now.getTime() + 30 * 86400000) })
  .addDeviceKeyInfo({ deviceKey: devicePublicJwk })
  .sign({ issuerPrivateKey: input.issuer.keyJwk, issuerCertificate: input.issuer.certPem, alg: "ES256" });

// OpenID4VP 1.0 B.2.6.1: SessionTranscript = [null, null, ["OpenID4VPHandover",
//   SHA-256(CBOR([client_id, nonce, JWK thumbprint of the verifier's encryption key, response_uri]))]]
const encryptionJwk = request.client_metadata.jwks.keys[0];
const thumbprint = Buffer.from(await jose.calculateJwkThumbprint(encryptionJwk, "sha256"), "base64url");
const handoverInfo = cborEncode([request.client_id, request.nonce, thumbprint, request.response_uri]);
const handover = ["OpenID4VPHandover", createHash("sha256").update(handoverInfo).digest()];
const transcriptBytes = cborEncode(DataItem.fromData([null, null, handover]));

const query = request.dcql_query.credentials[0];
const definition = {
  id: "age",
  input_descriptors: [{
    id: input.docType,
    format: { mso_mdoc: { alg: ["ES256"] } },
    constraints: {
      limit_disclosure: "required",
      fields: query.claims.filter((claim) => claim.path[1] in input.elements).map((claim) => ({
        path: [`$['${claim.path[0]}']['${claim.path[1]}']`], intent_to_retain: false,
      })),
    },
  }],
};
const presented = await DeviceResponse.from(new MDoc([issued]))
  .usingPresentationDefinition(definition)
  .usingSessionTranscriptBytes(transcriptBytes)
  .authenticateWithSignature(devicePrivateJwk, "ES256")
  .sign();

const response = await client.createOpenid4vpAuthorizationResponse({
  authorizationRequestPayload: request,
  authorizationResponsePayload: { vp_token: { [query.id]: [b64url(presented.encode())] } },
  jarm: {
    encryption: { nonce: b64url(randomBytes(16)) },
    serverMetadata: {
      authorization_encryption_alg_values_supported: ["ECDH-ES"],
      authorization_encryption_enc_values_supported: ["A128GCM", "A256GCM"],
    },
  },
});
const target = input.postTo || request.response_uri;
const submitted = await client.submitOpenid4vpAuthorizationResponse({
  authorizationRequestPayload: { response_uri: target },
  authorizationResponsePayload: response.authorizationResponsePayload,
  jarm: { responseJwt: response.jarm.responseJwt },
});
const form = new URLSearchParams({ response: response.jarm.responseJwt }).toString();  // to replay it
out({ stage: "answered", status: submitted.response.status, body: await submitted.response.text(), form });
