/**
 * Attach outcome events, pure: Normal SuccessfulAttachVolume once an attachment reports attached,
 * Warning FailedAttachVolume for each new attachError message — each told once per state, so a
 * standing condition does not repeat on every sync (the recorder would aggregate it anyway).
 */
import type { DesiredAttachment, PodRef, VolumeAttachment } from './types.js';

export interface PodEvent {
  readonly pod: PodRef;
  readonly type: 'Normal' | 'Warning';
  readonly reason: 'SuccessfulAttachVolume' | 'FailedAttachVolume';
  readonly message: string;
}

/** Events to emit now, and the set of states reported (to pass in next time). */
export function attachEvents(
  desired: ReadonlyMap<string, DesiredAttachment>,
  attachments: readonly VolumeAttachment[],
  reported: ReadonlySet<string>,
): { events: PodEvent[]; reported: Set<string> } {
  const events: PodEvent[] = [];
  const next = new Set<string>();
  for (const va of attachments) {
    const d = desired.get(va.metadata?.name ?? '');
    if (!d) continue;
    const err = va.status?.attachError?.message;
    const ok = va.status?.attached === true;
    const key = ok ? `${d.name}/ok` : err ? `${d.name}/err/${err}` : null;
    if (!key) continue;
    next.add(key);
    if (reported.has(key)) continue;
    for (const pod of d.pods) {
      events.push(
        ok
          ? {
              pod,
              type: 'Normal',
              reason: 'SuccessfulAttachVolume',
              message: `AttachVolume.Attach succeeded for volume "${d.pvName}"`,
            }
          : {
              pod,
              type: 'Warning',
              reason: 'FailedAttachVolume',
              message: `AttachVolume.Attach failed for volume "${d.pvName}" : ${err}`,
            },
      );
    }
  }
  return { events, reported: next };
}
