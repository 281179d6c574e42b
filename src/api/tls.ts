import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { issueCa, issueLeaf } from '../util/pki.js';
import { KUBELET_CLIENT_CN, KUBELET_CLIENT_ORG } from '../kube/names.js';

/** What the API server needs to serve HTTPS and authenticate its admin. */
export interface ServingMaterial {
  readonly caCertPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** Bearer token of the built-in admin user. */
  readonly adminToken: string;
  /** The API server's client certificate towards node agents (kube's --kubelet-client-certificate). */
  readonly kubeletClient: { readonly certPem: string; readonly keyPem: string };
}

const FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  cert: 'apiserver.crt',
  key: 'apiserver.key',
  token: 'admin.token',
  kubeletCert: 'apiserver-kubelet-client.crt',
  kubeletKey: 'apiserver-kubelet-client.key',
} as const;

function makeCa(): { certPem: string; keyPem: string } {
  return issueCa('stowage-ca', 10 * 365);
}

function makeServing(
  caCertPem: string,
  caKeyPem: string,
  hosts: readonly string[],
): { certPem: string; keyPem: string } {
  return issueLeaf({
    commonName: 'stowage-apiserver',
    hosts,
    usage: 'server',
    ca: { certPem: caCertPem, keyPem: caKeyPem },
    validDays: 5 * 365,
  });
}

/**
 * A client certificate signed by the CA, for x509 authentication: CN `commonName` (the user),
 * O `organizations` (the groups), extended key usage clientAuth. E.g. a node's
 * (`system:node:<name>`, `system:nodes`) or the API server's own towards nodes.
 */
export function issueClientCertificate(
  caCertPem: string,
  caKeyPem: string,
  o: { commonName: string; organizations?: readonly string[]; days?: number },
): { certPem: string; keyPem: string } {
  return issueLeaf({
    commonName: o.commonName,
    organizations: o.organizations,
    usage: 'client',
    ca: { certPem: caCertPem, keyPem: caKeyPem },
    validDays: o.days ?? 365,
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
  if (!existsSync(p(FILES.kubeletCert)) || !existsSync(p(FILES.kubeletKey))) {
    const c = issueClientCertificate(caCertPem, caKeyPem, {
      commonName: KUBELET_CLIENT_CN,
      organizations: [KUBELET_CLIENT_ORG],
      days: 5 * 365,
    });
    write(FILES.kubeletKey, c.keyPem);
    write(FILES.kubeletCert, c.certPem);
  }
  if (!existsSync(p(FILES.token))) write(FILES.token, randomBytes(24).toString('base64url') + '\n');
  return {
    caCertPem,
    certPem: readFileSync(p(FILES.cert), 'utf8'),
    keyPem: readFileSync(p(FILES.key), 'utf8'),
    adminToken: readFileSync(p(FILES.token), 'utf8').trim(),
    kubeletClient: {
      certPem: readFileSync(p(FILES.kubeletCert), 'utf8'),
      keyPem: readFileSync(p(FILES.kubeletKey), 'utf8'),
    },
  };
}

/** A kubeconfig for `server` trusting `caCertPem` and authenticating with `token` or a client certificate. */
export function kubeconfigYaml(o: {
  server: string;
  caCertPem: string;
  token?: string;
  clientCert?: { certPem: string; keyPem: string };
  user?: string;
  cluster?: string;
}): string {
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
      ? [
          `    client-certificate-data: ${Buffer.from(o.clientCert.certPem).toString('base64')}`,
          `    client-key-data: ${Buffer.from(o.clientCert.keyPem).toString('base64')}`,
        ]
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
