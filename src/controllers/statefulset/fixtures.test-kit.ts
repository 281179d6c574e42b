/** Builders for the StatefulSet controller's decision tests. */
import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { RevisionRef, SetState } from './decide.js';
import { newPod } from './identity.js';

export const NOW = Date.parse('2024-05-01T12:00:00Z');
const T0 = '2024-05-01T11:00:00Z';

export const OLD: RevisionRef = {
  name: 'web-old',
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } },
};
export const NEW: RevisionRef = {
  name: 'web-new',
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'v2' }] } },
};

export function set(
  spec: Partial<NonNullable<StatefulSet['spec']>> = {},
  extra: Partial<StatefulSet> = {},
): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid', generation: 1 },
    spec: {
      serviceName: 'nginx',
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: NEW.template,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      volumeClaimTemplates: [
        {
          metadata: { name: 'www' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
      ...spec,
    },
    ...extra,
  };
}

export type PodState = 'pending' | 'ready' | 'notReady' | 'failed' | 'terminating';

/** The pod at `ordinal` of `s` from `rev`, in `state`. */
export function pod(s: StatefulSet, ordinal: number, state: PodState = 'ready', rev: RevisionRef = NEW): Pod {
  const p = newPod(s, rev.template, rev.name, ordinal);
  const phase = state === 'pending' ? 'Pending' : state === 'failed' ? 'Failed' : 'Running';
  const ready = state === 'ready' || state === 'terminating';
  return {
    ...p,
    metadata: { ...p.metadata, uid: `pod-${ordinal}`, ...(state === 'terminating' ? { deletionTimestamp: T0 } : {}) },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: T0 }] },
  };
}

export function claim(
  name: string,
  extra: Partial<NonNullable<PersistentVolumeClaim['metadata']>> = {},
): PersistentVolumeClaim {
  return { metadata: { name, namespace: 'ns', uid: `claim-${name}`, ...extra }, spec: {} };
}

export function state(
  s: StatefulSet,
  pods: Pod[],
  claims: PersistentVolumeClaim[] = [],
  current: RevisionRef = NEW,
): SetState {
  return { set: s, current, update: NEW, pods, claim: (n) => claims.find((c) => c.metadata?.name === n), now: NOW };
}
