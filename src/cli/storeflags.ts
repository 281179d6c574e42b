/** kube-apiserver's etcd flags, shared by `stowage server` and `stowage up`, and the store they open. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_ETCD_PREFIX, openEtcdStore } from '../store/etcd.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { CliError } from './errors.js';
import { parseDuration } from './flags.js';

export interface EtcdFlags {
  readonly etcdServers?: string;
  readonly etcdPrefix: string;
  readonly etcdCafile?: string;
  readonly etcdCertfile?: string;
  readonly etcdKeyfile?: string;
  readonly etcdCompactionInterval: string;
}

export function addEtcdFlags(cmd: Command): Command {
  return cmd
    .option(
      '--etcd-servers <urls>',
      'comma-separated etcd URLs (http:// or https://); `stowage up` without it keeps SQLite in its data dir',
    )
    .option('--etcd-prefix <prefix>', 'prefix of every key in etcd', DEFAULT_ETCD_PREFIX)
    .option('--etcd-cafile <file>', 'CA bundle to verify etcd servers')
    .option('--etcd-certfile <file>', 'client certificate for etcd')
    .option('--etcd-keyfile <file>', 'client key for etcd')
    .option('--etcd-compaction-interval <duration>', 'period of compaction requests to etcd; 0 disables', '5m');
}

const readFlagFile = (flag: string, path: string | undefined): Buffer | undefined => {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (e) {
    throw new CliError(`cannot read ${flag} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
};

/** etcd when --etcd-servers is given, else SQLite at `<dataDir>/stowage.db`. */
export async function openStoreFromFlags(o: EtcdFlags, dataDir: string | undefined): Promise<Store> {
  if (o.etcdServers === undefined || o.etcdServers === '') {
    if (dataDir === undefined) throw new CliError('--etcd-servers is required');
    try {
      return openSqliteStore({ path: join(dataDir, 'stowage.db') });
    } catch (e) {
      throw new CliError(`cannot open the store in ${dataDir}: ${(e as Error).message}`);
    }
  }
  if ((o.etcdCertfile === undefined) !== (o.etcdKeyfile === undefined))
    throw new CliError('--etcd-certfile and --etcd-keyfile go together');
  const endpoints = o.etcdServers
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  let compactIntervalMs: number;
  try {
    compactIntervalMs = o.etcdCompactionInterval === '0' ? 0 : parseDuration(o.etcdCompactionInterval);
  } catch (e) {
    throw new CliError(`invalid --etcd-compaction-interval: ${(e as Error).message}`);
  }
  const tls = {
    ca: readFlagFile('--etcd-cafile', o.etcdCafile),
    cert: readFlagFile('--etcd-certfile', o.etcdCertfile),
    key: readFlagFile('--etcd-keyfile', o.etcdKeyfile),
  };
  try {
    return await openEtcdStore({ endpoints, prefix: o.etcdPrefix, tls, compactIntervalMs, requestTimeoutMs: 10_000 });
  } catch (e) {
    throw new CliError(`cannot reach etcd at ${endpoints.join(',')}: ${(e as Error).message}`);
  }
}
