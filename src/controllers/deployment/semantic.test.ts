import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { templateHash, templatesEqualIgnoringHash } from './util.js';

const base = (): PodTemplateSpec => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'busybox:1', imagePullPolicy: 'IfNotPresent' }] },
});
const withContainer = (extra: Record<string, unknown>): PodTemplateSpec => {
  const t = base();
  Object.assign(t.spec!.containers[0]!, extra);
  return t;
};
const withSpec = (extra: Record<string, unknown>): PodTemplateSpec => {
  const t = base();
  Object.assign(t.spec!, extra);
  return t;
};

// Each pair decodes, in kube, to Go structs that apiequality.Semantic.DeepEqual finds equal (or not):
// kubectl's `rollout undo` writes back the ReplicaSet's template marshalled from Go structs.
describe('pod-template-hash over the semantic template', () => {
  it.each([
    { name: 'resources: {} (a non-pointer struct) = no resources', a: withContainer({ resources: {} }), same: true },
    {
      name: 'creationTimestamp: null = none',
      a: { ...base(), metadata: { labels: { app: 'web' }, creationTimestamp: null } } as unknown as PodTemplateSpec,
      same: true,
    },
    { name: 'an empty list = no list (nil after storage)', a: withContainer({ env: [] }), same: true },
    { name: 'an empty map = no map', a: withSpec({ nodeSelector: {} }), same: true },
    {
      name: 'resources: {limits: {}, requests: {}} = no resources',
      a: withContainer({ resources: { limits: {}, requests: {} } }),
      same: true,
    },
    { name: 'a null pointer = none', a: withContainer({ securityContext: null }), same: true },
    // Pointers to empty structs differ from nil in Go: kept.
    { name: 'securityContext: {} (a pointer) ≠ none', a: withContainer({ securityContext: {} }), same: false },
    { name: 'pod-level resources: {} (a pointer) ≠ none', a: withSpec({ resources: {} }), same: false },
    {
      name: 'emptyDir: {} stays a volume source',
      a: withSpec({ volumes: [{ name: 'v', emptyDir: {} }] }),
      b: withSpec({ volumes: [{ name: 'v' }] }),
      same: false,
    },
    {
      name: 'an ephemeral claim template: resources.requests kept, empty metadata dropped',
      a: withSpec({
        volumes: [
          {
            name: 'v',
            ephemeral: { volumeClaimTemplate: { metadata: {}, spec: { resources: { requests: { storage: '1Gi' } } } } },
          },
        ],
      }),
      b: withSpec({
        volumes: [
          { name: 'v', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '1Gi' } } } } } },
        ],
      }),
      same: true,
    },
    {
      name: 'false is a value (runAsNonRoot: false ≠ nil)',
      a: withContainer({ securityContext: { runAsNonRoot: false } }),
      b: withContainer({ securityContext: {} }),
      same: false,
    },
    { name: 'a changed image differs', a: withContainer({ image: 'busybox:2' }), same: false },
    {
      name: 'key order does not matter',
      a: { spec: base().spec, metadata: { labels: { app: 'web' } } },
      same: true,
    },
  ])('$name', ({ a, b, same }) => {
    const other = b ?? base();
    expect(templateHash(a) === templateHash(other)).toBe(same);
    expect(templatesEqualIgnoringHash(a, other)).toBe(same);
  });

  it('the pod-template-hash label is ignored by EqualIgnoreHash, not by the hash', () => {
    const labelled = base();
    labelled.metadata!.labels!['pod-template-hash'] = 'abc';
    expect(templatesEqualIgnoringHash(labelled, base())).toBe(true);
    expect(templateHash(labelled)).not.toBe(templateHash(base()));
  });

  it('the collision count changes the hash; the hash is safe-encoded decimal digits', () => {
    const h = templateHash(base());
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(templateHash(base(), 0)).not.toBe(h);
    expect(templateHash(base(), 1)).not.toBe(templateHash(base(), 0));
    expect(templateHash(base(), 1)).toBe(templateHash(base(), 1));
  });
});
