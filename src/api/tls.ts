import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

/** What the API server needs to serve HTTPS and authenticate its admin. */
export interface ServingMaterial {
  readonly caCertPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** Bearer token of the built-in admin user. */
  readonly adminToken: string;
}

const FILES = { caCert: 'ca.crt', caKey: 'ca.key', cert: 'apiserver.crt', key: 'apiserver.key', token: 'admin.token' } as const;

function newRsaKey(): { forgeKey: forge.pki.rsa.PrivateKey; forgePub: forge.pki.rsa.PublicKey; pem: string } {
  // Node's native RSA generation (milliseconds) instead of forge's pure-JS one (seconds).
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  const forgePub = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
  return { forgeKey, forgePub, pem };
}

function serial(): string {
  // Positive serial: clear the top bit.
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

function makeCa(): { certPem: string; keyPem: string } {
  const k = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = k.forgePub;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000);
  const attrs = [{ name: 'commonName', value: 'stowage-ca' }];
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

/** A leaf certificate the CA signs: a fresh key, the subject, the extensions (key usage and more). */
function signLeaf(
  caCertPem: string,
  caKeyPem: string,
  o: { subject: forge.pki.CertificateField[]; days: number; extensions: object[] },
): { certPem: string; keyPem: string } {
  const caCert = forge.pki.certificateFromPem(caCertPem);
  const caKey = forge.pki.privateKeyFromPem(caKeyPem);
  const k = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = k.forgePub;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + o.days * 24 * 3600 * 1000);
  cert.setSubject(o.subject);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true }, ...o.extensions]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: k.pem };
}

function makeServing(caCertPem: string, caKeyPem: string, hosts: readonly string[]): { certPem: string; keyPem: string } {
  const altNames = hosts.map((h) => (/^[\d.]+$/.test(h) || h.includes(':') ? { type: 7, ip: h } : { type: 2, value: h }));
  return signLeaf(caCertPem, caKeyPem, {
    subject: [{ name: 'commonName', value: 'stowage-apiserver' }],
    days: 5 * 365,
    extensions: [{ name: 'extKeyUsage', serverAuth: true }, { name: 'subjectAltName', altNames }],
  });
}

/**
 * A client certificate signed by the CA, for x509 authentication: CN `commonName` (the user),
 * O `organizations` (the groups), extended key usage clientAuth. E.g. a node's
 * (`system:node:<name>`, `system:nodes`) or the API server's own towards nodes.
 */
export function issueClientCertificate(caCertPem: string, caKeyPem: string, o: { commonName: string; organizations?: readonly string[]; days?: number }): { certPem: string; keyPem: string } {
  return signLeaf(caCertPem, caKeyPem, {
    subject: [...(o.organizations ?? []).map((value) => ({ name: 'organizationName', value })), { name: 'commonName', value: o.commonName }],
    days: o.days ?? 365,
    extensions: [{ name: 'extKeyUsage', clientAuth: true }],
  });
}

/**
 * Loads the CA, serving certificate and admin token from `dir`, generating whichever is missing
 * (first start). Files are written with mode 0600. `hosts` are the serving certificate's SANs.
 */
export function ensureServingMaterial(dir: string, hosts: readonly string[]): ServingMaterial {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = (f: string): string => join(dir, f);
  const write = (f: string, s: string): void => writeFileSync(p(f), s, { mode: 0o600 });
  if (!existsSync(p(FILES.caCert)) || !existsSync(p(FILES.caKey))) {
    const ca = makeCa();
    write(FILES.caKey, ca.keyPem);
    write(FILES.caCert, ca.certPem);
  }
  const caCertPem = readFileSync(p(FILES.caCert), 'utf8');
  const caKeyPem = readFileSync(p(FILES.caKey), 'utf8');
  let regenerate = !existsSync(p(FILES.cert)) || !existsSync(p(FILES.key));
  if (!regenerate) {
    // A serving cert without one of the requested hosts (e.g. a new --address) is reissued.
    const cert = forge.pki.certificateFromPem(readFileSync(p(FILES.cert), 'utf8'));
    const san = cert.getExtension('subjectAltName') as { altNames?: Array<{ value?: string; ip?: string }> } | null;
    const have = new Set((san?.altNames ?? []).map((a) => a.ip ?? a.value ?? ''));
    regenerate = hosts.some((h) => !have.has(h));
  }
  if (regenerate) {
    const s = makeServing(caCertPem, caKeyPem, hosts);
    write(FILES.key, s.keyPem);
    write(FILES.cert, s.certPem);
  }
  if (!existsSync(p(FILES.token))) write(FILES.token, randomBytes(24).toString('base64url') + '\n');
  return {
    caCertPem,
    certPem: readFileSync(p(FILES.cert), 'utf8'),
    keyPem: readFileSync(p(FILES.key), 'utf8'),
    adminToken: readFileSync(p(FILES.token), 'utf8').trim(),
  };
}

/** A kubeconfig for `server` trusting `caCertPem` and authenticating with `token` or a client certificate. */
export function kubeconfigYaml(o: { server: string; caCertPem: string; token?: string; clientCert?: { certPem: string; keyPem: string }; user?: string; cluster?: string }): string {
  const cluster = o.cluster ?? 'stowage';
  const user = o.user ?? 'admin';
  const ca = Buffer.from(o.caCertPem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${cluster}`,
    '  cluster:',
    `    server: ${o.server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    ...(o.token ? [`    token: ${o.token}`] : []),
    ...(o.clientCert
      ? [`    client-certificate-data: ${Buffer.from(o.clientCert.certPem).toString('base64')}`, `    client-key-data: ${Buffer.from(o.clientCert.keyPem).toString('base64')}`]
      : []),
    'contexts:',
    `- name: ${cluster}`,
    '  context:',
    `    cluster: ${cluster}`,
    `    user: ${user}`,
    `current-context: ${cluster}`,
    '',
  ].join('\n');
}
