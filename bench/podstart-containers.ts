/**
 * B3 with containers: `stowage up` with its embedded containerd, 100 pods × 1 bound claim, each a
 * busybox container pulled from a loopback registry (the test kit's image); latency from pod
 * creation until every container of the pod is running and ready. Needs root, containerd, runc,
 * docker-registry, skopeo and busybox-static. The image is pulled once by a warm-up pod first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runtimeTestsMissing, startRegistry, stopLeftoverContainerd, unmountUnder } from '../test/helpers/runtime.js';
import { percentile, startBenchServer, streamWatch, type BenchServer } from './harness.js';

const NODE_NAME_ARGS = ['--node-name', 'b3-node'];
const NS = '/api/v1/namespaces/default';

async function poll(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 300_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function must(s: BenchServer, method: string, path: string, body?: unknown): Promise<void> {
  const r = await s.req(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
}

const items = async (
  s: BenchServer,
  path: string,
): Promise<Array<{ metadata?: { name?: string }; status?: { phase?: string } }>> =>
  JSON.parse((await s.req('GET', path)).text).items ?? [];

/** p50/p99 in ms of create → all containers ready for `n` pods with one claim each. */
export async function podstartContainers(n: number): Promise<{ p50: number; p99: number }> {
  const missing = runtimeTestsMissing();
  if (missing.length > 0) throw new Error(`B3 containers needs ${missing.join(', ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'stowage-b3c-'));
  const registry = await startRegistry(join(dir, 'registry'));
  let s: BenchServer | undefined;
  try {
    const pause = await registry.push('pause', 'b3', ['sleep', '2147483647']);
    const image = await registry.push('busybox', 'b3', ['sleep', '3600']);
    s = await startBenchServer([...NODE_NAME_ARGS, '--pod-infra-container-image', pause], { runtime: true });
    const server = s;
    await poll(
      'the hostpath driver registered',
      async () =>
        JSON.parse((await server.req('GET', '/apis/storage.k8s.io/v1/csinodes/b3-node')).text)?.spec?.drivers
          ?.length === 1,
    );
    await must(s, 'POST', '/apis/storage.k8s.io/v1/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'b3' },
      provisioner: 'hostpath.csi.stowage.io',
      volumeBindingMode: 'Immediate',
    });
    const pod = (name: string, claim: string, command: string[]) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: 'b3-node',
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'app', image, command }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
      },
    });
    const claim = (name: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'b3', resources: { requests: { storage: '1Mi' } } },
    });
    // Warm-up: the image and the sandbox image pulled once, as on a node that has run the workload before.
    await must(s, 'POST', `${NS}/persistentvolumeclaims`, claim('warm'));
    await must(s, 'POST', `${NS}/pods`, pod('warm', 'warm', ['true']));
    await poll('the warm-up pod', async () =>
      (await items(server, `${NS}/pods`)).some((p) => p.metadata?.name === 'warm' && p.status?.phase === 'Succeeded'),
    );
    await must(s, 'DELETE', `${NS}/pods/warm`);

    const names = Array.from({ length: n }, (_, i) => `b3c-${i}`);
    await Promise.all(names.map((c) => must(server, 'POST', `${NS}/persistentvolumeclaims`, claim(c))));
    await poll(
      'claims bound',
      async () =>
        (await items(server, `${NS}/persistentvolumeclaims`)).filter((c) => c.status?.phase === 'Bound').length >=
        n + 1,
    );
    const created = new Map<string, number>();
    const ready = new Map<string, number>();
    const watch = streamWatch(s, `${NS}/pods?watch=true`, (ev) => {
      const name = ev.object.metadata?.name ?? '';
      const cs = ev.object.status?.containerStatuses ?? [];
      if (created.has(name) && !ready.has(name) && cs.length > 0 && cs.every((c) => c.ready === true))
        ready.set(name, performance.now());
    });
    await Promise.all(
      names.map(async (name) => {
        created.set(name, performance.now());
        await must(server, 'POST', `${NS}/pods`, pod(name, name, ['sleep', '3600']));
      }),
    );
    await poll('every container running and ready', () => names.every((x) => ready.has(x)));
    watch.stop();
    const lat = names.map((x) => ready.get(x)! - created.get(x)!).sort((a, b) => a - b);
    await must(s, 'DELETE', `${NS}/pods`);
    await poll('pods gone', async () => (await items(server, `${NS}/pods`)).length === 0);
    return { p50: percentile(lat, 50), p99: percentile(lat, 99) };
  } finally {
    // Not s.stop(): its data dir holds containerd's state, removed only once containerd and every
    // mount under it are gone.
    if (s) {
      const exited = new Promise((r) => s!.child.once('exit', r));
      s.child.kill('SIGTERM');
      await exited;
      await stopLeftoverContainerd(join(s.dataDir, 'containerd'));
      await unmountUnder(s.dataDir);
      rmSync(s.dataDir, { recursive: true, force: true });
    }
    await registry.stop();
    await unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}
