import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { ApiRegistry } from './registry.js';
import { formatInvalidMessage } from './resources/common.js';
import { ALL_RESOURCES } from './resources/index.js';
import type { KubeObject } from './resources/types.js';
import { ApiConflictError, ApiForbiddenError, ApiNotFoundError, ApiBadRequestError } from './status.js';

// The per-kind hooks of ResourceDef, driven through the generic registry as the handlers do.
describe('registry with per-kind hooks', () => {
  let store: Store;
  let registry: ApiRegistry;
  beforeEach(async () => {
    store = openSqliteStore({ path: ':memory:' });
    registry = new ApiRegistry(store, ALL_RESOURCES, formatInvalidMessage);
    await registry.start();
    await registry.ensureInitialObjects();
  });
  afterEach(async () => {
    registry.stop();
    await store.close();
  });

  const byPlural = (group: string, plural: string) => registry.byGroupVersionPlural(group, 'v1', plural)!;
  const configMap = (name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: {},
  });
  const event = (name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'doomed' },
    reason: 'R',
    message: 'm',
  });

  it('creates the initial objects once', async () => {
    const namespaces = byPlural('', 'namespaces');
    expect(
      namespaces.cache
        .list()
        .map((c) => c.obj.metadata.name)
        .sort(),
    ).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    const rv = namespaces.cache.revision();
    await registry.ensureInitialObjects();
    expect(namespaces.cache.revision()).toBe(rv);
  });

  it('a namespace is held by its spec finalizers, Terminating, refuses new content but events, and goes when finalized', async () => {
    const namespaces = byPlural('', 'namespaces');
    await namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } }, undefined);
    const del = await namespaces.delete(undefined, 'doomed');
    expect(del.kind).toBe('pending');
    expect(del.obj.status).toEqual({ phase: 'Terminating' });
    expect(namespaces.get(undefined, 'doomed')?.obj.metadata.deletionTimestamp).toBeDefined();
    await expect(byPlural('', 'configmaps').create(configMap('late'), 'doomed')).rejects.toThrow(ApiForbiddenError);
    await expect(byPlural('', 'events').create(event('late'), 'doomed')).resolves.toBeDefined();
    await expect(byPlural('', 'configmaps').create(configMap('nowhere'), 'missing')).rejects.toThrow(ApiNotFoundError);
    // finalize may change spec.finalizers only: a label change through it is dropped.
    const finalize = (finalizers: string[]) =>
      namespaces.update(
        undefined,
        'doomed',
        (cur) => {
          const o = structuredClone(cur);
          o.metadata.labels = { ...o.metadata.labels, sneaky: 'yes' };
          o.spec = { finalizers };
          return o;
        },
        { subresource: 'finalize' },
      );
    await finalize(['kubernetes', 'example.com/other']);
    const held = namespaces.get(undefined, 'doomed')?.obj;
    expect(held?.spec).toEqual({ finalizers: ['kubernetes', 'example.com/other'] });
    expect(held?.metadata.labels?.sneaky).toBeUndefined();
    await finalize([]);
    expect(namespaces.get(undefined, 'doomed')).toBeUndefined();
  });

  it('a partial update through an unknown subresource is 404', async () => {
    const cms = byPlural('', 'configmaps');
    await cms.create(configMap('c'), 'default');
    await expect(
      cms.update('default', 'c', (cur) => structuredClone(cur), { subresource: 'finalize' }),
    ).rejects.toThrow(ApiNotFoundError);
  });

  it('a pod on a node is deleted gracefully; unbound, it goes at once', async () => {
    const pods = byPlural('', 'pods');
    const pod = (name: string, nodeName?: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'i' }], ...(nodeName ? { nodeName } : {}) },
    });
    await pods.create(pod('bound', 'n1'), 'default');
    await pods.create(pod('loose'), 'default');
    const graceful = await pods.delete('default', 'bound');
    expect(graceful.kind).toBe('pending');
    expect(graceful.obj.metadata.deletionGracePeriodSeconds).toBe(30);
    expect((await pods.delete('default', 'bound', { gracePeriodSeconds: 0 })).kind).toBe('deleted');
    expect((await pods.delete('default', 'loose')).kind).toBe('deleted');
  });

  it('binds a pod once through its action subresource', async () => {
    const pods = byPlural('', 'pods');
    await pods.create(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      'default',
    );
    const binding = pods.subresource('binding');
    if (binding?.type !== 'action') throw new Error('pods/binding is an action subresource');
    const body = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'n1' } };
    expect(() => binding.validateBody({ target: {} })).toThrow(ApiBadRequestError);
    binding.validateBody(body);
    await pods.update('default', 'p', (cur) => binding.apply(cur, body, 'p'));
    expect((pods.get('default', 'p')?.obj.spec as { nodeName?: string }).nodeName).toBe('n1');
    await expect(
      pods.update('default', 'p', (cur) => binding.apply(cur, { target: { name: 'n2' } }, 'p')),
    ).rejects.toThrow('Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"');
    await expect(
      pods.update('default', 'p', (cur) => binding.apply(cur, { target: { name: 'n2' } }, 'p')),
    ).rejects.toThrow(ApiConflictError);
  });
});
