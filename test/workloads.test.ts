/**
 * Deployments, ReplicaSets and Services through `stowage up` and kubectl, as a user drives them:
 * create → ReplicaSet → pods Running; roll out a new image, read the history, undo; scale; expose
 * and read the endpoints; Recreate on a ReadWriteOnce claim never has two pods holding it; delete
 * with --cascade=orphan leaves the ReplicaSet and pods. Pods are volume-only (no container runtime).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { built, hasKubectl, isRoot } from './helpers/env.js';
import { kubectlIn } from './helpers/kubectl.js';
import { mountsUnder } from './helpers/mounts.js';
import { startUp, type RunningUp } from './helpers/up.js';

if (!isRoot || !hasKubectl || !built)
  console.warn('workload tests skipped: they need root (real mounts), kubectl on PATH and a build (npm test builds)');

describe.skipIf(!isRoot || !hasKubectl || !built)('Deployments, ReplicaSets and Services through kubectl', () => {
  let dataDir = '';
  let up: RunningUp | undefined;
  const { env, kubectl, json } = kubectlIn(() => dataDir);
  const images = async (selector: string): Promise<string[]> =>
    (await json('get', 'pods', '-l', selector)).items
      .filter((p: { metadata: { deletionTimestamp?: string } }) => !p.metadata.deletionTimestamp)
      .map((p: { spec: { containers: Array<{ image: string }> } }) => p.spec.containers[0]!.image);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stowage-workloads-'));
    up = await startUp(dataDir, 'wl');
  }, 60_000);
  afterAll(async () => {
    if (up) {
      up.child.kill('SIGTERM');
      await up.exit;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('create, roll out, read the history, undo, scale and expose a Deployment', async () => {
    await kubectl('create', 'deployment', 'web', '--image=registry.local/web:1', '--replicas=3', '--port=8080');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    const rs = await json('get', 'rs', '-l', 'app=web');
    expect(rs.items).toHaveLength(1);
    const [first] = rs.items;
    const hash = first.metadata.labels['pod-template-hash'];
    expect(first.metadata.name).toBe(`web-${hash}`);
    expect(first.metadata.ownerReferences).toMatchObject([{ kind: 'Deployment', name: 'web', controller: true }]);
    expect(first.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3 });
    const pods = await json('get', 'pods', '-l', 'app=web');
    expect(pods.items.map((p: { status: { phase: string } }) => p.status.phase)).toEqual([
      'Running',
      'Running',
      'Running',
    ]);
    expect(
      pods.items.every(
        (p: { metadata: { ownerReferences: Array<{ name: string }> } }) =>
          p.metadata.ownerReferences[0]!.name === first.metadata.name,
      ),
    ).toBe(true);
    expect(await kubectl('get', 'deploy', 'web')).toMatch(
      /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+3\/3\s+3\s+3\s+/,
    );

    await kubectl('set', 'image', 'deployment/web', 'web=registry.local/web:2');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    expect(await images('app=web')).toEqual(Array(3).fill('registry.local/web:2'));
    expect(await kubectl('rollout', 'history', 'deployment/web')).toMatch(
      /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/,
    );
    const d = await json('get', 'deploy', 'web');
    expect(d.metadata.annotations['deployment.kubernetes.io/revision']).toBe('2');
    expect(
      Object.fromEntries(d.status.conditions.map((c: { type: string; reason: string }) => [c.type, c.reason])),
    ).toEqual({ Available: 'MinimumReplicasAvailable', Progressing: 'NewReplicaSetAvailable' });

    await kubectl('rollout', 'undo', 'deployment/web');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    expect(await images('app=web')).toEqual(Array(3).fill('registry.local/web:1'));
    expect(
      (await json('get', 'rs', first.metadata.name)).metadata.annotations['deployment.kubernetes.io/revision'],
    ).toBe('3');
    const reasons = (
      await json('get', 'events', '--field-selector', 'involvedObject.kind=Deployment,involvedObject.name=web')
    ).items.map((e: { reason: string }) => e.reason);
    expect(reasons).toContain('ScalingReplicaSet');

    await kubectl('scale', 'deployment/web', '--replicas=1');
    await expect.poll(async () => (await images('app=web')).length, { timeout: 30_000 }).toBe(1);
    expect((await json('get', 'deploy', 'web', '--subresource=scale')).status).toEqual({
      replicas: 1,
      selector: 'app=web',
    });

    await kubectl('expose', 'deployment/web', '--port=80', '--target-port=8080');
    const svc = await json('get', 'svc', 'web');
    expect(svc.spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }],
      selector: { app: 'web' },
    });
    expect(svc.spec.clusterIP).toMatch(/^10\.(9[6-9]|10\d|11[01])\./);
    const node = (await json('get', 'node', 'wl')).status.addresses.find(
      (a: { type: string }) => a.type === 'InternalIP',
    ).address;
    // Pods share the node's network: the endpoint is the node's address.
    await expect
      .poll(async () => (await kubectl('get', 'ep', 'web')).split('\n')[1], { timeout: 30_000 })
      .toMatch(new RegExp(`^web\\s+${node.replaceAll('.', '\\.')}:8080\\s`));
    const slices = await json('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web');
    expect(slices.items).toHaveLength(1);
    expect(slices.items[0].endpoints).toMatchObject([{ addresses: [node], conditions: { ready: true } }]);
  }, 180_000);

  it('rollout undo of an applied Deployment (no resources) reuses the old ReplicaSet', async () => {
    // kubectl's undo writes back the ReplicaSet's template marshalled from Go structs: it gains
    // `resources: {}` and `creationTimestamp: null`, which kube's hash and EqualIgnoreHash ignore.
    const file = join(dataDir, 'undo.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: undo}',
        'spec:',
        '  replicas: 1',
        '  selector: {matchLabels: {app: undo}}',
        '  template:',
        '    metadata: {labels: {app: undo}}',
        '    spec:',
        '      containers: [{name: c, image: registry.local/undo:1}]',
        '',
      ].join('\n'),
    );
    await kubectl('apply', '-f', file);
    await kubectl('rollout', 'status', 'deployment/undo', '--timeout=60s');
    const [first] = (await json('get', 'rs', '-l', 'app=undo')).items;
    await kubectl('set', 'image', 'deployment/undo', 'c=registry.local/undo:2');
    await kubectl('rollout', 'status', 'deployment/undo', '--timeout=60s');
    await kubectl('rollout', 'undo', 'deployment/undo');
    await kubectl('rollout', 'status', 'deployment/undo', '--timeout=60s');
    const rss = (await json('get', 'rs', '-l', 'app=undo')).items as Array<{
      metadata: { name: string; annotations: Record<string, string> };
    }>;
    expect(rss.map((rs) => rs.metadata.name).sort()).toHaveLength(2);
    const reused = rss.find((rs) => rs.metadata.name === first.metadata.name);
    expect(reused?.metadata.annotations['deployment.kubernetes.io/revision']).toBe('3');
    expect(await images('app=undo')).toEqual(['registry.local/undo:1']);
    // The last test counts every pod in the namespace: this Deployment goes with its pods.
    await kubectl('delete', 'deployment', 'undo', '--wait=true', '--timeout=60s');
    await expect.poll(async () => (await images('app=undo')).length, { timeout: 30_000 }).toBe(0);
  }, 120_000);

  it('Recreate on a ReadWriteOnce claim: the new pod starts only after the old one is gone', async () => {
    const file = join(dataDir, 'db.yaml');
    writeFileSync(
      file,
      `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
provisioner: hostpath.csi.stowage.io
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources:
    requests:
      storage: 1Gi
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  replicas: 1
  strategy:
    type: Recreate
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: registry.local/db:1
        volumeMounts:
        - name: data
          mountPath: /data
      volumes:
      - name: data
        persistentVolumeClaim:
          claimName: data
`,
    );
    await kubectl('apply', '-f', file);
    await kubectl('rollout', 'status', 'deployment/db', '--timeout=60s');
    const [old] = (await json('get', 'pods', '-l', 'app=db')).items;
    // Watch the pods while the image changes: record the order in which they come and go.
    const watcher = spawn(
      'kubectl',
      [
        'get',
        'pods',
        '-l',
        'app=db',
        '--watch',
        '--output-watch-events',
        '-o',
        'jsonpath={.type} {.object.metadata.name}{"\\n"}',
      ],
      { env: env() },
    );
    let seen = '';
    watcher.stdout.on('data', (b: Buffer) => (seen += b.toString()));
    try {
      // The watch lists first: once the old pod is printed, no later event can be missed.
      await expect.poll(() => seen, { timeout: 30_000 }).toContain(`ADDED ${old.metadata.name}`);
      await kubectl('set', 'image', 'deployment/db', 'db=registry.local/db:2');
      await kubectl('rollout', 'status', 'deployment/db', '--timeout=60s');
      const [cur] = (await json('get', 'pods', '-l', 'app=db')).items;
      expect(cur.spec.containers[0].image).toBe('registry.local/db:2');
      await expect.poll(() => seen, { timeout: 10_000 }).toContain(`ADDED ${cur.metadata.name}`);
      const lines = seen.trim().split('\n');
      // The old pod's object goes only once the node has unmounted its volume; the new one is created after.
      expect(lines.indexOf(`DELETED ${old.metadata.name}`)).toBeGreaterThanOrEqual(0);
      expect(lines.indexOf(`DELETED ${old.metadata.name}`)).toBeLessThan(lines.indexOf(`ADDED ${cur.metadata.name}`));
    } finally {
      watcher.kill();
    }
  }, 120_000);

  it('delete --cascade=orphan leaves the ReplicaSet and its pods, released', async () => {
    const before = (await json('get', 'rs', '-l', 'app=web')).items.filter(
      (r: { spec: { replicas: number } }) => r.spec.replicas > 0,
    );
    expect(before).toHaveLength(1);
    await kubectl('delete', 'deployment', 'web', '--cascade=orphan');
    await expect
      .poll(async () => (await json('get', 'rs', before[0].metadata.name)).metadata.ownerReferences ?? [], {
        timeout: 30_000,
      })
      .toEqual([]);
    expect(await images('app=web')).toHaveLength(1);
    // The ReplicaSet still keeps its pod: delete one and it comes back.
    const [p] = (await json('get', 'pods', '-l', 'app=web')).items;
    await kubectl('delete', 'pod', p.metadata.name, '--wait=false');
    await expect
      .poll(
        async () =>
          (await json('get', 'pods', '-l', 'app=web')).items.filter(
            (x: { metadata: { name: string; deletionTimestamp?: string } }) =>
              x.metadata.name !== p.metadata.name && !x.metadata.deletionTimestamp,
          ).length,
        { timeout: 30_000 },
      )
      .toBe(1);
    await kubectl('delete', 'deployment', 'db', '--wait=true', '--timeout=60s');
    await kubectl('delete', 'rs', '--all', '--wait=true', '--timeout=60s');
    await expect.poll(async () => (await json('get', 'pods')).items.length, { timeout: 60_000 }).toBe(0);
    await kubectl('delete', 'pvc', 'data', '--timeout=60s');
    await expect.poll(async () => (await json('get', 'pv')).items.length, { timeout: 30_000 }).toBe(0);
    await expect.poll(() => mountsUnder(dataDir), { timeout: 30_000 }).toEqual([]);
  }, 120_000);
});
