import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import type { RestClient } from '../src/client/index.js';
import { NotFoundError } from '../src/util/errors.js';
import { until } from './scheduler-kit.js';

let srv: TestApiServer;
let client: RestClient;

// Without the other controllers: the namespace controller runs beside the API server either way.
beforeAll(async () => {
  srv = await startTestApiServer({ controllers: false });
  client = srv.plane.client;
});

afterAll(async () => {
  await srv?.close();
});

const gone = async (get: () => Promise<unknown>): Promise<boolean> =>
  get().then(
    () => false,
    (e: unknown) => e instanceof NotFoundError,
  );

describe('namespace controller', () => {
  it('deletes the content of a deleted namespace, waits for objects held by finalizers, then lets the namespace go', async () => {
    await client.resource('Namespace').create({ metadata: { name: 'doomed' } });
    await client.resource('ConfigMap').create({ metadata: { name: 'plain', namespace: 'doomed' }, data: { a: '1' } });
    await client.resource('Secret').create({ metadata: { name: 's', namespace: 'doomed' }, stringData: { k: 'v' } });
    await client
      .resource('ConfigMap')
      .create({ metadata: { name: 'held', namespace: 'doomed', finalizers: ['example.com/hold'] } });
    await client.resource('ConfigMap').create({ metadata: { name: 'bystander', namespace: 'default' } });

    await client.resource('Namespace').delete('doomed');
    await until(
      'unheld content deleted',
      async () =>
        (await gone(() => client.resource('ConfigMap').get('plain', { namespace: 'doomed' }))) &&
        gone(() => client.resource('Secret').get('s', { namespace: 'doomed' })),
    );
    const held = await client.resource('ConfigMap').get('held', { namespace: 'doomed' });
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    // The content that is left keeps the namespace: it is Terminating with its finalizer.
    const ns = await client.resource('Namespace').get('doomed');
    expect(ns.status?.phase).toBe('Terminating');
    expect(ns.spec?.finalizers).toContain('kubernetes');

    await client
      .resource('ConfigMap')
      .patch('held', 'merge', { metadata: { finalizers: null } }, { namespace: 'doomed' });
    await until('namespace gone', () => gone(() => client.resource('Namespace').get('doomed')));
    expect((await client.resource('ConfigMap').get('bystander', { namespace: 'default' })).metadata?.name).toBe(
      'bystander',
    );
  });
});
