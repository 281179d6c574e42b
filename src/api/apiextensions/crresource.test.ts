import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../store/sqlite.js';
import type { Store } from '../../store/store.js';
import { ApiRegistry } from '../registry.js';
import { formatInvalidMessage } from '../resources/common.js';
import { ALL_RESOURCES } from '../resources/index.js';
import { ApiInvalidError } from '../status.js';
import { customResourceDef } from './crresource.js';
import type { CRD } from './types.js';

const crd: CRD = {
  metadata: { name: 'dials.x.io', uid: 'u1' },
  spec: {
    group: 'x.io',
    scope: 'Cluster',
    names: { plural: 'dials', kind: 'Dial' },
    versions: [
      {
        name: 'v2',
        served: true,
        storage: true,
        additionalPrinterColumns: [{ name: 'Level', type: 'integer', jsonPath: '.spec.level' }],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { level: { type: 'integer', maximum: 11, default: 5 } } },
            },
          },
        },
      },
      {
        name: 'v1',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

// Custom resource kinds registered with a running registry: the same generic storage serves them.
describe('custom resource kinds in the registry', () => {
  let store: Store;
  let registry: ApiRegistry;
  beforeEach(async () => {
    store = openSqliteStore({ path: ':memory:' });
    registry = new ApiRegistry(store, ALL_RESOURCES, formatInvalidMessage);
    await registry.start();
  });
  afterEach(async () => {
    registry.stop();
    await store.close();
  });

  it('registers versions sharing one set of keys, converting apiVersion on read; unregistering ends watches', async () => {
    const before = registry.defs();
    const changes: number[] = [];
    registry.onChange(() => changes.push(registry.defs().length));
    const v2 = await registry.register(customResourceDef(crd, crd.spec.versions[0]!));
    const v1 = await registry.register(customResourceDef(crd, crd.spec.versions[1]!));
    expect(registry.defs()).not.toBe(before);
    expect(changes).toEqual([before.length + 1, before.length + 2]);

    const created = await v2.create(
      { apiVersion: 'x.io/v2', kind: 'Dial', metadata: { name: 'd' }, spec: {} },
      undefined,
    );
    expect(created.spec).toEqual({ level: 5 });
    expect(await store.get('/registry/x.io/dials/d')).toBeDefined();
    expect(v1.get(undefined, 'd')?.obj.apiVersion).toBe('x.io/v1');
    expect(v2.get(undefined, 'd')?.obj.apiVersion).toBe('x.io/v2');
    expect(v2.def.row(created, Date.now())).toEqual(['d', 5]);

    await expect(v2.create({ metadata: { name: 'e' }, spec: { level: 12 } }, undefined)).rejects.toThrow(
      ApiInvalidError,
    );

    let ended = false;
    v1.cache.watch(
      v1.cache.revision(),
      () => {},
      () => (ended = true),
    );
    registry.unregister(v1);
    expect(ended).toBe(true);
    expect(registry.byGroupVersionPlural('x.io', 'v1', 'dials')).toBeUndefined();
    expect(registry.byGroupVersionPlural('x.io', 'v2', 'dials')).toBe(v2);
  });
});
