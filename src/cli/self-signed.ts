import { generateKeyPairSync, randomBytes } from "node:crypto";
import { isIP } from "node:net";
import forge from "node-forge";

// A certificate for local development, made in-process (node-forge builds and signs it; the keys
// are the runtime's own), so the single executable needs no openssl: a certificate authority of
// its own, and the server's certificate it signs. Clients trust the authority, as browsers and
// NODE_EXTRA_CA_CERTS trust one, never the server's certificate itself.

export interface LocalCertificate {
  /** The authority's certificate, PEM: what a client trusts. */
  ca: string;
  /** The server's certificate then the authority's, PEM: TLS_CERT_FILE. */
  cert: string;
  /** The server's private key, PKCS#8 PEM: TLS_KEY_FILE. */
  key: string;
}

const DAY_MS = 86_400_000;

function rsaKeys() {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { pem: privateKey, privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

function certificate(subject: string, days: number, publicKey: forge.pki.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial of 16 random bytes, as RFC 5280 asks (the top bit cleared).
  cert.serialNumber = `01${randomBytes(15).toString("hex")}`;
  cert.validity.notBefore = new Date(Date.now() - DAY_MS); // clocks a little behind still accept it
  cert.validity.notAfter = new Date(Date.now() + days * DAY_MS);
  cert.setSubject([{ name: "commonName", value: subject }]);
  return cert;
}

/** An authority and a server certificate for `hosts` (names and IP addresses), valid for `days`. */
export function localCertificate(hosts: string[], days: number): LocalCertificate {
  const authority = rsaKeys();
  const ca = certificate(`voxroute local development CA ${randomBytes(4).toString("hex")}`, days, authority.publicKey);
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  ca.sign(authority.privateKey, forge.md.sha256.create());

  const server = rsaKeys();
  const leaf = certificate(hosts[0] ?? "localhost", days, server.publicKey);
  leaf.setIssuer(ca.subject.attributes);
  leaf.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
    { name: "authorityKeyIdentifier", keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  leaf.sign(authority.privateKey, forge.md.sha256.create());
  const caPem = forge.pki.certificateToPem(ca);
  return { ca: caPem, cert: forge.pki.certificateToPem(leaf) + caPem, key: server.pem };
}
