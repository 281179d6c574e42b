import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsiClient } from '../src/csi/client.js';
import { leaseName } from '../src/csi/sidecar/names.js';
import { runCsiSidecarWithLeaderElection } from '../src/csi/sidecar/sidecar.js';
import { claim, DRIVER, eventually, quietLogger, startEnv, storageClass, type Env } from './csi-sidecar-kit.js';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
  await env.client
    .resource('Namespace')
    .create({ metadata: { name: 'kube-system' } })
    .catch(() => undefined);
  await env.client.resource('StorageClass').create(storageClass('sc'));
});
afterAll(async () => env?.close());

describe('--leader-elect', () => {
  it('serves only while holding the per-driver Lease (named after what the driver reports), and releases it on stop', async () => {
    const ac = new AbortController();
    const csi = new CsiClient({ endpoint: env.socket, log: quietLogger() });
    const done = runCsiSidecarWithLeaderElection({
      client: env.client,
      csi,
      signal: ac.signal,
      election: { identity: 'me' },
      log: quietLogger(),
      rateLimit: { initialMs: 50, capMs: 1000 },
    });
    try {
      const lease = await eventually(() =>
        env.client.resource('Lease').get(leaseName(DRIVER), { namespace: 'kube-system' }),
      );
      expect(lease.spec?.holderIdentity).toBe('me');
      await env.client.resource('PersistentVolumeClaim').create(claim('l1', 'sc', '1Mi'));
      await eventually(async () =>
        expect(
          (await env.client.resource('PersistentVolumeClaim').get('l1', { namespace: 'default' })).status?.phase,
        ).toBe('Bound'),
      );
    } finally {
      ac.abort();
      await done;
      csi.close();
    }
    const after = await env.client.resource('Lease').get(leaseName(DRIVER), { namespace: 'kube-system' });
    expect(after.spec?.holderIdentity ?? '').toBe('');
  });
});
