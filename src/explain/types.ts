/** The shape of an explanation: what the API serves as JSON and `stowage why` prints as sentences. */

export const EXPLAIN_GROUP = 'explain.stowage.io';
export const EXPLAIN_VERSION = 'v1alpha1';
export const EXPLAIN_API_VERSION = `${EXPLAIN_GROUP}/${EXPLAIN_VERSION}`;

/** The kinds that can be explained, by the plural their URL uses. */
export const EXPLAINABLE = {
  persistentvolumeclaims: { kind: 'PersistentVolumeClaim', group: '', namespaced: true },
  pods: { kind: 'Pod', group: '', namespaced: true },
  persistentvolumes: { kind: 'PersistentVolume', group: '', namespaced: false },
  volumeattachments: { kind: 'VolumeAttachment', group: 'storage.k8s.io', namespaced: false },
} as const;
export type ExplainablePlural = keyof typeof EXPLAINABLE;

export function isExplainable(plural: string): plural is ExplainablePlural {
  return Object.hasOwn(EXPLAINABLE, plural);
}

export interface ObjectRef {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** One reason, about one object (a candidate volume, a node, a container...) when it has one. */
export interface Finding {
  /** A stable machine-readable code: `storageClass`, `tooSmall`, `Unschedulable`, `ErrImagePull`... */
  readonly code: string;
  readonly message: string;
  readonly object?: ObjectRef;
}

export interface Explanation {
  readonly apiVersion: typeof EXPLAIN_API_VERSION;
  readonly kind: 'Explanation';
  readonly target: ObjectRef;
  /** The object's phase or state as the API shows it (`Pending`, `Bound`, `Running`, `attached`...). */
  readonly state: string;
  /** True when nothing is wrong or waited for. */
  readonly ready: boolean;
  /** One sentence: what the object waits for, or that it is fine. */
  readonly summary: string;
  /** The reasons behind the summary, most important first. */
  readonly findings: readonly Finding[];
  /** Objects whose own explanation says more (`stowage why` follows them). */
  readonly related?: readonly ObjectRef[];
}

export function explanation(
  target: ObjectRef,
  state: string,
  ready: boolean,
  summary: string,
  findings: readonly Finding[] = [],
  related: readonly ObjectRef[] = [],
): Explanation {
  return {
    apiVersion: EXPLAIN_API_VERSION,
    kind: 'Explanation',
    target,
    state,
    ready,
    summary,
    findings,
    ...(related.length > 0 ? { related } : {}),
  };
}
