/**
 * One `stowage up` with its embedded containerd for a pod test file: a loopback registry with the
 * busybox and pause images, the hostpath driver registered, a StorageClass `fast` (Immediate);
 * `stop()` deletes the pods first (containers, then volumes), then stowage, containerd and the rest.
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
  /** Creates a 1Mi ReadWriteOnce claim of class `fast` in the default namespace. */
  claim(name: string): Promise<void>;
  /** SIGKILLs stowage and starts it again on the same data dir. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRuntimeCluster(prefix: string, node: string): Promise<RuntimeCluster> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const registry = await startRegistry(join(dir, 'registry'));
  const pause = await registry.push('pause', 't1', ['sleep', '2147483647']);
  const image = await registry.push('busybox', 't1', ['sh']);
  const start = (): Promise<RunningUp> => startUp(join(dir, 'data'), node, ['--pod-infra-container-image', pause], { runtime: true, stderr: 'inherit' });
  const up = await start();
  const c: RuntimeCluster = {
    dir,
    registry,
    image,
    pause,
    up,
    t: up.target,
    claim: async (name) => {
      const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '1Mi' } } } };
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
  await until('the hostpath driver registered', async () => (await api(c.t, 'GET', `/apis/storage.k8s.io/v1/csinodes/${node}`)).body?.spec?.drivers?.length === 1, 30_000);
  const sc = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'hostpath.csi.stowage.io', volumeBindingMode: 'Immediate' };
  const r = await api(c.t, 'POST', '/apis/storage.k8s.io/v1/storageclasses', sc);
  if (r.status !== 201) throw new Error(`StorageClass fast: ${r.status} ${r.text}`);
  return c;
}
