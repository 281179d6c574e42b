/**
 * Service address allocation as kube-apiserver's allocators do it: ClusterIPs from the service
 * CIDR (network and broadcast addresses excluded, the range's first address kept for the
 * `kubernetes` Service), node ports from 30000–32767. Pure: the caller passes what is in use.
 */
import { isIP } from 'node:net';

/** kube-apiserver's --service-cluster-ip-range default. */
export const DEFAULT_SERVICE_CIDR = '10.96.0.0/12';
/** kube-apiserver's --service-node-port-range default. */
export const NODE_PORT_RANGE = { min: 30000, max: 32767 } as const;

export interface Ipv4Cidr {
  readonly text: string;
  readonly base: number;
  readonly size: number;
}

/** An IPv4 dotted quad as a number, or undefined when it is not one. */
export function parseIpv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255) || m.slice(1).some((p) => p.length > 1 && p.startsWith('0'))) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Whether `s` is an IP address kube accepts (IPv4 dotted quad without leading zeros, or IPv6). */
export function isIpAddress(s: string): boolean {
  return isIP(s) !== 0;
}

/** Parses `a.b.c.d/n` (the network address); throws for anything else. */
export function parseCidr(text: string): Ipv4Cidr {
  const [ip, bits] = text.split('/');
  const base = parseIpv4(ip ?? '');
  const n = Number(bits);
  if (base === undefined || !Number.isInteger(n) || n < 1 || n > 30)
    throw new Error(`invalid IPv4 service CIDR ${JSON.stringify(text)}`);
  const size = 2 ** (32 - n);
  return { text, base: base - (base % size), size };
}

export function cidrContains(c: Ipv4Cidr, ip: string): boolean {
  const n = parseIpv4(ip);
  return n !== undefined && n > c.base && n < c.base + c.size - 1;
}

/**
 * A free ClusterIP, or undefined when the range is full. Random, as kube's bitmap allocator picks,
 * from the offset past the first address (reserved for the `kubernetes` Service).
 */
export function allocateClusterIp(
  c: Ipv4Cidr,
  inUse: ReadonlySet<string>,
  random: () => number = Math.random,
): string | undefined {
  const first = c.base + 2; // network address and the kubernetes Service's address stay free
  const count = c.size - 3; // … and the broadcast address
  if (count <= 0) return undefined;
  const start = Math.floor(random() * count);
  for (let i = 0; i < count; i++) {
    const ip = formatIpv4(first + ((start + i) % count));
    if (!inUse.has(ip)) return ip;
  }
  return undefined;
}

/** A free node port, or undefined when every port of the range is taken. */
export function allocateNodePort(inUse: ReadonlySet<number>, random: () => number = Math.random): number | undefined {
  const count = NODE_PORT_RANGE.max - NODE_PORT_RANGE.min + 1;
  const start = Math.floor(random() * count);
  for (let i = 0; i < count; i++) {
    const port = NODE_PORT_RANGE.min + ((start + i) % count);
    if (!inUse.has(port)) return port;
  }
  return undefined;
}

/** The range's first address: the `kubernetes` Service's ClusterIP (kube's GetIndexedIP(range, 1)). */
export function firstServiceIp(c: Ipv4Cidr): string {
  return formatIpv4(c.base + 1);
}
