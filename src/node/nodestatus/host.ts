import { readFileSync } from 'node:fs';
import os from 'node:os';

/** What the node reports about its host. Gathered once at start (plus memory, cheap). */
export interface HostInfo {
  readonly hostname: string;
  /** GOOS-style: `linux`. */
  readonly os: string;
  /** GOARCH-style: `amd64`, `arm64`... */
  readonly arch: string;
  readonly kernelVersion: string;
  readonly osImage: string;
  readonly internalIP: string | undefined;
  readonly cpus: number;
  readonly memoryBytes: number;
  readonly machineID: string;
  readonly bootID: string;
}

// Node's process.arch → the Go names Kubernetes labels use (kubernetes.io/arch).
const GO_ARCH: Readonly<Record<string, string>> = {
  x64: 'amd64',
  ia32: '386',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  mips: 'mips',
  mipsel: 'mipsle',
};

export function goArch(nodeArch: string): string {
  return GO_ARCH[nodeArch] ?? nodeArch;
}

function readTrim(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return ''; // optional host facts: absent in containers and on non-Linux
  }
}

/** PRETTY_NAME of /etc/os-release, as the kubelet's osImage. */
export function osImageFrom(osRelease: string): string | undefined {
  const m = /^PRETTY_NAME=(.*)$/m.exec(osRelease);
  return m?.[1]?.replace(/^"(.*)"$/, '$1');
}

export function firstInternalIPv4(ifaces: NodeJS.Dict<os.NetworkInterfaceInfo[]>): string | undefined {
  for (const list of Object.values(ifaces)) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

export function gatherHostInfo(): HostInfo {
  return {
    hostname: os.hostname(),
    os: process.platform,
    arch: goArch(process.arch),
    kernelVersion: os.release(),
    osImage: osImageFrom(readTrim('/etc/os-release')) ?? `${os.type()} ${os.release()}`,
    internalIP: firstInternalIPv4(os.networkInterfaces()) ?? '127.0.0.1',
    cpus: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    machineID: readTrim('/etc/machine-id'),
    bootID: readTrim('/proc/sys/kernel/random/boot_id'),
  };
}
