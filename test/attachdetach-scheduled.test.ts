import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import type { RestClient } from '../src/client/index.js';
import { runAttachDetachController } from '../src/controllers/attachdetach/run.js';
import { ANN_CONTROLLER_MANAGED_ATTACH_DETACH, attachmentName } from '../src/controllers/attachdetach/types.js';
import { runScheduler } from '../src/controllers/scheduler/run.js';
import { readyNode, until } from './scheduler-kit.js';

let srv: TestApiServer;
let client: RestClient;
const stop = new AbortController();
let running: Promise<unknown>;
const DRIVER = 'attach.csi.example.com';

beforeAll(async () => {
  srv = await startTestApiServer({ scheduler: false, attachDetach: false });
  client = srv.plane.client;
  for (const n of ['n1', 'n2']) await readyNode(client, n, {}, { [ANN_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' });
  await client.resource('StorageClass').create({
    metadata: { name: 'local' },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  running = Promise.all([
    runScheduler({ client, signal: stop.signal }),
    runAttachDetachController({ client, signal: stop.signal }),
  ]);
});

afterAll(async () => {
  stop.abort();
  await running;
  await srv?.close();
});

it('a pod placed by the scheduler next to its static volume gets that volume attached there', async () => {
  await client.resource('PersistentVolume').create({
    metadata: { name: 'pv-local' },
    spec: {
      storageClassName: 'local',
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      csi: { driver: DRIVER, volumeHandle: 'vol-7' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] },
          ],
        },
      },
    },
  });
  await client.resource('PersistentVolumeClaim').create({
    metadata: { name: 'data', namespace: 'default' },
    spec: { storageClassName: 'local', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  await client.resource('Pod').create({
    metadata: { name: 'app', namespace: 'default' },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    },
  });
  const name = attachmentName('vol-7', DRIVER, 'n2');
  const va = await until('VolumeAttachment', () =>
    client
      .resource('VolumeAttachment')
      .get(name)
      .catch(() => undefined),
  );
  expect(va.spec).toEqual({ attacher: DRIVER, nodeName: 'n2', source: { persistentVolumeName: 'pv-local' } });
  expect((await client.resource('Pod').get('app', { namespace: 'default' })).spec?.nodeName).toBe('n2');
});
