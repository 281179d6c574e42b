/**
 * The generic `scale` subresource (kube's ScaleREST of deployments, replicasets, statefulsets): an
 * autoscaling/v1 Scale whose spec.replicas is the object's desired replica count and whose
 * status carries the observed count and the pod selector as a string. A kind declares it with
 * `subresources: [scaleSubresource()]`; handlers/scale.ts serves get, update and patch.
 */
import type { FieldCause } from '../../util/errors.js';
import { formatLabelSelector, labelSelectorFromObject, type LabelSelectorObject } from '../../kube/selectors.js';
import { objectAt } from './corehelpers.js';
import { invalid } from './fielderrors.js';
import type { GroupVersionKind, KubeObject, ScaleSubresource } from './types.js';

export const SCALE_KIND: GroupVersionKind = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/** The spec.selector of a workload as the Scale's status.selector (metav1.FormatLabelSelector); '' when unparseable. */
export function specSelectorString(obj: KubeObject): string {
  const sel = objectAt(obj, 'spec')?.selector as LabelSelectorObject | undefined;
  try {
    return formatLabelSelector(labelSelectorFromObject(sel, { nil: 'nothing' }));
  } catch {
    return ''; // kube's FormatLabelSelector prints "<error>" only for selectors validation already refused
  }
}

/** A scale subresource over `spec.replicas` / `status.replicas` and spec.selector, the layout of every apps/v1 workload. */
export function scaleSubresource(
  o: Partial<Pick<ScaleSubresource, 'specReplicasPath' | 'statusReplicasPath' | 'selector'>> = {},
): ScaleSubresource {
  return {
    type: 'scale',
    name: 'scale',
    specReplicasPath: o.specReplicasPath ?? ['spec', 'replicas'],
    statusReplicasPath: o.statusReplicasPath ?? ['status', 'replicas'],
    selector: o.selector ?? specSelectorString,
  };
}

function numberAt(obj: unknown, path: readonly string[]): number {
  let cur: unknown = obj;
  for (const p of path) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
  return typeof cur === 'number' ? cur : 0;
}

/** The Scale of an object (its metadata's identity fields, as kube's scaleFromDeployment copies them). */
export function scaleOf(sub: ScaleSubresource, obj: KubeObject): KubeObject {
  const m = obj.metadata;
  const metadata: KubeObject['metadata'] = {
    name: m.name,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp,
  };
  if (m.namespace !== undefined) metadata.namespace = m.namespace;
  return {
    kind: SCALE_KIND.kind,
    apiVersion: `${SCALE_KIND.group}/${SCALE_KIND.version}`,
    metadata,
    spec: { replicas: numberAt(obj, sub.specReplicasPath) },
    status: { replicas: numberAt(obj, sub.statusReplicasPath), selector: sub.selector(obj) },
  };
}

/** ValidateScale: spec.replicas ≥ 0. */
export function validateScale(scale: KubeObject): FieldCause[] {
  const replicas = objectAt(scale, 'spec')?.replicas;
  if (replicas === undefined || replicas === null) return [];
  if (typeof replicas !== 'number' || replicas < 0)
    return [invalid('spec.replicas', replicas as number, 'must be greater than or equal to 0')];
  return [];
}

/** A fresh copy of `current` with the Scale's spec.replicas written to the kind's replicas path. */
export function withScaledReplicas(sub: ScaleSubresource, current: KubeObject, scale: KubeObject): KubeObject {
  const out = structuredClone(current);
  const replicas = objectAt(scale, 'spec')?.replicas;
  let cur = out as Record<string, unknown>;
  for (const p of sub.specReplicasPath.slice(0, -1)) {
    const next = cur[p];
    if (!next || typeof next !== 'object' || Array.isArray(next)) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[sub.specReplicasPath[sub.specReplicasPath.length - 1]!] = typeof replicas === 'number' ? replicas : 0;
  return out;
}
