/**
 * Several node hosts (network namespaces on a private bridge, each with its own mount namespace,
 * node agent and hostpath driver) against one API server and controller manager: node lifecycle
 * (Ready Unknown, taints, evictions), non-graceful shutdown (out-of-service), partitions, and a
 * host returning to find its pod gone, volumes moving between hosts on shared storage with their
 * data. The node monitor grace period is 3 s here (kube: 40 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, Node, Pod, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { NotFoundError } from '../src/util/errors.js';
import { built } from './helpers/env.js';
import {
  SHARED_DRIVER,
  netnsUnavailable,
  startNetnsCluster,
  type NetnsCluster,
  type NodeHost,
} from '../bench/netns/hosts.js';
import { until } from './scheduler-kit.js';

const unavailable = built ? await netnsUnavailable() : 'no build (run npx tsc -p tsconfig.build.json)';
if (unavailable) console.warn(`multi-node tests skipped: ${unavailable}`);

const OUT_OF_SERVICE: Taint = { key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' };
const NODE_FLAGS = ['--node-lease-duration-seconds', '2', '--node-status-update-frequency', '500ms'];

describe.skipIf(unavailable !== undefined)('node hosts on network namespaces', () => {
  let cluster: NetnsCluster;
  const hosts: Record<string, NodeHost> = {};

  beforeAll(async () => {
    cluster = await startNetnsCluster({
      controllerFlags: ['--node-monitor-grace-period', '3s', '--node-monitor-period', '500ms'],
      sharedStorage: true,
    });
    for (const name of ['b', 'c']) hosts[name] = await cluster.addHost(name, { nodeFlags: NODE_FLAGS });
    // d and e: the node side of the shared storage, whose volumes can move between them with their data.
    for (const name of ['d', 'e']) hosts[name] = await cluster.addHost(name, { nodeFlags: NODE_FLAGS, shared: true });
    await cluster.client.resource('CSIDriver').create({
      metadata: { name: SHARED_DRIVER },
      spec: { attachRequired: true, volumeLifecycleModes: ['Persistent'] },
    });
    await cluster.client.resource('StorageClass').create({
      metadata: { name: 'shared' },
      provisioner: SHARED_DRIVER,
      volumeBindingMode: 'Immediate',
      reclaimPolicy: 'Delete',
    });
    for (const h of [hosts['b']!, hosts['c']!]) {
      await cluster.client.resource('CSIDriver').create({
        metadata: { name: h.driverName },
        spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
      });
    }
  }, 120_000);

  afterAll(async () => {
    if (!cluster) return;
    await cluster.close();
    expect(await cluster.leftovers()).toEqual([]);
  }, 60_000);

  const nodes = () => cluster.client.resource('Node');
  const pods = () => cluster.client.resource('Pod');
  const node = (name: string): Promise<Node> => nodes().get(name);
  const ready = (n: Node): string | undefined => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const taintKeys = (n: Node): string[] => (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
  const podOrNull = async (name: string): Promise<Pod | null> => {
    try {
      return await pods().get(name, { namespace: 'default' });
    } catch (e) {
      if (e instanceof NotFoundError) return null;
      throw e;
    }
  };
  const events = async (involved: string): Promise<Event[]> =>
    (
      await cluster.client
        .resource('Event')
        .list({ namespace: 'default', fieldSelector: `involvedObject.name=${involved}` })
    ).items;
  const podWithScratch = (name: string, h: NodeHost, tolerations: Toleration[] = []): Pod => ({
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: h.name,
      tolerations,
      containers: [{ name: 'app', image: 'busybox', volumeMounts: [{ name: 'scratch', mountPath: '/data' }] }],
      volumes: [{ name: 'scratch', csi: { driver: h.driverName, volumeAttributes: { size: '1Mi' } } }],
    },
  });
  const scratchMount = async (h: NodeHost, uid: string): Promise<string | undefined> =>
    (await h.mounts()).find((m) => m.includes(`/pods/${uid}/volumes/kubernetes.io~csi/scratch/mount`));
  const setOutOfService = async (name: string, on: boolean): Promise<void> => {
    const n = await node(name);
    const others = (n.spec?.taints ?? []).filter((t) => t.key !== OUT_OF_SERVICE.key);
    await nodes().update({ ...n, spec: { ...n.spec, taints: on ? [...others, OUT_OF_SERVICE] : others } });
  };
  /** A ReadWriteOnce claim on the shared storage; its PV's name. */
  const sharedClaim = async (name: string): Promise<string> => {
    const claims = cluster.client.resource('PersistentVolumeClaim');
    await claims.create({
      metadata: { name, namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'shared', resources: { requests: { storage: '1Mi' } } },
    });
    return until(`${name} bound`, async () => (await claims.get(name, { namespace: 'default' })).spec?.volumeName);
  };
  const vaOf = async (pv: string, n: string) =>
    (await cluster.client.resource('VolumeAttachment').list()).items.find(
      (v) => v.spec.source.persistentVolumeName === pv && v.spec.nodeName === n,
    );
  const publishedOn = async (h: NodeHost, pv: string): Promise<string | undefined> =>
    (await h.mounts()).find((m) => m.includes(`/volumes/kubernetes.io~csi/${pv}/mount`));
  /** A pod on `h` using the claim; once the volume is published there, `text` is written into it. */
  const writeThrough = async (
    name: string,
    h: NodeHost,
    claimName: string,
    pv: string,
    text: string,
  ): Promise<void> => {
    await pods().create(podWithClaim(name, h, claimName));
    const target = await until(`${claimName} mounted on ${h.name}`, () => publishedOn(h, pv));
    await h.sh(`echo ${text} > ${target}/data`);
  };
  const podWithClaim = (name: string, h: NodeHost, claimName: string): Pod => ({
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: h.name,
      containers: [{ name: 'app', image: 'busybox' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  });
  const untilReadyAgain = async (name: string): Promise<void> => {
    await until(`${name} Ready without lifecycle taints`, async () => {
      const n = await node(name);
      return (
        ready(n) === 'True' &&
        !taintKeys(n).some(
          (k) => k.startsWith('node.kubernetes.io/unreachable') || k.startsWith('node.kubernetes.io/not-ready'),
        )
      );
    });
  };

  it('hosts join over the bridge only, and report Ready with their bridge address', async () => {
    for (const h of Object.values(hosts)) {
      const n = await until(
        `${h.name} Ready`,
        async () => {
          const x = await node(h.name);
          return ready(x) === 'True' ? x : undefined;
          // Every host's agent, driver and registrar start at once; on a loaded 2-core machine that takes a while.
        },
        60_000,
      );
      expect(n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe(h.address);
      // Nothing but the bridge: no default route out of the host.
      expect((await h.sh('ip -4 route')).trim()).toBe(
        `${h.address.replace(/\.\d+$/, '.0')}/24 dev eth0 proto kernel scope link src ${h.address}`,
      );
    }
  });

  it('a killed host turns Unknown, is tainted unreachable, its pods evicted after their tolerations; out-of-service force-deletes them; back, it is Ready and untainted', async () => {
    const c = hosts['c']!;
    const short: Toleration = {
      key: 'node.kubernetes.io/unreachable',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 1,
    };
    await pods().create(podWithScratch('short', c, [short]));
    const long = await pods().create(podWithScratch('long', c));
    expect(long.spec?.tolerations).toContainEqual({
      key: 'node.kubernetes.io/unreachable',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 300,
    });
    await until('long mounted on c', () => scratchMount(c, long.metadata!.uid!));

    await c.kill();
    const dead = await until('c Unknown and tainted', async () => {
      const n = await node('c');
      return ready(n) === 'Unknown' && taintKeys(n).length === 2 ? n : undefined;
    });
    expect(dead.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
    });
    expect(taintKeys(dead)).toEqual([
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/unreachable:NoSchedule',
    ]);
    // 1 s of toleration: evicted (deleted gracefully — the dead kubelet never confirms, so it stays terminating).
    await until('short evicted', async () => (await podOrNull('short'))?.metadata?.deletionTimestamp);
    expect((await events('short')).find((e) => e.reason === 'TaintManagerEviction')?.message).toBe(
      'Marking for deletion Pod default/short',
    );
    expect((await podOrNull('long'))?.metadata?.deletionTimestamp).toBeUndefined(); // 300 s

    // Non-graceful node shutdown: the operator says c is down; its pods are gone at once.
    await setOutOfService('c', true);
    await until(
      'c pods force-deleted',
      async () => (await podOrNull('short')) === null && (await podOrNull('long')) === null,
    );

    await setOutOfService('c', false);
    await c.start();
    await untilReadyAgain('c');
    expect(await c.mounts()).toEqual([]); // a power cut takes the mounts with it
  });

  it('a cut-off host keeps its mounts and data, changes nothing it cannot reach, and on return (its agent crashed and restarted meanwhile) unmounts the pod that was removed but not the one still wanted', async () => {
    const b = hosts['b']!;
    const oos: Toleration = { key: OUT_OF_SERVICE.key, operator: 'Exists', effect: 'NoExecute' };
    const stay = await pods().create(podWithScratch('stay', b, [oos]));
    const moved = await pods().create(podWithScratch('moved', b));
    const stayMount = await until('stay mounted on b', () => scratchMount(b, stay.metadata!.uid!));
    const movedMount = await until('moved mounted on b', () => scratchMount(b, moved.metadata!.uid!));
    await b.sh(`echo kept > ${stayMount}/f`);

    await b.cutOff();
    await until('b Unknown and tainted', async () => {
      const n = await node('b');
      return ready(n) === 'Unknown' && taintKeys(n).includes('node.kubernetes.io/unreachable:NoExecute');
    });
    const stayBefore = await pods().get('stay', { namespace: 'default' });
    const withoutReady = (p: Pod) => ({
      ...p.status,
      conditions: (p.status?.conditions ?? []).filter((c) => c.type !== 'Ready'),
    });
    // The operator fences b and the user deletes `moved` (to run it elsewhere): it goes at once.
    await pods().delete('moved', { namespace: 'default' });
    await setOutOfService('b', true);
    await until('moved force-deleted', async () => (await podOrNull('moved')) === null);
    // b could not hear any of it: its volumes stay mounted, its data readable.
    expect(await b.mounts()).toEqual(expect.arrayContaining([stayMount, movedMount]));
    expect((await b.sh(`cat ${stayMount}/f`)).trim()).toBe('kept');
    // Nothing was reported for b while it was away: `stay` is as it was, but for the node controller
    // marking it not Ready (its node cannot vouch for it).
    const stayAway = await pods().get('stay', { namespace: 'default' });
    expect(withoutReady(stayAway)).toEqual(withoutReady(stayBefore));
    expect(stayAway.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'False').toBe('False');

    // b's agent crashes and restarts while cut off: on return it must rebuild what is mounted from
    // its disk and the API's pods, unmounting `moved` and nothing else.
    await b.restart('node', 'kill');
    expect(await b.mounts()).toEqual(expect.arrayContaining([stayMount, movedMount]));

    await setOutOfService('b', false);
    await b.reconnect();
    await untilReadyAgain('b');
    await until('moved unmounted on b', async () => !(await b.mounts()).includes(movedMount));
    expect(await b.mounts()).toContain(stayMount);
    expect((await b.sh(`cat ${stayMount}/f`)).trim()).toBe('kept');

    await pods().delete('stay', { namespace: 'default' });
    await until('stay gone', async () => (await podOrNull('stay')) === null);
    expect(await b.mounts()).toEqual([]);
  });

  it('a dead host keeps its ReadWriteOnce volume until fenced: Multi-Attach, then why it waits; out-of-service detaches it at once and the volume goes to the new node with its data', async () => {
    const [d, e] = [hosts['d']!, hosts['e']!];
    const pv = await sharedClaim('rwo');
    await writeThrough('first', d, 'rwo', pv, 'before-the-crash');

    await pods().create(podWithClaim('second', e, 'rwo'));
    const multi = await until('Multi-Attach event', async () =>
      (await events('second')).find((x) => x.reason === 'FailedAttachVolume' && x.message?.startsWith('Multi-Attach')),
    );
    expect(multi.message).toBe(`Multi-Attach error for volume "${pv}" Volume is already used by pod(s) first`);
    expect(multi.type).toBe('Warning');

    await d.kill();
    const why = await until('why the volume stays on d', async () =>
      (await events('second')).find((x) => x.message?.includes('not known to be shut down')),
    );
    expect(why.message).toBe(
      `Volume "${pv}" is still attached to node(s) d, which is not ready and not known to be shut down: it is not detached while that node may still write to it. ` +
        'Once the node is shut down, taint it node.kubernetes.io/out-of-service=nodeshutdown:NoExecute (non-graceful node shutdown) to detach the volume at once.',
    );
    expect((await vaOf(pv, 'd'))?.metadata?.deletionTimestamp).toBeUndefined(); // not detached without fencing
    expect(await vaOf(pv, 'e')).toBeUndefined();

    await setOutOfService('d', true);
    await until('first force-deleted', async () => (await podOrNull('first')) === null);
    const onE = await until('rwo mounted on e', () => publishedOn(e, pv));
    expect(await vaOf(pv, 'd')).toBeUndefined();
    expect((await e.sh(`cat ${onE}/data`)).trim()).toBe('before-the-crash');

    await setOutOfService('d', false);
    await d.start();
    await untilReadyAgain('d');
    expect(await d.mounts()).toEqual([]);
    await pods().delete('second', { namespace: 'default' });
    await until('second gone', async () => (await podOrNull('second')) === null);
    await cluster.client.resource('PersistentVolumeClaim').delete('rwo', { namespace: 'default' });
    await until('rwo released from e', async () => (await vaOf(pv, 'e')) === undefined);
  });

  it('on shared storage a ReadWriteOnce volume moves from d to e with its data: detached from d only after d unmounted, then attached to e', async () => {
    const [d, e] = [hosts['d']!, hosts['e']!];
    const pv = await sharedClaim('carried');

    await writeThrough('writer', d, 'carried', pv, 'written-on-d');
    await pods().delete('writer', { namespace: 'default' });
    await pods().create(podWithClaim('reader', e, 'carried'));
    const violations: string[] = [];
    const onE = await until('mounted on e', async () => {
      const va = await vaOf(pv, 'd');
      const left = (await d.mounts()).filter((m) => m.includes(pv));
      if ((!va || va.metadata?.deletionTimestamp) && left.length > 0)
        violations.push(`detach from d started while d still had ${left.join(', ')}`);
      return publishedOn(e, pv);
    });
    expect(violations).toEqual([]);
    expect(await vaOf(pv, 'd')).toBeUndefined();
    expect((await vaOf(pv, 'e'))?.status?.attached).toBe(true);
    expect((await e.sh(`cat ${onE}/data`)).trim()).toBe('written-on-d');

    await pods().delete('reader', { namespace: 'default' });
    await until('reader gone', async () => (await podOrNull('reader')) === null);
    await cluster.client.resource('PersistentVolumeClaim').delete('carried', { namespace: 'default' });
    await until('released from e', async () => (await vaOf(pv, 'e')) === undefined);
    expect(await e.mounts()).toEqual([]);
  });
});
