/**
 * B3 across nodes (root): 3 node hosts (network namespaces, bench/netns/hosts.ts), each with its own
 * hostpath driver (attach required) and CSI sidecar, 100 pods per host, each with a claim of its own
 * created with it: provisioned, attached (VolumeAttachment) and mounted on the pod's host, timed
 * from claim + pod creation to the pod Running. Prints one result line with p50/p99.
 * `B3N_HOSTS`, `B3N_PODS` change the shape.
 */
import { setLogLevel } from '../src/util/log.js';
import { percentile, poll, podsRunningAt } from './harness.js';
import { netnsUnavailable, startNetnsCluster, type NodeHost } from './netns/hosts.js';

const NS = 'default';

async function main(): Promise<void> {
  const why = await netnsUnavailable();
  if (why) throw new Error(`bench/podstart-nodes: ${why}`);
  setLogLevel('error');
  const nHosts = Number(process.env.B3N_HOSTS ?? 3);
  const perHost = Number(process.env.B3N_PODS ?? 100);
  const cluster = await startNetnsCluster({ controllerFlags: ['--workers', '8'] });
  try {
    const { client } = cluster;
    const hosts: NodeHost[] = [];
    for (let i = 1; i <= nHosts; i++) hosts.push(await cluster.addHost(`h${i}`, { attach: true, sidecar: true }));
    for (const h of hosts) {
      await client.resource('CSIDriver').create({
        metadata: { name: h.driverName },
        spec: { attachRequired: true, volumeLifecycleModes: ['Persistent'] },
      });
      await client.resource('StorageClass').create({
        metadata: { name: `sc-${h.name}` },
        provisioner: h.driverName,
        volumeBindingMode: 'Immediate',
        reclaimPolicy: 'Delete',
      });
    }
    await poll('hosts registered their drivers', async () => {
      const csiNodes = (await client.resource('CSINode').list()).items;
      return hosts.every((h) =>
        csiNodes.some(
          (c) => c.metadata?.name === h.name && (c.spec?.drivers ?? []).some((d) => d.name === h.driverName),
        ),
      );
    });

    const stop = new AbortController();
    const running = await podsRunningAt(client, { namespace: NS }, stop.signal);

    const created = new Map<string, number>();
    const t0 = performance.now();
    await Promise.all(
      hosts.flatMap((h) =>
        Array.from({ length: perHost }, async (_, i) => {
          const name = `${h.name}-${i}`;
          created.set(name, performance.now());
          await client.resource('PersistentVolumeClaim').create({
            metadata: { name, namespace: NS },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: `sc-${h.name}`,
              resources: { requests: { storage: '1Mi' } },
            },
          });
          await client.resource('Pod').create({
            metadata: { name, namespace: NS },
            spec: {
              nodeName: h.name,
              containers: [{ name: 'app', image: 'busybox' }],
              volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }],
            },
          });
        }),
      ),
    );
    await poll('all pods Running', () => running.size === created.size, 600_000);
    const total = performance.now() - t0;
    const attached = (await client.resource('VolumeAttachment').list()).items.filter(
      (va) => va.status?.attached === true,
    ).length;
    const mounted = (await Promise.all(hosts.map((h) => h.mounts()))).flat().filter((m) => m.endsWith('/mount')).length;
    stop.abort();
    const lat = [...created].map(([n, t]) => running.get(n)! - t).sort((a, b) => a - b);
    const f = (x: number): string => `${Math.round(x)}ms`;
    console.log(
      `B3 across nodes: ${nHosts} hosts x ${perHost} pods x 1 new claim (provisioned, attached, mounted) p50=${f(percentile(lat, 50))} p99=${f(percentile(lat, 99))} all=${(total / 1000).toFixed(1)}s; ${attached} VolumeAttachments attached, ${mounted} volumes mounted`,
    );
  } finally {
    await cluster.close();
    const left = await cluster.leftovers();
    if (left.length) console.error(`left behind: ${left.join('; ')}`);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
