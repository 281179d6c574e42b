import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../util/errors.js';
import { applyStrategicMergePatch, SMP_MESSAGES } from './strategic.js';
import { PatchNotApplicableError, type PatchMeta, type PatchMetaLookup } from './types.js';

/** Patch metadata of the fields these tests touch, as the core/v1 Go struct tags declare it. */
const META: Readonly<Record<string, PatchMeta>> = {
  'metadata.finalizers': { strategy: 'merge' },
  'metadata.ownerReferences': { strategy: 'merge', mergeKey: 'uid' },
  'spec.containers': { strategy: 'merge', mergeKey: 'name' },
  'spec.initContainers': { strategy: 'merge', mergeKey: 'name' },
  'spec.containers.env': { strategy: 'merge', mergeKey: 'name' },
  'spec.containers.ports': { strategy: 'merge', mergeKey: 'containerPort' },
  'spec.containers.volumeMounts': { strategy: 'merge', mergeKey: 'mountPath' },
  'spec.volumes': { strategy: 'merge,retainKeys', mergeKey: 'name' },
  'status.conditions': { strategy: 'merge', mergeKey: 'type' },
  // PV and PVC spec.accessModes carry no patch strategy: the list is atomic.
  'spec.accessModes': { strategy: 'replace' },
  // test-only: a merge list of objects whose schema forgot the merge key
  'spec.keyless': { strategy: 'merge' },
};
const lookup: PatchMetaLookup = (path) => META[path.join('.')] ?? { strategy: 'replace' };

type Case = { name: string; doc: object; patch: object; want: object };

function run(cases: Case[]): void {
  it.each(cases)('$name', ({ doc, patch, want }) => {
    const docBefore = structuredClone(doc);
    const patchBefore = structuredClone(patch);
    expect(applyStrategicMergePatch(doc, patch, lookup)).toEqual(want);
    expect(doc).toEqual(docBefore);
    expect(patch).toEqual(patchBefore);
  });
}

const c = (name: string, extra: object = {}): object => ({ name, ...extra });

describe('strategic merge patch: maps', () => {
  run([
    {
      name: 'maps merge recursively, null deletes',
      doc: { metadata: { name: 'p', labels: { a: '1', b: '2' } } },
      patch: { metadata: { labels: { b: null, c: '3' } } },
      want: { metadata: { name: 'p', labels: { a: '1', c: '3' } } },
    },
    { name: 'null for a missing key is ignored', doc: { a: 1 }, patch: { b: null }, want: { a: 1 } },
    { name: 'scalars replace', doc: { a: 1, b: 'x' }, patch: { a: 2 }, want: { a: 2, b: 'x' } },
    { name: 'a type change replaces', doc: { a: 'x' }, patch: { a: { b: 1 } }, want: { a: { b: 1 } } },
    { name: 'an empty patch is a no-op', doc: { a: { b: [1] } }, patch: {}, want: { a: { b: [1] } } },
    {
      name: '$patch: replace on a map replaces it',
      doc: { metadata: { labels: { a: '1', b: '2' } } },
      patch: { metadata: { labels: { $patch: 'replace', c: '3' } } },
      want: { metadata: { labels: { c: '3' } } },
    },
    {
      name: '$patch: replace at the root',
      doc: { name: 1, value: 1 },
      patch: { other: 'a', $patch: 'replace' },
      want: { other: 'a' },
    },
    {
      name: '$patch: delete on a map empties it (as upstream)',
      doc: { spec: { simpleMap: { key1: 1, key2: 1 } } },
      patch: { spec: { simpleMap: { $patch: 'delete' } } },
      want: { spec: { simpleMap: {} } },
    },
    {
      name: '$patch: merge on a map is the default merge',
      doc: { metadata: { labels: { a: '1' } } },
      patch: { metadata: { labels: { $patch: 'merge', b: '2' } } },
      want: { metadata: { labels: { a: '1', b: '2' } } },
    },
    {
      name: '$retainKeys drops the keys it does not list',
      doc: { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
      want: { spec: { strategy: { type: 'Recreate' } } },
    },
    {
      name: 'a new field from the patch loses its nulls and directive keys',
      doc: { metadata: { name: 'p' } },
      patch: {
        metadata: {
          labels: { a: '1', b: null, $retainKeys: ['a', 'b'] },
          x: { '$setElementOrder/y': [], '$deleteFromPrimitiveList/z': [] },
        },
      },
      want: { metadata: { name: 'p', labels: { a: '1' }, x: {} } },
    },
    {
      name: 'a new field carrying $patch is dropped (upstream removeDirectives)',
      doc: { metadata: { name: 'p' } },
      patch: { metadata: { labels: { $patch: 'replace', a: '1' }, annotations: { $patch: 'delete' } } },
      want: { metadata: { name: 'p' } },
    },
    {
      name: 'a type change takes the patch value as sent',
      doc: { spec: { a: 'x', b: [1], c: { d: 1 } } },
      patch: { spec: { a: { e: null, f: [{ $patch: 'delete' }, null] }, b: { $patch: 'replace' }, c: [{ g: 1 }] } },
      want: { spec: { a: { f: [null] }, c: [{ g: 1 }] } },
    },
  ]);

  it('a null patch is a no-op, as kube decodes it', () => {
    expect(applyStrategicMergePatch({ a: { b: 1 } }, null, lookup)).toEqual({ a: { b: 1 } });
  });

  it('keeps document key order and appends new keys', () => {
    const out = applyStrategicMergePatch({ a: 1, b: 2, c: 3 }, { d: 4, b: 20 }, lookup);
    expect(Object.keys(out)).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('strategic merge patch: lists', () => {
  run([
    {
      name: 'containers merge by name',
      doc: { spec: { containers: [c('app', { image: 'a:1', tty: true }), c('side', { image: 's:1' })] } },
      patch: { spec: { containers: [c('app', { image: 'a:2', tty: null })] } },
      want: { spec: { containers: [c('app', { image: 'a:2' }), c('side', { image: 's:1' })] } },
    },
    {
      // upstream interleaves: a patch item the live list lacks is placed before remaining server-only items
      name: 'a new container without $setElementOrder lands before server-only items',
      doc: { spec: { containers: [c('app'), c('side')] } },
      patch: { spec: { containers: [c('new', { image: 'n' })] } },
      want: { spec: { containers: [c('new', { image: 'n' }), c('app'), c('side')] } },
    },
    {
      name: 'patch order wins over live order for the items it names',
      doc: { spec: { containers: [c('1'), c('2', { image: 'b' }), c('3')] } },
      patch: { spec: { containers: [c('3', { image: 'c' }), c('1', { image: 'a' })] } },
      want: { spec: { containers: [c('2', { image: 'b' }), c('3', { image: 'c' }), c('1', { image: 'a' })] } },
    },
    {
      name: 'nested merge lists: env by name, volumeMounts by mountPath',
      doc: {
        spec: {
          containers: [
            c('app', {
              env: [c('A', { value: '1' }), c('B', { value: '2' })],
              volumeMounts: [{ mountPath: '/data', name: 'd' }],
            }),
          ],
        },
      },
      patch: {
        spec: {
          containers: [
            c('app', {
              env: [c('B', { value: '20' })],
              volumeMounts: [
                { mountPath: '/data', readOnly: true },
                { mountPath: '/cache', name: 'c' },
              ],
            }),
          ],
        },
      },
      want: {
        spec: {
          containers: [
            c('app', {
              env: [c('A', { value: '1' }), c('B', { value: '20' })],
              volumeMounts: [
                { mountPath: '/data', name: 'd', readOnly: true },
                { mountPath: '/cache', name: 'c' },
              ],
            }),
          ],
        },
      },
    },
    {
      name: 'ports merge by the numeric containerPort; $patch: delete removes one',
      doc: {
        spec: { containers: [c('app', { ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] })] },
      },
      patch: {
        spec: {
          containers: [
            c('app', {
              ports: [
                { containerPort: 80, protocol: 'TCP' },
                { containerPort: 443, $patch: 'delete' },
              ],
            }),
          ],
        },
      },
      want: { spec: { containers: [c('app', { ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }] })] } },
    },
    {
      name: '$patch: delete removes every item with that key; a missing key is fine',
      doc: { spec: { containers: [c('1'), c('1'), c('2', { image: 'a' })] } },
      patch: { spec: { containers: [c('1', { $patch: 'delete' }), c('9', { $patch: 'delete' })] } },
      want: { spec: { containers: [c('2', { image: 'a' })] } },
    },
    {
      name: '{$patch: replace} in a list replaces the list',
      doc: { spec: { containers: [c('a', { image: 'x' }), c('b')] } },
      patch: { spec: { containers: [c('c', { image: 'y', tty: null }), { $patch: 'replace' }] } },
      want: { spec: { containers: [c('c', { image: 'y' })] } },
    },
    {
      name: 'a lone {$patch: replace} empties the list',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { containers: [{ $patch: 'replace' }] } },
      want: { spec: { containers: [] } },
    },
    {
      name: 'empty merge lists stay empty',
      doc: { spec: { containers: [] } },
      patch: { spec: { containers: [] } },
      want: { spec: { containers: [] } },
    },
    {
      name: 'null deletes a merge list',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { containers: null } },
      want: { spec: {} },
    },
    {
      name: 'finalizers are a set: union, no duplicates',
      doc: { metadata: { finalizers: ['a', 'b'] } },
      patch: { metadata: { finalizers: ['b', 'c'] } },
      want: { metadata: { finalizers: ['a', 'b', 'c'] } },
    },
    {
      name: 'a new finalizer goes before server-only ones (upstream order)',
      doc: { metadata: { finalizers: ['kubernetes.io/pv-protection'] } },
      patch: { metadata: { finalizers: ['example.com/x'] } },
      want: { metadata: { finalizers: ['example.com/x', 'kubernetes.io/pv-protection'] } },
    },
    {
      name: 'primitive merge list order: patch order wins',
      doc: { metadata: { finalizers: ['1', '2', '3'] } },
      patch: { metadata: { finalizers: ['3', '1'] } },
      want: { metadata: { finalizers: ['2', '3', '1'] } },
    },
    {
      name: 'a new list is taken as sent, less directive items (duplicates stay, as upstream)',
      doc: { metadata: {} },
      patch: {
        metadata: {
          finalizers: ['a', 'a'],
          ownerReferences: [
            { uid: 'u1', name: 'x' },
            { uid: 'u2', $patch: 'delete' },
          ],
        },
      },
      want: { metadata: { finalizers: ['a', 'a'], ownerReferences: [{ uid: 'u1', name: 'x' }] } },
    },
    {
      name: 'an appended item is taken as sent: its nested lists are not merged',
      doc: { spec: { containers: [c('app')] } },
      patch: {
        spec: {
          containers: [
            c('new', {
              env: [c('Y', { value: '1' }), c('Y', { value: '2' }), c('X', { $patch: 'delete' })],
              tty: null,
            }),
          ],
        },
      },
      want: { spec: { containers: [c('new', { env: [c('Y', { value: '1' }), c('Y', { value: '2' })] }), c('app')] } },
    },
    {
      name: 'patch items with the same key merge into one',
      doc: { spec: { containers: [c('app')] } },
      patch: { spec: { containers: [c('y', { image: '1', tty: true }), c('y', { image: '2' })] } },
      want: { spec: { containers: [c('y', { image: '2', tty: true }), c('app')] } },
    },
    {
      name: 'a replacing list drops directive items and nulls inside items',
      doc: { spec: { tolerations: [{ key: 'x' }] } },
      patch: {
        spec: {
          tolerations: [
            { key: 'a', value: null },
            { key: 'b', $patch: 'delete' },
          ],
        },
      },
      want: { spec: { tolerations: [{ key: 'a' }] } },
    },
    {
      name: '$deleteFromPrimitiveList removes values (every copy)',
      doc: { metadata: { finalizers: ['a', 'b', 'b', 'c'] } },
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zzz'] } },
      want: { metadata: { finalizers: ['a', 'c'] } },
    },
    {
      name: '$deleteFromPrimitiveList on a missing list does nothing',
      doc: { metadata: { name: 'x' } },
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } },
      want: { metadata: { name: 'x' } },
    },
    {
      name: 'ownerReferences merge by uid',
      doc: { metadata: { ownerReferences: [{ uid: 'u1', name: 'a', controller: true }] } },
      patch: {
        metadata: {
          ownerReferences: [
            { uid: 'u1', controller: null },
            { uid: 'u2', name: 'b' },
          ],
        },
      },
      want: {
        metadata: {
          ownerReferences: [
            { uid: 'u1', name: 'a' },
            { uid: 'u2', name: 'b' },
          ],
        },
      },
    },
    {
      name: 'status.conditions merge by type',
      doc: {
        status: {
          phase: 'Pending',
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'Initialized', status: 'True' },
          ],
        },
      },
      patch: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      want: {
        status: {
          phase: 'Running',
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'Initialized', status: 'True' },
          ],
        },
      },
    },
    {
      name: 'PV spec.accessModes is atomic: replaced',
      doc: {
        kind: 'PersistentVolume',
        spec: { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], capacity: { storage: '1Gi' } },
      },
      patch: { spec: { accessModes: ['ReadWriteMany'] } },
      want: { kind: 'PersistentVolume', spec: { accessModes: ['ReadWriteMany'], capacity: { storage: '1Gi' } } },
    },
    {
      name: 'PVC spec.accessModes is atomic: replaced',
      doc: { kind: 'PersistentVolumeClaim', spec: { accessModes: ['ReadWriteOnce'] } },
      patch: { spec: { accessModes: ['ReadWriteOnce', 'ReadWriteOnce'] } },
      want: { kind: 'PersistentVolumeClaim', spec: { accessModes: ['ReadWriteOnce', 'ReadWriteOnce'] } },
    },
    {
      name: 'a list without merge strategy replaces (container args)',
      doc: { spec: { containers: [c('app', { args: ['a', 'b'] })] } },
      patch: { spec: { containers: [c('app', { args: ['c'] })] } },
      want: { spec: { containers: [c('app', { args: ['c'] })] } },
    },
    {
      name: 'volumes: $retainKeys on an item switches its source',
      doc: {
        spec: {
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'cfg', configMap: { name: 'c' } },
          ],
        },
      },
      patch: {
        spec: {
          volumes: [{ $retainKeys: ['hostPath', 'name'], name: 'data', hostPath: { path: '/x' }, emptyDir: null }],
        },
      },
      want: {
        spec: {
          volumes: [
            { name: 'data', hostPath: { path: '/x' } },
            { name: 'cfg', configMap: { name: 'c' } },
          ],
        },
      },
    },
  ]);
});

describe('strategic merge patch: $setElementOrder', () => {
  run([
    {
      name: 'reorders a merge list without changing its items',
      doc: { spec: { containers: [c('a', { image: 'x' }), c('b')] } },
      patch: { spec: { '$setElementOrder/containers': [c('b'), c('a')] } },
      want: { spec: { containers: [c('b'), c('a', { image: 'x' })] } },
    },
    {
      name: 'places a new item where the order says',
      doc: { spec: { containers: [c('1'), c('2', { image: '2' })] } },
      patch: {
        spec: {
          '$setElementOrder/containers': [c('4'), c('1'), c('2'), c('3')],
          containers: [c('4', { image: '4' }), c('3', { image: '3' })],
        },
      },
      want: { spec: { containers: [c('4', { image: '4' }), c('1'), c('2', { image: '2' }), c('3', { image: '3' })] } },
    },
    {
      // normalizeElementOrder: a server-only item stays ahead of listed items the live list had after it
      name: 'server-only items keep their live position relative to listed ones',
      doc: { spec: { containers: [c('a'), c('x'), c('b')] } },
      patch: { spec: { '$setElementOrder/containers': [c('b'), c('a')] } },
      want: { spec: { containers: [c('x'), c('b'), c('a')] } },
    },
    {
      name: 'server-only items at the end stay at the end',
      doc: { spec: { containers: [c('a'), c('b'), c('x')] } },
      patch: { spec: { '$setElementOrder/containers': [c('b'), c('a')] } },
      want: { spec: { containers: [c('b'), c('a'), c('x')] } },
    },
    {
      name: 'names the order list has but the list lacks are ignored',
      doc: { spec: { containers: [c('1'), c('3')] } },
      patch: {
        spec: {
          '$setElementOrder/containers': [c('3'), c('2'), c('1')],
          containers: [c('3', { image: '3' }), c('1', { image: '1' })],
        },
      },
      want: { spec: { containers: [c('3', { image: '3' }), c('1', { image: '1' })] } },
    },
    {
      name: 'primitive list: order only',
      doc: { metadata: { finalizers: ['1', '3'] } },
      patch: { metadata: { '$setElementOrder/finalizers': ['3', '2', '1'] } },
      want: { metadata: { finalizers: ['3', '1'] } },
    },
    {
      name: 'primitive list: add, delete and order together',
      doc: { metadata: { finalizers: ['1', '2', '3', '4'] } },
      patch: {
        metadata: {
          '$setElementOrder/finalizers': ['1', '2', '4'],
          '$deleteFromPrimitiveList/finalizers': ['3'],
          finalizers: ['4'],
        },
      },
      want: { metadata: { finalizers: ['1', '2', '4'] } },
    },
    {
      name: 'a list the object lacks is created in order',
      doc: { spec: {} },
      patch: { spec: { '$setElementOrder/containers': [c('b'), c('a')], containers: [c('b'), c('a', { tty: null })] } },
      want: { spec: { containers: [c('b'), c('a')] } },
    },
    {
      name: 'an order for a list neither side has is ignored',
      doc: { spec: {} },
      patch: { spec: { '$setElementOrder/containers': [c('a')] } },
      want: { spec: {} },
    },
    {
      name: 'deleted items are ignored when checking the order',
      doc: { spec: { containers: [c('a'), c('b')] } },
      patch: {
        spec: {
          '$setElementOrder/containers': [c('a')],
          containers: [c('b', { $patch: 'delete' }), c('a', { image: 'i' })],
        },
      },
      want: { spec: { containers: [c('a', { image: 'i' })] } },
    },
  ]);
});

describe('strategic merge patch: a kubectl 1.30 apply of a two-container pod', () => {
  // Live object: server defaults and a server-added projected volume the user never applied.
  const live = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'default',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"old":true}\n' },
      finalizers: ['example.com/keep', 'example.com/drop'],
      resourceVersion: '41',
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'nginx:1.25',
          env: [c('A', { value: '1' }), c('B', { value: '2' })],
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          volumeMounts: [
            { mountPath: '/cache', name: 'cache' },
            { mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name: 'kube-api-access-x1', readOnly: true },
          ],
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
        },
        { name: 'sidecar', image: 'busybox:1.36', args: ['sleep', 'infinity'], imagePullPolicy: 'IfNotPresent' },
      ],
      volumes: [
        { name: 'cache', emptyDir: {} },
        {
          name: 'kube-api-access-x1',
          projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 'token' } }] },
        },
      ],
      restartPolicy: 'Always',
    },
    status: { phase: 'Running' },
  };
  // What `kubectl apply` sends after the user bumped the image, changed env A, replaced B with C,
  // switched the cache volume to a hostPath, dropped a finalizer and swapped the sidecar's args.
  const patch = {
    metadata: {
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":true}\n' },
      '$deleteFromPrimitiveList/finalizers': ['example.com/drop'],
      '$setElementOrder/finalizers': ['example.com/keep'],
    },
    spec: {
      '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
      containers: [
        {
          '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }],
          env: [c('A', { value: '10' }), c('C', { value: '3' }), { $patch: 'delete', name: 'B' }],
          image: 'nginx:1.27',
          name: 'app',
        },
        { args: ['sleep', '3600'], name: 'sidecar' },
      ],
      '$setElementOrder/volumes': [{ name: 'cache' }],
      volumes: [
        { $retainKeys: ['hostPath', 'name'], emptyDir: null, hostPath: { path: '/var/cache/web' }, name: 'cache' },
      ],
    },
  };
  const want = {
    ...live,
    metadata: {
      ...live.metadata,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":true}\n' },
      finalizers: ['example.com/keep'],
    },
    spec: {
      containers: [
        { ...live.spec.containers[0], image: 'nginx:1.27', env: [c('A', { value: '10' }), c('C', { value: '3' })] },
        { ...live.spec.containers[1], args: ['sleep', '3600'] },
      ],
      volumes: [{ name: 'cache', hostPath: { path: '/var/cache/web' } }, live.spec.volumes[1]],
      restartPolicy: 'Always',
    },
  };

  it('applies like kube-apiserver', () => {
    const before = structuredClone(live);
    expect(applyStrategicMergePatch(live, patch, lookup)).toEqual(want);
    expect(live).toEqual(before);
  });

  it('asks the lookup with field paths from the root; list items add no segment', () => {
    const asked: string[] = [];
    applyStrategicMergePatch(live, patch, (p) => {
      asked.push(p.join('.'));
      return lookup(p);
    });
    expect(new Set(asked)).toEqual(
      new Set([
        'metadata.finalizers',
        'spec.containers',
        'spec.containers.env',
        'spec.containers.args',
        'spec.volumes',
      ]),
    );
  });

  it('shares nothing with its inputs', () => {
    type Shape = {
      metadata: { finalizers: string[] };
      spec: { volumes: Array<{ projected?: { sources: unknown[] } }>; containers: Array<{ env: unknown[] }> };
    };
    const out = applyStrategicMergePatch(live, patch, lookup) as unknown as Shape;
    out.spec.volumes[1]?.projected?.sources.push({ serviceAccountToken: { path: 'evil' } });
    out.spec.containers[0]?.env.push(c('Z', { value: 'z' }));
    out.metadata.finalizers.push('x');
    const liveProjected = live.spec.volumes[1] as { projected: { sources: unknown[] } };
    expect(liveProjected.projected.sources).toHaveLength(1);
    expect(live.metadata.finalizers).toEqual(['example.com/keep', 'example.com/drop']);
    expect(patch.spec.containers[0]!.env).toHaveLength(3);
    expect(patch.metadata['$setElementOrder/finalizers']).toEqual(['example.com/keep']);
  });
});

describe('strategic merge patch: errors', () => {
  it.each([
    { name: 'document is not an object', doc: [], patch: {}, msg: SMP_MESSAGES.badDocument },
    { name: 'patch is not an object', doc: {}, patch: [], msg: 'must be a JSON object' },
    {
      name: 'unknown $patch on a map',
      doc: { a: {} },
      patch: { a: { $patch: 'explode' } },
      msg: 'unknown patch type "explode"',
    },
    { name: 'non-string $patch on a map', doc: {}, patch: { $patch: 1 }, msg: 'unknown patch type 1' },
    {
      name: 'unknown $patch in a list',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { containers: [c('a', { $patch: 'nope' })] } },
      msg: 'unknown patch type "nope"',
    },
    {
      name: '$patch: merge in a list',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { containers: [{ $patch: 'merge' }] } },
      msg: 'merging lists cannot yet be specified',
    },
    {
      name: 'unknown directive key',
      doc: {},
      patch: { metadata: { $frob: 1 } },
      msg: 'unknown strategic merge patch directive "$frob"',
    },
    { name: '$retainKeys not a list', doc: {}, patch: { $retainKeys: 'a' }, msg: SMP_MESSAGES.retainKeys },
    {
      name: 'a patched field missing from $retainKeys',
      doc: { a: 1 },
      patch: { $retainKeys: ['a'], b: 2 },
      msg: SMP_MESSAGES.retainKeys,
    },
    {
      name: '$setElementOrder without a field',
      doc: {},
      patch: { $setElementOrder: [] },
      msg: SMP_MESSAGES.setElementOrder,
    },
    {
      name: '$setElementOrder with a bad prefix',
      doc: {},
      patch: { '$setElementOrderX/a': [] },
      msg: SMP_MESSAGES.setElementOrder,
    },
    {
      name: '$setElementOrder not a list',
      doc: {},
      patch: { '$setElementOrder/a': {} },
      msg: SMP_MESSAGES.setElementOrder,
    },
    {
      name: '$setElementOrder with a non-list patch value',
      doc: {},
      patch: { '$setElementOrder/a': [1], a: 'x' },
      msg: SMP_MESSAGES.setElementOrder,
    },
    {
      name: '$setElementOrder on a field that is not a list',
      doc: { spec: { containers: 'x' } },
      patch: { spec: { '$setElementOrder/containers': [c('a')] } },
      msg: 'spec.containers is not a list',
    },
    {
      name: '$setElementOrder disagreeing with the patch list',
      doc: { spec: { containers: [c('1'), c('3'), c('2')] } },
      patch: { spec: { '$setElementOrder/containers': [c('1'), c('2'), c('3')], containers: [c('3'), c('1')] } },
      msg: 'does not match its $setElementOrder list',
    },
    {
      name: '$setElementOrder disagreeing with a primitive patch list',
      doc: { metadata: { finalizers: ['1', '3', '2'] } },
      patch: { metadata: { '$setElementOrder/finalizers': ['1', '2', '3'], finalizers: ['3', '1'] } },
      msg: 'does not match',
    },
    {
      name: '$setElementOrder item without the merge key',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { '$setElementOrder/containers': [{ image: 'x' }] } },
      msg: 'does not contain declared merge key: name',
    },
    {
      name: '$deleteFromPrimitiveList without a field',
      doc: {},
      patch: { $deleteFromPrimitiveList: ['a'] },
      msg: SMP_MESSAGES.primitiveList,
    },
    {
      name: '$deleteFromPrimitiveList not a list',
      doc: { metadata: { finalizers: ['a'] } },
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      msg: SMP_MESSAGES.primitiveList,
    },
    {
      name: '$deleteFromPrimitiveList with an object value',
      doc: { metadata: { finalizers: ['a'] } },
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': [{}] } },
      msg: SMP_MESSAGES.primitiveList,
    },
    {
      name: '$deleteFromPrimitiveList on a list of objects',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { '$deleteFromPrimitiveList/containers': ['a'] } },
      msg: SMP_MESSAGES.primitiveList,
    },
    {
      name: 'patch item without the merge key',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { containers: [{ image: 'b' }] } },
      msg: 'does not contain declared merge key: name',
    },
    {
      name: 'delete item without the merge key',
      doc: { spec: { containers: [c('a')] } },
      patch: { spec: { containers: [{ $patch: 'delete' }] } },
      msg: 'does not contain declared merge key: name',
    },
    {
      name: 'live item without the merge key',
      doc: { spec: { containers: [{ image: 'a' }] } },
      patch: { spec: { containers: [c('b')] } },
      msg: 'does not contain declared merge key: name',
    },
    {
      name: 'mixed element types',
      doc: { metadata: { finalizers: ['a'] } },
      patch: { metadata: { finalizers: [1] } },
      msg: 'list element types are not identical',
    },
    {
      name: 'objects in a primitive merge list',
      doc: { metadata: { finalizers: [{ a: 1 }] } },
      patch: { metadata: { finalizers: [{ b: 1 }] } },
      msg: 'without a merge key at metadata.finalizers',
    },
    {
      name: 'objects in a keyless merge list',
      doc: { spec: { keyless: [] } },
      patch: { spec: { keyless: [{ a: 1 }] } },
      msg: 'without a merge key at spec.keyless',
    },
    { name: 'a non-JSON value in the patch', doc: { a: 1 }, patch: { a: undefined }, msg: 'invalid JSON patch' },
    {
      name: 'an unknown directive inside a new value',
      doc: {},
      patch: { spec: { a: { $frob: 1 } } },
      msg: 'unknown strategic merge patch directive "$frob"',
    },
    {
      name: 'a non-JSON value in the document',
      doc: { a: new Date(0) },
      patch: { b: 1 },
      msg: 'invalid JSON document',
    },
  ])('400 BadRequest: $name', ({ doc, patch, msg }) => {
    let caught: unknown;
    try {
      applyStrategicMergePatch(doc, patch, lookup);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(BadRequestError);
    expect((caught as Error).message).toContain(msg);
  });

  it.each([
    {
      name: 'lists of lists in a merge list',
      doc: { metadata: { finalizers: [['a']] } },
      patch: { metadata: { finalizers: [['b']] } },
    },
  ])('422 Invalid: $name', ({ doc, patch }) => {
    let caught: unknown;
    try {
      applyStrategicMergePatch(doc, patch, lookup);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(PatchNotApplicableError);
    expect((caught as PatchNotApplicableError).detail).toBe(SMP_MESSAGES.noListOfLists);
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    let patch: object = {};
    let doc: object = {};
    for (let i = 0; i < 5000; i++) {
      patch = { a: patch };
      doc = { a: doc };
    }
    expect(() => applyStrategicMergePatch(doc, patch, lookup)).toThrow(BadRequestError);
    expect(() => applyStrategicMergePatch({}, patch, lookup)).toThrow(BadRequestError);
  });

  it('lists of lists are fine where lists replace or are new', () => {
    expect(applyStrategicMergePatch({ a: [[1]] }, { a: [[2]] }, lookup)).toEqual({ a: [[2]] });
    expect(applyStrategicMergePatch({ metadata: {} }, { metadata: { finalizers: [['b']] } }, lookup)).toEqual({
      metadata: { finalizers: [['b']] },
    });
  });
});
