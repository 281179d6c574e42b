/** X.509 material: RSA keys, serials and leaf certificates (server or client), signed by a CA or by themselves. */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export function newRsaKey(): { forgeKey: forge.pki.rsa.PrivateKey; forgePub: forge.pki.rsa.PublicKey; pem: string } {
  // Node's native RSA generation (milliseconds) instead of forge's pure-JS one (seconds).
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  const forgePub = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
  return { forgeKey, forgePub, pem };
}

export function serial(): string {
  // Positive serial: clear the top bit.
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

/** A self-signed CA certificate and its key. */
export function issueCa(commonName: string, validDays: number): { certPem: string; keyPem: string } {
  const k = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = k.forgePub;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + validDays * 24 * 3600 * 1000);
  const attrs = [{ name: 'commonName', value: commonName }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(k.forgeKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: k.pem };
}

export interface LeafRequest {
  readonly commonName: string;
  /** Organizations: Kubernetes reads them as the client's groups. */
  readonly organizations?: readonly string[];
  /** Server certificates: the SANs (IP addresses or DNS names). */
  readonly hosts?: readonly string[];
  readonly usage: 'server' | 'client';
  /** Signed by this CA; self-signed when left out. */
  readonly ca?: { readonly certPem: string; readonly keyPem: string };
  readonly validDays: number;
}

/** A key and a certificate for it. */
export function issueLeaf(r: LeafRequest): { certPem: string; keyPem: string } {
  const k = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = k.forgePub;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + r.validDays * 24 * 3600 * 1000);
  const subject = [
    { name: 'commonName', value: r.commonName },
    ...(r.organizations ?? []).map((o) => ({ name: 'organizationName', value: o })),
  ];
  cert.setSubject(subject);
  cert.setIssuer(r.ca ? forge.pki.certificateFromPem(r.ca.certPem).subject.attributes : subject);
  const altNames = (r.hosts ?? []).map((h) =>
    /^[\d.]+$/.test(h) || h.includes(':') ? { type: 7, ip: h } : { type: 2, value: h },
  );
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: r.usage === 'server', clientAuth: r.usage === 'client' },
    ...(altNames.length ? [{ name: 'subjectAltName', altNames }] : []),
  ]);
  cert.sign(r.ca ? forge.pki.privateKeyFromPem(r.ca.keyPem) : k.forgeKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: k.pem };
}
