import type { Event, PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import type { RestClient } from '../src/client/index.js';
import { runScheduler } from '../src/controllers/scheduler/run.js';
import { csiNode, readyNode, until } from './scheduler-kit.js';

let srv: TestApiServer;
let client: RestClient;
const stop = new AbortController();
let scheduler: Promise<void>;
let impatient: Promise<void>;
const DRIVER = 'hostpath.csi.k8s.io';
const LIMITED = 'limited.csi.example.com';

function pod(ns: string, name: string, claims: string[]): Pod {
  return {
    metadata: { name, namespace: ns },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
    },
  };
}

function pv(
  name: string,
  o: {
    cls: string;
    node?: string;
    driver?: string;
    modes?: string[];
    claim?: { ns: string; name: string; uid?: string };
  },
): PersistentVolume {
  return {
    metadata: { name },
    spec: {
      storageClassName: o.cls,
      capacity: { storage: '1Gi' },
      accessModes: o.modes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      csi: { driver: o.driver ?? DRIVER, volumeHandle: `h-${name}` },
      ...(o.node
        ? {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.node] }] },
                ],
              },
            },
          }
        : {}),
      ...(o.claim
        ? { claimRef: { kind: 'PersistentVolumeClaim', namespace: o.claim.ns, name: o.claim.name, uid: o.claim.uid } }
        : {}),
    },
  };
}

async function claim(ns: string, name: string, cls: string, modes = ['ReadWriteOnce']): Promise<void> {
  await client.resource('PersistentVolumeClaim').create({
    metadata: { name, namespace: ns },
    spec: { storageClassName: cls, accessModes: modes, resources: { requests: { storage: '1Gi' } } },
  });
}

const nodeOf = async (ns: string, name: string): Promise<string | undefined> =>
  (await client.resource('Pod').get(name, { namespace: ns })).spec?.nodeName;

async function failedScheduling(ns: string, name: string): Promise<Event | undefined> {
  const events = await client.resource('Event').list({ namespace: ns });
  return events.items.find((e) => e.involvedObject.name === name && e.reason === 'FailedScheduling');
}

beforeAll(async () => {
  srv = await startTestApiServer({ scheduler: false, attachDetach: false });
  client = srv.plane.client;
  for (const ns of ['affinity', 'wffc', 'static', 'unfit', 'limits', 'rwop', 'timeout'])
    await client.resource('Namespace').create({ metadata: { name: ns } });
  await readyNode(client, 'n1', { zone: 'a' });
  await readyNode(client, 'n2', { zone: 'b' });
  await csiNode(client, 'n1', [{ name: DRIVER }, { name: LIMITED, count: 1 }]);
  await csiNode(client, 'n2', [{ name: DRIVER }, { name: LIMITED, count: 1 }]);
  await client.resource('StorageClass').create({
    metadata: { name: 'wffc' },
    provisioner: DRIVER,
    volumeBindingMode: 'WaitForFirstConsumer',
    allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['b'] }] }],
  });
  await client.resource('StorageClass').create({
    metadata: { name: 'local' },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  scheduler = runScheduler({ client, signal: stop.signal, bindTimeoutMs: 60_000 });
  // A second scheduler, for pods that name it, whose PreBind gives up quickly.
  impatient = runScheduler({ client, signal: stop.signal, schedulerName: 'impatient', bindTimeoutMs: 300 });
});

afterAll(async () => {
  stop.abort();
  await Promise.all([scheduler, impatient]);
  await srv?.close();
});

describe('scheduler: volume-aware placement', () => {
  it('places a pod on the node its bound PV is pinned to', async () => {
    await client.resource('PersistentVolume').create(pv('aff-pv', { cls: 'manual', node: 'n2' }));
    await claim('affinity', 'data', 'manual');
    await client.resource('Pod').create(pod('affinity', 'p', ['data']));
    expect(await until('pod bound', () => nodeOf('affinity', 'p'))).toBe('n2');
  });

  it('a WaitForFirstConsumer claim gets selected-node within allowedTopologies; the pod binds once provisioned', async () => {
    await claim('wffc', 'data', 'wffc');
    await client.resource('Pod').create(pod('wffc', 'p', ['data']));
    const selected = await until(
      'selected-node',
      async () =>
        (await client.resource('PersistentVolumeClaim').get('data', { namespace: 'wffc' })).metadata?.annotations?.[
          'volume.kubernetes.io/selected-node'
        ],
    );
    expect(selected).toBe('n2'); // zone b only
    expect(await nodeOf('wffc', 'p')).toBeUndefined(); // PreBind waits for the volume
    // Play the external provisioner: a PV pre-bound to the claim.
    const c = await client.resource('PersistentVolumeClaim').get('data', { namespace: 'wffc' });
    await client.resource('PersistentVolume').create({
      ...pv('wffc-pv', { cls: 'wffc', node: 'n2', claim: { ns: 'wffc', name: 'data', uid: c.metadata?.uid } }),
      metadata: { name: 'wffc-pv', annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER } },
    });
    expect(c.metadata?.uid).toBeTruthy();
    await until(
      'claim bound',
      async () =>
        (await client.resource('PersistentVolumeClaim').get('data', { namespace: 'wffc' })).status?.phase === 'Bound',
    );
    expect(await until('pod bound', () => nodeOf('wffc', 'p'))).toBe('n2');
  });

  it('a WaitForFirstConsumer claim is bound to a static PV of the node the pod goes to', async () => {
    await client.resource('PersistentVolume').create(pv('local-pv', { cls: 'local', node: 'n1' }));
    await claim('static', 'data', 'local');
    await client.resource('Pod').create(pod('static', 'p', ['data']));
    expect(await until('pod bound', () => nodeOf('static', 'p'))).toBe('n1');
    const v = await client.resource('PersistentVolume').get('local-pv');
    expect(v.spec?.claimRef).toMatchObject({ namespace: 'static', name: 'data' });
    expect(v.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    const c = await client.resource('PersistentVolumeClaim').get('data', { namespace: 'static' });
    expect(c.spec?.volumeName).toBe('local-pv');
  });

  it('a pod that fits no node gets PodScheduled=False and a FailedScheduling event naming the constraint', async () => {
    await client.resource('PersistentVolume').create(pv('nowhere-pv', { cls: 'manual', node: 'n9' }));
    await client.resource('PersistentVolume').create(pv('nowhere-decoy', { cls: 'other', node: 'n9' }));
    await claim('unfit', 'data', 'manual');
    await until(
      'claim bound',
      async () =>
        (await client.resource('PersistentVolumeClaim').get('data', { namespace: 'unfit' })).status?.phase === 'Bound',
    );
    await client.resource('Pod').create(pod('unfit', 'p', ['data']));
    const want =
      '0/2 nodes are available: 2 node(s) had volume node affinity conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..';
    const cond = await until('PodScheduled=False', async () =>
      (await client.resource('Pod').get('p', { namespace: 'unfit' })).status?.conditions?.find(
        (c) => c.type === 'PodScheduled' && c.status === 'False',
      ),
    );
    expect(cond).toMatchObject({ reason: 'Unschedulable', message: want });
    const ev = await until('FailedScheduling', () => failedScheduling('unfit', 'p'));
    expect(ev).toMatchObject({ type: 'Warning', message: want });
  });

  it('respects CSINode allocatable.count per driver', async () => {
    for (const i of [1, 2, 3]) {
      await client.resource('PersistentVolume').create(pv(`lim-${i}`, { cls: 'limited', driver: LIMITED }));
      await claim('limits', `c${i}`, 'limited');
    }
    await until('claims bound', async () =>
      (await client.resource('PersistentVolumeClaim').list({ namespace: 'limits' })).items.every(
        (c) => c.status?.phase === 'Bound',
      ),
    );
    await client.resource('Pod').create(pod('limits', 'p1', ['c1']));
    await client.resource('Pod').create(pod('limits', 'p2', ['c2']));
    const nodes = [
      await until('p1 bound', () => nodeOf('limits', 'p1')),
      await until('p2 bound', () => nodeOf('limits', 'p2')),
    ];
    expect(nodes.sort()).toEqual(['n1', 'n2']);
    await client.resource('Pod').create(pod('limits', 'p3', ['c3']));
    const ev = await until('FailedScheduling', () => failedScheduling('limits', 'p3'));
    expect(ev.message).toBe(
      '0/2 nodes are available: 2 node(s) exceed max volume count. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..',
    );
    // Freeing a slot (the pod goes) lets the waiting pod in, without any periodic retry being needed.
    await client.resource('Pod').delete('p1', { namespace: 'limits', gracePeriodSeconds: 0 });
    expect(await until('p3 bound', () => nodeOf('limits', 'p3'))).toBe(nodes[0]);
    const cond = await until('PodScheduled=True', async () =>
      (await client.resource('Pod').get('p3', { namespace: 'limits' })).status?.conditions?.find(
        (c) => c.type === 'PodScheduled' && c.status === 'True',
      ),
    );
    expect(cond.reason).toBeUndefined();
  });

  it('refuses a second pod for a ReadWriteOncePod claim', async () => {
    await client
      .resource('PersistentVolume')
      .create(pv('rwop-pv', { cls: 'manual-rwop', modes: ['ReadWriteOncePod'] }));
    await claim('rwop', 'data', 'manual-rwop', ['ReadWriteOncePod']);
    await until(
      'claim bound',
      async () =>
        (await client.resource('PersistentVolumeClaim').get('data', { namespace: 'rwop' })).status?.phase === 'Bound',
    );
    await client.resource('Pod').create(pod('rwop', 'a', ['data']));
    await until('a bound', () => nodeOf('rwop', 'a'));
    await client.resource('Pod').create(pod('rwop', 'b', ['data']));
    const ev = await until('FailedScheduling', () => failedScheduling('rwop', 'b'));
    expect(ev.message).toContain(
      '2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode',
    );
    expect(await nodeOf('rwop', 'b')).toBeUndefined();
  });

  it('gives up waiting for a volume that is never provisioned (PreBind timeout) and says so', async () => {
    await claim('timeout', 'data', 'wffc');
    await client.resource('Pod').create({
      ...pod('timeout', 'p', ['data']),
      spec: { ...pod('timeout', 'p', ['data']).spec!, schedulerName: 'impatient' },
    });
    const cond = await until('PodScheduled=False', async () =>
      (await client.resource('Pod').get('p', { namespace: 'timeout' })).status?.conditions?.find(
        (c) => c.type === 'PodScheduled' && c.status === 'False',
      ),
    );
    expect(cond).toMatchObject({
      reason: 'SchedulerError',
      message: 'running PreBind plugin "VolumeBinding": binding volumes: timed out waiting for the condition',
    });
    const ev = await until('FailedScheduling', () => failedScheduling('timeout', 'p'));
    expect(ev.source?.component).toBe('impatient');
    expect(await nodeOf('timeout', 'p')).toBeUndefined();
  });
});
