/**
 * Why a PersistentVolumeClaim is where it is, from the PV controller's own decisions: the matcher's
 * verdict on every volume (match.ts candidateVerdict), decideNoMatch / decideRequestedVolume /
 * decideBoundClaim, the provisioner route, the provisioner's last error and the capacity published
 * per topology segment.
 */
import {
  accessModesFromKey,
  accessModesKey,
  accessModesRefusal,
  candidateVerdict,
  compileClaimQuery,
  containsAllAccessModes,
  findBestMatchLinear,
  type CandidateVerdict,
  type MatchOptions,
} from '../controllers/persistentvolume/match.js';
import { decideBoundClaim, decideNoMatch, decideRequestedVolume } from '../controllers/persistentvolume/decide.js';
import { delayBindingEvent, isDelayBindingMode } from '../controllers/persistentvolume/sync-claim.js';
import { routeProvisioner } from '../controllers/persistentvolume/provision.js';
import { podClaimNames } from '../controllers/scheduler/types.js';
import { claimClass, volumeClass } from '../kube/class.js';
import { ANN_BIND_COMPLETED, ANN_SELECTED_NODE } from '../kube/names.js';
import { assertNever } from '../util/errors.js';
import { refusalMessage } from './refusals.js';
import type { ExplainSource, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from './source.js';
import { explanation, type Explanation, type Finding, type ObjectRef } from './types.js';

/** At most this many refused candidates are listed (the count of the rest is given). */
export const MAX_CANDIDATES = 50;

const pvRef = (name: string): ObjectRef => ({ kind: 'PersistentVolume', name });

/**
 * The matcher's verdict on each volume for a claim: the access-mode grouping of findBestMatchLinear
 * first (a volume outside every mode set that contains the claim's modes is never looked at), then
 * candidateVerdict.
 */
export function candidateVerdicts(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  o: MatchOptions,
): Array<{ volume: PersistentVolume; verdict: CandidateVerdict }> {
  const q = compileClaimQuery(claim);
  const wanted = claim.spec?.accessModes ?? [];
  return volumes.map((volume) => {
    const groupModes = accessModesFromKey(accessModesKey(volume.spec?.accessModes));
    const verdict: CandidateVerdict = containsAllAccessModes(groupModes, wanted)
      ? candidateVerdict(q, volume, o)
      : { kind: 'refused', refusal: accessModesRefusal(claim, volume) };
    return { volume, verdict };
  });
}

function candidateFindings(claim: PersistentVolumeClaim, s: ExplainSource, o: MatchOptions): Finding[] {
  const out: Finding[] = [];
  let more = 0;
  for (const { volume, verdict } of candidateVerdicts(claim, s.volumes(), o)) {
    if (verdict.kind !== 'refused') continue;
    // A volume bound to another claim of another class was never a candidate worth naming.
    if (verdict.refusal.kind === 'alreadyBound' && volumeClass(volume) !== claimClass(claim)) continue;
    if (out.length >= MAX_CANDIDATES) {
      more++;
      continue;
    }
    const name = volume.metadata?.name ?? '';
    out.push({
      code: verdict.refusal.kind,
      message: `volume ${name}: ${refusalMessage(verdict.refusal)}`,
      object: pvRef(name),
    });
  }
  if (more > 0) out.push({ code: 'more', message: `${more} more volumes refused` });
  return out;
}

export function podsUsingClaim(s: ExplainSource, claim: PersistentVolumeClaim): Pod[] {
  const ns = claim.metadata?.namespace ?? '';
  const name = claim.metadata?.name ?? '';
  return s.pods(ns).filter((p) => podClaimNames(p).includes(name));
}

export function explainClaim(claim: PersistentVolumeClaim, s: ExplainSource): Explanation {
  const target: ObjectRef = {
    kind: 'PersistentVolumeClaim',
    namespace: claim.metadata?.namespace ?? '',
    name: claim.metadata?.name ?? '',
  };
  const phase = claim.status?.phase ?? 'Pending';
  if (claim.metadata?.deletionTimestamp) {
    const users = podsUsingClaim(s, claim).filter(
      (p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
    );
    const held = users.map((p) => p.metadata?.name ?? '');
    return explanation(
      target,
      phase,
      false,
      held.length > 0
        ? `being deleted; kept (pvc-protection) while pods use it: ${held.join(', ')}`
        : `being deleted; waiting for finalizers: ${(claim.metadata.finalizers ?? []).join(', ') || 'none'}`,
      [],
      users.map((p) => ({ kind: 'Pod', namespace: target.namespace, name: p.metadata?.name ?? '' })),
    );
  }
  if (claim.metadata?.annotations?.[ANN_BIND_COMPLETED] !== undefined) return explainBound(target, claim, s);
  const volumeName = claim.spec?.volumeName ?? '';
  if (volumeName !== '') return explainRequested(target, claim, s, volumeName);
  return explainUnbound(target, claim, s);
}

function explainBound(target: ObjectRef, claim: PersistentVolumeClaim, s: ExplainSource): Explanation {
  const name = claim.spec?.volumeName ?? '';
  const volume = name === '' ? undefined : s.volume(name);
  const action = decideBoundClaim(claim, volume);
  switch (action.kind) {
    case 'lost':
      return explanation(target, 'Lost', false, action.message, [{ code: action.reason, message: action.message }]);
    case 'bind': {
      const done = volume?.spec?.claimRef?.uid === claim.metadata?.uid && claim.status?.phase === 'Bound';
      const cap = claim.status?.capacity?.['storage'] ?? volume?.spec?.capacity?.['storage'];
      return done
        ? explanation(
            target,
            'Bound',
            true,
            `bound to volume ${name}${cap ? ` (${String(cap)})` : ''}`,
            [],
            [pvRef(name)],
          )
        : explanation(
            target,
            claim.status?.phase ?? 'Pending',
            false,
            `the PV controller is finishing the bind to volume ${name}`,
            [],
            [pvRef(name)],
          );
    }
    default:
      return assertNever(action);
  }
}

function explainRequested(
  target: ObjectRef,
  claim: PersistentVolumeClaim,
  s: ExplainSource,
  name: string,
): Explanation {
  const volume = s.volume(name);
  const action = decideRequestedVolume(claim, volume);
  const phase = claim.status?.phase ?? 'Pending';
  switch (action.kind) {
    case 'pending':
      return explanation(target, phase, false, `waiting for the requested volume ${name}, which does not exist`);
    case 'mismatch':
      return explanation(target, phase, false, action.message, [
        { code: 'VolumeMismatch', message: action.message, object: pvRef(name) },
      ]);
    case 'bind':
      return explanation(
        target,
        phase,
        false,
        `the PV controller is binding it to the requested volume ${name}`,
        [],
        [pvRef(name)],
      );
    case 'claimedByOther':
      return explanation(target, phase, false, action.message, [
        { code: 'FailedBinding', message: action.message, object: pvRef(name) },
      ]);
    default:
      return assertNever(action);
  }
}

function explainUnbound(target: ObjectRef, claim: PersistentVolumeClaim, s: ExplainSource): Explanation {
  const phase = claim.status?.phase ?? 'Pending';
  const className = claimClass(claim);
  const cls = className === '' ? undefined : s.storageClass(className);
  let delayBinding = false;
  try {
    delayBinding = isDelayBindingMode(claim, cls);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return explanation(target, phase, false, message, [{ code: 'SyncError', message }]);
  }
  const selected = claim.metadata?.annotations?.[ANN_SELECTED_NODE];
  const node = selected === undefined ? undefined : s.node(selected);
  const found = findBestMatchLinear(
    claim,
    s.volumes(),
    node && delayBinding ? { delayBinding, node } : { delayBinding },
  );
  // For the listing, a waiting claim's candidates are judged as they will be once it may bind.
  const candidates = candidateFindings(claim, s, node ? { delayBinding, node } : { delayBinding: false });
  if (found) {
    const name = found.metadata?.name ?? '';
    return explanation(
      target,
      phase,
      false,
      `volume ${name} matches; the PV controller is binding it`,
      [],
      [pvRef(name)],
    );
  }
  const action = decideNoMatch(delayBinding, selected !== undefined, className);
  switch (action.kind) {
    case 'waitForConsumer': {
      const pods = podsUsingClaim(s, claim);
      const ev = delayBindingEvent(claim, pods);
      const related = pods
        .filter((p) => !p.spec?.nodeName)
        .map((p) => ({ kind: 'Pod', namespace: target.namespace, name: p.metadata?.name ?? '' }));
      return explanation(
        target,
        phase,
        false,
        `${ev.message} (class ${className} is WaitForFirstConsumer)`,
        candidates,
        related,
      );
    }
    case 'provision':
      return explainProvisioning(target, claim, s, cls, candidates);
    case 'failedBinding':
      return explanation(target, phase, false, action.message, candidates);
    default:
      return assertNever(action);
  }
}

function explainProvisioning(
  target: ObjectRef,
  claim: PersistentVolumeClaim,
  s: ExplainSource,
  cls: StorageClass | undefined,
  candidates: readonly Finding[],
): Explanation {
  const phase = claim.status?.phase ?? 'Pending';
  const route = routeProvisioner(claim, cls);
  if (route.kind === 'error') return explanation(target, phase, false, route.message, candidates);
  const provisioner = route.kind === 'external' ? route.provisioner : route.plugin;
  const findings: Finding[] = [];
  const failed = s
    .eventsFor('PersistentVolumeClaim', target.namespace ?? '', target.name)
    .filter((e) => e.reason === 'ProvisioningFailed');
  const last = failed[failed.length - 1];
  if (last)
    findings.push({ code: 'ProvisioningFailed', message: `the provisioner's last error: ${last.message ?? ''}` });
  findings.push(...capacityFindings(s, provisioner, cls?.metadata?.name ?? ''));
  const summary = last
    ? `provisioning by ${provisioner} failed; it retries with backoff`
    : `waiting for ${provisioner} to create a volume (no matching volume exists)`;
  return explanation(target, phase, false, summary, [...findings, ...candidates]);
}

/** The capacity a driver publishes per topology segment for the class (CSIStorageCapacity). */
function capacityFindings(s: ExplainSource, provisioner: string, className: string): Finding[] {
  const out: Finding[] = [];
  const tracked = s.csiDriver(provisioner)?.spec?.storageCapacity === true;
  const caps = s.capacities().filter((c) => c.storageClassName === className);
  for (const c of caps) {
    const segment = Object.entries(c.nodeTopology?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const max = c.maximumVolumeSize === undefined ? '' : `, largest volume ${String(c.maximumVolumeSize)}`;
    out.push({
      code: 'capacity',
      message: `segment ${segment || '(any)'}: capacity ${c.capacity === undefined ? 'unknown' : String(c.capacity)}${max}`,
    });
  }
  if (tracked && caps.length === 0)
    out.push({
      code: 'capacity',
      message: `driver ${provisioner} tracks capacity but published none for class ${className}`,
    });
  return out;
}
