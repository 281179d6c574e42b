/**
 * How the API server reaches a node agent's HTTPS endpoint (kube-apiserver's KubeletConnectionInfo):
 * the Node's first address of the preferred types and its published daemon port, authenticated with
 * the API server's kubelet-client certificate. Like kube-apiserver without
 * --kubelet-certificate-authority, the node's self-signed serving certificate is not verified.
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import { InternalError } from '../util/errors.js';

/** kube-apiserver's --kubelet-preferred-address-types, with InternalIP first (a node's Hostname need not resolve). */
const PREFERRED_ADDRESS_TYPES = ['InternalIP', 'Hostname', 'InternalDNS', 'ExternalIP', 'ExternalDNS'] as const;

export interface NodeTarget {
  readonly host: string;
  readonly port: number;
}

/** Where `node`'s endpoint listens; an Internal error (as kube's) when the Node does not say. */
export function nodeTarget(node: Node | undefined, nodeName: string): NodeTarget {
  if (!node) throw new InternalError(`nodes "${nodeName}" not found`);
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!port)
    throw new InternalError(`node "${nodeName}" publishes no endpoint (status.daemonEndpoints.kubeletEndpoint.Port)`);
  const addresses = node.status?.addresses ?? [];
  for (const t of PREFERRED_ADDRESS_TYPES) {
    const a = addresses.find((x) => x.type === t && x.address);
    if (a) return { host: a.address, port };
  }
  throw new InternalError(`no preferred addresses found; known addresses: ${JSON.stringify(addresses)}`);
}

/** The client certificate the API server presents to nodes. */
export interface NodeClientCert {
  readonly certPem: string;
  readonly keyPem: string;
}

/** TLS options for a connection to a node's endpoint. */
export function nodeTlsOptions(
  t: NodeTarget,
  cert: NodeClientCert,
): { host: string; port: number; cert: string; key: string; rejectUnauthorized: false; servername?: string } {
  const isIp = /^[\d.]+$/.test(t.host) || t.host.includes(':');
  return {
    host: t.host,
    port: t.port,
    cert: cert.certPem,
    key: cert.keyPem,
    rejectUnauthorized: false,
    ...(isIp ? {} : { servername: t.host }),
  };
}
