/**
 * Why a PersistentVolume and a VolumeAttachment are where they are: a volume's phase with the
 * claims that could take it (the matcher's verdict, as for a claim), its reclaim, its attachments;
 * an attachment's attach or detach state with the driver's last error.
 */
import { attachRequired } from '../controllers/attachdetach/desired.js';
import { ANN_BIND_COMPLETED } from '../kube/names.js';
import { candidateVerdicts } from './claim.js';
import { refusalMessage } from './refusals.js';
import type { ExplainSource, PersistentVolume, VolumeAttachment } from './source.js';
import { explanation, type Explanation, type Finding, type ObjectRef } from './types.js';

const MAX_CLAIMS = 50;

export function explainVolume(pv: PersistentVolume, s: ExplainSource): Explanation {
  const name = pv.metadata?.name ?? '';
  const target: ObjectRef = { kind: 'PersistentVolume', name };
  const phase = pv.status?.phase ?? 'Pending';
  const ref = pv.spec?.claimRef;
  const claimRef: ObjectRef | undefined = ref
    ? { kind: 'PersistentVolumeClaim', namespace: ref.namespace ?? '', name: ref.name ?? '' }
    : undefined;
  const attachments = s
    .attachments()
    .filter((a) => a.spec.source.persistentVolumeName === name)
    .map((a) => ({ kind: 'VolumeAttachment', name: a.metadata?.name ?? '' }));
  const related = [...(claimRef ? [claimRef] : []), ...attachments];
  if (pv.metadata?.deletionTimestamp)
    return explanation(
      target,
      phase,
      false,
      `being deleted; waiting for finalizers: ${(pv.metadata.finalizers ?? []).join(', ') || 'none'}`,
      [],
      related,
    );
  switch (phase) {
    case 'Bound': {
      const c = ref ? s.claim(ref.namespace ?? '', ref.name ?? '') : undefined;
      const done = c?.metadata?.uid === ref?.uid && c?.metadata?.annotations?.[ANN_BIND_COMPLETED] !== undefined;
      const who = `${ref?.namespace ?? ''}/${ref?.name ?? ''}`;
      return done
        ? explanation(target, phase, true, `bound to claim ${who}`, [], related)
        : explanation(
            target,
            phase,
            false,
            `bound to claim ${who}, which is missing or not bound to it yet`,
            [],
            related,
          );
    }
    case 'Available':
      return explainAvailable(target, pv, s, related);
    case 'Released': {
      const policy = pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
      const last = lastWarning(s, name);
      const summary =
        policy === 'Retain'
          ? `released by its claim; the Retain policy keeps it (and its data) until an administrator frees it`
          : `released; the ${policy} reclaim policy is running${last ? ` and failed: ${last}` : ''}`;
      return explanation(target, phase, false, summary, [], related);
    }
    case 'Failed':
      return explanation(
        target,
        phase,
        false,
        `failed: ${pv.status?.message ?? lastWarning(s, name) ?? 'no message'}`,
        [],
        related,
      );
    case 'Pending':
      return explanation(target, phase, false, 'pending: not yet available to claims', [], related);
    default:
      return explanation(target, phase, false, `phase ${phase}`, [], related);
  }
}

function lastWarning(s: ExplainSource, name: string): string | undefined {
  const evs = s.eventsFor('PersistentVolume', '', name).filter((e) => e.type === 'Warning');
  const last = evs[evs.length - 1];
  return last ? `${last.reason ?? ''}: ${last.message ?? ''}` : undefined;
}

function explainAvailable(
  target: ObjectRef,
  pv: PersistentVolume,
  s: ExplainSource,
  related: ObjectRef[],
): Explanation {
  if (pv.spec?.claimRef)
    return explanation(
      target,
      'Available',
      false,
      'pre-bound to a claim; the PV controller is binding it',
      [],
      related,
    );
  const findings: Finding[] = [];
  let fits = 0;
  for (const c of s.claims()) {
    if (c.metadata?.annotations?.[ANN_BIND_COMPLETED] !== undefined || (c.spec?.volumeName ?? '') !== '') continue;
    const [v] = candidateVerdicts(c, [pv], { delayBinding: false });
    if (!v) continue;
    const who = `${c.metadata?.namespace ?? ''}/${c.metadata?.name ?? ''}`;
    const object = {
      kind: 'PersistentVolumeClaim',
      namespace: c.metadata?.namespace ?? '',
      name: c.metadata?.name ?? '',
    };
    if (v.verdict.kind !== 'refused') {
      fits++;
      findings.unshift({ code: 'fits', message: `claim ${who} could take it`, object });
    } else if (findings.length < MAX_CLAIMS)
      findings.push({
        code: v.verdict.refusal.kind,
        message: `claim ${who}: ${refusalMessage(v.verdict.refusal)}`,
        object,
      });
  }
  const summary =
    fits > 0
      ? `available; ${fits} unbound claim(s) could take it`
      : 'available; no unbound claim asks for a volume like it';
  return explanation(target, 'Available', true, summary, findings, related);
}

export function explainAttachment(va: VolumeAttachment, s: ExplainSource): Explanation {
  const name = va.metadata?.name ?? '';
  const target: ObjectRef = { kind: 'VolumeAttachment', name };
  const pvName = va.spec.source.persistentVolumeName ?? '';
  const related: ObjectRef[] = [
    ...(pvName ? [{ kind: 'PersistentVolume', name: pvName }] : []),
    { kind: 'Node', name: va.spec.nodeName },
  ];
  const attached = va.status?.attached === true;
  const state = attached ? 'attached' : 'detached';
  const where = `volume ${pvName || '(inline)'} on node ${va.spec.nodeName}`;
  if (va.metadata?.deletionTimestamp) {
    const err = va.status?.detachError?.message;
    return explanation(
      target,
      state,
      false,
      err ? `detaching ${where} failed: ${err}` : `waiting for ${va.spec.attacher} to detach ${where}`,
      err ? [{ code: 'DetachError', message: err }] : [],
      related,
    );
  }
  if (attached) return explanation(target, state, true, `${where} is attached`, [], related);
  const err = va.status?.attachError;
  if (err?.message)
    return explanation(
      target,
      state,
      false,
      `attaching ${where} failed: ${err.message}`,
      [{ code: 'AttachError', message: `${err.time ? `${String(err.time)}: ` : ''}${err.message}` }],
      related,
    );
  const findings: Finding[] = [];
  if (pvName && !s.volume(pvName)) findings.push({ code: 'VolumeMissing', message: `volume ${pvName} does not exist` });
  if (!s.node(va.spec.nodeName))
    findings.push({ code: 'NodeMissing', message: `node ${va.spec.nodeName} does not exist` });
  const driver = s.csiDriver(va.spec.attacher);
  if (driver && !attachRequired(driver))
    findings.push({ code: 'AttachNotRequired', message: `CSIDriver ${va.spec.attacher} says attachRequired: false` });
  return explanation(
    target,
    state,
    false,
    `waiting for ${va.spec.attacher}'s attacher to attach ${where}`,
    findings,
    related,
  );
}
