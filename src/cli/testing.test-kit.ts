import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { startControlPlane, type ControlPlane } from './controlplane.js';

/** A running API server for tests: its URL, admin credentials and a kubeconfig file. */
export interface TestApiServer {
  readonly baseUrl: string;
  readonly token: string;
  readonly caPem: string;
  readonly kubeconfigPath: string;
  readonly dataDir: string;
  readonly store: Store;
  readonly plane: ControlPlane;
  close(): Promise<void>;
}

/**
 * Starts an API server on 127.0.0.1 with a free port, on a SQLite file in a fresh temp dir (or
 * `dataDir`, to restart on the same data). `close()` stops it and, for a temp dir it made, removes it.
 */
export interface TestApiServerOptions {
  readonly dataDir?: string;
  readonly keepData?: boolean;
  readonly watchCacheHistory?: number;
  /** Run the in-process controllers (PV binder, protection, scheduler, attach/detach). Default true. */
  readonly controllers?: boolean;
  /** With controllers: leave out the scheduler or the attach/detach controller (a test runs its own). */
  readonly scheduler?: boolean;
  readonly attachDetach?: boolean;
  /** The store to serve from (closed with the server). Default: SQLite in the data dir. */
  readonly openStore?: (dataDir: string) => Promise<Store>;
}

export async function startTestApiServer(o: TestApiServerOptions = {}): Promise<TestApiServer> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'stowage-test-'));
  const owned = o.dataDir === undefined && !o.keepData;
  const store = o.openStore ? await o.openStore(dataDir) : openSqliteStore({ path: join(dataDir, 'stowage.db') });
  const plane = await startControlPlane({
    store,
    dataDir,
    address: '127.0.0.1',
    port: 0,
    watchCacheHistory: o.watchCacheHistory,
    controllers: o.controllers,
    scheduler: o.scheduler,
    attachDetach: o.attachDetach,
  });
  return {
    baseUrl: plane.api.url,
    token: plane.adminToken,
    caPem: plane.caPem,
    kubeconfigPath: plane.kubeconfigPath,
    dataDir,
    store,
    plane,
    close: async () => {
      await plane.close();
      await store.close();
      if (owned) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
