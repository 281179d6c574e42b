import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseTokenAuthFile } from '../api/tokenfile.js';
import type { UserInfo } from '../api/server.js';
import { ensureDir } from '../util/fsutil.js';
import { startControlPlane } from './controlplane.js';
import { CliError } from './errors.js';
import { parseIpv4 } from '../api/resources/serviceip.js';
import { runUntilSignalled } from './signals.js';
import { untilAborted } from '../util/abort.js';
import { addRequestLimitFlags, requestLimitFlags, serviceRangeFlag, type RequestLimitFlags } from './up.js';
import { addEtcdFlags, openStoreFromFlags, type EtcdFlags } from './storeflags.js';

export interface ServerOptions extends EtcdFlags, RequestLimitFlags {
  readonly bindAddress: string;
  readonly advertiseAddress?: string;
  readonly securePort: string;
  readonly certDir: string;
  readonly tlsCertFile?: string;
  readonly tlsPrivateKeyFile?: string;
  readonly tokenAuthFile?: string;
  readonly clientCaFile?: string;
  readonly kubeletClientCertificate?: string;
  readonly kubeletClientKey?: string;
}

/** `stowage server`: the API server alone, on etcd, with kube-apiserver's flag names. */
export function serverCommand(program: Command): void {
  addEtcdFlags(
    addRequestLimitFlags(
      program
        .command('server')
        .description('run the API server alone on etcd (several may share one etcd cluster)')
        .option('--bind-address <ip>', 'address to serve HTTPS on', '0.0.0.0')
        .option(
          '--advertise-address <ip>',
          "IPv4 address the `kubernetes` Service's endpoints list for this server; default: --bind-address unless loopback or 0.0.0.0, else the host's first non-loopback address",
        )
        .option('--secure-port <port>', 'HTTPS port', '6443')
        .option(
          '--cert-dir <dir>',
          'where generated serving certificates and the admin kubeconfig go',
          './stowage-data',
        )
        .option('--tls-cert-file <file>', 'serving certificate (PEM); default: generated in --cert-dir')
        .option('--tls-private-key-file <file>', 'key of --tls-cert-file (PEM)')
        .option('--token-auth-file <file>', 'bearer tokens: CSV of token,user,uid,"group1,group2"')
        .option(
          '--client-ca-file <file>',
          'CA of client certificates (CN the user, O the groups); default: the generated CA in --cert-dir',
        )
        .option(
          '--kubelet-client-certificate <file>',
          "client certificate (PEM) presented to node endpoints for logs and exec; default: issued by --cert-dir's CA",
        )
        .option('--kubelet-client-key <file>', 'key of --kubelet-client-certificate (PEM)'),
    ),
  ).action(async (o: ServerOptions) => {
    await runServer(o);
  });
}

const readText = (flag: string, path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${flag} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
};

export async function runServer(o: ServerOptions): Promise<void> {
  if (o.etcdServers === undefined || o.etcdServers === '') throw new CliError('--etcd-servers is required');
  const port = Number(o.securePort);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(`invalid --secure-port ${JSON.stringify(o.securePort)}: must be 0-65535`);
  const limits = requestLimitFlags(o);
  if (o.advertiseAddress !== undefined && parseIpv4(o.advertiseAddress) === undefined)
    throw new CliError(`invalid --advertise-address ${JSON.stringify(o.advertiseAddress)}: must be an IPv4 address`);
  const serviceClusterIpRange = serviceRangeFlag(o);
  if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined))
    throw new CliError('--tls-cert-file and --tls-private-key-file go together');
  const servingCert =
    o.tlsCertFile && o.tlsPrivateKeyFile
      ? {
          certPem: readText('--tls-cert-file', o.tlsCertFile),
          keyPem: readText('--tls-private-key-file', o.tlsPrivateKeyFile),
        }
      : undefined;
  if ((o.kubeletClientCertificate === undefined) !== (o.kubeletClientKey === undefined))
    throw new CliError('--kubelet-client-certificate and --kubelet-client-key go together');
  const kubeletClient =
    o.kubeletClientCertificate && o.kubeletClientKey
      ? {
          certPem: readText('--kubelet-client-certificate', o.kubeletClientCertificate),
          keyPem: readText('--kubelet-client-key', o.kubeletClientKey),
        }
      : undefined;
  let tokens: Map<string, UserInfo> | undefined;
  if (o.tokenAuthFile) {
    try {
      tokens = parseTokenAuthFile(readText('--token-auth-file', o.tokenAuthFile));
    } catch (e) {
      throw e instanceof CliError ? e : new CliError(`invalid --token-auth-file: ${(e as Error).message}`);
    }
  }
  const clientCaPem = o.clientCaFile ? readText('--client-ca-file', o.clientCaFile) : undefined;
  const certDir = resolve(o.certDir);
  try {
    ensureDir(certDir, 0o700);
  } catch (e) {
    throw new CliError(`--cert-dir ${certDir} is not writable: ${(e as Error).message}`);
  }
  await runUntilSignalled(async (signal) => {
    const store = await openStoreFromFlags(o, undefined);
    let plane;
    try {
      plane = await startControlPlane({
        store,
        dataDir: certDir,
        address: o.bindAddress,
        port,
        controllers: false,
        servingCert,
        kubeletClient,
        tokens,
        clientCaPem,
        limits,
        serviceClusterIpRange,
        advertiseAddress: o.advertiseAddress,
      });
    } catch (e) {
      await store.close();
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EADDRINUSE')
        throw new CliError(`cannot listen on ${o.bindAddress}:${port}: address already in use`);
      throw e;
    }
    if (!signal.aborted)
      process.stdout.write(
        `Stowage API server ${plane.api.url} on etcd ${o.etcdServers}; admin kubeconfig ${plane.kubeconfigPath}\n`,
      );
    await untilAborted(signal);
    await plane.close();
    await store.close();
  });
}
