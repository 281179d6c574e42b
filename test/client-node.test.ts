import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';

/** The official JavaScript client's informer works against Stowage unchanged. */
describe('@kubernetes/client-node informer', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('sees add, update and delete of PersistentVolumeClaims', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfigPath);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/persistentvolumeclaims', () =>
      core.listNamespacedPersistentVolumeClaim({ namespace: 'default' }),
    );
    const seen: string[] = [];
    informer.on('add', (o: k8s.V1PersistentVolumeClaim) => seen.push(`add:${o.metadata?.name}`));
    informer.on('update', (o: k8s.V1PersistentVolumeClaim) =>
      seen.push(`update:${o.metadata?.name}:${o.metadata?.labels?.step ?? ''}`),
    );
    informer.on('delete', (o: k8s.V1PersistentVolumeClaim) => seen.push(`delete:${o.metadata?.name}`));
    await informer.start();
    try {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: {
          metadata: { name: 'inf1' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' },
        },
      });
      await expect.poll(() => seen, { timeout: 10_000 }).toContain('add:inf1');
      await core.patchNamespacedPersistentVolumeClaim(
        { namespace: 'default', name: 'inf1', body: { metadata: { labels: { step: 'two' }, finalizers: null } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await expect.poll(() => seen, { timeout: 10_000 }).toContain('update:inf1:two');
      await core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'inf1' });
      await expect.poll(() => seen, { timeout: 10_000 }).toContain('delete:inf1');
      expect(informer.list('default').map((o) => o.metadata?.name)).not.toContain('inf1');
    } finally {
      await informer.stop();
    }
  });
});
