/**
 * Images for containers, as the kubelet's image manager: present or pulled per imagePullPolicy,
 * with the pod's imagePullSecrets as the runtime's pull auth, a per-container pull backoff
 * (ErrImagePull, then ImagePullBackOff: 10 s doubling to 5 min) and the kubelet's events.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../client/events.js';
import { secretData } from '../../csi/sidecar/secrets.js';
import type { RestClient } from '../../client/rest.js';
import { backoffDelay, type Clock } from '../../util/backoff.js';
import { NotFoundError, toStowageError } from '../../util/errors.js';
import type { CriClient } from './client.js';
import { pullPolicyOf } from './container-config.js';
import { KUBELET_BACKOFF } from './pod-actions.js';
import type { Waiting } from './pod-status.js';
import { pullAuths, type PullSecret } from './pull-secrets.js';

export interface ImageManager {
  /** The image ref for the container (present or just pulled), or undefined with its waiting reason set in `w`. */
  ensureImage(pod: Pod, spec: Container, w: Map<string, Waiting>): Promise<string | undefined>;
  /** Ms until the pod's earliest image pull backoff ends (none: empty). */
  backoffLeftMs(uid: string): number[];
  /** Drops the pod's pull backoffs (it is gone). */
  forget(uid: string): void;
}

export function newImageManager(o: {
  cri: CriClient;
  client: RestClient;
  recorder: EventRecorder;
  clock: Clock;
  signal: AbortSignal;
}): ImageManager {
  const { clock, signal } = o;
  const backoff = new Map<string, { failures: number; untilMs: number }>();

  /** The image for `name` is present (pulled per its policy), or its waiting reason is recorded. */
  const ensureImage = async (pod: Pod, spec: Container, w: Map<string, Waiting>): Promise<string | undefined> => {
    const name = spec.name;
    const image = spec.image ?? '';
    const policy = pullPolicyOf(spec);
    const uid = pod.metadata?.uid ?? '';
    const key = `${uid}/${name}`;
    if (policy !== 'Always') {
      const present = await o.cri.imageStatus(image, { signal });
      if (present) {
        o.recorder.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
        return present.id;
      }
      if (policy === 'Never') {
        const message = `Container image "${image}" is not present with pull policy of Never`;
        w.set(name, { reason: 'ErrImageNeverPull', message });
        o.recorder.event(pod, 'Warning', 'ErrImageNeverPull', message);
        return undefined;
      }
    }
    const b = backoff.get(key);
    if (b && clock.now() < b.untilMs) {
      const message = `Back-off pulling image "${image}"`;
      w.set(name, { reason: 'ImagePullBackOff', message });
      o.recorder.event(pod, 'Normal', 'BackOff', message);
      return undefined;
    }
    o.recorder.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`);
    try {
      const r = await pullWithAuths(image, await pullSecretsOf(pod));
      backoff.delete(key);
      o.recorder.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}"`);
      return r.imageRef;
    } catch (e) {
      if (signal.aborted) throw e;
      const failures = (b?.failures ?? 0) + 1;
      backoff.set(key, { failures, untilMs: clock.now() + backoffDelay(KUBELET_BACKOFF, failures) });
      const message = `Failed to pull image "${image}": ${toStowageError(e).message}`;
      w.set(name, { reason: 'ErrImagePull', message });
      o.recorder.event(pod, 'Warning', 'Failed', message);
      o.recorder.event(pod, 'Warning', 'Failed', 'Error: ErrImagePull');
      return undefined;
    }
  };

  /** Pulls with each matching credential in turn (the kubelet's keyring order), anonymously when none match. */
  const pullWithAuths = async (image: string, secrets: readonly PullSecret[]): Promise<{ imageRef: string }> => {
    const auths = pullAuths(image, secrets);
    if (auths.length === 0) return o.cri.pullImage({ image: { image } }, { signal });
    let last: unknown;
    for (const auth of auths) {
      try {
        return await o.cri.pullImage({ image: { image }, auth }, { signal });
      } catch (e) {
        if (signal.aborted) throw e;
        last = e;
      }
    }
    throw last;
  };

  /** The pod's imagePullSecrets that exist; a missing one is a warning, as the kubelet's. */
  const pullSecretsOf = async (pod: Pod): Promise<PullSecret[]> => {
    const ns = pod.metadata?.namespace ?? 'default';
    const out: PullSecret[] = [];
    const missing: string[] = [];
    for (const ref of pod.spec?.imagePullSecrets ?? []) {
      if (!ref.name) continue;
      try {
        const s = await o.client.resource('Secret').get(ref.name, { namespace: ns, signal });
        out.push({ type: s.type ?? '', data: secretData(s.data) });
      } catch (e) {
        if (!(toStowageError(e) instanceof NotFoundError)) throw e;
        missing.push(ref.name);
      }
    }
    if (missing.length > 0)
      o.recorder.event(
        pod,
        'Warning',
        'FailedToRetrieveImagePullSecret',
        `Unable to retrieve some image pull secrets (${missing.join(', ')}); attempting to pull the image may not succeed.`,
      );
    return out;
  };

  const backoffLeftMs = (uid: string): number[] =>
    [...backoff].filter(([key]) => key.startsWith(`${uid}/`)).map(([, b]) => b.untilMs - clock.now());
  const forget = (uid: string): void => {
    for (const key of [...backoff.keys()]) if (key.startsWith(`${uid}/`)) backoff.delete(key);
  };
  return { ensureImage, backoffLeftMs, forget };
}
