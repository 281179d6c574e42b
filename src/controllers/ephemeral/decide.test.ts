import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { ephemeralActions } from './decide.js';

const pod = (o: { deleting?: boolean } = {}): Pod => ({
  metadata: {
    name: 'web',
    namespace: 'ns',
    uid: 'pod-uid',
    ...(o.deleting ? { deletionTimestamp: '2026-11-24T00:00:00Z' } : {}),
  },
  spec: {
    containers: [{ name: 'c' }],
    volumes: [
      { name: 'cfg', configMap: { name: 'x' } },
      {
        name: 'scratch',
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { labels: { type: 'scratch' }, annotations: { note: 'n' } },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: 'standard',
              resources: { requests: { storage: '1Gi' } },
            },
          },
        },
      },
    ],
  },
});
const claim = (controllerUid?: string): PersistentVolumeClaim => ({
  metadata: {
    name: 'web-scratch',
    namespace: 'ns',
    ownerReferences: controllerUid
      ? [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: controllerUid, controller: true }]
      : undefined,
  },
});

describe('ephemeralActions', () => {
  it('creates <pod>-<volume> from the template, controlled by the pod', () => {
    expect(ephemeralActions(pod(), () => undefined)).toEqual([
      {
        kind: 'create',
        volume: 'scratch',
        claim: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: {
            name: 'web-scratch',
            namespace: 'ns',
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'Pod',
                name: 'web',
                uid: 'pod-uid',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
            labels: { type: 'scratch' },
            annotations: { note: 'n' },
          },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: 'standard',
            resources: { requests: { storage: '1Gi' } },
          },
        },
      },
    ]);
  });
  it.each([
    { name: 'the pod controls the claim: nothing to do', existing: claim('pod-uid'), want: [] },
    {
      name: 'another owner: refused with upstream’s message',
      existing: claim('other-uid'),
      want: [
        {
          kind: 'notForPod',
          volume: 'scratch',
          message: 'PVC ns/web-scratch was not created for pod ns/web (pod is not owner)',
        },
      ],
    },
    {
      name: 'no owner at all: refused too (never adopted)',
      existing: claim(),
      want: [
        {
          kind: 'notForPod',
          volume: 'scratch',
          message: 'PVC ns/web-scratch was not created for pod ns/web (pod is not owner)',
        },
      ],
    },
  ])('$name', ({ existing, want }) =>
    expect(ephemeralActions(pod(), (ns, n) => (ns === 'ns' && n === 'web-scratch' ? existing : undefined))).toEqual(
      want,
    ),
  );
  it('a pod being deleted gets no claim', () =>
    expect(ephemeralActions(pod({ deleting: true }), () => undefined)).toEqual([]));
});
