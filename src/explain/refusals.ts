/** Plain sentences for the matcher's refusals (persistentvolume/match.ts VolumeRefusal). */
import { formatQuantity } from '../kube/quantity.js';
import { assertNever } from '../util/errors.js';
import type { VolumeRefusal } from '../controllers/persistentvolume/match.js';

const size = (nanos: bigint): string => formatQuantity({ nanos, format: 'BinarySI' });
const modes = (key: string): string => (key === '' ? 'none' : key);
const cls = (name: string): string => (name === '' ? 'no class' : `class "${name}"`);

export function refusalMessage(r: VolumeRefusal): string {
  switch (r.kind) {
    case 'volumeMode':
      return `volumeMode ${r.volumeMode} does not match the claim's ${r.claimMode}`;
    case 'beingDeleted':
      return 'the volume is being deleted';
    case 'tooSmall':
      return `capacity ${size(r.capacity)} is smaller than the ${size(r.request)} requested`;
    case 'waitForFirstConsumer':
      return 'the claim waits for a first consumer: only a volume pre-bound to it can be bound now';
    case 'alreadyBound':
      return `already bound to claim ${r.to}`;
    case 'preboundElsewhere':
      return `pre-bound to another claim, ${r.to}`;
    case 'notAvailable':
      return `phase is ${r.phase || 'unset'}, not Available`;
    case 'selector':
      return "its labels do not match the claim's selector";
    case 'storageClass':
      return `${cls(r.volumeClass)} differs from the claim's ${cls(r.claimClass)}`;
    case 'nodeAffinity':
      return `its node affinity does not allow node ${r.node}`;
    case 'accessModes':
      return `access modes ${modes(r.volumeModes)} do not include all of the claim's ${modes(r.claimModes)}`;
    default:
      return assertNever(r);
  }
}
