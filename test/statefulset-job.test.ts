/**
 * StatefulSets and Jobs through `stowage up` and kubectl, with volume-only pods (Running once
 * their volumes are mounted): the Kubernetes tutorial's StatefulSet applies unchanged, its pods
 * come up in order each with its own claim, every ordinal keeps its data across a scale down and
 * up (Retain; up through the scale subresource, as `kubectl scale`), `whenScaled: Delete` removes the scaled-away claims, deletion with
 * `whenDeleted: Retain` keeps them; a Job whose pod writes to a claim completes (its pod's status
 * written as a kubelet would), its volume is torn down, and a Job with ttlSecondsAfterFinished is
 * deleted once finished. One `stowage up` serves all cases.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { built, hasKubectl, isRoot } from './helpers/env.js';
import { kubectlIn } from './helpers/kubectl.js';
import { mountsUnder } from './helpers/mounts.js';
import { startUp, type RunningUp } from './helpers/up.js';

const ready = isRoot && hasKubectl && built;
if (!ready)
  console.warn(
    'statefulset-job tests skipped: they need root (real mounts), kubectl on PATH and a build (npm test builds)',
  );

/** The StatefulSet of the Kubernetes tutorial "StatefulSet Basics" (web.yaml), unchanged. */
const TUTORIAL_STS = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: "nginx"
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.21
        ports:
        - containerPort: 80
          name: web
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 1Gi
`;

const BACKUP = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: backup
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 64Mi
---
apiVersion: batch/v1
kind: Job
metadata:
  name: backup
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: backup
        image: busybox
        command: ["sh", "-c", "date > /backup/done"]
        volumeMounts:
        - name: backup
          mountPath: /backup
      volumes:
      - name: backup
        persistentVolumeClaim:
          claimName: backup
`;

const SHORT_LIVED = `apiVersion: batch/v1
kind: Job
metadata:
  name: short
spec:
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: c
        image: busybox
`;

interface Named {
  metadata: { name: string; uid: string; annotations?: Record<string, string>; ownerReferences?: unknown[] };
  status?: { phase?: string };
}

describe.skipIf(!ready)('StatefulSet and Job through stowage up and kubectl', () => {
  let dataDir = '';
  let up: RunningUp | undefined;
  const { env, kubectl, json } = kubectlIn(() => dataDir);
  const names = async (kind: string, selector?: string): Promise<string[]> =>
    (await json<{ items: Named[] }>('get', kind, ...(selector ? ['-l', selector] : []))).items
      .map((o) => o.metadata.name)
      .sort();
  const apply = async (file: string, yaml: string): Promise<void> => {
    writeFileSync(join(dataDir, file), yaml);
    await kubectl('apply', '-f', join(dataDir, file));
  };
  /** The host path of a pod's volume, from the node agent's annotation. */
  const hostPath = async (pod: string, volume: string): Promise<string> => {
    const p = await json<Named>('get', 'pod', pod);
    return JSON.parse(p.metadata.annotations?.['volumes.stowage.io/host-paths'] ?? '{}')[volume] as string;
  };
  const claimUids = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await json<{ items: Named[] }>('get', 'pvc', '-l', 'app=nginx')).items.map((c) => [
        c.metadata.name,
        c.metadata.uid,
      ]),
    );

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stowage-sts-'));
    up = await startUp(dataDir, 'e2e');
    await vi.waitFor(
      async () => {
        const n = await json<{ spec?: { drivers?: unknown[] } }>('get', 'csinode', 'e2e');
        if (n.spec?.drivers?.length !== 1) throw new Error('the CSI driver is not registered yet');
      },
      { timeout: 20_000, interval: 200 },
    );
  }, 60_000);

  afterAll(async () => {
    if (up) {
      // After a failed case pods may still run: delete them so the node unmounts their volumes.
      await kubectl('delete', 'sts,jobs,pods', '--all', '--timeout=60s').catch(() => undefined);
      up.child.kill('SIGTERM');
      await up.exit;
    }
    const left = mountsUnder(dataDir);
    for (const m of [...left].reverse()) execFileSync('umount', [m]);
    rmSync(dataDir, { recursive: true, force: true });
    expect(left).toEqual([]);
  }, 90_000);

  it('the tutorial StatefulSet applies unchanged; scaled to 3, pods come up in order, each with its own bound claim', async () => {
    // Watch pods from the start: each pod must be added only once its predecessor is Running and Ready.
    const watcher = spawn(
      'kubectl',
      [
        'get',
        'pods',
        '--watch',
        '-o',
        'jsonpath={.metadata.name} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}',
      ],
      { env: env() },
    );
    let log = '';
    watcher.stdout.on('data', (d: Buffer) => (log += d.toString()));
    try {
      await apply('web.yaml', TUTORIAL_STS);
      await kubectl('rollout', 'status', 'sts/web', '--timeout=60s');
      await kubectl('patch', 'sts', 'web', '-p', '{"spec":{"replicas":3}}');
      await kubectl('rollout', 'status', 'sts/web', '--timeout=60s');
      await expect.poll(() => log, { timeout: 10_000 }).toMatch(/web-2 Running True/);
    } finally {
      watcher.kill();
    }
    const lines = log.split('\n');
    const first = (re: RegExp): number => lines.findIndex((l) => re.test(l));
    expect(first(/^web-1 /)).toBeGreaterThan(first(/^web-0 Running True/));
    expect(first(/^web-2 /)).toBeGreaterThan(first(/^web-1 Running True/));

    const table = await kubectl('get', 'sts', 'web');
    expect(table).toMatch(/^NAME\s+READY\s+AGE\n/);
    expect(table).toMatch(/\nweb\s+3\/3\s/);
    const claims = await json<{
      items: Array<Named & { status: { phase: string }; metadata: { labels: Record<string, string> } }>;
    }>('get', 'pvc');
    expect(claims.items.map((c) => [c.metadata.name, c.status.phase, c.metadata.labels.app])).toEqual([
      ['www-web-0', 'Bound', 'nginx'],
      ['www-web-1', 'Bound', 'nginx'],
      ['www-web-2', 'Bound', 'nginx'],
    ]);
    const pod = await json<
      Named & { spec: { hostname: string; subdomain: string }; metadata: { labels: Record<string, string> } }
    >('get', 'pod', 'web-1');
    expect(pod.spec).toMatchObject({ hostname: 'web-1', subdomain: 'nginx' });
    expect(pod.metadata.labels).toMatchObject({
      'statefulset.kubernetes.io/pod-name': 'web-1',
      'apps.kubernetes.io/pod-index': '1',
    });
    expect(pod.metadata.labels['controller-revision-hash']).toMatch(/^web-/);
    // Data per ordinal, written on the host into each pod's mounted volume.
    for (const i of [0, 1, 2]) writeFileSync(join(await hostPath(`web-${i}`, 'www'), 'index.html'), `web-${i}\n`);
    const events = await kubectl(
      'get',
      'events',
      '--field-selector',
      'involvedObject.kind=StatefulSet,involvedObject.name=web',
      '-o',
      'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
    );
    expect(events).toContain('SuccessfulCreate: create Claim www-web-0 Pod web-0 in StatefulSet web success');
    expect(events).toContain('SuccessfulCreate: create Pod web-2 in StatefulSet web successful');
  }, 120_000);

  it('scaled to 1 and back to 3, ordinals 1 and 2 get their own claims and data back (Retain)', async () => {
    const before = await claimUids();
    const web2 = await hostPath('web-2', 'www');
    await kubectl('patch', 'sts', 'web', '-p', '{"spec":{"replicas":1}}');
    await expect.poll(() => names('pods', 'app=nginx'), { timeout: 60_000 }).toEqual(['web-0']);
    await expect.poll(() => mountsUnder(web2), { timeout: 30_000 }).toEqual([]);
    expect(await claimUids()).toEqual(before);

    // The scale subresource (what `kubectl scale` and autoscalers use): a Scale of the set's counts and selector.
    const scale = async (): Promise<unknown> =>
      JSON.parse(await kubectl('get', '--raw', '/apis/apps/v1/namespaces/default/statefulsets/web/scale'));
    await expect.poll(scale, { timeout: 30_000 }).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'web' },
      spec: { replicas: 1 },
      status: { replicas: 1, selector: 'app=nginx' },
    });
    expect(await kubectl('scale', 'sts/web', '--replicas=3')).toContain('statefulset.apps/web scaled');
    expect((await json<{ spec: { replicas: number } }>('get', 'sts', 'web')).spec.replicas).toBe(3);
    await kubectl('rollout', 'status', 'sts/web', '--timeout=60s');
    await expect
      .poll(scale, { timeout: 30_000 })
      .toMatchObject({ spec: { replicas: 3 }, status: { replicas: 3, selector: 'app=nginx' } });
    expect(await claimUids()).toEqual(before);
    for (const i of [0, 1, 2])
      expect(readFileSync(join(await hostPath(`web-${i}`, 'www'), 'index.html'), 'utf8')).toBe(`web-${i}\n`);
  }, 120_000);

  it('whenScaled: Delete removes the scaled-away claim; --cascade=orphan leaves pods and claims for a new set to adopt; whenDeleted: Retain keeps claims', async () => {
    await kubectl(
      'patch',
      'sts',
      'web',
      '--type=merge',
      '-p',
      '{"spec":{"persistentVolumeClaimRetentionPolicy":{"whenScaled":"Delete"},"replicas":2}}',
    );
    await expect.poll(() => names('pvc', 'app=nginx'), { timeout: 60_000 }).toEqual(['www-web-0', 'www-web-1']);
    const kept = await claimUids();
    const podUids = async (): Promise<string[]> =>
      (await json<{ items: Named[] }>('get', 'pods', '-l', 'app=nginx')).items.map((p) => p.metadata.uid).sort();
    const running = await podUids();

    // The tutorial's non-cascading delete: the pods and claims stay, orphaned; the same manifest adopts them.
    await kubectl('delete', 'sts', 'web', '--cascade=orphan', '--timeout=60s');
    expect(await names('sts')).toEqual([]);
    await expect
      .poll(
        async () =>
          (await json<{ items: Named[] }>('get', 'pods', '-l', 'app=nginx')).items.map(
            (p) => p.metadata.ownerReferences ?? [],
          ),
        { timeout: 30_000 },
      )
      .toEqual([[], []]);
    expect(await podUids()).toEqual(running);
    expect(await claimUids()).toEqual(kept);
    await apply('web.yaml', TUTORIAL_STS);
    await kubectl('rollout', 'status', 'sts/web', '--timeout=60s');
    const set = await json<Named>('get', 'sts', 'web');
    await expect
      .poll(
        async () =>
          (await json<{ items: Named[] }>('get', 'pods', '-l', 'app=nginx')).items.map(
            (p) => p.metadata.ownerReferences,
          ),
        { timeout: 30_000 },
      )
      .toEqual(
        [0, 1].map(() => [
          {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            name: 'web',
            uid: set.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ]),
      );
    expect(await podUids()).toEqual(running);

    await kubectl('delete', 'sts', 'web', '--timeout=60s');
    await expect.poll(() => names('pods', 'app=nginx'), { timeout: 60_000 }).toEqual([]);
    expect(await claimUids()).toEqual(kept);
    expect(await names('controllerrevisions')).toEqual([]);
    await kubectl('delete', 'pvc', '-l', 'app=nginx', '--timeout=60s');
  }, 120_000);

  it('a Job writing to a claim completes once its pod succeeds; the volume is torn down and keeps the data', async () => {
    await apply('backup.yaml', BACKUP);
    const [podName] = await (async () => {
      await expect.poll(() => names('pods', 'job-name=backup'), { timeout: 30_000 }).toHaveLength(1);
      return names('pods', 'job-name=backup');
    })();
    await expect
      .poll(async () => (await json<Named>('get', 'pod', podName!)).status?.phase, { timeout: 30_000 })
      .toBe('Running');
    const path = await hostPath(podName!, 'backup');
    writeFileSync(join(path, 'done'), 'backed up\n'); // what the container's command would write
    const pod = await json<Named & { metadata: { finalizers?: string[] } }>('get', 'pod', podName!);
    expect(pod.metadata.finalizers).toEqual(['batch.kubernetes.io/job-tracking']);
    // The container exits 0: the kubelet's status.
    const finishedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const status = {
      status: {
        phase: 'Succeeded',
        conditions: [
          { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
          { type: 'ContainersReady', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
        ],
        containerStatuses: [
          {
            name: 'backup',
            image: 'busybox',
            imageID: '',
            ready: false,
            restartCount: 0,
            started: false,
            state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt } },
          },
        ],
      },
    };
    await kubectl('patch', 'pod', podName!, '--subresource=status', '--type=merge', '-p', JSON.stringify(status));
    await kubectl('wait', '--for=condition=complete', 'job/backup', '--timeout=60s');
    const job = await json<{ status: Record<string, unknown> }>('get', 'job', 'backup');
    expect(job.status).toMatchObject({ succeeded: 1, uncountedTerminatedPods: {} });
    expect(job.status.completionTime).toEqual(expect.any(String));
    expect(await kubectl('get', 'job', 'backup')).toMatch(/\nbackup\s+Complete\s+1\/1\s/);
    await expect
      .poll(
        async () =>
          (await json<{ metadata: { finalizers?: string[] } }>('get', 'pod', podName!)).metadata.finalizers ?? [],
        { timeout: 30_000 },
      )
      .toEqual([]);
    await expect.poll(() => mountsUnder(path), { timeout: 30_000 }).toEqual([]);

    // The data stays on the claim: a second pod sees it.
    await kubectl('delete', 'job', 'backup', '--timeout=60s');
    await expect.poll(() => names('pods', 'job-name=backup'), { timeout: 30_000 }).toEqual([]);
    await kubectl(
      'run',
      'reader',
      '--image=busybox',
      '--restart=Never',
      '--overrides',
      JSON.stringify({
        spec: {
          volumes: [{ name: 'b', persistentVolumeClaim: { claimName: 'backup' } }],
          containers: [{ name: 'reader', image: 'busybox', volumeMounts: [{ name: 'b', mountPath: '/b' }] }],
        },
      }),
    );
    await expect
      .poll(async () => (await json<Named>('get', 'pod', 'reader')).status?.phase, { timeout: 30_000 })
      .toBe('Running');
    expect(readFileSync(join(await hostPath('reader', 'b'), 'done'), 'utf8')).toBe('backed up\n');
    await kubectl('delete', 'pod', 'reader', '--timeout=60s');
    await kubectl('delete', 'pvc', 'backup', '--timeout=60s');
  }, 120_000);

  it('a running Job deleted takes its pods, the tracking finalizer released; a finished Job with ttlSecondsAfterFinished: 0 is deleted with its pods', async () => {
    await apply(
      'doomed.yaml',
      SHORT_LIVED.replace('name: short', 'name: doomed').replace('  ttlSecondsAfterFinished: 0\n', ''),
    );
    await expect.poll(() => names('pods', 'job-name=doomed'), { timeout: 30_000 }).toHaveLength(1);
    await kubectl('delete', 'job', 'doomed', '--timeout=60s');
    await expect.poll(() => names('pods', 'job-name=doomed'), { timeout: 30_000 }).toEqual([]);

    await apply('short.yaml', SHORT_LIVED);
    await expect.poll(() => names('pods', 'job-name=short'), { timeout: 30_000 }).toHaveLength(1);
    const [podName] = await names('pods', 'job-name=short');
    await expect
      .poll(async () => (await json<Named>('get', 'pod', podName!)).status?.phase, { timeout: 30_000 })
      .toBe('Running');
    await kubectl(
      'patch',
      'pod',
      podName!,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Succeeded"}}',
    );
    await expect.poll(() => names('jobs'), { timeout: 30_000 }).toEqual([]);
    await expect.poll(() => names('pods', 'job-name=short'), { timeout: 30_000 }).toEqual([]);
  }, 90_000);
});
