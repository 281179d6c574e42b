/**
 * One `stowage up` with its embedded containerd for a pod test file: a loopback registry with the
 * busybox and pause images, the hostpath driver registered and a StorageClass `fast` (Immediate)
 * unless `hostpath: false`; `stop()` deletes the pods first (containers, then volumes), then
 * stowage, containerd and the rest. A start that fails tears down what it had started.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, type Target } from './http.js';
import { startRegistry, tearDownRuntimeUp, type Registry } from './runtime.js';
import { startUp, type RunningUp } from './up.js';
import { until } from '../volumemanager-kit.js';

const NS = '/api/v1/namespaces/default';

export interface RuntimeCluster {
  readonly dir: string;
  readonly registry: Registry;
  /** `<registry>/busybox:t1`, default command `sh`. */
  readonly image: string;
  readonly pause: string;
  /** The running `stowage up` (replaced by `restart`). */
  up: RunningUp;
  /** Its admin target (replaced by `restart`). */
  t: Target;
  /** Creates a 1Mi ReadWriteOnce claim of class `fast` in the default namespace (not with `hostpath: false`). */
  claim(name: string): Promise<void>;
  /** SIGKILLs stowage and starts it again on the same data dir. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRuntimeCluster(
  prefix: string,
  node: string,
  opts: { hostpath?: boolean; /** More `up` flags, given the test's dir. */ flags?: (dir: string) => string[] } = {},
): Promise<RuntimeCluster> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let registry: Registry | undefined;
  let up: RunningUp | undefined;
  try {
    registry = await startRegistry(join(dir, 'registry'));
    const pause = await registry.push('pause', 't1', ['sleep', '2147483647']);
    const image = await registry.push('busybox', 't1', ['sh']);
    const flags = [
      ...(opts.hostpath === false ? ['--no-hostpath'] : []),
      '--pod-infra-container-image',
      pause,
      ...(opts.flags?.(dir) ?? []),
    ];
    const start = (): Promise<RunningUp> =>
      startUp(join(dir, 'data'), node, flags, { runtime: true, stderr: 'inherit' });
    up = await start();
    const c = cluster(dir, registry, image, pause, up, start);
    if (opts.hostpath !== false) await fastStorageClass(c, node);
    return c;
  } catch (err) {
    await tearDownRuntimeUp({ up, dir, registry });
    throw err;
  }
}

function cluster(
  dir: string,
  registry: Registry,
  image: string,
  pause: string,
  up: RunningUp,
  start: () => Promise<RunningUp>,
): RuntimeCluster {
  const c: RuntimeCluster = {
    dir,
    registry,
    image,
    pause,
    up,
    t: up.target,
    claim: async (name) => {
      const pvc = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '1Mi' } } },
      };
      const r = await api(c.t, 'POST', `${NS}/persistentvolumeclaims`, pvc);
      if (r.status !== 201) throw new Error(`claim ${name}: ${r.status} ${r.text}`);
    },
    restart: async () => {
      c.up.child.kill('SIGKILL');
      await c.up.exit;
      c.up = await start();
      c.t = c.up.target;
    },
    stop: () => tearDownRuntimeUp({ up: c.up, dir, registry }),
  };
  return c;
}

/** Waits for the built-in hostpath driver on `node` and creates the StorageClass `fast` for it. */
async function fastStorageClass(c: RuntimeCluster, node: string): Promise<void> {
  await until(
    'the hostpath driver registered',
    async () => (await api(c.t, 'GET', `/apis/storage.k8s.io/v1/csinodes/${node}`)).body?.spec?.drivers?.length === 1,
    30_000,
  );
  const sc = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fast' },
    provisioner: 'hostpath.csi.stowage.io',
    volumeBindingMode: 'Immediate',
  };
  const r = await api(c.t, 'POST', '/apis/storage.k8s.io/v1/storageclasses', sc);
  if (r.status !== 201) throw new Error(`StorageClass fast: ${r.status} ${r.text}`);
}
