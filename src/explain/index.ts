/** `stowage why`: explanations of claims, pods, volumes and attachments (see README.md). */
import { assertNever } from '../util/errors.js';
import { explainClaim } from './claim.js';
import { explainPod } from './pod.js';
import type { ExplainSource, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from './source.js';
import { EXPLAINABLE, type ExplainablePlural, type Explanation } from './types.js';
import { explainAttachment, explainVolume } from './volume.js';

export { explainClaim, explainPod, explainVolume, explainAttachment };
export { newExplainSource, clusterViewOf, type ExplainSource, type ObjectReader } from './source.js';
export * from './types.js';
export { renderExplanation } from './render.js';

/** The explanation of one object, or undefined when it does not exist. */
export function explainObject(
  plural: ExplainablePlural,
  namespace: string | undefined,
  name: string,
  s: ExplainSource,
): Explanation | undefined {
  const ns = EXPLAINABLE[plural].namespaced ? (namespace ?? '') : undefined;
  switch (plural) {
    case 'persistentvolumeclaims': {
      const c: PersistentVolumeClaim | undefined = s.claim(ns ?? '', name);
      return c && explainClaim(c, s);
    }
    case 'pods': {
      const p: Pod | undefined = s.pod(ns ?? '', name);
      return p && explainPod(p, s);
    }
    case 'persistentvolumes': {
      const v: PersistentVolume | undefined = s.volume(name);
      return v && explainVolume(v, s);
    }
    case 'volumeattachments': {
      const a: VolumeAttachment | undefined = s.attachment(name);
      return a && explainAttachment(a, s);
    }
    default:
      return assertNever(plural);
  }
}
